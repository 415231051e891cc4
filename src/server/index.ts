/**
 * `serve(runtime)`: every swarm and team over REST + SSE and WebSocket subscribers, the swarms
 * over A2A and MCP too, on one HTTP server bound to 127.0.0.1 by default.
 *
 * Every request passes, in this order: the cross-origin policy (`./policy.ts`: Host and
 * Origin, 403), the bearer token when one is set (401), and the media-type rule (415); only
 * then does a protocol handler see it. `/health` skips all three; agent cards and the
 * inspector page's files (`/inspector/…`, not its API) skip the token. A WebSocket upgrade may
 * carry the token as the subprotocol `xswarm.bearer.<base64url(token)>` instead of the
 * `Authorization` header (a browser cannot set headers on a WebSocket). A server bound to a
 * non-loopback address needs a token, or `insecureNoToken: true`.
 *
 * @module
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { errorText } from '../../machines/error-text.js';
import type { Runtime } from '../runtime/types.js';
import { createA2AHandler } from './a2a/server.js';
import { createMcpHandler, MCP_PATH } from './mcp/server.js';
import { createEventSocketHandler } from './events-socket.js';
import { authorized, HttpError, upgradeAuthorized, type HttpHandler, MAX_BODY_BYTES, sendJson, type ServerContext } from '../http/http.js';
import { isLoopbackHost, requestPolicy } from './policy.js';
import { createRestHandler } from './rest.js';
import { createTeamHandler } from './teams.js';
import { createInspectorApiHandler } from './inspector/api.js';
import { createInspectorStaticHandler, isInspectorFile } from './inspector/static.js';
import type { ServeOptions, SwarmServer } from './options.js';
import { createMetricsHandler, METRICS_PATH } from './metrics.js';
import { createPushInboxHandler, isPushInboxPath } from './push-inbox-route.js';

export type { ServeOptions, SwarmServer } from './options.js';

/**
 * The error body in each protocol's shape: JSON-RPC for MCP (what its clients parse), and for
 * A2A `{ message, status }` (its SDK clients read any `error` key as a JSON-RPC error and lose
 * the HTTP status); `{ error }` elsewhere.
 */
function errorBody(pathname: string, status: number, message: string): unknown {
  if (pathname === MCP_PATH) return { jsonrpc: '2.0', error: { code: -32000, message }, id: null };
  if (pathname.startsWith('/a2a/')) return { message, status };
  return { error: message };
}

/**
 * Agent cards stay readable without a token: discovery must work before authentication. So do
 * the inspector page's files: they hold no data, and the page must load to ask for a token.
 */
function isPublic(url: URL): boolean {
  return /^\/a2a\/[^/]+\/\.well-known\/(agent-card|agent)\.json$/.test(url.pathname) || url.pathname === '/health' || isInspectorFile(url.pathname);
}

/**
 * Serves a runtime's swarms over REST + SSE, WebSocket, A2A and MCP, and its teams over REST +
 * SSE and WebSocket (`./teams.ts`), and the inspector page at `/inspector/` with its API
 * (`./inspector/`), on one HTTP server, bound to 127.0.0.1 unless `host` says
 * otherwise; every endpoint is guarded by the same request policy.
 *
 * @example
 * import { serve } from 'xswarm/server';
 * const server = await serve(runtime, { port: 4000 });
 * console.log(`POST ${server.url}/swarms/activity-planner`);
 * await server.close();
 */
