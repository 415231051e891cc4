/**
 * The swarm registry tool set a definition lists in its `tools`: with it, an orchestrator
 * discovers registered swarm definitions by keyword and hands off to one of them. How the tools
 * work once a runtime has its definitions is the catalog's (`catalog/registry-tools.ts`).
 *
 * @module
 */

/** Most matches one search returns unless `swarmRegistry({ limit })` says otherwise. */
export const DEFAULT_REGISTRY_LIMIT = 5;

/**
 * The marker a definition puts in its `tools` to get `swarm_registry_search` and
 * `swarm_registry_handoff`.
 */
export interface SwarmRegistryTools {
  readonly kind: 'swarm-registry';
  /** Most matches one search returns. */
  readonly limit: number;
}

/**
 * The swarm registry tool set.
 *
 * `swarm_registry_search(query, capabilities?)` matches keywords: the query is split into
 * lower-case words (three letters or more, common stop words dropped); a definition scores one
 * point per word found in its id, name, description or capabilities; definitions that lack a
 * requested capability are left out; best scores first, ties by id. Capabilities of a
 * definition are the names of its tools and the ids of its handoff targets.
 * `swarm_registry_handoff(swarm_id, request | input, customization?)` hands off exactly as a
 * declared swarm handoff would, but only to an id that a search in the same swarm returned.
 *
 * @example
 * import { defineSwarm, swarmRegistry } from 'xswarm';
 * const planner = defineSwarm({ id: 'planner', instructions: 'Find a swarm for each task.', tools: [swarmRegistry({ limit: 3 })] });
 */
export function swarmRegistry(options: { limit?: number } = {}): SwarmRegistryTools {
  return Object.freeze({ kind: 'swarm-registry' as const, limit: options.limit ?? DEFAULT_REGISTRY_LIMIT });
}

/** What a search returns per matching definition. */
export interface SwarmCard {
  id: string;
  name: string;
  description: string;
  inputSchema: Record<string, unknown>;
  resultSchema: Record<string, unknown>;
  capabilities: string[];
  customizable: boolean;
}
