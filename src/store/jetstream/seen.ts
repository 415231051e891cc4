/**
 * What this process has seen of each swarm's KV key, from its own reads and writes, from its
 * listings' syncs and from its followers' subscriptions. {@link Seen} keeps the value the next
 * write of a swarm starts from, so a commit writes without reading first (its compare-and-set
 * is the check); {@link RecentValues} keeps the latest value of the swarms written most recently
 * with the events of their outboxes, so a reader of a swarm's latest events is answered without
 * a stream read. Every value seen goes to the listing too.
 *
 * @module
 */
import type { KV } from '@nats-io/kv';
import type { SwarmEvent } from '../../../machines/events.js';
import type { Listing } from './listing.js';
import type { Names } from './names.js';
import { type Decoded, decodeValue, type StoredValue } from './records.js';

/** How many of a swarm's latest events {@link Recent} keeps. */
const RECENT_EVENTS = 64;

/** What this store knows of a swarm's KV key: its revision (0: never written) and value. */
export interface Known {
  rev: number;
  /** Undefined when the key holds no value (never written, or deleted). */
  decoded?: Decoded;
  /** When the value was written (for a record that cannot be read). */
  at: number;
  /** Whether the value's outbox is known to be in the streams. */
  published: boolean;
  /** Whether this process wrote the value (rather than read it, or was delivered it). */
  written?: boolean;
}

/** A swarm's value as last seen here, with the latest events of the swarm it holds. */
export interface Recent {
  /** Its KV revision. */
  rev: number;
  /** When the value that wrote the last of `events` was written. */
  at: number;
  value: StoredValue;
  /** The latest events up to the record's `lastSeq`, in order, contiguous (or none known). */
  events: readonly SwarmEvent[];
}

/**
 * The latest value seen here of the swarms written most recently (delivered to a follower,
 * written or read here), with the events of its outbox and of the outboxes just before
 * it: readers of a swarm's latest events are answered from it.
 */
export class RecentValues {
  private readonly values = new Map<string, Recent>();

  /** The latest value of `swarmId` seen here, if it is among the recent ones. */
  get(swarmId: string): Recent | undefined {
    return this.values.get(swarmId);
  }

  /** Whether a value of `swarmId` is known here. */
  has(swarmId: string): boolean {
    return this.values.has(swarmId);
  }

  /** Forgets a swarm (pruned). */
  delete(swarmId: string): void {
    this.values.delete(swarmId);
  }

  /** Keeps `value` (written at `at`) as the swarm's latest, its outbox's events after those of the one before when they follow on. */
  note(swarmId: string, rev: number, at: number, value: StoredValue | undefined): void {
    const prev = this.values.get(swarmId);
    if (prev && prev.rev >= rev) return;
    this.values.delete(swarmId);
    if (!value) return;
    const out = value.outbox?.events ?? [];
    let events: readonly SwarmEvent[] = [];
    let written = at;
    if (out.length > 0) {
      events = continuing(prev?.events ?? [], out, RECENT_EVENTS);
    } else if (prev && prev.events.length > 0 && prev.events.at(-1)!.seq === value.record.lastSeq) {
      // A lease write: the same record, its events written by the value before.
      events = prev.events;
      written = prev.at;
    }
    // Bounded: the swarms written most recently.
    if (this.values.size >= 10_000) this.values.delete(this.values.keys().next().value!);
    this.values.set(swarmId, { rev, at: written, value, events });
  }
}

/**
 * A swarm's latest events kept in a bounded window: `after` continuing `before` when its first
 * event follows `before`'s last, the last `max` of both in one array (not joined, then cut);
 * else `after` alone.
 */
export function continuing(before: readonly SwarmEvent[], after: readonly SwarmEvent[], max: number): readonly SwarmEvent[] {
  const last = before.at(-1);
  if (!last || after.length === 0 || last.seq !== after[0]!.seq - 1) return after;
  if (after.length >= max) return after.slice(after.length - max);
  const out: SwarmEvent[] = [];
  for (let i = Math.max(0, before.length + after.length - max); i < before.length; i++) out.push(before[i]!);
  for (const e of after) out.push(e);
  return out;
}

/**
 * The values this store wrote or read, by swarm: what the next write starts from. A value
 * remembered here is noted in `recent` and indexed in `listing` too.
 */
export class Seen {
  private readonly known = new Map<string, Known>();

  constructor(
    private readonly names: Names,
    private readonly recent: RecentValues,
    private readonly listing: Listing,
  ) {}

  /** The value of `swarmId` the next write starts from, when known. */
  get(swarmId: string): Known | undefined {
    return this.known.get(swarmId);
  }

  /** Another process wrote `swarmId` at revision `rev`: the next write here starts from a fresh read. */
  outdated(swarmId: string, rev: number): void {
    const k = this.known.get(swarmId);
    if (k && k.rev < rev) this.known.delete(swarmId);
  }

  /**
   * A value of `swarmId` delivered here (read by a listing's sync, or received by a follower),
   * written by any process: the next write here starts from a fresh read if another one wrote
   * it, and the listing indexes it. `recentToo`: it becomes the swarm's recent value (a value of
   * a swarm followed here, or a deletion).
   */
  delivered(swarmId: string, rev: number, decoded: Decoded | undefined, at: number, recentToo: boolean): void {
    this.outdated(swarmId, rev);
    if (recentToo || !decoded) this.recent.note(swarmId, rev, at, decoded?.value);
    this.listing.set(swarmId, rev, decoded, at);
  }

  /** Forgets a swarm (pruned), its recent value too. */
  delete(swarmId: string): void {
    this.known.delete(swarmId);
    this.recent.delete(swarmId);
  }

  /** Remembers a value this store wrote or read. */
  remember(swarmId: string, k: Known): void {
    const before = this.known.get(swarmId);
    if (before && before.rev > k.rev) return;
    if (before?.rev === k.rev && before.published) k.published = true;
    if (before?.rev === k.rev && before.written) k.written = true;
    this.known.delete(swarmId);
    // Bounded: the swarms written most recently (live ones).
    if (this.known.size >= 10_000) this.known.delete(this.known.keys().next().value!);
    this.known.set(swarmId, k);
    if (k.rev > 0) {
      this.recent.note(swarmId, k.rev, k.at, k.decoded?.value);
      this.listing.set(swarmId, k.rev, k.decoded, k.at);
    }
  }

  /** Reads a swarm's KV key now, and remembers what it holds. */
  async read(kv: KV, swarmId: string): Promise<Known> {
    const e = await kv.get(this.names.key(swarmId));
    const k: Known = !e
      ? { rev: 0, at: 0, published: true }
      : e.operation === 'PUT'
        ? { rev: e.revision, decoded: decodeValue(e.string()), at: e.created.getTime(), published: false }
        : { rev: e.revision, at: e.created.getTime(), published: true };
    // A missing key too: a new swarm's first write then needs no read (its create() is the check).
    this.remember(swarmId, k);
    return k;
  }

  /** The last event seq of the value of `swarmId` known here (0 when none). */
  lastSeq(swarmId: string): number {
    return this.known.get(swarmId)?.decoded?.value?.record.lastSeq ?? 0;
  }
}
