/**
 * Writing commits to the SQLite store's tables: the one copy of the write logic, used by the
 * store's own connection (a turn's first commit, written inline) and by the writer thread
 * (src/store/sqlite/writer.ts, the grouped commits). A commit crosses to the writer thread as a
 * {@link SerializedCommit} (strings and numbers), and a refused commit comes back as a
 * {@link WriteFailure} that is rebuilt on the other side as the same error class.
 *
 * @module
 */
import type Database from 'better-sqlite3';
import { errorText } from '../../../machines/error-text.js';
import { requireOptional } from '../../util/optional.js';
import { type MessageWrite, nextListLengths } from '../messages.js';
import { type Commit, LeaseLostError, RevisionConflictError } from '../types.js';

/**
 * A `steps` row's key: the swarm's number (`swarms.no`) × 2^32 + the seq of the row's last
 * event. A swarm's rows are one key range, in seq order, with no index beside the table; a
 * swarm's next step goes right after its previous one (at the end of the B-tree for the swarm
 * created last), not into the middle of an index on a random swarm id.
 */
export const SEQ_SPAN = 4294967296;
/** The highest seq a swarm's steps can hold. */
export const MAX_SEQ = SEQ_SPAN - 1;

/** How {@link openConnection} sets up a connection (see `SqliteStoreOptions`). */
export interface ConnectionOptions {
  synchronous?: 'FULL' | 'NORMAL';
  busyTimeoutMs?: number;
}

/**
 * Opens a connection to the store's file with the store's pragmas: WAL, `synchronous` as
 * configured (default FULL), the busy timeout (default 5000 ms). The store's connection and the
 * writer thread's open the file alike, so a commit is as durable whichever wrote it.
 */
export function openConnection(path: string, options: ConnectionOptions): Database.Database {
  // Required here rather than imported, so that `xswarm` loads without the optional better-sqlite3.
  const db = new (requireOptional<typeof Database>('sqliteStore()', 'better-sqlite3'))(path);
  try {
    db.pragma('journal_mode = WAL');
    db.pragma(`synchronous = ${options.synchronous ?? 'FULL'}`);
    db.pragma(`busy_timeout = ${options.busyTimeoutMs ?? 5000}`);
  } catch (e) {
    // Not a database, or one this connection cannot set up: nothing keeps the file open.
    db.close();
    throw e;
  }
  return db;
}

/**
 * Prepares the read of a swarm's last `steps` key: the one after which its next step goes
 * (the store's writes, and the migration from version 1). Null when swarm `no` has no step.
 */
export function prepareLastKey(db: Database.Database): (no: number) => number | null {
  const select = db.prepare<[number, number], { key: number | null }>(`SELECT max(key) AS key FROM steps WHERE key BETWEEN ? AND ?`);
  return (no) => select.get(no * SEQ_SPAN, no * SEQ_SPAN + MAX_SEQ)!.key;
}

/** The `swarms` row parameters of a commit's record, its JSON already written. */
interface RecordParams {
  swarmId: string;
  definitionId: string;
  definitionVersion: number;
  machineVersion: number;
  status: string;
  revision: number;
  snapshot: string;
  result: string;
  lastSeq: number;
  updatedAt: number;
  owner: string | null;
  leaseUntil: number;
  ownerHost: string | null;
  ownerPid: number | null;
  /** Filled in while writing, from the stored lengths (see {@link listLengths}). */
  listLengths: string | null;
  /** The run's label as JSON, or null. */
  label: string | null;
}

/**
 * A commit as the tables take it: every JSON text written once, on the thread that issued the
 * commit, so that posting it to the writer thread copies strings, not object graphs.
 */
export interface SerializedCommit {
  swarmId: string;
  /** The lease owner writing, if any (explains a refusal). */
  owner: string | null;
  record: RecordParams | null;
  /** The events, one JSON text per line; null when the commit has none. */
  events: string | null;
  /** The seqs of the first and last event and how many there are (0 with no events). */
  first: number;
  last: number;
  count: number;
  /** The message writes as one JSON array; null when there are none. */
  messages: string | null;
  /** Each message write's list, start and number of items: what the stored list lengths follow. */
  lists: [list: string, from: number, count: number][] | null;
}

