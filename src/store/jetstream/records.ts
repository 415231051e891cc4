/**
 * What the JetStream store keeps in its KV bucket per swarm, and how a stored value is read
 * back as a record: the value holds the record (its snapshot naming message lists by
 * reference), the lease, and the outbox of the commit that wrote it.
 *
 * @module
 */
import type { SwarmEvent } from '../../../machines/events.js';
import { isFinal, type SwarmResult } from '../result.js';
import { assembleSnapshot, type MessageWrite } from '../messages.js';
import type { Lease, SwarmRecord, SwarmSummary } from '../types.js';

/**
 * One KV value. `outbox` is what the commit that wrote it still had to publish (its events and
 * message rows): the KV update is the commit point, so until its publish is acknowledged
 * the outbox is the only durable copy. Readers merge it; `claim` and the next writer publish it
 * again (idempotent) before replacing the value.
 */
export interface StoredValue {
  /**
   * The record format: 2 since snapshots may hold the swarm's config as a reference to its
   * one-row list (see `ConfigRef` in src/store/messages.ts), which a reader of format 1 would
   * not put back; a format 1 value (config inline) reads the same. 3 since a commit's outbox is
   * published as one message on the swarm's event subject (see `./batch.ts`): the rows of its
   * message lists are read from those messages, which a reader of format 2 would not do.
   */
  v: typeof RECORD_FORMAT | 2 | 1;
  /** The id of the write that stored this value: a timed-out update that landed is recognised by it. */
  w: string;
  record: Omit<SwarmRecord, 'lease' | 'problem'>;
  lease?: Lease;
  outbox?: Outbox;
  /**
   * The stored length of each message list: an append must start there (a writer wrong about
   * what is stored is refused, as in the SQLite store).
   */
  lists?: Record<string, number>;
  /**
   * Rows of the swarm's message lists are in the messages stream too (written before format 3,
   * a row per message): they are read before the commit messages. Set on the first format 3
   * value over an older one, and kept.
   */
  legacyRows?: true;
}

/** A commit's events and message writes, as published after its KV update. */
export interface Outbox {
  events: SwarmEvent[];
  messages: MessageWrite[];
  /**
   * Lists this commit writes from 0 that had no stored rows before it (a new swarm's, or a list
   * new to the swarm): their rows needed no purge before they were published. Written before
   * record format 3 only (a commit message's list writes need no purge); read and ignored.
   */
  fresh?: string[];
}

/** The record format this xswarm writes (it reads it and formats 1 and 2). */
export const RECORD_FORMAT = 3;

/**
 * The text of a KV value: what `JSON.stringify(stored)` gives, with `outboxJson` (when given)
 * the text of its outbox, serialized once for the value and the publish of its commit message.
 */
export function valueJson(stored: StoredValue, outboxJson: string | undefined): string {
  if (outboxJson === undefined) return JSON.stringify(stored);
  let out = '';
  for (const [key, v] of Object.entries(stored)) {
    // As JSON.stringify: in key order, without the keys whose value it leaves out.
    const json: string | undefined = key === 'outbox' ? outboxJson : JSON.stringify(v);
    if (json === undefined) continue;
    out += `${out ? ',' : '{'}${JSON.stringify(key)}:${json}`;
  }
  return out ? `${out}}` : '{}';
}

/** A KV value as read: parsed, or why it could not be. */
export type Decoded = { value: StoredValue; problem?: undefined } | { value?: undefined; problem: string };

/** Parses a KV value; a value that is not a stored record says why. */
export function decodeValue(text: string): Decoded {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (e) {
    return { problem: `stored record is corrupt (${(e as Error).message})` };
  }
  const value = parsed as Partial<StoredValue> | null;
  const r = value?.record as Partial<SwarmRecord> | undefined;
  if (typeof value !== 'object' || value === null || typeof r !== 'object' || r === null || typeof r.revision !== 'number' || typeof r.status !== 'string') {
    return { problem: 'stored record is corrupt (not a swarm record)' };
  }
  if (value.v !== RECORD_FORMAT && value.v !== 2 && value.v !== 1)
    return { problem: `stored in record format ${JSON.stringify(value.v)}; this xswarm reads formats 1 to ${RECORD_FORMAT}` };
  if (typeof r.result !== 'object' || r.result === null) return { problem: 'stored result is corrupt (missing)' };
  return { value: value as StoredValue };
}

/**
 * The record a stored value reads as (`lists` assembles its snapshot's message lists; without
 * it the snapshot stays as stored, for listings). Unreadable data does not throw: the record
 * carries a `problem` and, when the swarm's state depends on the data (an unfinished swarm's
 * snapshot, its result), reads failed with a reason naming it, as the SQLite store does.
 */
export function toRecord(swarmId: string, decoded: Decoded, updatedAt: number, lists?: () => ReadonlyMap<string, readonly unknown[]>): SwarmRecord {
  if (!decoded.value) {
    return {
      swarmId,
      definitionId: '',
      definitionVersion: 0,
      machineVersion: 0,
      status: 'failed',
      revision: 0,
      snapshot: undefined,
      result: { status: 'failed', reason: `Cannot read swarm "${swarmId}": ${decoded.problem}` },
      lastSeq: 0,
      updatedAt,
      problem: decoded.problem,
    };
  }
  const stored = decoded.value.record;
  const record: SwarmRecord = { ...stored };
  if (lists && stored.snapshot !== undefined) {
    try {
      record.snapshot = assembleSnapshot(stored.snapshot, lists());
    } catch (e) {
      record.snapshot = undefined;
      record.problem = `stored snapshot is corrupt (${(e as Error).message})`;
    }
  }
  if (record.problem && !isFinal(stored.status)) {
    record.status = 'failed';
    record.result = { status: 'failed', reason: `Cannot read swarm "${swarmId}": ${record.problem}` } satisfies SwarmResult;
  }
  return record;
}

/** A stored value as a listing shows it: no snapshot, its lease when someone holds it. */
export function toSummary(swarmId: string, decoded: Decoded, updatedAt: number): SwarmSummary {
  const { snapshot: _s, ...summary } = toRecord(swarmId, decoded, updatedAt);
  const lease = decoded.value?.lease;
  return lease ? { ...summary, lease: { ...lease } } : summary;
}

/**
 * A message list's rows from the stream and the outbox writes not yet published, applied in
 * order (see `MessageWrite`): rows are kept by index, the last row of an index wins (a
 * republished row is the same message), and a missing index is an error.
 */
export function applyWrites(lists: Map<string, unknown[]>, writes: readonly MessageWrite[]): void {
  for (const { list, from, items } of writes) {
    const rows = lists.get(list) ?? [];
    rows.length = Math.min(rows.length, from);
    for (const m of items) rows.push(m);
    if (rows.length > 0) lists.set(list, rows);
    else lists.delete(list);
  }
}
