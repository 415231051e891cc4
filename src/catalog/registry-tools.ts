/**
 * What the swarm registry tool set (`swarmRegistry()`, in `define/swarm-registry.ts`) does once
 * a runtime has its definitions: `swarm_registry_search`, a regular tool scoring the catalog's
 * cards by keyword, and the spec of `swarm_registry_handoff` (planned in
 * `actors/plan-handoff.ts` like any swarm handoff).
 *
 * @module
 */
import { z } from 'zod';
import type { ToolSpec } from '../../machines/messages.js';
import { REGISTRY_HANDOFF, REGISTRY_SEARCH } from '../../actors/index.js';
import { tool, type Tool } from '../define/tool.js';
import { customizationJsonSchema } from './customization.js';
import { DEFAULT_REGISTRY_LIMIT, type SwarmCard } from '../define/swarm-registry.js';

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
      matches: searchCards(cards(), query, capabilities ?? [], limitOf(ctx.swarmId) ?? DEFAULT_REGISTRY_LIMIT),
    }),
  });
}

/** What the model sees of `swarm_registry_handoff`. */
export function registryHandoffSpec(): ToolSpec {
  return {
    name: REGISTRY_HANDOFF,
    description: 'Hand a task to a swarm found with swarm_registry_search (only ids it returned). Give `request` for text-input swarms or `input` for structured ones.',
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
