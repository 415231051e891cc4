/**
 * Streaming plumbing of the REST event streams (Server-Sent Events) of swarms and teams, partly
 * shared with the WebSocket subscribers: the SSE wire format, cursors.
 *
 * @module
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { errorText } from '../../machines/error-text.js';
import { HttpError } from './http.js';

/** Default interval of the SSE keep-alive comments: below the 30–60 s idle cut of most proxies. */
export const DEFAULT_KEEPALIVE_MS = 15_000;

/** What a stream carries: a swarm's or a team's event, numbered by `seq` 1, 2, 3 … */
export interface StreamedEvent {
  readonly seq: number;
  readonly kind: string;
}

/**
 * One event in the SSE wire format: `id:` is the event's sequence number (what a reconnecting
 * `EventSource` sends back as `Last-Event-ID`), `event:` its kind, `data:` the event as JSON
 * on one line (JSON.stringify escapes every line break, so the frame cannot be split).
 */
export function sseFrame(event: StreamedEvent): string {
  return `id: ${event.seq}\nevent: ${event.kind}\ndata: ${JSON.stringify(event)}\n\n`;
}

/** Parses a sequence-number cursor (`since`, `Last-Event-ID`): a non-negative integer, or a 400. */
export function parseCursor(value: string, name: string): number {
  const trimmed = value.trim();
  if (!/^\d{1,15}$/.test(trimmed)) throw new HttpError(400, `${name} must be a non-negative integer (an event sequence number), got "${value}"`);
  return Number(trimmed);
}

/**
 * Where an SSE stream starts: after `Last-Event-ID` when present, else after `?since=`, else
 * from the beginning. The header wins because it is the reconnect mechanism: a browser
 * `EventSource` reconnects to the very same URL (still carrying the original `?since=`) and
 * adds the id of the last event it saw.
 */
export function sseCursor(req: IncomingMessage, url: URL): number {
  const header = req.headers['last-event-id'];
  const lastEventId = Array.isArray(header) ? header[0] : header;
  if (lastEventId !== undefined && lastEventId.trim() !== '') return parseCursor(lastEventId, 'Last-Event-ID');
  const since = url.searchParams.get('since');
  return since === null || since === '' ? 0 : parseCursor(since, 'since');
}

/** Options of {@link streamSse}. */
export interface SseStreamOptions<E extends StreamedEvent> {
  /** Interval of the `: ping` comment lines that keep idle connections (and proxies) open. */
  keepAliveMs: number;
  /** Aborts the stream from the server side (shutdown); the response is ended cleanly. */
  signal?: AbortSignal;
  /**
   * Ends the stream after an event it accepts (a swarm's final event: its iterator may outlive
   * it). Without it, the stream ends when the events end (a team's, at the end of its run).
   */
  endAfter?: (event: E) => boolean;
}

/**
 * Streams events as Server-Sent Events until they end or `options.endAfter` accepts one (then
 * ends the response), the client disconnects, or `options.signal` aborts. `events` gets a
 * signal that aborts when the stream ends for any reason: the runtime then releases the reader
 * at once (a dropped
 * connection to a quiet swarm must not wait for its next commit). A slow reader holds back
 * only its own iterator (we wait for `drain`): events come from the store (a team's from its
 * log), so neither a swarm nor a team waits for it.
 */
export async function streamSse<E extends StreamedEvent>(
  res: ServerResponse,
  events: (signal: AbortSignal) => AsyncIterable<E>,
  options: SseStreamOptions<E>,
): Promise<void> {
  const controller = new AbortController();
  const stop = () => controller.abort();
  res.on('close', stop);
  options.signal?.addEventListener('abort', stop, { once: true });
  res.writeHead(200, {
    'content-type': 'text/event-stream; charset=utf-8',
    'cache-control': 'no-cache, no-transform',
    connection: 'keep-alive',
    // Reverse proxies (nginx) would otherwise buffer the stream and hold events back.
    'x-accel-buffering': 'no',
  });
  // A first line right away: clients see the response (headers) before the first event.
  res.write(': stream\n\n');
  const ping = setInterval(
    () => {
      if (!res.writableEnded && !res.destroyed) res.write(': ping\n\n');
    },
    Math.max(1, options.keepAliveMs),
  );
  ping.unref();
  try {
    for await (const event of events(controller.signal)) {
      if (!res.write(sseFrame(event))) await drained(res, controller.signal);
      if (options.endAfter?.(event)) break;
    }
  } catch (err) {
    // Headers are out, so no status code any more: the failure is told in-band.
    if (!controller.signal.aborted && !res.destroyed) {
      res.write(`event: error\ndata: ${JSON.stringify({ error: errorText(err) })}\n\n`);
    }
  } finally {
    // Whatever ended the stream (the final event, an error), the reader is let go.
    controller.abort();
    clearInterval(ping);
    res.off('close', stop);
    options.signal?.removeEventListener('abort', stop);
    if (!res.writableEnded) res.end();
  }
}

/** Resolves when `res` can take more data, closed, or `signal` aborted. */
function drained(res: ServerResponse, signal: AbortSignal): Promise<void> {
  if (signal.aborted) return Promise.resolve();
  return new Promise((resolve) => {
    const done = () => {
      res.off('drain', done);
      signal.removeEventListener('abort', done);
      resolve();
    };
    res.on('drain', done);
    signal.addEventListener('abort', done, { once: true });
  });
}
