/**
 * `serve` as the main entry point exports it, loaded on demand: the servers pull in packages
 * (optional peers: express, ws, the A2A and MCP SDKs) that an application embedding xswarm
 * without them never installs. `xswarm/server` exports the same function without the
 * indirection.
 *
 * @module
 */
import { importOptional, OPTIONAL_PEERS } from '../util/optional.js';
import type { Runtime } from '../runtime/types.js';
import type { ServeOptions, SwarmServer } from './options.js';

/**
 * Serves a runtime's swarms over REST + SSE, WebSocket, A2A and MCP.
 * Needs the packages of `xswarm/server`; rejects naming those that are missing.
 *
 * @example
 * import { serve } from 'xswarm';
 * const server = await serve(runtime, { port: 4000 });
 * await server.close();
 */
export async function serve(runtime: Runtime, options: ServeOptions = {}): Promise<SwarmServer> {
  const server = await importOptional('serve()', OPTIONAL_PEERS.server, () => import('./index.js'));
  return server.serve(runtime, options);
}
