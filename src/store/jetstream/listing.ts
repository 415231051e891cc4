/**
 * Listing swarms on JetStream without reading every key: {@link Listing} holds a summary of
 * every swarm in the bucket, brought up to date before each listing by reading what changed in
 * the bucket since the one before (`./listing-sync.ts`), and by this process's own reads and
 * writes.
 *
 * @module
 */
import { labelMatches, leftOutBy, type SwarmFilter, type SwarmSummary } from '../types.js';
import { type Decoded, toSummary } from './records.js';

/** An entry of the listing index: the KV revision it reflects and the summary (none for a deleted key). */
export interface Indexed {
  rev: number;
  summary?: SwarmSummary;
}

/**
 * Summaries of every swarm in the bucket, by swarm id, each at the latest KV revision seen.
 * `changed` is told of each swarm whose entry moves to a newer revision, with the last event seq
 * its record holds when it has one (its watchers wake).
 */
export class Listing {
  private readonly index = new Map<string, Indexed>();

  constructor(private readonly changed: (swarmId: string, lastSeq?: number) => void) {}

  /** Summaries of the swarms `filter` selects, most recently updated first, as the index holds them. */
  list(filter: SwarmFilter): SwarmSummary[] {
    const out: SwarmSummary[] = [];
    for (const { summary } of this.index.values()) {
      if (!summary) continue;
      if (filter.definitionId && summary.definitionId !== filter.definitionId) continue;
      if (filter.status && filter.status.length > 0 && !filter.status.includes(summary.status)) continue;
      if (leftOutBy(filter.notHeldBy, summary.lease)) continue;
      if (!labelMatches(filter, summary.label)) continue;
      out.push(summary);
    }
    out.sort((a, b) => b.updatedAt - a.updatedAt);
    return out.slice(0, filter.limit ?? Infinity).map((s) => ({ ...s, ...(s.lease ? { lease: { ...s.lease } } : {}) }));
  }

  /** Every entry. */
  entries(): [string, Indexed][] {
    return [...this.index];
  }

  /** Indexes the value (`decoded`, undefined for a deleted key) of `swarmId` at KV revision `rev`, written at `at`. */
  set(swarmId: string, rev: number, decoded: Decoded | undefined, at: number): void {
    const before = this.index.get(swarmId);
    if (before && before.rev >= rev) return;
    this.index.set(swarmId, { rev, ...(decoded ? { summary: toSummary(swarmId, decoded, at) } : {}) });
    this.changed(swarmId, decoded?.value?.record.lastSeq);
  }

  /**
   * The last event seq of `swarmId`'s latest value indexed here (0 when none): a stream read that
   * ends before it may be missing an outbox not published yet.
   */
  lastSeq(swarmId: string): number {
    return this.index.get(swarmId)?.summary?.lastSeq ?? 0;
  }

  /** The KV revision of `swarmId`'s latest value indexed here (0 when none). */
  revision(swarmId: string): number {
    return this.index.get(swarmId)?.rev ?? 0;
  }

  /** Forgets a swarm (pruned). */
  delete(swarmId: string): void {
    this.index.delete(swarmId);
  }
}
