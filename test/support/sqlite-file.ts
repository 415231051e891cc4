/**
 * A fresh SQLite store file for each test of a file, and the stores (and raw connections)
 * opened on it, closed after each test before the directory is removed.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach } from 'vitest';
import { sqliteStore } from '../../src/index.js';

/** What {@link sqliteFilePerTest} returns: the current test's file, and how to open it. */
export interface SqliteTestFile {
  /** The test's temporary directory. */
  readonly dir: string;
  /** The store's file (`state.db` in `dir`); a test may point it elsewhere in `dir` before opening. */
  path: string;
  /** Opens a store on `path`, closed after the test. */
  open(options?: Parameters<typeof sqliteStore>[1]): ReturnType<typeof sqliteStore>;
  /** Closes `closeable` after the test (a raw connection, a store opened otherwise). */
  track(closeable: { close(): Promise<void> }): void;
}

/** Registers the hooks that give each test of the calling file a new directory (`prefix` names it). */
export function sqliteFilePerTest(prefix: string): SqliteTestFile {
  const opened: { close(): Promise<void> }[] = [];
  const file = {
    dir: '',
    path: '',
    open(options: Parameters<typeof sqliteStore>[1] = {}) {
      const store = sqliteStore(file.path, options);
      opened.push(store);
      return store;
    },
    track(closeable: { close(): Promise<void> }) {
      opened.push(closeable);
    },
  };
  beforeEach(() => {
    file.dir = mkdtempSync(join(tmpdir(), prefix));
    file.path = join(file.dir, 'state.db');
  });
  afterEach(async () => {
    for (const s of opened.splice(0)) await s.close();
    rmSync(file.dir, { recursive: true, force: true });
  });
  return file;
}
