/**
 * Request/reply without nats-core's per-request waste. Every JetStream operation of the store (a
 * KV put, a direct get, a stream publish) and every transport request (distribution calls) is
 * one `nc.request`, and nats-core's builds
 * three errors with their stacks for each (a `RequestError` kept for async traces, a
 * `TimeoutError` made in advance, and a `RequestError("cancelled")` rejecting the already
 * settled request after every answer), plus a `Promise.race` and a timer: a few percent of the
 * orchestrator's CPU on a busy store (issue 28). {@link lightRequests} gives a view of the
 * connection whose `request` answers through one inbox subscription (per connection, shared by
 * its users) and a map of pending requests, with the errors nats-core gives and the JetStream
 * client expects (`TimeoutError`; `RequestError` whose cause is a `NoRespondersError`;
 * `RequestError("connection closed")`).
 *
 * @module
 */
import {
  createInbox,
  type Msg,
  type NatsConnection,
  NoRespondersError,
  type Payload,
  RequestError,
  type RequestOptions,
  type Subscription,
  TimeoutError,
} from '@nats-io/transport-node';
import { coalesceWrites } from './writes.js';

/** A request waiting for its answer. */
interface Pending {
  subject: string;
  resolve: (m: Msg) => void;
  reject: (e: Error) => void;
  timer: ReturnType<typeof setTimeout>;
}

/** The requests of one connection: one inbox subscription, answers matched by token. */
class Requester {
  private readonly pending = new Map<string, Pending>();
  private sub: Subscription | undefined;
  private prefix = '';
  private next = 0;
  private following = false;

  constructor(private readonly nc: NatsConnection) {}

  request(subject: string, data?: Payload, opts?: RequestOptions): Promise<Msg> {
    const nc = this.nc;
    // What this view does not improve (its own reply subject, a closed or draining
    // connection, an invalid timeout) goes to nats-core, so it fails or works as before.
    if (opts?.noMux || opts?.reply || nc.isClosed() || nc.isDraining() || (opts?.timeout !== undefined && opts.timeout < 1)) {
      return nc.request(subject, data, opts);
    }
    this.sub ??= this.subscribe();
    const token = (this.next++).toString(36);
    return new Promise<Msg>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.pending.delete(token);
        reject(new TimeoutError());
      }, opts?.timeout || 1000);
      this.pending.set(token, { subject, resolve, reject, timer });
      try {
        nc.publish(subject, data, { reply: this.prefix + token, headers: opts?.headers });
      } catch (e) {
        clearTimeout(timer);
        this.pending.delete(token);
        reject(e as Error);
      }
    });
  }

  /** The inbox subscription answers arrive on, and the end of every pending request with the connection. */
  private subscribe(): Subscription {
    this.prefix = `${createInbox((this.nc as { options?: { inboxPrefix?: string } }).options?.inboxPrefix)}.`;
    const sub = this.nc.subscribe(`${this.prefix}*`, { callback: (err, m) => this.answer(sub, err, m) });
    const end = () => {
      if (this.sub === sub) this.failAll(new RequestError('connection closed'));
    };
    // A closed connection closes the subscription: nothing will answer what is pending.
    void sub.closed.then(end, end);
    if (!this.following) {
      this.following = true;
      this.followErrors().catch(() => undefined);
    }
    return sub;
  }

  /**
   * A request the server refused to carry (publish permission) fails at once, as in nats-core:
   * the server says so in an error status naming the subject (the first request to it fails).
   */
  private async followErrors(): Promise<void> {
    for await (const s of this.nc.status()) {
      if (s.type !== 'error') continue;
      const e = s.error as Error & { operation?: string; subject?: string };
      if (e.name !== 'PermissionViolationError' || e.operation !== 'publish') continue;
      for (const [token, p] of this.pending) {
        if (p.subject !== e.subject) continue;
        this.pending.delete(token);
        clearTimeout(p.timer);
        p.reject(new RequestError(e.message, { cause: e }));
        break;
      }
    }
  }

  private answer(sub: Subscription, err: Error | null, m: Msg): void {
    if (err) {
      if (this.sub !== sub) return;
      // The subscription itself failed (a permission violation): no answer can arrive.
      this.failAll(new RequestError(err.message, { cause: err }));
      return;
    }
    const token = m.subject.slice(this.prefix.length);
    const p = this.pending.get(token);
    if (!p) return;
    this.pending.delete(token);
    clearTimeout(p.timer);
    if (m.data.length === 0 && m.headers?.code === 503) {
      const cause = new NoRespondersError(p.subject);
      p.reject(new RequestError(cause.message, { cause }));
    } else p.resolve(m);
  }

  private failAll(e: Error): void {
    this.sub = undefined;
    for (const p of this.pending.values()) {
      clearTimeout(p.timer);
      p.reject(e);
    }
    this.pending.clear();
  }
}

/** Per connection, its view: one inbox subscription whoever requests on it. */
const views = new WeakMap<NatsConnection, NatsConnection>();

/**
 * A view of `nc` (for `jetstream(...)`/`jetstreamManager(...)`, for a transport's requests): the
 * same connection (its methods bound to it once), with a `request` that costs less CPU per call
 * (see the module's comment), whose flushes in one turn of the event loop are one socket write
 * ({@link coalesceWrites}). The same view for every call on one connection.
 */
export function lightRequests(nc: NatsConnection): NatsConnection {
  const known = views.get(nc);
  if (known) return known;
  // Its writes too: those of one turn of the event loop leave in one system call (see ./writes.ts).
  coalesceWrites(nc);
  const requester = new Requester(nc);
  const request = requester.request.bind(requester);
  const bound = new Map<PropertyKey, unknown>();
  const view = new Proxy(nc, {
    get(target, prop) {
      if (prop === 'request') return request;
      const v: unknown = Reflect.get(target, prop, target);
      if (typeof v !== 'function') return v;
      let f = bound.get(prop);
      if (f === undefined) {
        f = (v as (...a: unknown[]) => unknown).bind(target);
        bound.set(prop, f);
      }
      return f;
    },
  });
  views.set(nc, view);
  return view;
}
