/**
 * The swarm registry tool set: lets an orchestrator discover registered swarm definitions by
 * keyword and hand off to one of them.
 *
 * @module
 */

/**
 * The marker a definition puts in its `tools` to get `swarm_registry_search` and
 * `swarm_registry_handoff`.
 *
 * @example
 * defineSwarm({ id: 'task-planner', instructions: 'Find a swarm for each task.', tools: [swarmRegistry()] });
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
 * const planner = defineSwarm({ id: 'planner', instructions: '…', tools: [swarmRegistry({ limit: 3 })] });
 */
export function swarmRegistry(options: { limit?: number } = {}): SwarmRegistryTools {
  return Object.freeze({ kind: 'swarm-registry' as const, limit: options.limit ?? 5 });
}

/**
 * What a search returns per matching definition.
 *
 * @example
 * const card: SwarmCard = { id: 'ticketing', name: 'Ticketing', description: 'Books concert tickets',
 *   inputSchema: { type: 'string' }, resultSchema: { type: 'string' }, capabilities: ['book_seats'], customizable: false };
 */
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

/**
 * Lower-case keywords of a text.
 *
 * @example
 * keywords('Book the concert tickets!') // ['book', 'concert', 'tickets']
 */
export function keywords(text: string): string[] {
  return text
    .toLowerCase()
    .split(/[^a-z0-9]+/)
    .filter((w) => w.length >= 3 && !STOP_WORDS.has(w));
}

/**
 * Ranks cards against a query as documented on {@link swarmRegistry}.
 *
 * @example
 * searchCards(cards, 'book concert tickets', [], 5).map((c) => c.id) // ['ticketing']
 */
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
