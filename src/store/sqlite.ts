/**
 * The SQLite store (better-sqlite3, WAL): the embedded default for the CLI and the demo.
 *
 * @module
 */
import { chmodSync, closeSync, mkdirSync, openSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import type Database from 'better-sqlite3';
import { EVENT_FORMAT, type SwarmEvent } from '../../machines/events.js';
import { requireOptional } from '../optional.js';
import { assembleSnapshot, type MessageWrite } from './messages.js';
import { isFinal, type SwarmResult } from '../result.js';
import {
  type Commit,
  CorruptEventError,
  type Lease,
  LeaseLostError,
  RevisionConflictError,
  type StoreStats,
  type SwarmFilter,
  type SwarmRecord,
  type SwarmStore,
} from './types.js';

/** Where the CLI and the demo keep their state by default. */
export const DEFAULT_DB_PATH = '.xswarm/state.db';

/**
 * Options of {@link sqliteStore}. `synchronous: 'FULL'` (default) fsyncs every commit, so a
 * completed step survives a power cut; `'NORMAL'` survives a process crash but may lose the
 * last commits on power loss, for a lower cost per step.
 */
export interface SqliteStoreOptions {
  synchronous?: 'FULL' | 'NORMAL';
  /** How long a writer waits for another process's lock, default 5000 ms. */
  busyTimeoutMs?: number;
}

const FINAL = `('completed','failed','stopped')`;
/**
 * A row whose status reads failed although it says otherwise: its result cannot be read, or it
 * is unfinished and its snapshot cannot be read (what {@link toRecord} decides after parsing).
 */
/** An unfinished swarm one of whose stored messages (part of its snapshot) is not JSON. */
const BAD_MESSAGES = `(status NOT IN ${FINAL} AND EXISTS (SELECT 1 FROM messages m WHERE m.swarm_id = swarms.swarm_id AND json_valid(m.body) = 0))`;
const UNREADABLE = `(json_valid(result) = 0 OR (status NOT IN ${FINAL} AND json_valid(snapshot) = 0) OR ${BAD_MESSAGES})`;
const SCHEMA_VERSION = '1';

interface Row {
  swarm_id: string;
  definition_id: string;
  definition_version: number;
  machine_version: number;
  status: SwarmRecord['status'];
  revision: number;
  snapshot: string;
  result: string;
  last_seq: number;
  updated_at: number;
  owner?: string | null;
  lease_until?: number;
  owner_host?: string | null;
  owner_pid?: number | null;
  /** Listings only: 1 when {@link BAD_MESSAGES}. */
  bad_messages?: number;
}

/**
 * What {@link sqliteStore} returns: a store whose commits always answer with a promise, which
 * settles once the transaction holding the commit is durable (or refused), and its counters.
 */
export interface SqliteStore extends SwarmStore {
  readonly path: string;
  /** Commits written so far. */
  writes: number;
  commit(commit: Commit): Promise<void>;
  stats(): StoreStats;
}

/**
 * Opens (creating if needed) a SQLite store at `path`. Each commit is atomic: the step's events
 * and its snapshot are written together or not at all. The swarm's revision is checked on every
 * write (compare-and-set) and so is the writer's lease. Commits of many swarms arriving together
 * share one transaction (group commit: one fsync for all of them); each is acknowledged only
 * once that transaction is durable, and one refused by its checks fails alone.
 *
 * @example
 * import { createRuntime, sqliteStore } from 'xswarm'; // or sqliteStore from 'xswarm/sqlite'
 * const store = sqliteStore('.xswarm/state.db', { synchronous: 'NORMAL' });
 * const runtime = createRuntime({ swarms, model, store });
 * await runtime.start(); // continues what a crashed process left unfinished
 */
export function sqliteStore(path: string = DEFAULT_DB_PATH, options: SqliteStoreOptions = {}): SqliteStore {
  if (path !== ':memory:' && path !== '') createPrivately(path);
  // Required here rather than imported, so that `xswarm` loads without the optional better-sqlite3.
  const db = new (requireOptional<typeof Database>('sqliteStore()', 'better-sqlite3'))(path);
  db.pragma('journal_mode = WAL');
  db.pragma(`synchronous = ${options.synchronous ?? 'FULL'}`);
  db.pragma(`busy_timeout = ${options.busyTimeoutMs ?? 5000}`);
  db.exec(`
    CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
    CREATE TABLE IF NOT EXISTS swarms (
      swarm_id TEXT PRIMARY KEY,
      definition_id TEXT NOT NULL,
      definition_version INTEGER NOT NULL,
      machine_version INTEGER NOT NULL,
      status TEXT NOT NULL,
      revision INTEGER NOT NULL,
      snapshot TEXT NOT NULL,
      result TEXT NOT NULL,
      last_seq INTEGER NOT NULL,
      updated_at INTEGER NOT NULL,
      owner TEXT,
      lease_until INTEGER NOT NULL DEFAULT 0,
      owner_host TEXT,
      owner_pid INTEGER
    );
    -- Only finished rows are indexed (for prune): a running swarm's commits touch no index.
    CREATE INDEX IF NOT EXISTS swarms_finished ON swarms(updated_at) WHERE status IN ${FINAL};
    CREATE TABLE IF NOT EXISTS events (
      swarm_id TEXT NOT NULL,
      seq INTEGER NOT NULL,
      body TEXT NOT NULL,
      PRIMARY KEY (swarm_id, seq)
    ) WITHOUT ROWID;
    -- The swarms' conversations, one row per message (src/store/messages.ts): a snapshot names
    -- its lists, so a step appends its new messages instead of rewriting the conversation.
    CREATE TABLE IF NOT EXISTS messages (
      swarm_id TEXT NOT NULL,
      list TEXT NOT NULL,
      idx INTEGER NOT NULL,
      body TEXT NOT NULL,
      PRIMARY KEY (swarm_id, list, idx)
    ) WITHOUT ROWID;
  `);
  // OR IGNORE: processes that create the same new file at once all get here (xswarm commands).
  db.prepare(`INSERT OR IGNORE INTO meta (key, value) VALUES ('schema', ?)`).run(SCHEMA_VERSION);
  const version = db.prepare<[], { value: string }>(`SELECT value FROM meta WHERE key = 'schema'`).get()!;
  if (version.value !== SCHEMA_VERSION) {
    db.close();
    throw new Error(`${path}: store schema version ${version.value}, this xswarm reads version ${SCHEMA_VERSION}`);
  }
  // Files written before leases named their holder's host and process gain the two columns
  // (readers that do not know them ignore them, so the schema version stays).
  const columns = new Set(db.prepare<[], { name: string }>(`SELECT name FROM pragma_table_info('swarms')`).all().map((c) => c.name));
  for (const [name, type] of [['owner_host', 'TEXT'], ['owner_pid', 'INTEGER']] as const) {
    try {
      if (!columns.has(name)) db.exec(`ALTER TABLE swarms ADD COLUMN ${name} ${type}`);
    } catch (e) {
      // Another process opening the same old file added it first.
      if (!/duplicate column/.test((e as Error).message)) throw e;
    }
  }

  // One statement per commit whatever its number of events (prepared once per count).
  const insertEventsStatement = rowsInsert(db, 'INSERT INTO events (swarm_id, seq, body) VALUES', '(?, ?, ?)');
  const insertMessagesStatement = rowsInsert(db, 'INSERT INTO messages (swarm_id, list, idx, body) VALUES', '(?, ?, ?, ?)');
  const deleteMessages = db.prepare<[string, string, number]>(`DELETE FROM messages WHERE swarm_id = ? AND list = ? AND idx >= ?`);
  const selectMessages = db.prepare<[string], { list: string; idx: number; body: string }>(
    `SELECT list, idx, body FROM messages WHERE swarm_id = ? ORDER BY list, idx`,
  );
  const insertRecord = db.prepare(
    `INSERT INTO swarms (swarm_id, definition_id, definition_version, machine_version, status, revision, snapshot, result, last_seq, updated_at, owner, lease_until, owner_host, owner_pid)
     VALUES (@swarmId, @definitionId, @definitionVersion, @machineVersion, @status, @revision, @snapshot, @result, @lastSeq, @updatedAt, @owner, @leaseUntil, @ownerHost, @ownerPid)
     ON CONFLICT (swarm_id) DO NOTHING`,
  );
  const updateRecord = db.prepare(
    `UPDATE swarms SET status = @status, revision = @revision, snapshot = @snapshot, result = @result, last_seq = @lastSeq,
       updated_at = @updatedAt, owner = COALESCE(@owner, owner), lease_until = MAX(lease_until, @leaseUntil),
       owner_host = IIF(@owner IS NULL, owner_host, @ownerHost), owner_pid = IIF(@owner IS NULL, owner_pid, @ownerPid)
     WHERE swarm_id = @swarmId AND revision = @revision - 1 AND (@owner IS NULL OR owner IS NULL OR owner = @owner)`,
  );
  const selectHolder = db.prepare<[string], { revision: number; owner: string | null }>(
    `SELECT revision, owner FROM swarms WHERE swarm_id = ?`,
  );
  const selectRecord = db.prepare<[string], Row>(`SELECT * FROM swarms WHERE swarm_id = ?`);
  // A range of the (swarm_id, seq) primary key; LIMIT -1 is no limit.
  const selectEvents = db.prepare<[string, number, number], { seq: number; body: string }>(
    `SELECT seq, body FROM events WHERE swarm_id = ? AND seq > ? ORDER BY seq LIMIT ?`,
  );
  const claimStmt = db.prepare<{ owner: string; until: number; host: string | null; pid: number | null; swarmId: string; now: number; takeover: string | null }>(
    `UPDATE swarms SET owner = @owner, lease_until = @until, owner_host = @host, owner_pid = @pid
     WHERE swarm_id = @swarmId AND status NOT IN ${FINAL}
       AND (owner IS NULL OR owner = @owner OR lease_until <= @now OR owner = @takeover)`,
  );
  const renewStmt = db.prepare<[number, string, string]>(`UPDATE swarms SET lease_until = ? WHERE swarm_id = ? AND owner = ?`);
  const releaseStmt = db.prepare<[string, string]>(`UPDATE swarms SET owner = NULL, lease_until = 0 WHERE swarm_id = ? AND owner = ?`);
  const pruneEvents = db.prepare<[number]>(
    `DELETE FROM events WHERE swarm_id IN (SELECT swarm_id FROM swarms WHERE status IN ${FINAL} AND updated_at < ?)`,
  );
  const pruneMessages = db.prepare<[number]>(
    `DELETE FROM messages WHERE swarm_id IN (SELECT swarm_id FROM swarms WHERE status IN ${FINAL} AND updated_at < ?)`,
  );
  const pruneSwarms = db.prepare<[number]>(`DELETE FROM swarms WHERE status IN ${FINAL} AND updated_at < ?`);

  /** Applies a commit's writes to its message lists (see `MessageWrite`). */
  const writeMessages = (swarmId: string, writes: readonly MessageWrite[]) => {
    for (const { list, from, items } of writes) {
      // An append (from > 0) has nothing to delete: the primary key refuses it, rolling the
      // step back, should a row be there after all.
      if (from === 0) deleteMessages.run(swarmId, list, from);
      for (let start = 0; start < items.length; start += MESSAGE_ROWS_PER_INSERT) {
        const n = Math.min(MESSAGE_ROWS_PER_INSERT, items.length - start);
        const params: (string | number)[] = [];
        for (let i = start; i < start + n; i++) params.push(swarmId, list, from + i, JSON.stringify(items[i]));
        insertMessagesStatement(n).run(...params);
      }
    }
  };
  /** A swarm's stored message lists, by list id; throws naming a row that cannot be read. */
  const readLists = (swarmId: string) => {
    const lists = new Map<string, unknown[]>();
    for (const row of selectMessages.iterate(swarmId)) {
      let rows = lists.get(row.list);
      if (!rows) lists.set(row.list, (rows = []));
      if (row.idx !== rows.length) throw new Error(`message ${rows.length} of list "${row.list}" is missing`);
      try {
        rows.push(JSON.parse(row.body));
      } catch (e) {
        throw new Error(`message ${row.idx} of list "${row.list}" is not JSON (${(e as Error).message})`);
      }
    }
    return lists;
  };

  const insertEvents = (c: Commit) => {
    try {
      if (c.events.length === 0) return;
      const params: (string | number)[] = [];
      for (const e of c.events) params.push(c.swarmId, e.seq, JSON.stringify(e));
      insertEventsStatement(c.events.length).run(...params);
    } catch (e) {
      // Another writer already wrote these sequence numbers: it owns the swarm now.
      if ((e as { code?: string }).code?.startsWith('SQLITE_CONSTRAINT')) {
        const holder = selectHolder.get(c.swarmId);
        if (holder?.owner && c.lease && holder.owner !== c.lease.owner) throw new LeaseLostError(c.swarmId, holder.owner);
        throw new RevisionConflictError(c.swarmId, (c.record?.revision ?? 1) - 1, holder?.revision ?? 0);
      }
      throw e;
    }
  };

  /** One commit's statements; throwing leaves the enclosing transaction or savepoint to roll back. */
  const writeOne = (c: Commit) => {
    const r = c.record;
    if (!r) return insertEvents(c);
    const params = {
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
    };
    // The record first: a refused write must fail with its reason, before any event collides.
    const changed = r.revision === 1 ? insertRecord.run(params).changes : updateRecord.run(params).changes;
    if (changed === 1) {
      if (c.messages) writeMessages(c.swarmId, c.messages);
      return insertEvents(c);
    }
    // Explain the refusal; throwing rolls the whole step back.
    const holder = selectHolder.get(r.swarmId);
    // Creating a swarm that exists is a conflict; otherwise another owner holding the swarm
    // explains the refusal: this writer lost it.
    if (r.revision > 1 && holder && c.lease && holder.owner && holder.owner !== c.lease.owner) {
      throw new LeaseLostError(r.swarmId, holder.owner);
    }
    throw new RevisionConflictError(r.swarmId, r.revision - 1, holder?.revision ?? 0);
  };
  /** One commit as a transaction of its own, or a savepoint when called inside one. */
  const write = db.transaction(writeOne);

  // Group commit. The first commit of an event-loop turn is written at once (a lone swarm
  // waits for nothing but its own transaction); commits that arrive after it in the same turn
  // (other swarms' steps, woken by the same timers or I/O) queue and are written together at the
  // end of the turn, as one transaction: one fsync for many swarms. Each commit's promise
  // settles only after the transaction that holds it has committed. (The end of the turn is
  // `setImmediate`, after every timer and I/O callback due: a microtask would run after each
  // callback and group almost nothing.)
  let queue: Queued[] = [];
  let turnOpen = false;
  const stats: StoreStats = { commits: 0, transactions: 0 };
  const endTurn = () => {
    turnOpen = false;
    flush();
  };
  /** Writes every queued commit in one transaction and settles their promises. */
  const flush = () => {
    const batch = queue;
    if (batch.length === 0) return;
    queue = [];
    let failures: (Failure | undefined)[];
    try {
      // IMMEDIATE: take the write lock up front so concurrent processes queue, not deadlock.
      if (batch.length === 1) failures = [void write.immediate(batch[0]!.commit)];
      else failures = writeBatch(batch);
    } catch (e) {
      // The transaction itself failed (busy, full, I/O): nothing of it was written.
      for (const q of batch) q.reject(e);
      return;
    }
    stats.transactions++;
    for (let i = 0; i < batch.length; i++) {
      const failure = failures[i];
      if (failure) batch[i]!.reject(failure.error);
      else {
        stats.commits++;
        store.writes++;
        batch[i]!.resolve();
      }
    }
  };
  /**
   * Many commits in one transaction: first all together, without savepoints (a savepoint per
   * commit costs SQLite a sub-journal copy of every page the commit touches); when one of them
   * fails, that transaction is rolled back whole and the batch is written again by
   * {@link writeGroup}, where the failing commit fails alone.
   */
  const writeBatch = (batch: Queued[]): (Failure | undefined)[] => {
    let failedInside = false;
    try {
      writeAll.immediate(batch, () => (failedInside = true));
      return [];
    } catch (e) {
      // BEGIN or COMMIT failed (busy, I/O): the whole group fails, as it would have anyway.
      if (!failedInside) throw e;
    }
    return writeGroup.immediate(batch);
  };
  /** The batch as one transaction, no savepoints; `onFailure` tells a commit failed (not BEGIN or COMMIT). */
  const writeAll = db.transaction((batch: Queued[], onFailure: () => void) => {
    for (const { commit: c } of batch) {
      try {
        writeOne(c);
      } catch (e) {
        onFailure();
        throw e;
      }
    }
  });
  /**
   * Many commits in one transaction, each inside its own savepoint (`write` nested in a
   * transaction): a commit that fails (a refused revision or lease, a value that cannot be
   * stored) rolls back alone and the others land. After a failure, the same swarm's later
   * commits in the batch fail too: they were issued on the assumption that it went through.
   */
  const writeGroup = db.transaction((batch: Queued[]): (Failure | undefined)[] => {
    const failures: (Failure | undefined)[] = [];
    const failed = new Map<string, Failure>();
    for (const { commit: c } of batch) {
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
      failures.push(failure);
    }
    return failures;
  });

  const store = {
    path,
    /** Commits written so far (for benchmarks and tests); see also `stats()`. */
    writes: 0,
    async load(swarmId: string) {
      const row = selectRecord.get(swarmId);
      return row ? toRecord(row, () => readLists(swarmId)) : undefined;
    },
    commit(c: Commit): Promise<void> {
      if (!db.open) return Promise.reject(new TypeError('The database connection is not open'));
      if (!turnOpen) {
        // The turn's first commit: written (and durable) before this call returns.
        turnOpen = true;
        setImmediate(endTurn);
        try {
          write.immediate(c);
        } catch (e) {
          return Promise.reject(e);
        }
        stats.transactions++;
        stats.commits++;
        store.writes++;
        return Promise.resolve();
      }
      return new Promise<void>((resolve, reject) => queue.push({ commit: c, resolve, reject }));
    },
    /** How many commits went through and in how many transactions (group commit at work). */
    stats(): StoreStats {
      return { ...stats };
    },
    async readEvents(swarmId: string, since: number, limit?: number) {
      const events: SwarmEvent[] = [];
      for (const row of selectEvents.all(swarmId, since, limit ?? -1)) {
        let event: unknown;
        try {
          event = JSON.parse(row.body);
        } catch (e) {
          throw new CorruptEventError(swarmId, row.seq, (e as Error).message, events);
        }
        if (isFormat1(event)) {
          const detail = `stored in event format 1; this runtime reads format ${EVENT_FORMAT}`;
          throw new CorruptEventError(swarmId, row.seq, detail, events, 'incompatible-version');
        }
        const problem = eventProblem(event, swarmId, row.seq);
        if (problem) throw new CorruptEventError(swarmId, row.seq, problem, events);
        events.push(event as SwarmEvent);
      }
      return events;
    },
    async list(filter: SwarmFilter = {}) {
      const where: string[] = [];
      const params: (string | number)[] = [];
      if (filter.definitionId) {
        where.push('definition_id = ?');
        params.push(filter.definitionId);
      }
      // Filtered by the status the listing reports (see toRecord), so a limit counts what is shown.
      if (filter.status && filter.status.length > 0) {
        where.push(`(CASE WHEN ${UNREADABLE} THEN 'failed' ELSE status END) IN (${filter.status.map(() => '?').join(',')})`);
        params.push(...filter.status);
      }
      // The snapshot text travels only when it is unreadable (for toRecord to name the problem as load does).
      const snapshot = `CASE WHEN status NOT IN ${FINAL} AND json_valid(snapshot) = 0 THEN snapshot ELSE 'null' END`;
      const sql = `SELECT swarm_id, definition_id, definition_version, machine_version, status, revision, ${snapshot} AS snapshot, result, last_seq, updated_at,
          owner, lease_until, owner_host, owner_pid, ${BAD_MESSAGES} AS bad_messages
        FROM swarms ${where.length ? `WHERE ${where.join(' AND ')}` : ''} ORDER BY updated_at DESC LIMIT ?`;
      params.push(filter.limit ?? -1);
      return db
        .prepare<(string | number)[], Row>(sql)
        .all(...params)
        .map((row) => {
          // Unreadable messages are read again, for toRecord to name the problem as load does.
          const { snapshot: _s, problem, ...summary } = toRecord(row, row.bad_messages ? () => readLists(row.swarm_id) : undefined);
          return {
            ...summary,
            ...(problem ? { problem } : {}),
            ...(row.owner ? { lease: leaseOf(row.owner, row) } : {}),
          };
        });
    },
    async claim(swarmId: string, lease: Lease, now: number, takeover?: string) {
      const params = { owner: lease.owner, until: lease.until, host: lease.host ?? null, pid: lease.pid ?? null, swarmId, now, takeover: takeover ?? null };
      return claimStmt.run(params).changes === 1;
    },
    async renew(owner: string, swarmIds: readonly string[], until: number) {
      db.transaction(() => {
        for (const id of swarmIds) renewStmt.run(until, id, owner);
      })();
    },
    async release(owner: string, swarmIds: readonly string[]) {
      db.transaction(() => {
        for (const id of swarmIds) releaseStmt.run(id, owner);
      })();
    },
    async prune(olderThan: number) {
      return db.transaction(() => {
        pruneEvents.run(olderThan);
        pruneMessages.run(olderThan);
        return pruneSwarms.run(olderThan).changes;
      })();
    },
    async close() {
      // Commits already taken are written before the file closes.
      flush();
      if (db.open) db.close();
    },
  };
  return store;
}

/** Why one commit of a group failed (boxed: anything can be thrown). */
interface Failure {
  error: unknown;
}

/** A commit waiting for the end of the event-loop turn, and its caller's promise. */
interface Queued {
  commit: Commit;
  resolve(): void;
  reject(err: unknown): void;
}

/** Most rows one INSERT of messages takes (a conversation written whole goes in several). */
const MESSAGE_ROWS_PER_INSERT = 64;

/**
 * The statement inserting `n` rows (`row` is one row's placeholders) after `head`, prepared
 * once per `n`: a commit writes its rows with one statement.
 */
function rowsInsert(db: Database.Database, head: string, row: string): (n: number) => Database.Statement<(string | number)[]> {
  const prepared = new Map<number, Database.Statement<(string | number)[]>>();
  return (n) => {
    let stmt = prepared.get(n);
    if (!stmt) {
      stmt = db.prepare(`${head} ${Array.from({ length: n }, () => row).join(', ')}`);
      prepared.set(n, stmt);
    }
    return stmt;
  };
}

/** The lease stored in a row's owner columns. */
function leaseOf(owner: string, row: Row): Lease {
  return {
    owner,
    until: row.lease_until ?? 0,
    ...(row.owner_host ? { host: row.owner_host } : {}),
    ...(row.owner_pid ? { pid: row.owner_pid } : {}),
  };
}

/**
 * Creates the database's directory (0700) and file (0600) when they do not exist yet: the
 * store holds whole conversations. The modes are set with chmod, so the umask cannot widen
 * them; SQLite gives the `-wal` and `-shm` files it creates the main file's mode. Existing
 * directories and files keep theirs (the user chose them).
 */
function createPrivately(path: string): void {
  const dir = resolve(dirname(path));
  const first = mkdirSync(dir, { recursive: true, mode: 0o700 });
  if (first) {
    for (let d = dir; ; d = dirname(d)) {
      chmodSync(d, 0o700);
      if (d === first || d === dirname(d)) break;
    }
  }
  let fd: number;
  try {
    fd = openSync(path, 'wx', 0o600);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'EEXIST') return;
    throw e;
  }
  closeSync(fd);
  chmodSync(path, 0o600);
}

