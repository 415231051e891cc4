/**
 * The swarm registry tool set: lets an orchestrator discover registered swarm definitions by
 * keyword (`swarm_registry_search`, a regular tool) and hand off to one of them
 * (`swarm_registry_handoff`, planned in `actors/plan-handoff.ts` like any swarm handoff).
 *
 * @module
 */
import { z } from 'zod';
import type { ToolSpec } from '../../machines/messages.js';
import { REGISTRY_HANDOFF, REGISTRY_SEARCH } from '../../actors/index.js';
import { tool, type Tool } from '../define/tool.js';
import { customizationJsonSchema } from './customization.js';

/** Most matches one search returns unless `swarmRegistry({ limit })` says otherwise. */
const DEFAULT_LIMIT = 5;

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
  return Object.freeze({ kind: 'swarm-registry' as const, limit: options.limit ?? DEFAULT_LIMIT });
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

const STOP_WORDS = new Set(['the', 'and', 'for', 'with', 'that', 'this', 'from', 'into', 'about', 'can', 'are', 'any', 'you', 'who', 'what']);

/** Lower-case keywords of a text. */
export function keywords(text: string): string[] {
  return text
    .toLowerCase()
    .split(/[^a-z0-9]+/)
    .filter((w) => w.length >= 3 && !STOP_WORDS.has(w));
}

/** Ranks cards against a query as documented on {@link swarmRegistry}. */
export function searchCards(cards: readonly SwarmCard[], query: string, capabilities: readonly string[], limit: number): SwarmCard[] {
  const words = keywords(query);
  const wanted = capabilities.map((c) => c.toLowerCase());
  return cards
    .filter((card) => wanted.every((w) => card.capabilities.some((c) => c.toLowerCase() === w)))
    .map((card) => {
      const haystack = [card.id, card.name, card.description, ...card.capabilities].join(' ').toLowerCase();
      return { card, score: words.filter((w) => haystack.includes(w)).length };
    })
    .filter(({ score }) => words.length === 0 || score > 0)
    .sort((a, b) => b.score - a.score || (a.card.id < b.card.id ? -1 : 1))
    .slice(0, limit)
    .map(({ card }) => card);
}

/**
 * The `swarm_registry_search` tool over `cards`; a search returns at most the calling swarm's
 * limit (`limitOf`) of matches.
 */
export function registrySearchTool(cards: () => readonly SwarmCard[], limitOf: (swarmId: string) => number | undefined): Tool {
  return tool({
    name: REGISTRY_SEARCH,
    description:
      'Search the registered swarms by keywords. Returns matching swarms with their id, description, input and result schemas, capabilities and whether they can be customized.',
    parameters: z.object({
      query: z.string().describe('Keywords describing the task'),
      capabilities: z.array(z.string()).optional().describe('Capabilities every match must have'),
    }),
    execute: ({ query, capabilities }, ctx) => ({
      matches: searchCards(cards(), query, capabilities ?? [], limitOf(ctx.swarmId) ?? DEFAULT_LIMIT),
    }),
  });
}

/** What the model sees of `swarm_registry_handoff`. */
export function registryHandoffSpec(): ToolSpec {
  return {
    name: REGISTRY_HANDOFF,
    description:
      'Hand a task to a swarm found with swarm_registry_search (only ids it returned). Give `request` for text-input swarms or `input` for structured ones.',
    parameters: {
      type: 'object',
      properties: {
        swarm_id: { type: 'string' },
        request: { type: 'string' },
        input: { type: 'object' },
        customization: customizationJsonSchema(),
      },
      required: ['swarm_id'],
      additionalProperties: false,
    },
  };
}
