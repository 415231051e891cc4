/**
 * Temporary folders for a test file: each made under `os.tmpdir()` with mkdtemp, all removed
 * after the file's tests (`afterAll`), whether they passed or not, so a run leaves nothing in
 * /tmp.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll } from 'vitest';

/** Registers the cleanup for the calling file; returns how to make a folder (`prefix` names it). */
export function tempDirs(): (prefix: string) => string {
  const made: string[] = [];
  afterAll(() => {
    for (const dir of made.splice(0)) rmSync(dir, { recursive: true, force: true });
  });
  return (prefix) => {
    const dir = mkdtempSync(join(tmpdir(), prefix));
    made.push(dir);
    return dir;
  };
}
