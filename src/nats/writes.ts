/**
 * Fewer socket writes per connection. nats-core writes what was published to the socket at the
 * end of each microtask that published (its `flushPending`, queued with `queueMicrotask`), so a
 * busy store, whose commits of many swarms resume one after another in one turn of the event
 * loop, makes a write system call per commit and more: the orchestrator of the 1,000 concurrent
 * W1 runs on JetStream spent about 7 % of its CPU in socket writes (issue 28).
 * {@link coalesceWrites} corks the socket at the first flush of a turn and uncorks it once the
 * turn's microtasks have run (`process.nextTick` queued from a microtask runs after them), so
 * the turn's flushes leave in one `writev`: the same bytes in the same order, in the same turn.
 * Closing the connection uncorks it first (nats-core destroys the socket at once, which would
 * drop what a corked socket holds).
 *
 * @module
 */
import type { NatsConnection } from '@nats-io/transport-node';

/** What {@link coalesceWrites} uses of nats-core's connection internals (checked before use). */
interface Internals {
  protocol?: {
    flushPending?: () => void;
    close?: (...a: unknown[]) => Promise<void>;
    transport?: { socket?: { cork?: () => void; uncork?: () => void } };
  };
}

/** Connections whose flushes are coalesced already. */
const coalesced = new WeakSet<object>();

/**
 * Makes the flushes of `nc` within one turn of the event loop one socket write (see the module's
 * comment). The transport's socket is looked up at each flush, so a reconnect's new socket is
 * corked too. A client whose internals are not as expected is left as it is.
 */
export function coalesceWrites(nc: NatsConnection): void {
  const protocol = (nc as Internals).protocol;
  const flush = protocol?.flushPending;
  const close = protocol?.close;
  if (!protocol || typeof flush !== 'function' || typeof close !== 'function' || coalesced.has(protocol)) return;
  coalesced.add(protocol);
  let corked: { uncork: () => void } | undefined;
  let closing = false;
  const uncork = () => {
    const socket = corked;
    corked = undefined;
    socket?.uncork();
  };
  protocol.flushPending = function (this: unknown) {
    const socket = protocol.transport?.socket;
    if (!corked && !closing && typeof socket?.cork === 'function' && typeof socket.uncork === 'function') {
      socket.cork();
      corked = socket as { uncork: () => void };
      process.nextTick(uncork);
    }
    return flush.call(this);
  };
  // Closing destroys the socket without waiting for what it holds: what this turn wrote goes
  // out first, and later writes are not held back.
  protocol.close = function (this: unknown, ...a: unknown[]) {
    closing = true;
    uncork();
    return close.apply(this, a);
  };
}
