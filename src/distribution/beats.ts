/**
 * Listening to hosted swarms' heartbeats with one transport subscription per swarm, however many
 * listeners it has. A hosted call listens twice in a row — while its host request is answered,
 * then for as long as the call lives — and each subscription costs the broker a SUB and an UNSUB
 * (two socket writes, and work in nats-server); sharing it halves that per handoff. Nothing is
 * left to end at close: every listener is a call's, released when the call ends, and the
 * transport's subscriptions end with it.
 *
 * @module
 */
import type { Transport, TransportSubscription } from '../transport/types.js';

interface Shared {
  subscription: TransportSubscription;
  listeners: Set<() => void>;
  /** The release scheduled when the last listener left; a listener arriving first cancels it. */
  release?: NodeJS.Immediate;
}

/** Heartbeat subscriptions shared by swarm id (see the module doc). */
export class BeatListeners {
  private readonly shared = new Map<string, Shared>();

  /**
   * Calls `listener` on each heartbeat published on `subject` until the returned function is
   * called. Throws as `transport.subscribe` does (a closed transport).
   */
  listen(transport: Transport, subject: string, listener: () => void): () => void {
    let entry = this.shared.get(subject);
    if (!entry) {
      const listeners = new Set<() => void>();
      const subscription = transport.subscribe(subject, () => {
        for (const heard of [...listeners]) heard();
      });
      entry = { subscription, listeners };
      this.shared.set(subject, entry);
    }
    if (entry.release) {
      clearImmediate(entry.release);
      delete entry.release;
    }
    const held = entry;
    held.listeners.add(listener);
    let done = false;
    return () => {
      if (done) return;
      done = true;
      held.listeners.delete(listener);
      if (held.listeners.size > 0 || held.release) return;
      // Released one macrotask later: a call's host request hands over to its keep-alive
      // within the same turn of the event loop, which then keeps the subscription it has.
      held.release = setImmediate(() => {
        delete held.release;
        if (held.listeners.size > 0 || this.shared.get(subject) !== held) return;
        this.shared.delete(subject);
        held.subscription.unsubscribe();
      });
    };
  }
}
