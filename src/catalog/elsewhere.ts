/**
 * Definitions hosted by other runtimes (over NATS, or a shared in-process bus): what a runtime
 * knows of a handoff target it does not have. Their cards are asked for when a run resolves its
 * handoffs, so the model sees the target's description and input schema; a target whose card
 * cannot be had is offered as text input, and calling it reports the problem.
 *
 * @module
 */

/** What a runtime tells others about a definition it hosts. */
export interface HostedCard {
  id: string;
  description: string;
  /** Whether its input is not plain text (the handoff tool then takes its input schema). */
  structured: boolean;
  /** JSON Schema of its input. */
  inputSchema: Record<string, unknown>;
  /** Whether parents may pass a `customization`. */
  customizable: boolean;
}

/** How long asking for one card may take before a run starts without it. */
const CARD_TIMEOUT_MS = 2_000;

/** The cards of definitions hosted elsewhere, asked for once each. */
export class Elsewhere {
  private readonly cards = new Map<string, HostedCard>();

  constructor(
    /** The other runtimes (`distribution/calls.ts`): asked for a definition's card, undefined when none answers. */
    private readonly others: { card(definitionId: string, timeoutMs: number): Promise<HostedCard | undefined> },
  ) {}

  /** The card of a definition hosted elsewhere, if it was had. */
  card(definitionId: string): HostedCard | undefined {
    return this.cards.get(definitionId);
  }

  /** Asks for the cards not had yet (at once for all); a target nobody answers for is left out. */
  async fetch(definitionIds: readonly string[]): Promise<void> {
    await Promise.all(
      [...new Set(definitionIds)]
        .filter((id) => !this.cards.has(id))
        .map(async (id) => {
          const card = await this.others.card(id, CARD_TIMEOUT_MS).catch(() => undefined);
          if (card) this.cards.set(id, card);
        }),
    );
  }
}
