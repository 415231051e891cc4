/**
 * The A2A client as every runtime's default for remote handoffs, loaded on demand: the SDK
 * (`@a2a-js/sdk`, an optional peer) is imported with the first remote handoff, so an
 * application that never makes one never needs it installed. `xswarm/a2a` exports the client
 * itself without this indirection.
 *
 * @module
 */
import type { A2ARemoteOptions } from './client.js';
import type { RemoteAgentClient } from './remote.js';
import { importOptional, OPTIONAL_PEERS } from '../util/optional.js';
import { cardLimits } from './agent-fetch.js';

/**
 * The A2A client for remote agents (see `client.ts`). It is every runtime's default,
 * so the SDK (`@a2a-js/sdk`) loads with the first remote handoff, and only then must be installed.
 * Its options are checked at once, as the client itself checks them (a `TypeError`).
 */
export function a2aRemoteAgents(options: A2ARemoteOptions = {}): RemoteAgentClient {
  // A bad option fails where it is written (createRuntime), not at the first remote handoff.
  cardLimits(options, 'a2aRemoteAgents');
  let client: Promise<RemoteAgentClient> | undefined;
  const load = () => (client ??= importOptional('A remote (A2A) handoff', OPTIONAL_PEERS.a2a, () => import('./client.js')).then((m) => m.a2aRemoteAgents(options)));
  return {
    card: async (url, signal) => (await load()).card(url, signal),
    send: async (input, hooks, signal) => (await load()).send(input, hooks, signal),
  };
}
