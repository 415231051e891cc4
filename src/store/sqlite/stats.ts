/**
 * The SQLite store's counters, apart from the code that writes them: `SqliteStore.stats()`
 * returns them, and the core entry point exports the store's types, so its declarations must not
 * reach the writer (which names better-sqlite3's and worker threads' types).
 *
 * @module
 */
import type { StoreStats } from '../types.js';

/**
 * The SQLite store's write counters: with {@link StoreStats}, the time its commits took, on this
 * thread and on the writer thread (grouped commits are written there, not inside `commit()`, so
 * timing `commit()` from outside sees only part of it).
 */
export interface SqliteStoreStats extends StoreStats {
  /**
   * Milliseconds this thread spent blocked writing commits so far, from serializing each to
   * its COMMIT: each transaction it wrote (a turn's first commit, a lone queued one; every
   * group when there is no writer thread, as for `:memory:`).
   */
  writeMs: number;
  /**
   * Of `writeMs`, the milliseconds the COMMITs of the commits written one at a time took: the
   * WAL write, with `synchronous: 'FULL'` its sync, and SQLite's automatic checkpoint when the
   * WAL is due one (not the groups written without a writer thread).
   */
  syncMs: number;
  /**
   * Milliseconds this thread spent serializing commits to JSON: those written one at a time
   * (part of `writeMs`) and those of groups.
   */
  serializeMs: number;
  /** Milliseconds the writer thread spent writing grouped commits: not time this thread waited. */
  writerMs: number;
}
