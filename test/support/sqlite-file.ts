/**
 * A fresh SQLite store file for each test of a file, and what the test opened on it (stores,
 * raw connections, runtimes, servers), closed after each test, last opened first, before the
 * directory is removed.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach } from 'vitest';
import { createRuntime, type Runtime, type RuntimeOptions, sqliteStore } from '../../src/index.js';

/** Something to close after the test: an object with `close()`, or a function that closes it. */
export type Closeable = { close(): unknown } | (() => unknown);

/** What {@link sqliteFilePerTest} returns: the current test's file, and how to open it. */
export interface SqliteTestFile {
  /** The test's temporary directory. */
  readonly dir: string;
  /** The store's file (`state.db` in `dir`); a test may point it elsewhere in `dir` before opening. */
  path: string;
  /** Opens a store on `path`, closed after the test. */
  open(options?: Parameters<typeof sqliteStore>[1]): ReturnType<typeof sqliteStore>;
  /** Closes `closeable` after the test (a raw connection, a store opened otherwise, a runtime, a server). */
  track(closeable: Closeable): void;
  /** Creates a runtime, closed after the test (before the stores opened ahead of it). */
  runtime(options: RuntimeOptions): Runtime;
}

/**
 * Registers the hooks that give each test of the calling file a new directory (`prefix` names
 * it). A close that fails fails the test, unless `ignoreCloseErrors` (for files whose tests
 * leave stores and runtimes broken on purpose).
 */
export function sqliteFilePerTest(prefix: string, options: { ignoreCloseErrors?: boolean } = {}): SqliteTestFile {
  const opened: Closeable[] = [];
  const file = {
    dir: '',
    path: '',
    open(storeOptions: Parameters<typeof sqliteStore>[1] = {}) {
      const store = sqliteStore(file.path, storeOptions);
      opened.push(store);
      return store;
    },
    track(closeable: Closeable) {
      opened.push(closeable);
    },
    runtime(runtimeOptions: RuntimeOptions) {
      const rt = createRuntime(runtimeOptions);
      opened.push(rt);
      return rt;
    },
  };
  beforeEach(() => {
    file.dir = mkdtempSync(join(tmpdir(), prefix));
    file.path = join(file.dir, 'state.db');
  });
  afterEach(async () => {
    for (const c of opened.splice(0).reverse()) {
      const closing = (async () => (typeof c === 'function' ? c() : c.close()))();
      await (options.ignoreCloseErrors ? closing.catch(() => undefined) : closing);
    }
    rmSync(file.dir, { recursive: true, force: true });
  });
  return file;
}
