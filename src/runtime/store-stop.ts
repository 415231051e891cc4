/**
 * A stop for a swarm held by another process of the same store, with no transport between them
 * (processes on one SQLite file): left in the store's notices for its holder, which polls them
 * (see `notices.ts`).
 *
 * @module
 */
import { isFinal } from '../store/result.js';
import { summaryOf } from '../store/summary.js';
import type { SwarmStore } from '../store/types.js';

/**
 * How long a stop left in the store waits for the swarm to be stopped before it returns (the
 * request stays, for whichever runtime holds the swarm next).
 */
export const STOP_REQUEST_WAIT_MS = 5_000;

/**
 * Stops a swarm held by another process of the same store (no transport between them): leaves a
 * stop request in the store for its holder, and waits until the swarm reads stopped (or ended),
 * at most {@link STOP_REQUEST_WAIT_MS}; the request stays for whoever holds it next otherwise.
 */
export async function stopThroughStore(store: SwarmStore, swarmId: string, reason: string, waitMs = STOP_REQUEST_WAIT_MS): Promise<void> {
  const notices = store.notices!;
  notices.requestStop({ swarmId, reason, at: Date.now() });
  const until = Date.now() + waitMs;
  while (Date.now() < until) {
    const summary = await summaryOf(store, swarmId);
    if (!summary || isFinal(summary.status)) {
      notices.clearStop(swarmId);
      return;
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