/** `c` as a {@link SerializedCommit}; throws what `JSON.stringify` throws for a value it cannot write. */
export function serializeCommit(c: Commit): SerializedCommit {
  const r = c.record;
  const n = c.events.length;
  let events: string | null = null;
  if (n > 0) {
    events = JSON.stringify(c.events[0]);
    for (let i = 1; i < n; i++) events += '\n' + JSON.stringify(c.events[i]);
  }
  const withMessages = c.messages && c.messages.length > 0 ? c.messages : undefined;
  return {
    swarmId: c.swarmId,
    owner: c.lease?.owner ?? null,
    record: r
      ? {
          swarmId: r.swarmId,
          definitionId: r.definitionId,
          definitionVersion: r.definitionVersion,
          machineVersion: r.machineVersion,
          status: r.status,
          revision: r.revision,
          snapshot: JSON.stringify(r.snapshot),
          result: JSON.stringify(r.result),
          lastSeq: r.lastSeq,
          updatedAt: r.updatedAt,
          owner: c.lease?.owner ?? null,
          leaseUntil: c.lease?.until ?? 0,
          ownerHost: c.lease?.host ?? null,
          ownerPid: c.lease?.pid ?? null,
          listLengths: null,
          label: r.label ? JSON.stringify(r.label) : null,
        }
      : null,
    events,
    first: n > 0 ? c.events[0]!.seq : 0,
    last: n > 0 ? c.events[n - 1]!.seq : 0,
    count: n,
    messages: withMessages ? JSON.stringify(withMessages) : null,
    lists: withMessages ? withMessages.map((w) => [w.list, w.from, w.items.length]) : null,
  };
}

/**
 * A refused or failed commit as data, for crossing threads: the store's refusals with their
 * fields, anything else as its message, its name and SQLite's error code, when it has them.
 */
export type WriteFailure =
  | { kind: 'lease-lost'; swarmId: string; holder: string }
  | { kind: 'revision-conflict'; swarmId: string; expected: number; actual: number }
  | { kind: 'error'; message: string; name?: string; code?: string };

/** `error` as a {@link WriteFailure}. */
export function failureData(error: unknown): WriteFailure {
  if (error instanceof LeaseLostError) return { kind: 'lease-lost', swarmId: error.swarmId, holder: error.holder };
  if (error instanceof RevisionConflictError) return { kind: 'revision-conflict', swarmId: error.swarmId, expected: error.expected, actual: error.actual };
  const code = (error as { code?: unknown } | null)?.code;
  if (!(error instanceof Error)) return { kind: 'error', message: errorText(error), ...(typeof code === 'string' ? { code } : {}) };
  return { kind: 'error', message: error.message, name: error.name, ...(typeof code === 'string' ? { code } : {}) };
}

/** The error a {@link WriteFailure} describes: the store's refusals as their classes, anything else an Error with the original's name and code. */
export function failureError(failure: WriteFailure): Error {
  switch (failure.kind) {
    case 'lease-lost':
      return new LeaseLostError(failure.swarmId, failure.holder);
    case 'revision-conflict':
      return new RevisionConflictError(failure.swarmId, failure.expected, failure.actual);
    default: {
      // Named like the original (SqliteError, TypeError…), so a grouped failure reads like an inline one.
      const error = Object.assign(new Error(failure.message), failure.code ? { code: failure.code } : {});
      if (failure.name) error.name = failure.name;
      return error;
    }
  }
}

/**
 * A batch's outcome, one entry per commit: undefined when it was written, else its error. A
 * swarm's later commits failed by its first failure hold the same error object.
 */
export type BatchFailures = (unknown | undefined)[];

/** What {@link prepareWrites} returns: the ways a connection writes commits. */
export interface Writes {
  /**
   * One commit as its own transaction, taking the write lock up front (IMMEDIATE); throws why it
   * was refused, leaving no transaction open. Returns the milliseconds its COMMIT took (the WAL
   * write, its sync, and an automatic checkpoint when the WAL is due one). Not for use inside
   * another transaction (BEGIN then throws).
   */
  writeImmediate(c: SerializedCommit): number;
  /**
   * Many commits in one transaction: one failing commit fails alone (the others land), and the
   * same swarm's later commits in the batch fail with it (they were issued on the assumption
   * that it went through). Throws when the transaction itself failed (nothing of it was written).
   */
  writeBatch(batch: readonly SerializedCommit[]): BatchFailures;
}

