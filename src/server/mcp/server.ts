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
 * **Two legs.** `createMcpHandler`'s 2026-07-28 leg is stateless by design: every request
 * carries its envelope (capabilities, log level), progress and log lines go on the response
 * stream of the request itself, and a typed pause is asked with an `input_required` result.
 * The 2025 era has sessions instead, which its clients use for what the 2026 era carries per
 * request: an `initialize` opens one (`./sessions.ts`: `Mcp-Session-Id`, the SDK's sessionful
 * transport, bounded in number and idle time) whose server keeps the client's capabilities and
 * log level, asks typed pauses with an elicitation request (`./swarm-server.ts`), serves
 * `resources/subscribe` with updates on the standalone `GET` stream
 * (`./resource-subscriptions.ts`) and resumes streams from `Last-Event-ID`. A 2025 request
 * without a session id (a client that never initialized, as this endpoint allowed when it was
 * stateless) is still served statelessly, by the SDK's fallback: `GET`/`DELETE` without one
 * answer 405. Sessions hold only protocol state; all swarm state lives in the runtime, keyed by
 * swarm id, so it survives a reconnect, another client, another process and, with a durable
 * store, a restart.
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
import { createMcpHandler as createSdkHandler, isInitializeRequest, isLegacyRequest } from '@modelcontextprotocol/server';
import type { AgentRegistry } from '../../registry/registry.js';
import { registerRegistryTools } from '../../registry/mcp-tools.js';
import { type HttpHandler, readBody, type ServerContext } from '../../http/http.js';
import type { McpSessionOptions } from '../options.js';
import { serveResourceSubscriptions } from './resource-subscriptions.js';
import { McpSessions } from './sessions.js';
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
  /** Bounds of the 2025-era sessions (see `./sessions.ts`). */
  sessions?: McpSessionOptions;
}

/**
 * The `/mcp` endpoint of `serve()`: MCP over Streamable HTTP (both protocol eras; sessions on
 * the 2025 one).
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
    // The 2025 requests that reach it are those without a session (see the module doc).
    legacy: 'stateless',
    maxRequestBodySize: ctx.maxBodyBytes,
  });
  const node = toNodeHandler(mcp, { maxRequestBodySize: ctx.maxBodyBytes });
  const sessions = new McpSessions(
    () => {
      const server = serverFor();
      const ids = new Set((catalog ??= swarmMcpCatalog(ctx.runtime)).entries.map((e) => e.def.id));
      return { server, end: serveResourceSubscriptions(server, ctx.runtime, ids) };
    },
    { ...options.sessions, maxRequestBodySize: ctx.maxBodyBytes },
  );
  const sessionNode = toNodeHandler(
    {
      // An `initialize` with a 2026 envelope claim is the modern leg's to answer (an error).
      fetch: async (request) =>
        request.headers.has('mcp-session-id') || (await isLegacyRequest(request, undefined, { maxRequestBodySize: ctx.maxBodyBytes }))
          ? sessions.fetch(request)
          : mcp.fetch(request),
    },
    { maxRequestBodySize: ctx.maxBodyBytes },
  );

  return {
    async handle(req: IncomingMessage, res: ServerResponse, url: URL): Promise<boolean> {
      if (url.pathname !== MCP_PATH) return false;
      // Over the limit, readBody's 413 goes to the server, which answers and closes.
      const body = req.method === 'POST' ? await readBody(req, ctx.maxBodyBytes) : Buffer.alloc(0);
      const sessionId = header(req, 'mcp-session-id');
      const toSessions = sessionId !== undefined || (req.method === 'POST' && initializes(body));
      // Not idle while answered: a GET stream stays open as long as the client listens.
      res.once('close', sessions.hold(sessionId));
      if (req.method === 'GET') flushHeadersAtOnce(res);
      // The Node stream is consumed; the adapter reads the buffered copy instead.
      await (toSessions ? sessionNode : node)(
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
    close: async () => {
      await sessions.close();
      await mcp.close();
    },
  };
}

/**
 * Sends the response head as soon as it is written: Node holds it until the first body bytes,
 * and a standalone stream may have nothing to say for long (until its keep-alive), leaving the
 * client waiting for the head of a stream that is already open.
 */
function flushHeadersAtOnce(res: ServerResponse): void {
  const writeHead = res.writeHead.bind(res) as (...args: unknown[]) => ServerResponse;
  res.writeHead = ((...args: unknown[]) => {
    const out = writeHead(...args);
    res.flushHeaders();
    return out;
  }) as ServerResponse['writeHead'];
}

function header(req: IncomingMessage, name: string): string | undefined {
  const value = req.headers[name];
  return Array.isArray(value) ? value[0] : value;
}

/** Whether a body is one JSON-RPC `initialize` request (which opens a session). */
function initializes(body: Buffer): boolean {
  // Most bodies are not: skip parsing them twice (the SDK parses them again).
  if (!body.includes('"initialize"')) return false;
  try {
    return isInitializeRequest(JSON.parse(body.toString('utf8')));
  } catch {
    return false;
  }
}
