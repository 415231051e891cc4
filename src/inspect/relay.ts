/**
 * The inspection relay: a WebSocket server on 127.0.0.1 that speaks `@statelyai/inspect`'s wire
 * protocol (one JSON text frame per `@xstate.actor`, `@xstate.event` or `@xstate.snapshot`), so
 * that package's receiver (`createWebSocketReceiver`) and the hosted Stately inspector (through
 * the bridge page served at `/`) show the runtime's actors unchanged.
 *
 * Frames come from this process (`relay.inspect`, converted by the package's own
 * `createInspector`) or from other processes (`createWebSocketInspector({ url: relay.wsUrl })`).
 * Unlike the package's `createInspectorServer` (all interfaces, no auth, a ring of the last 200
 * messages), the relay keeps the *current* state: the registration and the latest snapshot of
 * every live actor, dropped once the actor is done, failed or stopped. A viewer that connects
 * late gets exactly that, once per actor, then the live stream.
 *
 * @module
 */
import { timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import { createInspector } from '@statelyai/inspect';
import type { InspectionEvent, Observer } from 'xstate';
import { type WebSocket, WebSocketServer } from 'ws';
import { bridgePage } from './bridge.js';
import { LiveActors } from './live-actors.js';

/** Options of {@link inspectRelay}. */
export interface InspectRelayOptions {
  /** The port (default 0: a free one, read it from `relay.port`). */
  port?: number;
  /** The interface (default `127.0.0.1`); another than loopback is refused without a `token`. */
  host?: string;
  /**
   * A shared secret: WebSocket clients pass it as `?token=` (in `relay.wsUrl`), the bridge page
   * is opened with it (in `relay.url`). Without one, only loopback clients of this host may
   * connect, and a browser page from another origin may not.
   */
  token?: string;
  /** The Stately inspector the bridge page frames (default `https://stately.ai/inspect`). */
  inspectorUrl?: string;
}

/** A running relay (see {@link inspectRelay}). */
export interface InspectRelay {
  /** The bridge page: open it in a browser (online) to watch in the hosted Stately inspector. */
  readonly url: string;
  /** The WebSocket address for `createWebSocketReceiver({ server })` and `createWebSocketInspector({ url })`. */
  readonly wsUrl: string;
  readonly port: number;
  /** The observer to give `createRuntime({ inspect })`: this process's actors, relayed. */
  readonly inspect: Observer<InspectionEvent>;
  /** How many actors the relay holds as live (what a viewer connecting now is sent). */
  liveActors(): number;
  /** Closes every connection and the server. */
  close(): Promise<void>;
}

/** The largest frame a client may send (a snapshot with a long conversation fits easily). */
const MAX_FRAME_BYTES = 16 * 1024 * 1024;
/** WebSocket close code for "invalid frame payload data" (RFC 6455). */
const INVALID_PAYLOAD = 1007;
const LOOPBACK = new Set(['127.0.0.1', '::1', 'localhost']);

/**
 * Starts a relay of inspection events on 127.0.0.1. Give `relay.inspect` to `createRuntime`,
 * open `relay.url` in a browser for the Stately inspector, or connect `@statelyai/inspect`'s
 * `createWebSocketReceiver({ server: relay.wsUrl })`.
 *
 * @example
 * import { createRuntime, scriptedModel } from 'xswarm';
 * import { inspectRelay } from 'xswarm/inspect';
 * const relay = await inspectRelay({ port: 0 });
 * const runtime = createRuntime({ swarms, model: scriptedModel(() => ({ text: 'ok' })), inspect: relay.inspect });
 * console.log(`Stately inspector: ${relay.url}`);
 * await runtime.close();
 * await relay.close();
 */
export async function inspectRelay(options: InspectRelayOptions = {}): Promise<InspectRelay> {
  const host = options.host ?? '127.0.0.1';
  const { token } = options;
  if (token !== undefined && (typeof token !== 'string' || token.length === 0)) throw new TypeError('inspectRelay: token must be a non-empty string');
  if (!LOOPBACK.has(host) && token === undefined) throw new TypeError(`inspectRelay: host ${host} is not loopback; give a token to expose the relay`);
  const inspectorUrl = new URL(options.inspectorUrl ?? 'https://stately.ai/inspect').href;

  const live = new LiveActors();
  const wss = new WebSocketServer({ noServer: true, maxPayload: MAX_FRAME_BYTES });
  let port = 0;
  const page = (req: IncomingMessage, res: ServerResponse) => {
    if (!allowed(req, port, token)) return refuse(res, 403, 'forbidden');
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store' });
    res.end(bridgePage(inspectorUrl));
  };
  const server: Server = createServer(page);
  server.on('upgrade', (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    if (!allowed(req, port, token)) {
      socket.end('HTTP/1.1 403 Forbidden\r\nconnection: close\r\ncontent-length: 0\r\n\r\n');
      return;
    }
    wss.handleUpgrade(req, socket, head, (ws) => connected(ws));
  });

  const send = (text: string, except?: WebSocket) => {
    for (const client of wss.clients) if (client !== except && client.readyState === client.OPEN) client.send(text);
  };
  /** A frame from this process or a client: kept as state, relayed unless it repeats what is kept. */
  const accept = (text: string, from?: WebSocket): boolean => {
    const verdict = live.accept(text, from);
    if (verdict === 'invalid') return false;
    if (verdict === 'relay') send(text, from);
    return true;
  };
  const connected = (ws: WebSocket) => {
    // The current state first, once per live actor: a late viewer sees everything at once.
    for (const text of live.frames()) ws.send(text);
    ws.on('message', (data, binary) => {
      if (binary || !accept(data.toString(), ws)) {
        ws.close(INVALID_PAYLOAD, 'xswarm inspect relay: expected JSON text frames of @statelyai/inspect events');
      }
    });
    ws.on('error', () => ws.terminate());
    ws.on('close', () => live.dropOwner(ws));
  };

  // This process's actors: converted by the package's own inspector, then kept and relayed.
  const inspector = createInspector({ send: (event: unknown) => accept(frameText(event)), start() {}, stop() {} } as never);

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  port = (server.address() as { port: number }).port;
  const origin = `http://${host.includes(':') ? `[${host}]` : host}:${port}`;
  const query = token === undefined ? '' : `?token=${encodeURIComponent(token)}`;
  return {
    url: `${origin}/${query}`,
    wsUrl: `${origin.replace('http', 'ws')}/${query}`,
    port,
    inspect: inspector.inspect as Observer<InspectionEvent>,
    liveActors: () => live.size,
    close: () =>
      new Promise<void>((resolve) => {
        for (const client of wss.clients) client.terminate();
        wss.close();
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

/** One event as a frame's text: functions named (as the package does), a repeated object left out. */
function frameText(event: unknown): string {
  const seen = new WeakSet<object>();
  try {
    return JSON.stringify(event, (_key, value: unknown) => {
      if (typeof value === 'function') return { type: value.name };
      if (typeof value === 'bigint') return value.toString();
      if (value && typeof value === 'object') {
        if (seen.has(value)) return undefined;
        seen.add(value);
      }
      return value;
    });
  } catch {
    // A snapshot that cannot be written out: the actor still shows, without it.
    return JSON.stringify({ ...(event as object), snapshot: { status: 'active' } });
  }
}

/**
 * Whether a request may read the relay: the token when there is one; without one, a Host of this
 * relay on loopback (no DNS rebinding) and, from a browser, a page of the relay's own origin.
 */
function allowed(req: IncomingMessage, port: number, token: string | undefined): boolean {
  if (token !== undefined) {
    const given = new URL(req.url ?? '/', 'http://relay').searchParams.get('token') ?? '';
    const a = Buffer.from(given);
    const b = Buffer.from(token);
    return a.length === b.length && timingSafeEqual(a, b);
  }
  const hostHeader = req.headers.host ?? '';
  const hostName = hostHeader.replace(/:\d+$/, '').replace(/^\[(.*)\]$/, '$1');
  if (!LOOPBACK.has(hostName) || !hostHeader.endsWith(`:${port}`)) return false;
  const origin = req.headers.origin;
  if (origin === undefined) return true;
  try {
    const o = new URL(origin);
    return LOOPBACK.has(o.hostname.replace(/^\[(.*)\]$/, '$1')) && o.port === String(port);
  } catch {
    return false;
  }
}

function refuse(res: ServerResponse, status: number, text: string): void {
  res.writeHead(status, { 'content-type': 'text/plain' });
  res.end(text);
}
