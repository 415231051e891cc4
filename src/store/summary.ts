/**
 * Reading what a swarm's record says without its snapshot: the cheap read for callers that need
 * its status, result, last seq or lease (see `SwarmStore.summary`).
 *
 * @module
 */
import type { SwarmStore, SwarmSummary } from './types.js';

/** The swarm's summary: the store's own `summary` when it has one, else its record without the snapshot. */
export async function summaryOf(store: SwarmStore, swarmId: string): Promise<SwarmSummary | undefined> {
  if (store.summary) return store.summary(swarmId);
  const record = await store.load(swarmId);
  if (!record) return undefined;
  const { snapshot: _snapshot, ...summary } = record;
  return summary;
}
