/**
 * The guard of the tests that run examples and the CLI as child processes: they must keep
 * their databases under `os.tmpdir()`, never in the checkout's default `.xswarm/state.db`,
 * which holds the user's own swarms (`npm start`, `npm run xswarm -- list`). A file registers
 * {@link guardCheckoutState}; after its tests, the checkout's `.xswarm/` must be exactly as
 * before them (absent stays absent, files keep their size and modification time).
 */
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, expect } from 'vitest';
import { REPO_ROOT } from './repo-root.js';

/** The checkout's default state folder (`DEFAULT_DB_PATH` is `.xswarm/state.db`, relative to the repository root where the tests run). */
export const CHECKOUT_STATE_DIR = join(REPO_ROOT, '.xswarm');

/** What `dir` holds: each file with its size and modification time, or `absent`. */
export function stateOf(dir: string = CHECKOUT_STATE_DIR): string[] | 'absent' {
  let names: string[];
  try {
    names = readdirSync(dir).sort();
  } catch {
    return 'absent';
  }
  return names.map((name) => {
    const s = statSync(join(dir, name), { throwIfNoEntry: false });
    return s ? `${name} ${s.size} bytes, modified ${s.mtime.toISOString()}` : `${name} (gone)`;
  });
}

/**
 * Registers hooks that fail the calling file when its tests created or changed the checkout's
 * `.xswarm/` (a process of the user's own in that folder at the same time would too).
 */
export function guardCheckoutState(): void {
  let before: ReturnType<typeof stateOf> = 'absent';
  beforeAll(() => {
    before = stateOf();
  });
  afterAll(() => {
    expect(stateOf(), `the tests wrote to ${CHECKOUT_STATE_DIR}: give every child process a database under os.tmpdir() (--db or XSWARM_DB)`).toEqual(before);
  });
}
