/**
 * Pruning the JetStream store: the finished swarms last updated before a time lose their KV key
 * (a delete, compare-and-set on the revision listed, so a swarm written meanwhile stays), then
 * their events and message-list rows (purges of their subjects). Which swarms are finished and
 * when they were updated comes from the listing, not from reading every key.
 *
 * @module
 */
import { isFinal } from '../result.js';
import type { Listing } from './listing.js';
import type { ListingSync } from './listing-sync.js';
import type { Names } from './names.js';
import { isWrongSequence, unavailable } from './outage.js';
import type { Seen } from './seen.js';
import type { Setup } from './setup.js';

/** Deletes finished swarms (see `SwarmStore.prune`). */
export class Pruner {
  constructor(
    private readonly setup: Setup,
    private readonly names: Names,
    private readonly listing: Listing,
    private readonly sync: ListingSync,
    private readonly seen: Seen,
  ) {}

  /** Deletes the finished swarms (readable ones) last updated before `olderThan`; returns how many. */
  async prune(olderThan: number): Promise<number> {
    return this.#delete((_swarmId, updatedAt) => updatedAt < olderThan);
  }

  /** Deletes these swarms when they are finished (see `SwarmStore.remove`); returns how many. */
  async remove(swarmIds: readonly string[]): Promise<number> {
    const ids = new Set(swarmIds);
    return this.#delete((swarmId) => ids.has(swarmId));
  }

  /** Deletes the finished swarms `chosen` picks. */
  async #delete(chosen: (swarmId: string, updatedAt: number) => boolean): Promise<number> {
    const r = await this.setup.ready().catch((e: unknown) => {
      throw unavailable(e);
    });
    await this.sync.sync();
    let n = 0;
    for (const [swarmId, { rev, summary }] of this.listing.entries()) {
      if (!summary || !isFinal(summary.status) || summary.problem || !chosen(swarmId, summary.updatedAt)) continue;
      try {
        await r.kv.delete(this.names.key(swarmId), { previousSeq: rev });
      } catch (e) {
        // Written meanwhile: not pruned this time.
        if (isWrongSequence(e)) continue;
        throw unavailable(e);
      }
      n++;
      this.seen.delete(swarmId);
      this.listing.delete(swarmId);
      r.events.forget(swarmId);
      await r.ctx.jsm.streams.purge(this.names.eventStream, { filter: this.names.eventSubject(swarmId) });
      await r.ctx.jsm.streams.purge(this.names.messageStream, { filter: this.names.allLists(swarmId) });
    }
    return n;
  }
}
