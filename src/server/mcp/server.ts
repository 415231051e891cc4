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
 * **Bodies.** We read the body ourselves with the server's limit and hand the buffered bytes
 * on, so the SDK parses them (malformed JSON → JSON-RPC -32700) and never reads more than we
 * allowed. Over the limit, the server answers 413 (a JSON-RPC error body, as the SDK's own
 * adapter sends) and closes the connection without reading the rest.
 *
 * **DNS rebinding.** The MCP spec requires Origin validation; the SDK's handler does none. The
 * server's one cross-origin policy (`../server/policy.ts`: Host, Origin, `application/json`)
 * runs before this handler, as for every other endpoint.
 *
 * @module
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { toNodeHandler } from '@modelcontextprotocol/node';
import { createMcpHandler as createSdkHandler } from '@modelcontextprotocol/server';
import type { AgentRegistry } from '../../registry/registry.js';
import { registerRegistryTools } from '../../registry/mcp-tools.js';
import { type HttpHandler, readBody, type ServerContext } from '../../http/http.js';
import { createSwarmMcpServer, swarmMcpCatalog, type SwarmMcpCatalog } from './swarm-server.js';

/** Where the MCP endpoint is mounted. */
export const MCP_PATH = '/mcp';

/** Options of {@link createMcpHandler}. */
export interface McpHandlerOptions {
  /**
   * An agent registry whose tools (`create_task`, `list_agents`, `agent_message`,
   * `get_task_status`, `cancel_task`; see `../registry/mcp-tools.ts`) are served next to the swarms' tools.
   */
  registry?: AgentRegistry;
}

/**
 * The `/mcp` endpoint of `serve()`: MCP over Streamable HTTP (both protocol eras, stateless).
 * The server in front of it has already applied the cross-origin policy and the bearer token.
 */
export function createMcpHandler(ctx: ServerContext, options: McpHandlerOptions = {}): HttpHandler {
  // Definitions are fixed once the runtime exists; the SDK builds a server per request.
  let catalog: SwarmMcpCatalog | undefined;
  const registry = options.registry;
  const serverFor = () => {
    const server = createSwarmMcpServer(ctx.runtime, (catalog ??= swarmMcpCatalog(ctx.runtime)));
    if (registry) registerRegistryTools(server, registry);
    return server;
  };
  const mcp = createSdkHandler(serverFor, {
    // Explicitly the default: 2025-era clients get a fresh server per POST (see the module doc).
    legacy: 'stateless',
    maxRequestBodySize: ctx.maxBodyBytes,
  });
  const node = toNodeHandler(mcp, { maxRequestBodySize: ctx.maxBodyBytes });

  return {
    async handle(req: IncomingMessage, res: ServerResponse, url: URL): Promise<boolean> {
      if (url.pathname !== MCP_PATH) return false;
      // Over the limit, readBody's 413 goes to the server, which answers and closes.
      const body = req.method === 'POST' ? await readBody(req, ctx.maxBodyBytes) : Buffer.alloc(0);
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