/**
 * A row as a record, its snapshot assembled with the swarm's message `lists` (when given: see
 * src/store/messages.ts; a message that cannot be read makes the snapshot unreadable). A
 * snapshot or result that cannot be parsed does not throw: the record
 * carries a `problem`, and the row itself is left as it is. When the swarm's state depends on
 * the unreadable data (its result; an unfinished swarm's snapshot, from which it would be
 * restored), the record reads failed with a reason naming the problem: every reader, whichever
 * door it came through, then sees the same thing. A finished swarm's result does not depend on
 * its snapshot, so it keeps its status and result (only replay, which needs the snapshot, fails).
 */
function toRecord(row: Row, lists?: () => ReadonlyMap<string, readonly unknown[]>): SwarmRecord {
  const record: SwarmRecord = {
    swarmId: row.swarm_id,
    definitionId: row.definition_id,
    definitionVersion: row.definition_version,
    machineVersion: row.machine_version,
    status: row.status,
    revision: row.revision,
    snapshot: undefined,
    result: { status: 'failed', reason: 'unreadable' },
    lastSeq: row.last_seq,
    updatedAt: row.updated_at,
  };
  try {
    const snapshot: unknown = JSON.parse(row.snapshot);
    record.snapshot = lists ? assembleSnapshot(snapshot, lists()) : snapshot;
  } catch (e) {
    record.problem = `stored snapshot is corrupt (${(e as Error).message})`;
  }
  let resultReadable = true;
  try {
    record.result = JSON.parse(row.result) as SwarmResult;
  } catch (e) {
    resultReadable = false;
    record.problem ??= `stored result is corrupt (${(e as Error).message})`;
  }
  if (record.problem && (!resultReadable || !isFinal(row.status))) {
    record.status = 'failed';
    record.result = { status: 'failed', reason: `Cannot read swarm "${row.swarm_id}": ${record.problem}` };
  }
  return record;
}

