/**
 * The optional parts exported from the main entry point, loaded on demand: the servers and
 * the A2A client are imported on first use, since they pull in packages (optional peer
 * dependencies) that an application embedding xswarm without them never installs. Their
 * subpaths (`xswarm/server`, `xswarm/a2a`) export the same functions without the indirection.
 *
 * @module
 */
import type { A2ARemoteOptions } from './a2a/client.js';
import { importOptional, OPTIONAL_PEERS } from './util/optional.js';
import type { RemoteAgentClient } from './runners/remote-agent.js';
import type { Runtime } from './runtime/types.js';
import type { ServeOptions, SwarmServer } from './server/index.js';

/**
 * Serves a runtime's swarms over REST + SSE, WebSocket, A2A and MCP (see `src/server/index.ts`).
 * Needs the packages of `xswarm/server`; rejects naming those that are missing.
 *
 * @example
 * import { serve } from 'xswarm';
 * const server = await serve(runtime, { port: 4000 });
 * await server.close();
 */
export async function serve(runtime: Runtime, options: ServeOptions = {}): Promise<SwarmServer> {
  const server = await importOptional('serve()', OPTIONAL_PEERS.server, () => import('./server/index.js'));
  return server.serve(runtime, options);
}

/**
 * The A2A client for remote agents (see `src/a2a/client.ts`). It is every runtime's default,
 * so the SDK (`@a2a-js/sdk`) loads with the first remote handoff, and only then must be installed.
 */
export function a2aRemoteAgents(options: A2ARemoteOptions = {}): RemoteAgentClient {
  let client: Promise<RemoteAgentClient> | undefined;
  const load = () =>
    (client ??= importOptional('A remote (A2A) handoff', OPTIONAL_PEERS.a2a, () => import('./a2a/client.js')).then((m) =>
      m.a2aRemoteAgents(options),
    ));
  return {
    card: async (url, signal) => (await load()).card(url, signal),
    send: async (input, hooks, signal) => (await load()).send(input, hooks, signal),
  };
}
