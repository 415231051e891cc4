/**
 * HTTP requests whose peer is not trusted, bounded: every request goes out through
 * {@link guardedFetch}, which follows redirects itself and only within the origin it started
 * from; an agent card (or a registry's health-check answer) goes through {@link boundedFetch},
 * which also gives the whole exchange, headers *and* body, one deadline and the body a byte
 * limit. The agent registry (`src/registry/`) and the A2A client of remote handoffs
 * (`./client.ts`, through `./agent-fetch.ts`) share them, so a card is read the same way
 * wherever it is read.
 *
 * The bounds are enforced here, not left to the `fetch` underneath: a custom fetch (a `fetch`
 * option) may ignore `signal` or `redirect`, and the global one buffers a body as fast as the
 * peer sends it (an endless card filled memory at hundreds of MB per second before a 5 s
 * timeout fired). So the wait for the headers is raced against the deadline, and the body is
 * handed on as a stream that is read one chunk at a time, counts the bytes (after
 * decompression: a small gzip bomb counts at its real size), races each read against the
 * deadline, and on either limit cancels the body and aborts the request. Whoever reads the
 * body (the registry's card check, or the A2A SDK's card resolver calling `response.json()`)
 * gets the error at the limit; nothing past it is buffered.
 *
 * @module
 */
import { abortable } from '../util/abort.js';

/** The default size limit of an agent card: far above any real card (a few KB), far below harm. */
export const DEFAULT_MAX_CARD_BYTES = 1024 * 1024;

/** The default deadline of one card fetch or health-check request, headers and body. */
export const DEFAULT_CARD_TIMEOUT_MS = 5000;

/** How many redirects (within the origin) one request follows. */
export const MAX_REDIRECTS = 5;

/** A request stopped by one of these bounds; the message says which. */
export class FetchLimitError extends Error {
  override readonly name = 'FetchLimitError';
  constructor(
    message: string,
    /** `size`: the body passed the byte limit; `time`: the deadline passed; `redirect`: a redirect was refused. */
    readonly limit: 'size' | 'time' | 'redirect',
  ) {
    super(message);
  }
}

/** The bounds of one {@link boundedFetch}. */
export interface FetchBounds {
  /** The deadline of the whole exchange, headers and body, in ms. */
  timeoutMs: number;
  /** The largest body read, in bytes. */
  maxBytes: number;
  /** What the limits are called where the caller sets them, named in the errors (`maxCardBytes`, `timeoutMs`). */
  names?: { maxBytes?: string; timeoutMs?: string };
  /** What is fetched, for the size error (default: `the answer`). */
  what?: string;
}

/**
 * The bounds of one card fetch made with these options (each default when absent), naming the
 * options in its errors; `what` is the card as the size error names it.
 */
export function cardBounds(options: { timeoutMs?: number; maxCardBytes?: number }, what?: string): FetchBounds {
  return {
    timeoutMs: options.timeoutMs ?? DEFAULT_CARD_TIMEOUT_MS,
    maxBytes: options.maxCardBytes ?? DEFAULT_MAX_CARD_BYTES,
    names: { maxBytes: 'maxCardBytes', timeoutMs: 'timeoutMs' },
    ...(what ? { what } : {}),
  };
}

/** The URL a fetch input names. */
export function urlOf(input: string | URL | Request): string {
  return typeof input === 'string' ? input : input instanceof URL ? input.href : input.url;
}

/**
 * `doFetch(url, init)` with redirects followed here, at most {@link MAX_REDIRECTS}, and only to
 * the origin (scheme, host, port) of `url`: a redirect elsewhere rejects with a
 * {@link FetchLimitError} naming it, before anything is sent there. The wait for the response
 * honours `init.signal` even when `doFetch` does not.
 */
