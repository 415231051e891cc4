/**
 * Entry points whose implementations load on first use: the HTTP/A2A/MCP servers and the A2A
 * client pull in large SDKs that an application which embeds xswarm without them never needs.
 *
 * @module
 */
import type { A2ARemoteOptions } from './a2a/remote.js';
import type { RemoteAgentClient } from './remote.js';
import type { Runtime } from './runtime.js';
import type { ServeOptions, SwarmServer } from './server/index.js';

/**
 * Serves a runtime's swarms over REST + SSE, WebSocket, A2A and MCP (see `src/server/index.ts`).
 *
 * @example
 * const server = await serve(runtime, { port: 4000 });
 * await server.close();
 */
export async function serve(runtime: Runtime, options: ServeOptions = {}): Promise<SwarmServer> {
  const server = await import('./server/index.js');
  return server.serve(runtime, options);
}

/**
 * The A2A client for remote agents (see `src/a2a/remote.ts`); the SDK loads with the first call.
 *
 * @example
 * const runtime = createRuntime({ swarms, model, remote: a2aRemoteAgents({ headers: { authorization: 'Bearer T' } }) });
 */
export function a2aRemoteAgents(options: A2ARemoteOptions = {}): RemoteAgentClient {
  let client: Promise<RemoteAgentClient> | undefined;
  const load = () => (client ??= import('./a2a/remote.js').then((m) => m.a2aRemoteAgents(options)));
  return {
    card: async (url, signal) => (await load()).card(url, signal),
    send: async (input, hooks, signal) => (await load()).send(input, hooks, signal),
  };
}
