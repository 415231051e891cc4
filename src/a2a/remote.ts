/**
 * Remote A2A agents as handoff targets (placeholder until the A2A client lands).
 *
 * @module
 */
import type { RemoteAgentClient } from '../remote.js';
import { fallbackCard } from '../remote.js';

/**
 * The A2A client for remote agents.
 *
 * @example
 * const runtime = createRuntime({ swarms, model, remote: a2aRemoteAgents() });
 */
export function a2aRemoteAgents(): RemoteAgentClient {
  return {
    async card(url) {
      return fallbackCard(url);
    },
    async send(input) {
      return { ok: false, content: `Remote agent at ${input.url}: the A2A client is not available yet` };
    },
  };
}
