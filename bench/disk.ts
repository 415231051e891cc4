/**
 * What the durable rows measure around the store: a scratch directory on the project's disk,
 * the cost of one raw 4 KB SQLite commit (the floor of a durable step), the bytes the store
 * writes, and a store wrapper that counts completed steps.
 *
 * @module
 */
import { mkdirSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import type { SwarmStore } from '../src/index.js';

/** A fresh directory under `.xswarm/` (on the disk, not a RAM disk) and its removal. */
export function scratchDir(): { dir: string; remove(): void } {
  mkdirSync('.xswarm', { recursive: true });
  const dir = mkdtempSync(join('.xswarm', 'bench-'));
  return { dir, remove: () => rmSync(dir, { recursive: true, force: true }) };
}

/** A raw commit's table on a WAL file with the store's pragmas: `commit(i)` writes the i-th 4 KB value in its own transaction. */
export interface RawCommits {
  commit(i: number): void;
  close(): void;
}

/**
 * Opens the raw commit: a single-row 4 KB upsert in its own (IMMEDIATE) transaction on a WAL
 * file with the store's pragmas — what one durable step costs at the very least. With `append`
 * each 4 KB goes to a new row instead (see {@link rawCommitUs}).
 */
export function openRawCommits(dir: string, synchronous: 'FULL' | 'NORMAL', append = false): RawCommits {
  const db = new Database(join(dir, `raw-${append ? 'append-' : ''}${synchronous}.db`));
  try {
    db.pragma('journal_mode = WAL');
    db.pragma(`synchronous = ${synchronous}`);
    db.pragma('busy_timeout = 5000');
    db.exec('CREATE TABLE IF NOT EXISTS kv (k INTEGER PRIMARY KEY, v TEXT NOT NULL)');
  } catch (e) {
    db.close();
    throw e;
  }
  const put = db.prepare<[string]>(append ? 'INSERT INTO kv (v) VALUES (?)' : 'INSERT INTO kv (k, v) VALUES (1, ?) ON CONFLICT (k) DO UPDATE SET v = excluded.v');
  const commit = db.transaction((v: string) => put.run(v));
  // A different value each time, so every commit really writes.
  return { commit: (i) => void commit.immediate(`${i}`.padEnd(4096, 'x')), close: () => db.close() };
}

/**
 * Microseconds per raw commit ({@link openRawCommits}): the floor of the durable rows.
 *
 * `append` (for information beside the floor, never the floor itself) writes each 4 KB as a new
 * row instead, as a swarm's steps do: the file grows, so each WAL checkpoint copies every page
 * written since the last one, where the upsert's checkpoints copy the same two pages again.
 */
export function rawCommitUs(dir: string, synchronous: 'FULL' | 'NORMAL', commits = 300, warmup = 30, append = false): number {
  const raw = openRawCommits(dir, synchronous, append);
  try {
    for (let i = 0; i < warmup; i++) raw.commit(i);
    const start = process.hrtime.bigint();
    for (let i = 0; i < commits; i++) raw.commit(warmup + i);
    return Number(process.hrtime.bigint() - start) / 1000 / commits;
  } finally {
    raw.close();
  }
}

/**
 * Empties the WAL of the database at `path` (checkpoint and truncate), then holds a read
 * transaction open on it from a second connection, so that no checkpoint can move or reset the
 * WAL: every byte the store commits from now on is appended to the `-wal` file, whose growth is
 * then exactly what was written. `release()` ends it and empties the WAL again, so that what is
 * measured next does not pay for checkpointing it.
 */
export function pinWal(path: string): { release(): void } {
  truncateWal(path);
  const reader = new Database(path, { readonly: true });
  reader.exec('BEGIN');
  reader.prepare('SELECT count(*) FROM sqlite_master').get();
  return {
    release() {
      reader.exec('COMMIT');
      reader.close();
      truncateWal(path);
    },
  };
}

/** Checkpoints the WAL of the database at `path` into the database and truncates it. */
function truncateWal(path: string): void {
  const db = new Database(path);
  try {
    db.pragma('wal_checkpoint(TRUNCATE)');
  } finally {
    db.close();
  }
}

/** Size in bytes of the database file plus its `-wal` file. */
export function dbBytes(path: string): number {
  const size = (p: string) => {
    try {
      return statSync(p).size;
    } catch {
      return 0;
    }
  };
  return size(path) + size(`${path}-wal`);
}

/** A store whose completed steps (commits carrying a snapshot record) are counted. */
export interface CountedStore {
  store: SwarmStore;
  /** Commits that carried a record: one per completed step. */
  commits(): number;
  /**
   * SQLite transactions executed so far, as the store reports them (`stats().transactions`,
   * else its `writes` counter); null when the store does not say.
   */
  transactions(): number | null;
}

/**
 * Wraps a store to count the commits the runtime makes, passing everything through unchanged
 * (a Proxy, so whatever else the store offers stays reachable).
 */
export function countCommits(store: SwarmStore): CountedStore {
  let commits = 0;
  const counted = new Proxy(store, {
    get(target, key) {
      if (key === 'commit') {
        return (c: Parameters<SwarmStore['commit']>[0]) => {
          if (c.record) commits++;
          return target.commit(c);
        };
      }
      const value = Reflect.get(target, key, target) as unknown;
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
  const reported = store as SwarmStore & { stats?: () => { transactions?: number }; writes?: number };
  return {
    store: counted,
    commits: () => commits,
    transactions: () => reported.stats?.().transactions ?? (typeof reported.writes === 'number' ? reported.writes : null),
  };
}
