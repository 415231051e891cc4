/**
 * The SQLite store (better-sqlite3, WAL): the embedded default for the CLI and the demo.
 *
 * @module
 */
import { chmodSync, closeSync, mkdirSync, openSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import type Database from 'better-sqlite3';
import { EVENT_FORMAT, type SwarmEvent, type SwarmLabel } from '../../../machines/events.js';
import { assembleSnapshot } from '../messages.js';
import { TEAM_RECORD_PREFIX } from '../../define/ids.js';
import { type BatchWriter, groupCommit, localWriter, newStoreStats, threadWriter, writerThread } from './group.js';
import type { SqliteStoreStats } from './stats.js';
import { sqliteLedger } from './budgets.js';
import { sqliteNotices } from './notices.js';
import { sqlitePushOutbox } from './push-outbox.js';
import { badMessageSteps, readListSteps, SELECT_MESSAGES, SELECT_VALID, type SelectMessages, type SelectValid } from './lists.js';
import { runInSteps } from '../../util/steps.js';
import { MAX_SEQ, openConnection, prepareLastKey, prepareWrites, SEQ_SPAN } from './writes.js';
import { eventProblem, isFormat1 } from '../stored-event.js';
import { isFinal, type SwarmResult } from '../result.js';
import { type Commit, CorruptEventError, type Lease, type SwarmFilter, type SwarmRecord, type SwarmStore, type SwarmSummary } from '../types.js';

export type { SqliteStoreStats } from './stats.js';

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
 * An unfinished swarm one of whose stored message writes (part of its snapshot) is not JSON:
 * its steps holding messages are found by following `prev_messages` back from `messages_key`.
 */
const BAD_MESSAGES = `(status NOT IN ${FINAL} AND EXISTS (
  WITH RECURSIVE chain (key) AS (SELECT swarms.messages_key UNION ALL SELECT t.prev_messages FROM steps t JOIN chain ON t.key = chain.key WHERE t.prev_messages IS NOT NULL)
  SELECT 1 FROM chain JOIN steps t ON t.key = chain.key WHERE json_valid(t.messages) = 0))`;
/**
 * A team's record, whose message writes are its board's rows (30 MB for 100,000 tasks): a
 * listing checks them in steps ({@link badMessageSteps}), not in its SQL, which held the event
 * loop ~90 ms per unfinished team of that size (every adoption scan).
 */
const STEPPED = `(substr(definition_id, 1, ${TEAM_RECORD_PREFIX.length}) = '${TEAM_RECORD_PREFIX}')`;
/** {@link BAD_MESSAGES} as a listing's SQL asks it: of the swarms that are not {@link STEPPED}. */
const SQL_BAD_MESSAGES = `(NOT ${STEPPED} AND ${BAD_MESSAGES})`;
/**
 * A row whose status reads failed although it says otherwise: its result cannot be read, or it
 * is unfinished and its snapshot cannot be read (what {@link toRecord} decides after parsing).
 */
const UNREADABLE = `(json_valid(result) = 0 OR (status NOT IN ${FINAL} AND json_valid(snapshot) = 0) OR ${SQL_BAD_MESSAGES})`;
/** A listing's snapshot column: the text travels only when it is unreadable (for toRecord to name the problem as load does). */
const LISTED_SNAPSHOT = `CASE WHEN status NOT IN ${FINAL} AND json_valid(snapshot) = 0 THEN snapshot ELSE 'null' END`;
/**
 * Version 3: snapshots may hold the swarm's config as a reference to its one-row list (see
 * `ConfigRef` in src/store/messages.ts), which an xswarm reading version 2 would not put back;
 * the tables are those of version 2 (one `steps` row per commit; version 1 had a row per event
 * and per message), so a version 2 file only has its version raised.
 */
const SCHEMA_VERSION = '3';

/** The `swarms` table, as version 2 has it. */
const SWARMS_TABLE = (name: string) => `
    CREATE TABLE ${name} (
      -- The swarm's number: its steps' keys start with it (see SEQ_SPAN).
      no INTEGER PRIMARY KEY,
      swarm_id TEXT NOT NULL UNIQUE,
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
      owner_pid INTEGER,
      -- The stored length of each message list, {"<list id>": n}: an append must start there.
      list_lengths TEXT,
      -- The key of the swarm's last step holding message writes (see steps.prev_messages).
      messages_key INTEGER,
      -- What the caller named the run ({"name", "description", "componentId"} JSON), or NULL.
      -- Added to version 3 files that lack it (see openSchema): older xswarm ignores it.
      label TEXT
    );`;

/**
 * Everything of version 2 but the `swarms` table. A step is one `steps` row: its events, one
 * JSON text per line (JSON.stringify never writes a raw newline), and its message writes, a JSON
 * array of `MessageWrite`s applied in key order (src/store/messages.ts). One row per step keeps
 * a commit to a few page writes; rows of 300–400 bytes per event and per message inserted in the
 * middle of (swarm_id, …) B-trees cost 8–9 pages per commit.
 *
 * `events` is a view with a row per event (swarm_id, seq, body), for people and tools reading
 * the file; its triggers let an event be inserted or its body replaced through it. The store
 * itself reads and writes `steps`.
 */
const STEPS_SCHEMA = `
    -- Only finished rows are indexed (for prune): a running swarm's commits touch no index.
    CREATE INDEX swarms_finished ON swarms(updated_at) WHERE status IN ${FINAL};
    CREATE TABLE steps (
      key INTEGER PRIMARY KEY,
      first_seq INTEGER NOT NULL,
      events TEXT,
      messages TEXT,
      -- The key of the swarm's previous step holding messages: loading a swarm reads those rows
      -- only, not every step of a long stream.
      prev_messages INTEGER
    );
    CREATE VIEW events (swarm_id, seq, body) AS
      WITH RECURSIVE lines (swarm_id, seq, body, rest) AS (
        SELECT s.swarm_id, t.first_seq, NULL, t.events || char(10)
          FROM steps t JOIN swarms s ON s.no = t.key / ${SEQ_SPAN} WHERE t.events IS NOT NULL
        UNION ALL
        SELECT swarm_id, seq + 1, substr(rest, 1, instr(rest, char(10)) - 1), substr(rest, instr(rest, char(10)) + 1)
          FROM lines WHERE rest <> ''
      )
      SELECT swarm_id, seq - 1, body FROM lines WHERE body IS NOT NULL;
    CREATE TRIGGER events_insert INSTEAD OF INSERT ON events BEGIN
      SELECT RAISE(ABORT, 'no swarm with this swarm_id') WHERE NOT EXISTS (SELECT 1 FROM swarms WHERE swarm_id = NEW.swarm_id);
      INSERT INTO steps (key, first_seq, events)
        VALUES ((SELECT no FROM swarms WHERE swarm_id = NEW.swarm_id) * ${SEQ_SPAN} + NEW.seq, NEW.seq, NEW.body);
    END;
    CREATE TRIGGER events_update INSTEAD OF UPDATE OF body ON events BEGIN
      UPDATE steps SET events = (
        SELECT group_concat(body, char(10)) FROM (
          SELECT CASE WHEN e.seq = OLD.seq THEN NEW.body ELSE e.body END AS body FROM events e
           WHERE e.swarm_id = OLD.swarm_id AND e.seq BETWEEN steps.first_seq AND steps.key % ${SEQ_SPAN} ORDER BY e.seq))
      WHERE key BETWEEN (SELECT no FROM swarms WHERE swarm_id = OLD.swarm_id) * ${SEQ_SPAN} + OLD.seq
                    AND (SELECT no FROM swarms WHERE swarm_id = OLD.swarm_id) * ${SEQ_SPAN} + ${MAX_SEQ}
        AND first_seq <= OLD.seq AND events IS NOT NULL;
    END;`;

interface Row {
  no: number;
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
  messages_key: number | null;
  /** The run's label as JSON; absent from rows read before the column existed. */
  label?: string | null;
  /** Listings only: 1 when {@link BAD_MESSAGES}. */
  bad_messages?: number;
  /** Listings only: 1 for an unfinished {@link STEPPED} record, whose messages are checked after the query. */
  stepped?: number;
}

/**
 * What {@link sqliteStore} returns: a store whose commits always answer with a promise, which
 * settles once the transaction holding the commit is durable (or refused), and its counters.
 */
export interface SqliteStore extends SwarmStore {
  readonly path: string;
  /** Commits written so far. */
  readonly writes: number;
  commit(commit: Commit): Promise<void>;
  stats(): SqliteStoreStats;
}

/**
 * Opens (creating if needed) a SQLite store at `path`. Each commit is atomic: the step's events
 * and its snapshot are written together or not at all. The swarm's revision is checked on every
 * write (compare-and-set) and so is the writer's lease. Commits of many swarms arriving together
 * share one transaction (group commit: one fsync for all of them), written by a writer thread
 * with its own connection while this one runs swarms (src/store/sqlite/group.ts); each is
 * acknowledged only once that transaction is durable, and one refused by its checks fails alone.
 *
 * @example
 * import { createRuntime, sqliteStore } from 'xswarm'; // or sqliteStore from 'xswarm/sqlite'
 * const store = sqliteStore('.xswarm/state.db', { synchronous: 'NORMAL' });
 * const runtime = createRuntime({ swarms, model, store });
 * await runtime.start(); // continues what a crashed process left unfinished
 */
export function sqliteStore(path: string = DEFAULT_DB_PATH, options: SqliteStoreOptions = {}): SqliteStore {
  if (path !== ':memory:' && path !== '') createPrivately(path);
  const db = openConnection(path, options);
  try {
    openSchema(db, path);
  } catch (e) {
    db.close();
    throw e;
  }

  const selectNo = db.prepare<[string], { no: number }>(`SELECT no FROM swarms WHERE swarm_id = ?`);
  const selectMessages: SelectMessages = db.prepare(SELECT_MESSAGES);
  const selectValid: SelectValid = db.prepare(SELECT_VALID);
  const selectRecord = db.prepare<[string], Row>(`SELECT * FROM swarms WHERE swarm_id = ?`);
  // A swarm's columns, its snapshot only when unreadable (for toRecord to name the problem as load does).
  const selectSummary = db.prepare<[string], Row>(
    `SELECT no, swarm_id, definition_id, definition_version, machine_version, status, revision,
        CASE WHEN json_valid(snapshot) = 0 THEN snapshot ELSE 'null' END AS snapshot, result, last_seq, updated_at,
        owner, lease_until, owner_host, owner_pid, messages_key, label FROM swarms WHERE swarm_id = ?`,
  );
  // The rows holding events after `since`, in order (a row may start at or before it).
  const selectEvents = db.prepare<[number, number], { key: number; first_seq: number; events: string }>(
    `SELECT key, first_seq, events FROM steps WHERE key > ? AND key <= ? AND events IS NOT NULL ORDER BY key`,
  );
  const claimStmt = db.prepare<{ owner: string; until: number; host: string | null; pid: number | null; swarmId: string; now: number; takeover: string | null }>(
    `UPDATE swarms SET owner = @owner, lease_until = @until, owner_host = @host, owner_pid = @pid
     WHERE swarm_id = @swarmId AND status NOT IN ${FINAL}
       AND (owner IS NULL OR owner = @owner OR lease_until <= @now OR owner = @takeover)`,
  );
  const renewStmt = db.prepare<[number, string, string]>(`UPDATE swarms SET lease_until = ? WHERE swarm_id = ? AND owner = ?`);
  const releaseStmt = db.prepare<[string, string]>(`UPDATE swarms SET owner = NULL, lease_until = 0 WHERE swarm_id = ? AND owner = ?`);
  const selectPrunable = db.prepare<[number], { no: number }>(`SELECT no FROM swarms WHERE status IN ${FINAL} AND updated_at < ?`);
  const deleteSteps = db.prepare<[number, number]>(`DELETE FROM steps WHERE key BETWEEN ? AND ?`);
  const pruneSwarms = db.prepare<[number]>(`DELETE FROM swarms WHERE status IN ${FINAL} AND updated_at < ?`);
  const selectRemovable = db.prepare<[string], { no: number }>(`SELECT no FROM swarms WHERE swarm_id = ? AND status IN ${FINAL}`);
  const removeSwarm = db.prepare<[number]>(`DELETE FROM swarms WHERE no = ?`);

  /**
   * A swarm's stored message lists read in steps, the event loop running between two (a large
   * team's board): a function giving them, which throws what reading them threw.
   */
  const readListsInSteps = async (row: Pick<Row, 'no' | 'messages_key'>): Promise<() => Map<string, unknown[]>> => {
    try {
      const lists = await runInSteps(readListSteps(selectMessages, row));
      return () => lists;
    } catch (e) {
      return () => {
        throw e;
      };
    }
  };

  const stats = newStoreStats();
  const writes = prepareWrites(db);
  // A database no second connection can open has no writer thread: its groups are written here.
  const startThread = path !== ':memory:' && path !== '' ? writerThread() : undefined;
  // Only what the thread needs crosses to it (the options object may hold more).
  const connection = { synchronous: options.synchronous, busyTimeoutMs: options.busyTimeoutMs };
  const writer = startThread ? threadWriter(startThread, path, connection, stats) : localWriter(writes, stats);
  const group = groupCommit(writes, writer, stats);

  const store = {
    path,
    budgets: sqliteLedger(db),
    notices: sqliteNotices(db),
    pushOutbox: sqlitePushOutbox(db),
    /** Commits written so far (for benchmarks and tests); see also `stats()`. */
    get writes() {
      return stats.commits;
    },
    async load(swarmId: string) {
      const row = selectRecord.get(swarmId);
      if (!row) return undefined;
      // Read in steps (the first one at once, with the row): a large team's rows do not block the event loop.
      const lists = await readListsInSteps(row);
      const record = toRecord(row, lists);
      // The file is shared by processes: say who holds the swarm, as listings do.
      return row.owner ? { ...record, lease: leaseOf(row.owner, row) } : record;
    },
    /**
     * The swarm's record without its snapshot, as `load` has it (the same status, result and
     * `problem`: the snapshot, the result and the message writes are checked as JSON, the writes
     * in steps) without parsing its message lists, unless one cannot be read: then they are read,
     * to name the problem as `load` does. (Writes that are JSON but not writes, which only a hand
     * edit makes, are found by `load` alone, as by a listing.) Adopting a large team reads it once.
     */
    async summary(swarmId: string) {
      const row = selectSummary.get(swarmId);
      if (!row) return undefined;
      const bad = await runInSteps(badMessageSteps(selectValid, row));
      const { snapshot: _s, problem, ...summary } = toRecord(row, bad ? await readListsInSteps(row) : undefined);
      return { ...summary, ...(problem ? { problem } : {}), ...(row.owner ? { lease: leaseOf(row.owner, row) } : {}) };
    },
    commit(c: Commit): Promise<void> {
      // Refused once close() has started (then the connection closes).
      return group.commit(c);
    },
    /** How many commits went through and in how many transactions (group commit at work). */
    stats(): SqliteStoreStats {
      return { ...stats };
    },
    async readEvents(swarmId: string, since: number, limit?: number) {
      const events: SwarmEvent[] = [];
      const swarm = selectNo.get(swarmId);
      if (!swarm || (limit !== undefined && limit <= 0)) return events;
      const base = swarm.no * SEQ_SPAN;
      // A row holds the events first_seq…(key − base): the first row may begin before `since`.
      for (const row of selectEvents.iterate(base + Math.max(0, since), base + MAX_SEQ)) {
        const lines = row.events.split('\n');
        const last = row.key - base;
        const from = Math.max(row.first_seq, since + 1);
        const overlong = lines.length > last - row.first_seq + 1;
        for (let seq = from; seq <= last; seq++) {
          const line = lines[seq - row.first_seq];
          if (line === undefined) throw new CorruptEventError(swarmId, seq, `missing from its row (events ${row.first_seq}–${last})`, events);
          const event = parseEvent(swarmId, seq, line, events);
          events.push(event);
          // Reported at the row's last event, even when the limit ends the read there: the next
          // read starts after it and would never see this row again.
          if (seq === last && overlong) throw new CorruptEventError(swarmId, last, `its row (events ${row.first_seq}–${last}) holds ${lines.length} lines`, events);
          if (events.length === limit) return events;
        }
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
      const statuses = filter.status && filter.status.length > 0 ? filter.status : undefined;
      if (statuses) {
        // Filtered by the status the listing reports (see toRecord), so a limit counts what is
        // shown. A team's rows are checked after the query: an unfinished one may read failed.
        const failed = statuses.includes('failed') ? ` OR (${STEPPED} AND status NOT IN ${FINAL})` : '';
        where.push(`((CASE WHEN ${UNREADABLE} THEN 'failed' ELSE status END) IN (${statuses.map(() => '?').join(',')})${failed})`);
        params.push(...statuses);
      }
      if (filter.name !== undefined) {
        where.push(`json_extract(label, '$.name') = ?`);
        params.push(filter.name);
      }
      if (filter.componentId !== undefined) {
        where.push(`json_extract(label, '$.componentId') = ?`);
        params.push(filter.componentId);
      }
      if (filter.notHeldBy) {
        where.push('(owner IS NULL OR owner <> ? OR lease_until <= ?)');
        params.push(filter.notHeldBy.owner, filter.notHeldBy.at);
      }
      const sql = `SELECT no, swarm_id, definition_id, definition_version, machine_version, status, revision, ${LISTED_SNAPSHOT} AS snapshot, result, last_seq, updated_at,
          owner, lease_until, owner_host, owner_pid, messages_key, label, ${SQL_BAD_MESSAGES} AS bad_messages, (${STEPPED} AND status NOT IN ${FINAL}) AS stepped
        FROM swarms ${where.length ? `WHERE ${where.join(' AND ')}` : ''} ORDER BY updated_at DESC LIMIT ?`;
      const statement = db.prepare<(string | number)[], Row>(sql);
      const read = async (limit: number) => {
        const rows = statement.all(...params, limit);
        const out: SwarmSummary[] = [];
        let dropped = false;
        for (const row of rows) {
          if (row.stepped) row.bad_messages = (await runInSteps(badMessageSteps(selectValid, row, false))) ? 1 : 0;
          // Unreadable messages are read again, for toRecord to name the problem as load does.
          const { snapshot: _s, problem, ...summary } = toRecord(row, row.bad_messages ? await readListsInSteps(row) : undefined);
          if (row.stepped && statuses && !statuses.includes(summary.status)) {
            dropped = true;
            continue;
          }
          out.push({ ...summary, ...(problem ? { problem } : {}), ...(row.owner ? { lease: leaseOf(row.owner, row) } : {}) });
        }
        return { out, full: limit >= 0 && rows.length === limit, dropped };
      };
      const limit = filter.limit ?? -1;
      const first = await read(limit);
      // A team the query could not judge took a place the limit counted (an unfinished team in a
      // listing of failed swarms, a team whose rows cannot be read): read whole, then cut.
      return first.dropped && first.full ? (await read(-1)).out.slice(0, limit) : first.out;
    },
    // Writes beside commits run when no group is out to the writer (see GroupCommit.exclusive).
    async claim(swarmId: string, lease: Lease, now: number, takeover?: string) {
      const params = { owner: lease.owner, until: lease.until, host: lease.host ?? null, pid: lease.pid ?? null, swarmId, now, takeover: takeover ?? null };
      return group.exclusive(() => claimStmt.run(params).changes === 1);
    },
    async renew(owner: string, swarmIds: readonly string[], until: number) {
      await group.exclusive(
        db.transaction(() => {
          for (const id of swarmIds) renewStmt.run(until, id, owner);
        }),
      );
    },
    async release(owner: string, swarmIds: readonly string[]) {
      await group.exclusive(
        db.transaction(() => {
          for (const id of swarmIds) releaseStmt.run(id, owner);
        }),
      );
    },
    async prune(olderThan: number) {
      return group.exclusive(
        db.transaction(() => {
          for (const { no } of selectPrunable.all(olderThan)) deleteSteps.run(no * SEQ_SPAN, no * SEQ_SPAN + MAX_SEQ);
          return pruneSwarms.run(olderThan).changes;
        }),
      );
    },
    async remove(swarmIds: readonly string[]) {
      return group.exclusive(
        db.transaction(() => {
          let n = 0;
          for (const id of swarmIds) {
            const row = selectRemovable.get(id);
            if (!row) continue;
            deleteSteps.run(row.no * SEQ_SPAN, row.no * SEQ_SPAN + MAX_SEQ);
            n += removeSwarm.run(row.no).changes;
          }
          return n;
        }),
      );
    },
    async close() {
      // Commits already taken are written before the file closes.
      await group.close();
      if (db.open) db.close();
    },
  };
  writers.set(store, writer);
  return store;
}

/** Each open store's batch writer, for {@link writerReady}. */
const writers = new WeakMap<object, BatchWriter>();

/**
 * Whether `store`'s groups go to its writer thread now (starting the thread if it has not
 * started): until it is up, they are written on the store's own connection. For tests and
 * benchmarks that measure the thread's path (not exported by the package); true for a store
 * without a thread.
 */
export function writerReady(store: SqliteStore): boolean {
  return writers.get(store)?.ready?.() ?? true;
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
 * The event stored at `seq` of `swarmId` from its JSON text; throws a {@link CorruptEventError}
 * (carrying `before`, the events read so far) when it is not an event of that swarm at that seq.
 */
function parseEvent(swarmId: string, seq: number, text: string, before: SwarmEvent[]): SwarmEvent {
  let event: unknown;
  try {
    event = JSON.parse(text);
  } catch (e) {
    throw new CorruptEventError(swarmId, seq, (e as Error).message, before);
  }
  if (isFormat1(event)) {
    const detail = `stored in event format 1; this runtime reads format ${EVENT_FORMAT}`;
    throw new CorruptEventError(swarmId, seq, detail, before, 'incompatible-version');
  }
  const problem = eventProblem(event, swarmId, seq);
  if (problem) throw new CorruptEventError(swarmId, seq, problem, before);
  return event as SwarmEvent;
}

/**
 * Creates the schema of a new file, or brings a version 1 or 2 file to version 3 (see
 * {@link migrateFrom1} and {@link SCHEMA_VERSION}); throws, leaving the file as it was, for any
 * other version. Done under the write lock, so processes opening the same file at once do it once.
 */
function openSchema(db: Database.Database, path: string): void {
  db.exec(`CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)`);
  const version = () => db.prepare<[], { value: string }>(`SELECT value FROM meta WHERE key = 'schema'`).get()?.value;
  if (version() === SCHEMA_VERSION && hasLabelColumn(db)) return;
  db.transaction(() => {
    const found = version();
    if (found === undefined) {
      db.exec(SWARMS_TABLE('swarms') + STEPS_SCHEMA);
      db.prepare(`INSERT INTO meta (key, value) VALUES ('schema', ?)`).run(SCHEMA_VERSION);
    } else if (found === '1') migrateFrom1(db);
    else if (found === '2') db.prepare(`UPDATE meta SET value = ? WHERE key = 'schema'`).run(SCHEMA_VERSION);
    else if (found !== SCHEMA_VERSION) throw new Error(`${path}: store schema version ${found}, this xswarm reads version ${SCHEMA_VERSION}`);
    // Files written before runs had names lack the label column: added, NULL for their rows
    // (an optional column, so the schema version stays: an older xswarm still reads the file).
    if (!hasLabelColumn(db)) db.exec(`ALTER TABLE swarms ADD COLUMN label TEXT`);
  }).immediate();
}

/** Whether the `swarms` table has the `label` column. */
function hasLabelColumn(db: Database.Database): boolean {
  return db.prepare<[], { n: number }>(`SELECT count(*) AS n FROM pragma_table_info('swarms') WHERE name = 'label'`).get()!.n > 0;
}

/**
 * Rewrites a version 1 file (a row per event in `events`, a row per message in `messages`) as
 * version 2, in the transaction of {@link openSchema}: each old event becomes a step row of its
 * own (its text as stored, readable or not), and each swarm's messages one write per list, on
 * its last step row.
 */
function migrateFrom1(db: Database.Database): void {
  // Files written before leases named their holder's host and process lack these two columns.
  const columns = new Set(
    db
      .prepare<[], { name: string }>(`SELECT name FROM pragma_table_info('swarms')`)
      .all()
      .map((c) => c.name),
  );
  for (const [name, type] of [
    ['owner_host', 'TEXT'],
    ['owner_pid', 'INTEGER'],
  ] as const) {
    if (!columns.has(name)) db.exec(`ALTER TABLE swarms ADD COLUMN ${name} ${type}`);
  }
  const kept = `swarm_id, definition_id, definition_version, machine_version, status, revision, snapshot, result, last_seq, updated_at, owner, lease_until, owner_host, owner_pid`;
  db.exec(`
    ${SWARMS_TABLE('swarms_v2')}
    INSERT INTO swarms_v2 (${kept}) SELECT ${kept} FROM swarms ORDER BY rowid;
    DROP INDEX IF EXISTS swarms_finished;
    DROP TABLE swarms;
    ALTER TABLE swarms_v2 RENAME TO swarms;
    ALTER TABLE events RENAME TO events_v1;
    ALTER TABLE messages RENAME TO messages_v1;
    ${STEPS_SCHEMA}
    INSERT INTO steps (key, first_seq, events)
      SELECT s.no * ${SEQ_SPAN} + e.seq, e.seq, e.body FROM events_v1 e JOIN swarms s USING (swarm_id) WHERE e.seq BETWEEN 1 AND ${MAX_SEQ};
  `);
  const rows = db.prepare<[], { no: number; list: string; body: string }>(
    `SELECT s.no, m.list, m.body FROM messages_v1 m JOIN swarms s USING (swarm_id) ORDER BY s.no, m.list, m.idx`,
  );
  const lastKey = prepareLastKey(db);
  const put = db.prepare<{ key: number; messages: string }>(
    `INSERT INTO steps (key, first_seq, messages) VALUES (@key, 1, @messages) ON CONFLICT (key) DO UPDATE SET messages = @messages`,
  );
  const lengths = db.prepare<[string, number, number]>(`UPDATE swarms SET list_lengths = ?, messages_key = ? WHERE no = ?`);
  // Bodies are joined as text, so a message that is not JSON stays unreadable (not lost).
  const finish = (no: number, lists: Map<string, string[]>) => {
    const writes = [...lists].map(([list, bodies]) => `{"list":${JSON.stringify(list)},"from":0,"items":[${bodies.join(',')}]}`);
    const key = lastKey(no) ?? no * SEQ_SPAN;
    put.run({ key, messages: `[${writes.join(',')}]` });
    lengths.run(JSON.stringify(Object.fromEntries([...lists].map(([list, bodies]) => [list, bodies.length]))), key, no);
  };
  let current: { no: number; lists: Map<string, string[]> } | undefined;
  for (const row of rows.all()) {
    if (current?.no !== row.no) {
      if (current) finish(current.no, current.lists);
      current = { no: row.no, lists: new Map() };
    }
    let bodies = current.lists.get(row.list);
    if (!bodies) current.lists.set(row.list, (bodies = []));
    bodies.push(row.body);
  }
  if (current) finish(current.no, current.lists);
  db.exec(`DROP TABLE events_v1; DROP TABLE messages_v1; UPDATE meta SET value = '${SCHEMA_VERSION}' WHERE key = 'schema';`);
}

/** A stored label; one that cannot be read is left out (it names the run, nothing depends on it). */
function labelOf(text: string | null | undefined): SwarmLabel | undefined {
  if (!text) return undefined;
  try {
    const label: unknown = JSON.parse(text);
    return label && typeof label === 'object' && !Array.isArray(label) ? (label as SwarmLabel) : undefined;
  } catch {
    return undefined;
  }
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
  const label = labelOf(row.label);
  if (label) record.label = label;
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
