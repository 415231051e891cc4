/**
 * The in-process transport: runtimes of one process that share a bus reach each other exactly
 * as runtimes on one NATS do (same subjects, queue groups, request/reply), with nothing to
 * start. Delivery is asynchronous (a microtask later), as over a wire, so no caller depends on
 * a handler running inside its own call.
 *
 * @module
 */
import { type Transport, TransportError, type TransportMessage, type TransportStatus, type TransportSubscription } from './types.js';

interface Sub {
  pattern: string[];
  queue: string | undefined;
  handler: (message: TransportMessage) => void | Promise<void>;
}

/** The bus several {@link localTransport}s share. */
export class LocalBus {
  private readonly subs = new Set<Sub>();
  /** Round-robin position per queue group, so a group's members share the load. */
  private readonly turns = new Map<string, number>();

  /** @internal Registers a subscription; returns its removal. */
  add(sub: Sub): () => void {
    this.subs.add(sub);
    return () => this.subs.delete(sub);
  }

  /** @internal The subscriptions a message on `subject` goes to: every plain one, one per queue group. */
  receivers(subject: string): Sub[] {
    const tokens = subject.split('.');
    const plain: Sub[] = [];
    const groups = new Map<string, Sub[]>();
    for (const sub of this.subs) {
      if (!matches(sub.pattern, tokens)) continue;
      if (sub.queue === undefined) plain.push(sub);
      else groups.set(sub.queue, [...(groups.get(sub.queue) ?? []), sub]);
    }
    for (const [queue, members] of groups) {
      const turn = this.turns.get(queue) ?? 0;
      this.turns.set(queue, turn + 1);
      plain.push(members[turn % members.length]!);
    }
    return plain;
  }
}

/** NATS subject matching: `*` is one token, a final `>` one or more. */
function matches(pattern: readonly string[], tokens: readonly string[]): boolean {
  for (let i = 0; i < pattern.length; i++) {
    const p = pattern[i];
    if (p === '>') return tokens.length > i;
    if (i >= tokens.length || (p !== '*' && p !== tokens[i])) return false;
  }
  return pattern.length === tokens.length;
}

/**
 * A transport on an in-process bus: pass the same `bus` to the runtimes that should reach each
 * other (a new bus when none is given).
 */
export function localTransport(bus: LocalBus = new LocalBus()): Transport {
  let closed = false;
  const mine = new Set<() => void>();
  const deliver = (sub: Sub, message: TransportMessage) =>
    queueMicrotask(() => {
      if (closed) return;
      try {
        void Promise.resolve(sub.handler(message)).catch(() => undefined);
      } catch {
        // A handler's failure is its own (see Transport.subscribe).
      }
    });
  const send = (subject: string, data: string, respond: (data: string) => boolean, headers?: Readonly<Record<string, string>>): number => {
    const receivers = bus.receivers(subject);
    for (const sub of receivers) deliver(sub, { subject, data, respond, ...(headers ? { headers } : {}) });
    return receivers.length;
  };
  const assertOpen = () => {
    if (closed) throw new TransportError('The transport is closed', 'unavailable');
  };
  return {
    request(subject, data, { timeoutMs, headers }) {
      assertOpen();
      return new Promise<TransportMessage>((resolve, reject) => {
        let answered = false;
        const timer = setTimeout(() => {
          answered = true;
          reject(new TransportError(`No answer on "${subject}" within ${timeoutMs} ms`, 'timeout'));
        }, timeoutMs);
        const respond = (reply: string) => {
          if (answered) return false;
          answered = true;
          clearTimeout(timer);
          queueMicrotask(() => resolve({ subject, data: reply, respond: () => false }));
          return true;
        };
        if (send(subject, data, respond, headers) === 0) {
          answered = true;
          clearTimeout(timer);
          reject(new TransportError(`Nobody listens on "${subject}"`, 'no-responders'));
        }
      });
    },
    publish(subject, data) {
      assertOpen();
      send(subject, data, () => false);
    },
    subscribe(subject, handler, options = {}): TransportSubscription {
      assertOpen();
      const remove = bus.add({ pattern: subject.split('.'), queue: options.queue, handler });
      mine.add(remove);
      return {
        unsubscribe() {
          remove();
          mine.delete(remove);
        },
      };
    },
    async flush() {},
    status(): TransportStatus {
      return closed ? 'closed' : 'connected';
    },
    async close() {
      closed = true;
      for (const remove of mine) remove();
      mine.clear();
    },
  };
}