/**
 * Why a stored event body is not an event of this swarm at this position, or undefined. Checks
 * the envelope and what readers dereference per kind, not every field.
 */
function eventProblem(value: unknown, swarmId: string, seq: number): string | undefined {
  if (!isObject(value)) return 'not an event object';
  const e = value;
  if (e.seq !== seq) return `it says seq ${JSON.stringify(e.seq)}, its row is seq ${seq}`;
  if (e.swarmId !== swarmId) return `it names swarm ${JSON.stringify(e.swarmId)}`;
  const status = e.status as Record<string, unknown> | undefined;
  switch (e.kind) {
    case 'task':
      return e.id === swarmId && typeof e.contextId === 'string' && isObject(status) && typeof status.timestamp === 'string'
        ? undefined
        : 'a task event without its ids or status';
    case 'status-update':
      return typeof e.contextId === 'string' && isObject(status) && typeof status.state === 'string' && isObject(e.metadata) && typeof e.metadata.type === 'string'
        ? undefined
        : 'a status update without a status or a fact';
    case 'artifact-update': {
      const a = e.artifact;
      return typeof e.contextId === 'string' && isObject(a) && typeof a.artifactId === 'string' && Array.isArray(a.parts) ? undefined : 'an artifact update without an artifact';
    }
    default:
      if (typeof e.timestamp !== 'number') return 'no timestamp';
      return typeof e.kind === 'string' && e.kind.startsWith('internal:') ? undefined : `unknown kind ${JSON.stringify(e.kind)}`;
  }
}

/**
 * Whether a stored event is of event format 1 (before events were the A2A objects): a public
 * event with a numeric `timestamp` at the top and no `contextId`. Internal events are the same
 * in both formats.
 */
function isFormat1(value: unknown): boolean {
  if (!isObject(value) || typeof value.timestamp !== 'number' || 'contextId' in value) return false;
  return value.kind === 'task' || value.kind === 'status-update' || value.kind === 'artifact-update';
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
