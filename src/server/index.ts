/**
 * `serve(runtime)`: every swarm over REST + SSE, WebSocket subscribers, A2A and MCP, on one
 * HTTP server bound to 127.0.0.1 by default.
 *
 * @module
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Runtime } from '../runtime.js';
import { createA2AHandler } from '../a2a/server.js';
import { createMcpHandler } from '../mcp/server.js';
import { createEventSocketHandler, type EventSocketOptions } from './events-socket.js';
import { authorized, HttpError, type HttpHandler, MAX_BODY_BYTES, sendJson, type ServerContext } from './http.js';
import { createRestHandler } from './rest.js';

/**
 * Options of {@link serve}.
 *
 * @example
 * const options: ServeOptions = { port: 4000, token: process.env.XSWARM_TOKEN };
 */
export interface ServeOptions {
  /** Default 0: any free port. */
  port?: number;
  /** Default `127.0.0.1`; bind elsewhere only on purpose. */
  host?: string;
  /** Bearer token required on every endpoint except agent cards. */
  token?: string;
  /** Largest request body, default 1 MiB. */
  maxBodyBytes?: number;
  /** Interval of SSE keep-alive comments, default 15 000 ms. */
  keepAliveMs?: number;
  /** Limits of WebSocket event subscribers (buffer size, stall timeout, poll interval). */
  subscribers?: EventSocketOptions;
}

/**
 * A running server.
 *
 * @example
 * const server: SwarmServer = await serve(runtime);
 * await fetch(`${server.url}/health`);
 */
export interface SwarmServer {
  /** Base URL, e.g. `http://127.0.0.1:4000`. */
  url: string;
  close(): Promise<void>;
}

/** Agent cards stay readable without a token: discovery must work before authentication. */
function isPublic(url: URL): boolean {
  return /^\/a2a\/[^/]+\/\.well-known\/(agent-card|agent)\.json$/.test(url.pathname) || url.pathname === '/health';
}

/**
 * Serves a runtime's swarms.
 *
 * @example
 * const server = await serve(runtime, { port: 4000 });
 * console.log(`POST ${server.url}/swarms/activity-planner`);
 * await server.close();
 */
export async function serve(runtime: Runtime, options: ServeOptions = {}): Promise<SwarmServer> {
  let base = '';
  const ctx: ServerContext = {
    runtime,
    ...(options.token ? { token: options.token } : {}),
    maxBodyBytes: options.maxBodyBytes ?? MAX_BODY_BYTES,
    baseUrl: () => base,
  };
  const handlers: HttpHandler[] = [
    createRestHandler(ctx, options.keepAliveMs !== undefined ? { keepAliveMs: options.keepAliveMs } : {}),
    createEventSocketHandler(ctx, options.subscribers),
    createA2AHandler(ctx),
    createMcpHandler(ctx),
  ];

  const onRequest = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const url = new URL(req.url ?? '/', base || 'http://127.0.0.1');
    if (url.pathname === '/health') return sendJson(res, 200, { ok: true });
    if (!isPublic(url) && !authorized(req, ctx.token)) {
      res.setHeader('www-authenticate', 'Bearer');
      throw new HttpError(401, 'Missing or wrong bearer token');
    }
    for (const h of handlers) if (await h.handle(req, res, url)) return;
    throw new HttpError(404, `No endpoint at ${req.method} ${url.pathname}`);
  };

  const server = createServer((req, res) => {
    onRequest(req, res).catch((err: unknown) => {
      const status = err instanceof HttpError ? err.status : 500;
      const message = err instanceof Error ? err.message : String(err);
      if (res.headersSent) return void res.end();
      // After a refused upload the connection holds unread body bytes: do not reuse it.
      if (status === 413) res.setHeader('connection', 'close');
      const text = status === 500 ? `Internal error: ${message}` : message;
      // A2A SDK clients read any `error` key as a JSON-RPC error and lose the HTTP status.
      sendJson(res, status, req.url?.startsWith('/a2a/') ? { message: text, status } : { error: text });
      // Do not keep reading a body we refused.
      if (status === 413) req.resume();
    });
  });
  server.on('upgrade', (req, socket, head) => {
    const url = new URL(req.url ?? '/', base || 'http://127.0.0.1');
    if (!authorized(req, ctx.token)) {
      socket.end('HTTP/1.1 401 Unauthorized\r\nwww-authenticate: Bearer\r\ncontent-length: 0\r\n\r\n');
      return;
    }
    for (const h of handlers) if (h.upgrade?.(req, socket, head, url)) return;
    socket.end('HTTP/1.1 404 Not Found\r\ncontent-length: 0\r\n\r\n');
  });
  server.on('clientError', (_err, socket) => socket.end('HTTP/1.1 400 Bad Request\r\ncontent-length: 0\r\n\r\n'));

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, options.host ?? '127.0.0.1', () => resolve());
  });
  const { address, port } = server.address() as AddressInfo;
  base = `http://${address.includes(':') ? `[${address}]` : address}:${port}`;
  return {
    url: base,
    async close() {
      for (const h of handlers) await h.close?.();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
