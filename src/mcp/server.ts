/**
 * MCP (Streamable HTTP) at `/mcp`: every swarm definition as tools, a resource template and a
 * prompt (see {@link createSwarmMcpServer} for the surface and `./names.ts` for tool naming).
 *
 * **SDK line.** The v2 SDK (`@modelcontextprotocol/server` + `@modelcontextprotocol/node`):
 * it is the current line, takes zod 4 schemas natively as Standard Schema (v1 needs
 * zod-to-json-schema shims and emits draft-07), and serves both protocol eras: the 2025 one
 * (`initialize` handshake; every 1.x client and v2 clients by default) and 2026-07-28
 * (`server/discover`, per-request `_meta` envelope). v1's experimental Tasks, the one thing v2
 * lacks, are deleted in v2 and are not needed: a swarm is already a durable task addressed by
 * its swarm id (`<id>_run` then `<id>_get_result`, or `wait: true`).
 *
 * **Stateless transport.** `createMcpHandler`'s default: the 2026 era is stateless by design,
 * and 2025-era requests get a fresh server per POST (`legacy: 'stateless'`), so an
 * `initialize` is answered but no `Mcp-Session-Id` is issued, and `GET`/`DELETE /mcp` answer
 * 405, which clients of both SDK lines treat as "no standalone stream". Nothing is lost:
 * - all state lives in the runtime, keyed by swarm id, so it survives a reconnect, another
 *   client, and a server restart with a durable store; sessions would add nothing but a map
 *   to leak and sticky routing;
 * - progress notifications need only the response stream of the `tools/call` itself, which a
 *   stateless exchange has: the 2025 leg always answers POSTs as SSE, the 2026 leg upgrades to
 *   SSE once the handler emits a notification before its result.
 *
 * **Bodies.** We read the body ourselves with the server's limit (413 over it, answered as the
 * SDK's own adapter does) and hand the buffered bytes on, so the SDK parses them (malformed
 * JSON → JSON-RPC -32700) and never reads more than we allowed.
 *
 * **DNS rebinding.** The MCP spec requires Origin validation; the SDK's handler does none. When
 * the server is bound to a loopback address, requests whose `Host` or `Origin` is not a
 * loopback name are refused (403), so a web page cannot reach a local server through a
 * rebound domain. A server bound elsewhere on purpose relies on its bearer token.
 *
 * @module
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { toNodeHandler } from '@modelcontextprotocol/node';
import {
  createMcpHandler as createSdkHandler,
  hostHeaderValidationResponse,
  localhostAllowedHostnames,
  localhostAllowedOrigins,
  originValidationResponse,
} from '@modelcontextprotocol/server';
import { HttpError, type HttpHandler, readBody, type ServerContext } from '../server/http.js';
import { createSwarmMcpServer, swarmMcpCatalog, type SwarmMcpCatalog } from './swarm-server.js';

/**
 * Where the MCP endpoint is mounted.
 *
 * @example
 * new StreamableHTTPClientTransport(new URL(MCP_PATH, server.url));
 */
export const MCP_PATH = '/mcp';

const LOOPBACK = new Set(['127.0.0.1', 'localhost', '[::1]', '::1']);

/**
 * The `/mcp` endpoint of `serve()`: MCP over Streamable HTTP (both protocol eras, stateless).
 * The server in front of it has already checked the bearer token.
 *
 * @example
 * // In serve(): handlers = [createRestHandler(ctx), …, createMcpHandler(ctx)]
 * const handler = createMcpHandler(ctx);
 * if (!(await handler.handle(req, res, url))) res.writeHead(404).end();
 * await handler.close?.();
 */
export function createMcpHandler(ctx: ServerContext): HttpHandler {
  // Definitions are fixed once the runtime exists; the SDK builds a server per request.
  let catalog: SwarmMcpCatalog | undefined;
  const mcp = createSdkHandler(() => createSwarmMcpServer(ctx.runtime, (catalog ??= swarmMcpCatalog(ctx.runtime))), {
    // Explicitly the default: 2025-era clients get a fresh server per POST (see the module doc).
    legacy: 'stateless',
    maxRequestBodySize: ctx.maxBodyBytes,
  });
  const node = toNodeHandler(
    {
      fetch: (request) => {
        if (isLoopback(ctx.baseUrl())) {
          const refused = hostHeaderValidationResponse(request, localhostAllowedHostnames()) ?? originValidationResponse(request, localhostAllowedOrigins());
          if (refused) return Promise.resolve(refused);
        }
        return mcp.fetch(request);
      },
    },
    { maxRequestBodySize: ctx.maxBodyBytes },
  );

  return {
    async handle(req: IncomingMessage, res: ServerResponse, url: URL): Promise<boolean> {
      if (url.pathname !== MCP_PATH) return false;
      let body: Buffer;
      try {
        body = req.method === 'POST' ? await readBody(req, ctx.maxBodyBytes) : Buffer.alloc(0);
      } catch (e) {
        if (!(e instanceof HttpError) || e.status !== 413) throw e;
        tooLarge(req, res, e.message);
        return true;
      }
      // The Node stream is consumed; the adapter reads the buffered copy instead.
      await node(
        {
          method: req.method,
          url: req.url,
          headers: req.headers,
          async *[Symbol.asyncIterator]() {
            if (body.length > 0) yield body;
          },
        },
        res,
      );
      return true;
    },
    close: () => mcp.close(),
  };
}

function isLoopback(baseUrl: string): boolean {
  if (!baseUrl) return true;
  return LOOPBACK.has(new URL(baseUrl).hostname);
}

/** 413 with the JSON-RPC error body the SDK's own Node adapter sends for an oversized body. */
function tooLarge(req: IncomingMessage, res: ServerResponse, message: string): void {
  const text = JSON.stringify({ jsonrpc: '2.0', error: { code: -32000, message }, id: null });
  res.writeHead(413, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  res.end(text);
  // Drain what the client still sends so it can read the answer instead of a reset.
  req.resume();
}
