/**
 * The NATS transport: the {@link Transport} seam over NATS core (v3 client). Payloads are UTF-8
 * strings. Besides mapping the client's errors onto {@link TransportError}, it makes an outage
 * visible at once: the client would buffer a request made while disconnected, or keep one in
 * flight at the drop, until its timeout although its answer is lost (core NATS is at most
 * once), so requests fail with `unavailable` as soon as the connection is known to be down.
 *
 * Only types come from the client here (errors are told apart by name), so importing this file
 * loads no `@nats-io/*` code.
 *
 * @module
 */
import type { Msg, NatsConnection, RequestOptions, Subscription } from '@nats-io/transport-node';
import { type Transport, TransportError, type TransportMessage, type TransportStatus, type TransportSubscription } from './types.js';
import { closeConnection } from '../nats/connection.js';
import { headerRecord, natsHeaders } from './nats-headers.js';

/** The client's request error, told apart by name and shape (see the module comment). */
function requestError(e: unknown, subject: string, timeoutMs: number): TransportError {
  const error = e as { name?: unknown; message?: unknown; isNoResponders?: () => boolean };
  if (typeof error?.isNoResponders === 'function' && error.isNoResponders()) {
    return new TransportError(`Nobody listens on "${subject}"`, 'no-responders', { cause: e });
  }
  if (error?.name === 'TimeoutError') {
    return new TransportError(`No answer on "${subject}" within ${timeoutMs} ms`, 'timeout', { cause: e });
  }
  // Closed, draining, disconnected, a permission violation: the request cannot go through.
  return new TransportError(`NATS cannot carry the request on "${subject}": ${String(error?.message ?? e)}`, 'unavailable', { cause: e });
}

/**
 * A transport on an open NATS connection (see `connectNats`). With `owned`, `close()` drains and
 * closes the connection too; otherwise it only ends this transport's subscriptions and leaves
 * the connection to its owner (who may share it with a JetStream store).
 */
export function natsTransport(connection: NatsConnection, options: { owned?: boolean } = {}): Transport {
  let link: TransportStatus = connection.isClosed() ? 'closed' : 'connected';
  let closed = false;
  /** Rejections of the requests in flight: an outage fails them at once (their answers are lost). */
  const inFlight = new Set<(error: TransportError) => void>();
  const subscriptions = new Set<Subscription>();
  // Requests go through xswarm's cheaper request/reply (see src/nats/requests.ts), loaded with
  // the first request: it uses the client's error classes, and this file loads no client code.
  let requests: NatsConnection | undefined;
  const request = (subject: string, data: string, opts: RequestOptions): Promise<Msg> =>
    requests ? requests.request(subject, data, opts) : import('../nats/requests.js').then((m) => (requests = m.lightRequests(connection)).request(subject, data, opts));
  /** Told of each change of `link` (see `Transport.watchStatus`). */
  const watchers = new Set<(status: TransportStatus) => void>();
  const setLink = (next: TransportStatus) => {
    if (next === link) return;
    link = next;
    for (const watcher of watchers) {
      try {
        watcher(next);
      } catch {
        // A watcher's failure is its own: the link state stays right.
      }
    }
  };

  const status = (): TransportStatus => (closed || connection.isClosed() ? 'closed' : link);
  const unavailable = (what: string) => new TransportError(`NATS is ${status() === 'closed' ? 'closed' : 'disconnected'}: ${what}`, 'unavailable');
  const failInFlight = () => {
    for (const fail of [...inFlight]) fail(unavailable('the request was in flight when the connection dropped'));
  };

  // The client reports its state only as a stream of events; the latest one is the state now.
  const events = connection.status();
  void (async () => {
    for await (const event of events) {
      switch (event.type) {
        case 'disconnect':
        case 'reconnecting':
        case 'staleConnection':
          setLink('disconnected');
          failInFlight();
          break;
        case 'reconnect':
          setLink('connected');
          break;
        case 'close':
          setLink('closed');
          failInFlight();
          break;
      }
    }
  })();
  void connection.closed().then(() => {
    setLink('closed');
    failInFlight();
  });

  const message = (msg: Msg, subject = msg.subject): TransportMessage => {
    const headers = headerRecord(msg.headers);
    return { subject, data: msg.string(), respond: (data) => msg.respond(data), ...(headers ? { headers } : {}) };
  };

  return {
    request(subject, data, { timeoutMs, headers }) {
      if (status() !== 'connected') return Promise.reject(unavailable(`no request on "${subject}"`));
      return new Promise<TransportMessage>((resolve, reject) => {
        let settled = false;
        const fail = (error: TransportError) => {
          if (settled) return;
          settled = true;
          inFlight.delete(fail);
          reject(error);
        };
        inFlight.add(fail);
        // Headers (a trace context) are built with the client's own `headers()`, loaded only then.
        (headers ? natsHeaders(headers).then((h) => request(subject, data, { timeout: timeoutMs, headers: h })) : request(subject, data, { timeout: timeoutMs })).then(
          (reply) => {
            if (settled) return;
            settled = true;
            inFlight.delete(fail);
            resolve(message(reply, subject));
          },
          (e: unknown) => fail(requestError(e, subject, timeoutMs)),
        );
      });
    },
    publish(subject, data) {
      if (status() === 'closed') throw unavailable(`nothing published on "${subject}"`);
      // While disconnected the client drops it: at most once, as Transport.publish says.
      connection.publish(subject, data);
    },
    subscribe(subject, handler, { queue } = {}): TransportSubscription {
      if (status() === 'closed') throw unavailable(`no subscription to "${subject}"`);
      const subscription = connection.subscribe(subject, {
        ...(queue === undefined ? {} : { queue }),
        callback: (error, msg) => {
          if (error) return;
          try {
            void Promise.resolve(handler(message(msg))).catch(() => undefined);
          } catch {
            // A handler's failure is its own (see Transport.subscribe).
          }
        },
      });
      subscriptions.add(subscription);
      return {
        unsubscribe() {
          subscriptions.delete(subscription);
          if (!subscription.isClosed()) subscription.unsubscribe();
        },
      };
    },
    async flush() {
      if (status() !== 'connected') throw unavailable('nothing flushed');
      try {
        await connection.flush();
      } catch (e) {
        throw new TransportError(`NATS could not flush: ${(e as Error).message}`, 'unavailable', { cause: e });
      }
    },
    status,
    watchStatus(listener) {
      watchers.add(listener);
      return () => watchers.delete(listener);
    },
    async close() {
      if (closed) return;
      closed = true;
      failInFlight();
      (events as { stop?: () => void }).stop?.();
      if (options.owned && !connection.isClosed()) {
        await closeConnection(connection);
        return;
      }
      for (const subscription of subscriptions) if (!subscription.isClosed()) subscription.unsubscribe();
      subscriptions.clear();
    },
  };
}
