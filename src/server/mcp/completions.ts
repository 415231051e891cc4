/**
 * Argument completion (`completion/complete`) for the MCP surface: the `swarmId` of a result
 * resource template completes to the ids of the definition's recent swarms, so a client can
 * offer them while its user types a `swarm://<id>/{swarmId}/result` URI.
 *
 * @module
 */
import type { Runtime } from '../../runtime/types.js';

/** How many ids a completion returns at most: the spec caps a response at 100 values. */
export const MAX_COMPLETIONS = 100;

/**
 * The ids of a definition's swarms starting with `prefix`, most recent first (the order
 * `runtime.list` gives), at most {@link MAX_COMPLETIONS}.
 */
export async function completeSwarmIds(runtime: Runtime, definitionId: string, prefix: string): Promise<string[]> {
  // The store lists by recency and has no prefix filter: take a bounded page and filter it.
  const swarms = await runtime.list({ definitionId, limit: 500 });
  return swarms
    .map((s) => s.swarmId)
    .filter((id) => id.startsWith(prefix))
    .slice(0, MAX_COMPLETIONS);
}
