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
 * A KV value as written: its UTF-8 bytes and, when its outbox has a commit's shape (`events`
 * then `messages`, see {@link valueBytes}), the body of the outbox's commit message.
 */
export interface ValueBytes {
  bytes: Uint8Array;
  /** The commit message body, `JSON.stringify` of `{ events, messages }` (without `messages` when none), as bytes. */
  body?: Uint8Array;
}

/**
 * The bytes of a KV value: those of `JSON.stringify(stored)` in UTF-8, written part by part into
 * one buffer (no joined string, no second encoding), with the body of its outbox's commit
 * message taken from them: a view of the value's bytes when the outbox has list writes, else
 * a copy of its events' bytes in `{"events":…}`. An outbox of another shape (an older writer's)
 * is serialized as it is and gets no body (the publish then serializes it itself).
 */
export function valueBytes(stored: StoredValue): ValueBytes {
  // The parts in order; `events` and `messages` are the indexes of the outbox's two arrays.
  const parts: string[] = [];
  let events = -1;
  let messages = -1;
  for (const key in stored) {
    const v = stored[key as keyof StoredValue];
    if (key === 'outbox' && isCommitShaped(v as Outbox)) {
      const o = v as Outbox;
      parts.push(parts.length === 0 ? '{"outbox":{"events":' : ',"outbox":{"events":');
      events = parts.push(JSON.stringify(o.events)) - 1;
      parts.push(',"messages":');
      messages = parts.push(JSON.stringify(o.messages)) - 1;
      parts.push('}');
      continue;
    }
    // As JSON.stringify: in key order, without the keys whose value it leaves out.
    const json: string | undefined = JSON.stringify(v);
    if (json === undefined) continue;
    parts.push(`${parts.length === 0 ? '{' : ','}${JSON.stringify(key)}:`, json);
  }
  parts.push(parts.length === 0 ? '{}' : '}');
  const lengths = parts.map((p) => Buffer.byteLength(p));
  const bytes = Buffer.allocUnsafe(lengths.reduce((a, b) => a + b, 0));
  const starts: number[] = [];
  let at = 0;
  for (let i = 0; i < parts.length; i++) {
    starts.push(at);
    at += bytes.write(parts[i]!, at);
  }
  if (events < 0) return { bytes };
  // `{"events":` starts 10 bytes before the events' JSON.
  const start = starts[events]! - 10;
  if ((stored.outbox as Outbox).messages.length > 0) return { bytes, body: bytes.subarray(start, starts[messages + 1]! + 1) };
  const body = Buffer.allocUnsafe(lengths[events]! + 11);
  body.write('{"events":', 0);
  bytes.copy(body, 10, starts[events]!, starts[events]! + lengths[events]!);
  body[body.length - 1] = 0x7d; // }
  return { bytes, body };
}

/** Whether an outbox has exactly a commit's keys, in order (what `valueBytes` writes in parts). */
function isCommitShaped(o: Outbox | undefined): boolean {
  if (typeof o !== 'object' || o === null) return false;
  let n = 0;
  for (const key in o) if (key !== (n++ === 0 ? 'events' : 'messages') || n > 2) return false;
  return n === 2 && Array.isArray(o.events) && Array.isArray(o.messages);
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
