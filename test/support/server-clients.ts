/**
 * Real clients for the server tests: an SSE reader over `fetch`'s body, a queued `ws`
 * subscriber, small JSON helpers. Nothing here talks to the runtime directly.
 */
import { afterEach } from 'vitest';
import WebSocket from 'ws';
import type { Runtime, SwarmEvent } from '../../src/index.js';
import type { SwarmServer } from '../../src/server/index.js';

/** One SSE message: an event (with its id) or a comment line such as `: ping`. */
export type SseMessage = { type: 'event'; id: string | undefined; event: string | undefined; data: string } | { type: 'comment'; text: string };

/**
 * Parses a `text/event-stream` body as the spec says: blank lines end a message, `:` starts a
 * comment, fields are `name: value` (one optional space after the colon).
 */
export async function* sseMessages(body: ReadableStream<Uint8Array>): AsyncGenerator<SseMessage> {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  let buffer = '';
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      buffer += decoder.decode(value, { stream: true });
      let end: number;
      while ((end = buffer.search(/\r?\n\r?\n/)) >= 0) {
        const block = buffer.slice(0, end);
        buffer = buffer.slice(end + (buffer.slice(end).startsWith('\r\n\r\n') ? 4 : buffer[end] === '\r' ? 3 : 2));
        const fields: Record<string, string[]> = {};
        for (const line of block.split(/\r?\n/)) {
          if (line.startsWith(':')) {
            yield { type: 'comment', text: line.slice(1).trim() };
            continue;
          }
          const colon = line.indexOf(':');
          const name = colon < 0 ? line : line.slice(0, colon);
          const value = colon < 0 ? '' : line.slice(colon + 1).replace(/^ /, '');
          (fields[name] ??= []).push(value);
        }
        if (fields.data) yield { type: 'event', id: fields.id?.at(-1), event: fields.event?.at(-1), data: fields.data.join('\n') };
      }
    }
  } finally {
    reader.releaseLock();
  }
}

/** An SSE event parsed back into the swarm event it carries, with its wire id and name. */
export interface WireEvent {
  id: string | undefined;
  event: string | undefined;
  data: SwarmEvent;
}

/**
 * Opens an SSE stream and collects events until the stream ends, `stopAfter` says stop, or
 * `signal` aborts (then the connection is dropped, as a client going away would).
 */
export async function readSse(
  url: string,
  options: { headers?: Record<string, string>; stopAfter?: (e: WireEvent, all: WireEvent[]) => boolean; onComment?: (text: string) => void } = {},
): Promise<{ events: WireEvent[]; ended: boolean; status: number; contentType: string | null }> {
  const controller = new AbortController();
  const res = await fetch(url, { headers: options.headers ?? {}, signal: controller.signal });
  const events: WireEvent[] = [];
  if (res.status !== 200 || !res.body) return { events, ended: true, status: res.status, contentType: res.headers.get('content-type') };
  let ended = true;
  try {
    for await (const m of sseMessages(res.body)) {
      if (m.type === 'comment') {
        options.onComment?.(m.text);
        continue;
      }
      const e = { id: m.id, event: m.event, data: JSON.parse(m.data) as SwarmEvent };
      events.push(e);
      if (options.stopAfter?.(e, events)) {
        ended = false;
        break;
      }
    }
  } finally {
    controller.abort();
  }
  return { events, ended, status: res.status, contentType: res.headers.get('content-type') };
}

/** JSON request helper: returns status and parsed body. */
export async function request(
  base: string,
  method: string,
  path: string,
  body?: unknown,
  headers: Record<string, string> = {},
): Promise<{ status: number; body: any; headers: Headers }> {
  const init: RequestInit = { method, headers: { ...headers } };
  if (body !== undefined) {
    init.body = typeof body === 'string' ? body : JSON.stringify(body);
    (init.headers as Record<string, string>)['content-type'] = 'application/json';
  }
  const res = await fetch(base + path, init);
  const text = await res.text();
  let parsed: unknown = text;
  try {
    parsed = text ? JSON.parse(text) : undefined;
  } catch {
    // Not JSON: keep the text.
  }
  return { status: res.status, body: parsed, headers: res.headers };
}

/** A frame as received: a swarm event, or a control frame (`{ type: … }`). */
export type Frame = SwarmEvent | { type: string; [k: string]: unknown };

/** Whether a frame is a swarm event (control frames carry `type`, events `kind`). */
export const isEvent = (f: Frame): f is SwarmEvent => 'kind' in f;

/** A `ws` subscriber that queues what it receives, so tests can await frames in order. */
export class Subscriber {
  readonly frames: Frame[] = [];
  readonly closed: Promise<{ code: number; reason: string }>;
  private waiters: (() => void)[] = [];

  private constructor(readonly ws: WebSocket) {
    ws.on('message', (data) => {
      this.frames.push(JSON.parse(String(data)) as Frame);
      this.wake();
    });
    this.closed = new Promise((resolve) =>
      ws.on('close', (code, reason) => {
        resolve({ code, reason: reason.toString() });
        this.wake();
      }),
    );
  }

  /** Opens a subscriber; rejects with the HTTP status when the upgrade is refused. */
  static open(url: string, headers: Record<string, string> = {}): Promise<Subscriber> {
    return new Promise((resolve, reject) => {
      const ws = new WebSocket(url, { headers });
      const sub = new Subscriber(ws);
      ws.once('open', () => resolve(sub));
      ws.once('unexpected-response', (_req, res) => {
        reject(Object.assign(new Error(`upgrade refused: ${res.statusCode}`), { status: res.statusCode }));
        ws.terminate();
      });
      ws.once('error', reject);
    });
  }

  get events(): SwarmEvent[] {
    return this.frames.filter(isEvent);
  }

  /** Waits until `ok(frames)` holds; rejects if the connection closes first or on timeout. */
  async waitFor(ok: (frames: Frame[]) => boolean, timeoutMs = 5_000): Promise<Frame[]> {
    const deadline = Date.now() + timeoutMs;
    let isClosed = false;
    void this.closed.then(() => (isClosed = true));
    while (!ok(this.frames)) {
      if (isClosed) throw new Error(`closed before condition; got ${this.frames.length} frames`);
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`waitFor timed out with ${this.frames.length} frames`);
      await new Promise<void>((resolve) => {
        const t = setTimeout(resolve, left);
        this.waiters.push(() => {
          clearTimeout(t);
          resolve();
        });
      });
    }
    return this.frames;
  }

  private wake(): void {
    const w = this.waiters;
    this.waiters = [];
    for (const f of w) f();
  }
}

/**
 * The runtime and server the current test of a file serves; both are closed after each test,
 * the server first. Call once at the top of a test file.
 */
export function servedPerTest(): { runtime?: Runtime; server?: SwarmServer } {
  const served: { runtime?: Runtime; server?: SwarmServer } = {};
  afterEach(async () => {
    await served.server?.close();
    await served.runtime?.close();
    delete served.server;
    delete served.runtime;
  });
  return served;
}