/** Prepares the statements that write commits on `db` (a store whose schema is open). */
export function prepareWrites(db: Database.Database): Writes {
  const selectNo = db.prepare<[string], { no: number }>(`SELECT no FROM swarms WHERE swarm_id = ?`);
  const lastKeyOf = prepareLastKey(db);
  const insertStep = db.prepare<[number, number, string | null, string | null, number | null]>(
    `INSERT INTO steps (key, first_seq, events, messages, prev_messages) VALUES (?, ?, ?, ?, ?)`,
  );
  // Two JSON arrays of writes joined as text: '[a,b]' and '[c]' make '[a,b,c]'.
  const appendMessages = db.prepare<{ messages: string; key: number; prev: number | null }>(
    `UPDATE steps SET messages = CASE WHEN messages IS NULL THEN @messages ELSE substr(messages, 1, length(messages) - 1) || ',' || substr(@messages, 2) END,
       prev_messages = CASE WHEN messages IS NULL THEN @prev ELSE prev_messages END
     WHERE key = @key`,
  );
  const selectMessageState = db.prepare<[string], { list_lengths: string | null; messages_key: number | null }>(
    `SELECT list_lengths, messages_key FROM swarms WHERE swarm_id = ?`,
  );
  const setMessagesKey = db.prepare<[number, number]>(`UPDATE swarms SET messages_key = ? WHERE no = ?`);
  const insertRecord = db.prepare<RecordParams, { no: number }>(
    `INSERT INTO swarms (swarm_id, definition_id, definition_version, machine_version, status, revision, snapshot, result, last_seq, updated_at, owner, lease_until, owner_host, owner_pid, list_lengths, label)
     VALUES (@swarmId, @definitionId, @definitionVersion, @machineVersion, @status, @revision, @snapshot, @result, @lastSeq, @updatedAt, @owner, @leaseUntil, @ownerHost, @ownerPid, @listLengths, @label)
     ON CONFLICT (swarm_id) DO NOTHING RETURNING no`,
  );
  const updateRecord = db.prepare<RecordParams, { no: number }>(
    `UPDATE swarms SET definition_version = @definitionVersion, status = @status, revision = @revision, snapshot = @snapshot, result = @result, last_seq = @lastSeq,
       updated_at = @updatedAt, owner = COALESCE(@owner, owner), lease_until = MAX(lease_until, @leaseUntil),
       owner_host = IIF(@owner IS NULL, owner_host, @ownerHost), owner_pid = IIF(@owner IS NULL, owner_pid, @ownerPid),
       list_lengths = COALESCE(@listLengths, list_lengths), label = COALESCE(@label, label)
     WHERE swarm_id = @swarmId AND revision = @revision - 1 AND (@owner IS NULL OR owner IS NULL OR owner = @owner)
     RETURNING no`,
  );
  const selectHolder = db.prepare<[string], { revision: number; owner: string | null }>(`SELECT revision, owner FROM swarms WHERE swarm_id = ?`);

  /** Another writer got there first: explains why a commit of `c` is refused. */
  const refusal = (c: SerializedCommit): Error => {
    const holder = selectHolder.get(c.swarmId);
    const r = c.record;
    // Creating a swarm that exists is a conflict; otherwise another owner holding the swarm
    // explains the refusal: this writer lost it.
    if ((!r || r.revision > 1) && holder?.owner && c.owner && holder.owner !== c.owner) return new LeaseLostError(c.swarmId, holder.owner);
    return new RevisionConflictError(c.swarmId, (r?.revision ?? 1) - 1, holder?.revision ?? 0);
  };

  /**
   * The commit's step row of swarm `no`: its events as a new row keyed by its last seq, or,
   * with messages but no events, its message writes appended to the swarm's last row. Returns
   * the key of the row holding its messages, if any (`messagesKey` was the last one before).
   */
  const writeStep = (no: number, c: SerializedCommit, messagesKey: number | null): number | undefined => {
    const { messages, count: n, first, last } = c;
    if (n === 0 && !messages) return undefined;
    const base = no * SEQ_SPAN;
    const lastKey = lastKeyOf(no);
    if (n === 0) {
      if (lastKey === null) insertStep.run(base, 1, null, messages, messagesKey);
      else appendMessages.run({ messages: messages!, key: lastKey, prev: messagesKey });
      return lastKey ?? base;
    }
    // Another writer already wrote these sequence numbers: it owns the swarm now.
    if (lastKey !== null && first <= lastKey - base) throw refusal(c);
    if (last - first + 1 !== n || first < 1 || last > MAX_SEQ) throw new Error(`Swarm "${c.swarmId}": events ${first}–${last} of one commit are not numbered in a row`);
    insertStep.run(base + last, first, c.events, messages, messages ? messagesKey : null);
    return messages ? base + last : undefined;
  };

  /**
   * The stored list lengths after `c`'s message writes (`json`, absent when it has none), and
   * `bad` when an append does not start at its list's stored length.
   */
  const listLengths = (c: SerializedCommit, stored: string | null | undefined): { json?: string; bad?: string } => {
    if (!c.lists) return {};
    // Only the number of items counts here: the items themselves are in `c.messages`.
    const writes = c.lists.map(([list, from, count]): MessageWrite => ({ list, from, items: new Array<unknown>(count) }));
    const { lengths, bad } = nextListLengths(stored ? (JSON.parse(stored) as Record<string, number>) : undefined, writes);
    return { json: JSON.stringify(lengths), ...(bad ? { bad } : {}) };
  };

  /** One commit's statements; throwing leaves the enclosing transaction or savepoint to roll back. */
  const writeOne = (c: SerializedCommit) => {
    const r = c.record;
    if (!r) {
      const row = selectNo.get(c.swarmId);
      if (!row) throw refusal(c);
      writeStep(row.no, c, null);
      return;
    }
    const stored = r.revision > 1 && c.lists ? selectMessageState.get(r.swarmId) : undefined;
    const lengths = listLengths(c, stored?.list_lengths);
    r.listLengths = lengths.json ?? null;
    // The record first: a refused write must fail with its reason, before any event collides.
    const row = r.revision === 1 ? insertRecord.get(r) : updateRecord.get(r);
    // Explain the refusal; throwing rolls the whole step back.
    if (!row) throw refusal(c);
    // The writer is wrong about what is stored: nothing of the step is written.
    if (lengths.bad) throw new Error(`Swarm "${r.swarmId}": ${lengths.bad}`);
    const messagesKey = stored?.messages_key ?? null;
    const key = writeStep(row.no, c, messagesKey);
    // The same row as just written: no page more.
    if (key !== undefined && key !== messagesKey) setMessagesKey.run(key, row.no);
  };
  /** One commit as a transaction of its own, or a savepoint when called inside one. */
  const write = db.transaction(writeOne);

  /** The batch as one transaction, no savepoints; `onFailure` tells a commit failed (not BEGIN or COMMIT). */
  const writeAll = db.transaction((batch: readonly SerializedCommit[], onFailure: () => void) => {
    for (const c of batch) {
      try {
        writeOne(c);
      } catch (e) {
        onFailure();
        throw e;
      }
    }
  });
  /** Each commit inside its own savepoint (`write` nested in a transaction): a failing one rolls back alone. */
  const writeGroup = db.transaction((batch: readonly SerializedCommit[]): BatchFailures => {
    const failures: BatchFailures = [];
    const failed = new Map<string, { error: unknown }>();
    for (const c of batch) {
      let failure = failed.get(c.swarmId);
      if (!failure) {
        try {
          write(c);
        } catch (e) {
          // An error SQLite answers by rolling the whole transaction back fails the whole group.
          if (!db.inTransaction) throw e;
          failure = { error: e };
          failed.set(c.swarmId, failure);
        }
      }
      failures.push(failure?.error);
    }
    return failures;
  });

  // `write.immediate` written out, to time its COMMIT apart.
  const begin = db.prepare('BEGIN IMMEDIATE');
  const commit = db.prepare('COMMIT');
  const rollback = db.prepare('ROLLBACK');
  /** Calls `run`, rolling back the transaction it leaves open when it throws. */
  const orRollBack = (run: () => void) => {
    try {
      run();
    } catch (e) {
      if (db.inTransaction) rollback.run();
      throw e;
    }
  };

  return {
    writeImmediate(c) {
      begin.run();
      orRollBack(() => writeOne(c));
      const start = performance.now();
      orRollBack(() => commit.run());
      return performance.now() - start;
    },
    /**
     * First all together, without savepoints (a savepoint per commit costs SQLite a sub-journal
     * copy of every page the commit touches); when one of them fails, that transaction is
     * rolled back whole and the batch is written again by `writeGroup`, where the failing
     * commit fails alone. IMMEDIATE: the write lock is taken up front, so concurrent processes
     * queue rather than deadlock.
     */
    writeBatch(batch) {
      if (batch.length === 1) {
        write.immediate(batch[0]!);
        return [undefined];
      }
      let failedInside = false;
      try {
        writeAll.immediate(batch, () => (failedInside = true));
        return batch.map(() => undefined);
      } catch (e) {
        // BEGIN or COMMIT failed (busy, I/O): the whole group fails, as it would have anyway.
        if (!failedInside) throw e;
      }
      return writeGroup.immediate(batch);
    },
  };
}
