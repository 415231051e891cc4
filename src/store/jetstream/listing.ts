/**
 * Listing swarms on JetStream without reading the bucket: {@link Listing} holds a summary of
 * every swarm in it, fed by the bucket's watch (every process's writes, see `./watching.ts`)
 * and by this process's own reads and writes. A value of a swarm nobody follows here is kept
 * unparsed for a moment, since a running swarm writes several values in that time and only the
 * last one is worth parsing.
 *
 * @module
 */
import { SwarmError } from '../../errors.js';
import { labelMatches, leftOutBy, type SwarmFilter, type SwarmSummary } from '../types.js';
import { type Decoded, decodeValue, toSummary } from './records.js';

/** How long a value delivered by the index watch may wait before it is parsed. */
const PARSE_LATER_MS = 1000;

const utf8 = new TextDecoder();

/** An entry of the listing index: the KV revision it reflects and the summary. */
export interface Indexed {
  rev: number;
  summary?: SwarmSummary;
  /** The value, not parsed yet, and when it was written (see {@link Listing.setLater}). */
  raw?: Uint8Array;
  at?: number;
}

/**
 * Summaries of every swarm in the bucket, by swarm id, each at the latest KV revision seen.
 * `changed` is told of each swarm whose entry moves to a newer revision, with the last event seq
 * its record holds when it has one (its watchers wake).
 */
export class Listing {
  /** Whether the index holds every swarm of the bucket (its watch delivered the first values). */
  complete = false;
  private readonly index = new Map<string, Indexed>();
  /** Swarms whose index entry holds a value not parsed yet, and the timer that parses them. */
  private readonly unparsed = new Set<string>();
  private parseTimer: NodeJS.Timeout | undefined;
  private indexReady!: () => void;
  private readonly indexed: Promise<void>;

  constructor(
    private readonly timeoutMs: number,
    private readonly changed: (swarmId: string, lastSeq?: number) => void,
  ) {
    this.indexed = new Promise<void>((r) => (this.indexReady = r)).then(() => void (this.complete = true));
  }

  /** The index holds every swarm of the bucket (or the store closes: listings stop waiting). */
  loaded(): void {
    this.indexReady();
  }

  /**
   * Summaries of the swarms `filter` selects, most recently updated first, once the index is
   * complete (a bounded wait: NATS may be down).
   */
  async list(filter: SwarmFilter): Promise<SwarmSummary[]> {
    await this.whenComplete();
    this.parse();
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

  /** Every entry, parsed, once the index is complete (as {@link Listing.list} waits). */
  async entries(): Promise<[string, Indexed][]> {
    await this.whenComplete();
    this.parse();
    return [...this.index];
  }

  /** Waits for the index to be complete (listings); a bounded wait: NATS may be down. */
  async whenComplete(): Promise<void> {
    if (this.complete) return;
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<never>((_, reject) => {
      timer = setTimeout(
        () => reject(new SwarmError('The JetStream store is unavailable: the listing of swarms is not loaded yet', 'unavailable')),
        Math.max(4 * this.timeoutMs, 10_000),
      );
    });
    try {
      await Promise.race([this.indexed, late]);
    } finally {
      clearTimeout(timer);
    }
  }

  /** Indexes the value (`decoded`, undefined for a deleted key) of `swarmId` at KV revision `rev`, written at `at`. */
  set(swarmId: string, rev: number, decoded: Decoded | undefined, at: number): void {
    const before = this.index.get(swarmId);
    if (before && before.rev >= rev) return;
    this.index.set(swarmId, { rev, ...(decoded ? { summary: toSummary(swarmId, decoded, at) } : {}) });
    this.changed(swarmId, decoded?.value?.record.lastSeq);
  }

  /**
   * Indexes a value of a swarm nobody follows here without parsing it yet: it is parsed within
   * {@link PARSE_LATER_MS}, or when a listing needs it, unless the swarm writes again before
   * (a running swarm writes several values in that time; only the last one is parsed).
   */
  setLater(swarmId: string, rev: number, raw: Uint8Array, at: number): void {
    const before = this.index.get(swarmId);
    if (before && before.rev >= rev) return;
    this.index.set(swarmId, { rev, raw, at });
    this.unparsed.add(swarmId);
    this.parseTimer ??= setTimeout(() => this.parse(), PARSE_LATER_MS).unref();
  }

  /**
   * The value of `swarmId` the index holds unparsed (see {@link Listing.setLater}), with its KV
   * revision and when it was written; undefined once parsed (or none).
   */
  unparsedValue(swarmId: string): { rev: number; raw: Uint8Array; at: number } | undefined {
    const entry = this.index.get(swarmId);
    return entry?.raw && entry.at !== undefined ? { rev: entry.rev, raw: entry.raw, at: entry.at } : undefined;
  }

  /**
   * The last event seq of `swarmId`'s latest value indexed here (0 when none): a stream read that
   * ends before it may be missing an outbox not published yet.
   */
  lastSeq(swarmId: string): number {
    if (this.unparsed.has(swarmId)) this.parse(swarmId);
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

  /** Stops the parse timer and ends the wait of listings (the store is closed). */
  stop(): void {
    clearTimeout(this.parseTimer);
    this.indexReady();
  }

  /** Parses the index entries not parsed yet (all, or one swarm's). */
  private parse(only?: string): void {
    for (const swarmId of only === undefined ? this.unparsed : [only]) {
      const entry = this.index.get(swarmId);
      if (entry?.raw) {
        const decoded = decodeValue(utf8.decode(entry.raw));
        this.index.set(swarmId, { rev: entry.rev, summary: toSummary(swarmId, decoded, entry.at!) });
      }
    }
    if (only !== undefined) return void this.unparsed.delete(only);
    this.unparsed.clear();
    clearTimeout(this.parseTimer);
    this.parseTimer = undefined;
  }
}
