/**
 * The agent cards of remote handoffs (`handoff.toRemoteAgent(url)`), fetched once each before a
 * run resolves its handoffs, so their tools get the cards' names and descriptions.
 *
 * @module
 */
import type { RemoteAgentClient, RemoteCard } from '../a2a/remote.js';
import type { Handoff } from '../define/handoff.js';

/**
 * How long fetching one agent card may take before the swarm starts without it: the bound for
 * any `remote` client. The A2A client's own `timeoutMs` (default 5000 ms) cuts a card sooner,
 * and its `maxCardBytes` bounds what is read meanwhile.
 */
const CARD_TIMEOUT_MS = 10_000;

/** The remote agents' cards one runtime has fetched. */
export class RemoteCards {
  private readonly cards = new Map<string, RemoteCard>();

  constructor(private readonly client: Pick<RemoteAgentClient, 'card'>) {}

  /** The card fetched for `url`, if any (see {@link fetch}). */
  card(url: string): RemoteCard | undefined {
    return this.cards.get(url);
  }

  /** Fetches (once) the agent cards of remote handoffs; an unreachable one is left out. */
  async fetch(handoffs: readonly Handoff[]): Promise<void> {
    for (const h of handoffs) {
      if (h.kind !== 'remote' || this.cards.has(h.url)) continue;
      try {
        this.cards.set(h.url, await this.client.card(h.url, AbortSignal.timeout(CARD_TIMEOUT_MS)));
      } catch {
        // Unreachable now: the swarm still runs; calls to this agent report the problem.
      }
    }
  }
}