export async function serve(runtime: Runtime, options: ServeOptions = {}): Promise<SwarmServer> {
  const host = options.host ?? '127.0.0.1';
  if (!isLoopbackHost(host) && !options.token) {
    if (!options.insecureNoToken) {
      throw new Error(
        `Refusing to serve on ${host}, not a loopback address, without a token: anyone who can reach it could drive every swarm. ` +
          'Set a token (serve option token, xswarm serve --token-file or XSWARM_TOKEN), or pass insecureNoToken: true (--insecure-no-token) if that is really meant.',
      );
    }
    process.stderr.write(
      `\n*** xswarm WARNING: serving on ${host} WITHOUT A TOKEN (insecureNoToken). Anyone who can reach this address can start, ` + 'stop and read every swarm. ***\n\n',
    );
  }
  const policy = requestPolicy({
    bindHost: host,
    ...(options.allowedHosts ? { allowedHosts: options.allowedHosts } : {}),
    ...(options.allowedOrigins ? { allowedOrigins: options.allowedOrigins } : {}),
  });
  let base = '';
  const ctx: ServerContext = {
    runtime,
    ...(options.token ? { token: options.token } : {}),
    maxBodyBytes: options.maxBodyBytes ?? MAX_BODY_BYTES,
    baseUrl: () => base,
  };
  const handlers: HttpHandler[] = [
    createRestHandler(ctx, options.keepAliveMs !== undefined ? { keepAliveMs: options.keepAliveMs } : {}),
    createTeamHandler(ctx, options.keepAliveMs !== undefined ? { keepAliveMs: options.keepAliveMs } : {}),
    createEventSocketHandler(ctx, options.subscribers),
    createA2AHandler(ctx, {
      ...(options.allowedPushHosts ? { allowedPushHosts: options.allowedPushHosts } : {}),
      ...(options.pushRetry ? { pushRetry: options.pushRetry } : {}),
      ...(options.pushLease ? { pushLease: options.pushLease } : {}),
    }),
    createMcpHandler(ctx, {
      ...(options.registry ? { registry: options.registry } : {}),
      ...(options.mcpSessions ? { sessions: options.mcpSessions } : {}),
    }),
    createInspectorApiHandler(ctx),
    createInspectorStaticHandler(),
    createMetricsHandler(ctx),
    ...(options.pushInbox ? [createPushInboxHandler(ctx, options.pushInbox)] : []),
  ];

  const onRequest = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const url = new URL(req.url ?? '/', base || 'http://127.0.0.1');
    if (url.pathname === '/health') return sendJson(res, 200, { ok: true });
    policy.check(req);
    // The push inbox authenticates by each call's secret (push-inbox-route.ts).
    const inbox = options.pushInbox !== undefined && isPushInboxPath(url);
    if (!isPublic(url) && !inbox && !(options.publicMetrics && url.pathname === METRICS_PATH) && !authorized(req, ctx.token)) {
      res.setHeader('www-authenticate', 'Bearer');
      throw new HttpError(401, 'Missing or wrong bearer token');
    }
    if (!inbox) policy.checkBody(req);
    for (const h of handlers) if (await h.handle(req, res, url)) return;
    throw new HttpError(404, `No endpoint at ${req.method} ${url.pathname}`);
  };

  const server = createServer((req, res) => {
    onRequest(req, res).catch((err: unknown) => {
      const status = err instanceof HttpError ? err.status : 500;
      const message = errorText(err);
      if (res.headersSent) return void res.end();
      // A refused body is left unread (see readBody), as is any body of a request refused
      // before reading it (401, 403, 415): close the connection once the answer is out
      // instead of reading the rest of the body to reach a next request.
      if (status === 413 || !req.complete) res.setHeader('connection', 'close');
      const text = status === 500 ? `Internal error: ${message}` : message;
      sendJson(res, status, errorBody((req.url ?? '/').split('?')[0]!, status, text));
    });
  });
  server.on('upgrade', (req, socket, head) => {
    const url = new URL(req.url ?? '/', base || 'http://127.0.0.1');
    try {
      policy.check(req);
    } catch (e) {
      const message = errorText(e);
      socket.end(`HTTP/1.1 403 Forbidden\r\ncontent-type: text/plain\r\ncontent-length: ${Buffer.byteLength(message)}\r\n\r\n${message}`);
      return;
    }
    if (!upgradeAuthorized(req, ctx.token)) {
      socket.end('HTTP/1.1 401 Unauthorized\r\nwww-authenticate: Bearer\r\ncontent-length: 0\r\n\r\n');
      return;
    }
    for (const h of handlers) if (h.upgrade?.(req, socket, head, url)) return;
    socket.end('HTTP/1.1 404 Not Found\r\ncontent-length: 0\r\n\r\n');
  });
  server.on('clientError', (_err, socket) => socket.end('HTTP/1.1 400 Bad Request\r\ncontent-length: 0\r\n\r\n'));

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, host, () => resolve());
  });
  const { address, port } = server.address() as AddressInfo;
  base = `http://${address.includes(':') ? `[${address}]` : address}:${port}`;
  options.pushInbox?.attach(base);
  return {
    url: base,
    async close() {
      for (const h of handlers) await h.close?.();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