export async function guardedFetch(doFetch: typeof fetch, input: string | URL, init: RequestInit = {}): Promise<Response> {
  const origin = new URL(urlOf(input)).origin;
  let url = urlOf(input);
  let method = (init.method ?? 'GET').toUpperCase();
  let body = init.body;
  let headers = new Headers(init.headers);
  const signal = init.signal ?? undefined;
  for (let hops = 0; ; hops++) {
    const res = await abortable(doFetch(url, { ...init, method, headers, body, redirect: 'manual' }), signal);
    // A fetch that follows redirects on its own, whatever `redirect` says, tells where it ended.
    if (res.redirected && res.url && new URL(res.url).origin !== origin) {
      void res.body?.cancel().catch(() => undefined);
      throw redirectRefused(res.url, origin);
    }
    if (res.type === 'opaqueredirect') throw new FetchLimitError(`it redirects, to a place this fetch does not reveal`, 'redirect');
    const location = REDIRECTS.has(res.status) ? res.headers.get('location') : null;
    if (location === null) return res;
    void res.body?.cancel().catch(() => undefined);
    const next = new URL(location, url);
    if (next.origin !== origin) throw redirectRefused(next.href, origin);
    if (hops + 1 > MAX_REDIRECTS) throw new FetchLimitError(`more than ${MAX_REDIRECTS} redirects`, 'redirect');
    // What fetch itself does: 303, and 301/302 after a POST, go on as a GET without the body.
    if (res.status === 303 || ((res.status === 301 || res.status === 302) && method === 'POST')) {
      if (method !== 'HEAD') method = 'GET';
      body = undefined;
      headers = new Headers(headers);
      headers.delete('content-type');
      headers.delete('content-length');
    } else if (body instanceof ReadableStream) {
      throw new FetchLimitError(`it redirects a request whose body cannot be sent again (${next.href})`, 'redirect');
    }
    url = next.href;
  }
}

const REDIRECTS = new Set([301, 302, 303, 307, 308]);

/** Statuses whose response has no body (the Response constructor refuses one). */
const NULL_BODY = new Set([101, 103, 204, 205, 304]);

function redirectRefused(target: string, origin: string): FetchLimitError {
  return new FetchLimitError(`it redirects to ${target}, another origin (redirects are followed only within ${origin})`, 'redirect');
}

/**
 * {@link guardedFetch} with one deadline for the whole exchange and a byte limit on the body
 * (see the module doc). Resolves with a response whose body stream errors with a
 * {@link FetchLimitError} at either limit (a `Content-Length` above the limit rejects at
 * once); the request is aborted then, and also when `init.signal` aborts.
 */
export async function boundedFetch(doFetch: typeof fetch, input: string | URL, init: RequestInit, bounds: FetchBounds): Promise<Response> {
  const what = bounds.what ?? 'the answer';
  const tooLarge = () => new FetchLimitError(`${what} is too large: more than ${bounds.maxBytes} bytes${named(bounds.names?.maxBytes)}`, 'size');
  const stop = new AbortController();
  const timer = setTimeout(
    () => stop.abort(new FetchLimitError(`no complete answer within ${bounds.timeoutMs} ms${named(bounds.names?.timeoutMs)}`, 'time')),
    bounds.timeoutMs,
  );
  // A body nobody reads must not keep the process alive until the deadline.
  timer.unref();
  const signal = init.signal ? AbortSignal.any([stop.signal, init.signal]) : stop.signal;
  /** Ends the exchange: the deadline is off, the request aborted (a no-op once the body is read). */
  const end = (reason?: unknown) => {
    clearTimeout(timer);
    stop.abort(reason ?? new Error('The exchange is over'));
  };
  /** The error to report: the signal's reason once it aborted (the limit or the caller), else `e`. */
  const failure = (e: unknown) => (signal.aborted ? signal.reason : e);

  let res: Response;
  try {
    res = await guardedFetch(doFetch, input, { ...init, signal });
  } catch (e) {
    const reason = failure(e);
    end(reason);
    throw reason;
  }
  if (Number(res.headers.get('content-length')) > bounds.maxBytes) {
    const error = tooLarge();
    void res.body?.cancel(error).catch(() => undefined);
    end(error);
    throw error;
  }
  if (!res.body || NULL_BODY.has(res.status)) {
    void res.body?.cancel().catch(() => undefined);
    clearTimeout(timer);
    return res;
  }
  const reader = res.body.getReader();
  // A limit reached while nobody reads (or a fetch deaf to its signal) still stops the body.
  signal.addEventListener('abort', () => void reader.cancel(signal.reason).catch(() => undefined), { once: true });
  let received = 0;
  const limited = new ReadableStream<Uint8Array>(
    {
      async pull(controller) {
        try {
          const chunk = await abortable(reader.read(), signal);
          if (chunk.done) {
            clearTimeout(timer);
            controller.close();
            return;
          }
          received += chunk.value.byteLength;
          if (received > bounds.maxBytes) throw tooLarge();
          controller.enqueue(chunk.value);
        } catch (e) {
          const reason = failure(e);
          void reader.cancel(reason).catch(() => undefined);
          end(reason);
          controller.error(reason);
        }
      },
      cancel(reason) {
        end(reason);
        return reader.cancel(reason).catch(() => undefined);
      },
    },
    // Nothing is read ahead of the consumer: each chunk is pulled when asked for.
    { highWaterMark: 0 },
  );
  return new Response(limited, { status: res.status, statusText: res.statusText, headers: res.headers });
}

function named(option: string | undefined): string {
  return option ? ` (${option})` : '';
}
