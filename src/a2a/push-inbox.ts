/**
 * Where the push notifications of our own remote calls arrive: instead of holding a stream open
 * to a peer for the whole of a long task, the A2A client of remote handoffs (`./client.ts`,
 * `a2aRemoteAgents({ pushInbox })`) sends its message with a webhook on our server (`serve(runtime,
 * { pushInbox })` answers `POST /a2a-push/<id>`), and waits for a notification. A notification
 * only wakes the call up: the call then reads the task with `GetTask`, so a lost, repeated or
 * reordered notification changes nothing, and a slow fallback poll (`fallbackPollMs`) covers a
 * peer whose notifications never come.
 *
 * Each call gets its own unguessable path and its own secret, registered with the peer as the
 * `Bearer` credentials of the webhook (the scheme every A2A server sends, the SDK's included): a
 * POST for an id no call waits at (any more) is 410 Gone, which tells an xswarm peer to stop
 * delivering there; one without `Authorization: Bearer <secret>` is 401.
 *
 * @module
 */
import { randomBytes, timingSafeEqual } from 'node:crypto';

/** The path prefix of the inbox on the server. */
export const PUSH_INBOX_PATH = '/a2a-push/';

/** Options of {@link a2aPushInbox}. */
export interface PushInboxOptions {
  /**
   * The base URL peers reach our server at (e.g. `https://swarm.example.com`). Default: the
   * server's own URL once `serve()` listens, which only peers on the same machine or network reach.
   */
  publicUrl?: string;
  /** How often a waiting call reads the task anyway, should no notification come (default 30 000 ms). */
  fallbackPollMs?: number;
}

/** One call's webhook. */
export interface PushInboxSubscription {
  /** The webhook URL to register with the peer. */
  readonly url: string;
  /** The secret the peer sends back as `Authorization: Bearer <secret>`. */
  readonly secret: string;
  /** Resolves at the next notification (or one that came since the last wait), or after the fallback poll interval. */
  wait(signal: AbortSignal): Promise<void>;
  close(): void;
}

interface Waiter {
  secret: string;
  pending: boolean;
  wake?: () => void;
}

/** The inbox shared by a runtime's remote-agent client and its server (see the module doc). */
export interface A2APushInbox {
  /** Whether webhooks can be given out: a public URL was set, or a server serves the inbox. */
  readonly ready: boolean;
  /** A webhook for one call. */
  open(): PushInboxSubscription;
  /** Takes one POST: 204 when it woke a call, 410 for an id no call waits at, 401 for a missing or wrong secret. */
  receive(id: string, authorization: string | undefined): 204 | 401 | 410;
  /** Called by `serve()` once it listens: its URL is the default base. */
  attach(baseUrl: string): void;
}

/**
 * Creates an inbox; pass it to `a2aRemoteAgents({ pushInbox })` and `serve(runtime, { pushInbox })`.
 *
 * @example
 * import { a2aPushInbox, a2aRemoteAgents, createRuntime } from 'xswarm';
 * import { serve } from 'xswarm/server';
 * const inbox = a2aPushInbox();
 * const runtime = createRuntime({ swarms, model, remote: a2aRemoteAgents({ pushInbox: inbox }) });
 * const server = await serve(runtime, { pushInbox: inbox });
 */
export function a2aPushInbox(options: PushInboxOptions = {}): A2APushInbox {
  let base = options.publicUrl?.replace(/\/+$/, '');
  const fallbackPollMs = options.fallbackPollMs ?? 30_000;
  const waiters = new Map<string, Waiter>();
  return {
    get ready() {
      return base !== undefined;
    },
    attach(baseUrl) {
      base ??= baseUrl.replace(/\/+$/, '');
    },
    open() {
      if (base === undefined) throw new Error('The push inbox has no URL: serve the runtime with serve(runtime, { pushInbox }) or give it a publicUrl');
      const id = randomBytes(16).toString('base64url');
      const waiter: Waiter = { secret: randomBytes(32).toString('base64url'), pending: false };
      waiters.set(id, waiter);
      return {
        url: `${base}${PUSH_INBOX_PATH}${id}`,
        secret: waiter.secret,
        wait(signal) {
          if (waiter.pending) {
            waiter.pending = false;
            return Promise.resolve();
          }
          return new Promise<void>((resolve, reject) => {
            const done = () => {
              clearTimeout(timer);
              signal.removeEventListener('abort', onAbort);
              waiter.wake = undefined;
              waiter.pending = false;
              resolve();
            };
            const onAbort = () => {
              clearTimeout(timer);
              waiter.wake = undefined;
              reject(signal.reason);
            };
            const timer = setTimeout(done, fallbackPollMs);
            waiter.wake = done;
            signal.addEventListener('abort', onAbort, { once: true });
          });
        },
        close() {
          waiters.delete(id);
        },
      };
    },
    receive(id, authorization) {
      const waiter = waiters.get(id);
      if (!waiter) return 410;
      const expected = Buffer.from(`Bearer ${waiter.secret}`);
      const given = Buffer.from(authorization ?? '');
      if (given.length !== expected.length || !timingSafeEqual(given, expected)) return 401;
      waiter.pending = true;
      waiter.wake?.();
      return 204;
    },
  };
}
