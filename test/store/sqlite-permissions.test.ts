/**
 * The SQLite store holds whole conversations: its directory is created 0700, its database
 * file and the WAL files SQLite adds beside it 0600, whatever the process umask.
 */
import { chmodSync, existsSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createRuntime, defineSwarm, scriptedModel, sqliteStore } from '../../src/index.js';

let root: string;
let umask: number;

beforeEach(() => {
  root = mkdtempSync(join(tmpdir(), 'xswarm-perm-'));
  // The loosest umask: only the store's own chmod can make the files private.
  umask = process.umask(0);
});
afterEach(() => {
  process.umask(umask);
  rmSync(root, { recursive: true, force: true });
});

const mode = (path: string) => (statSync(path).mode & 0o777).toString(8);

describe('file modes', () => {
  it('a new store: directories 0700, database, -wal and -shm 0600 after a run', async () => {
    chmodSync(root, 0o755);
    const db = join(root, 'project', '.xswarm', 'state.db');
    const store = sqliteStore(db);
    const echo = defineSwarm({ id: 'echo', instructions: 'Repeat.' });
    const runtime = createRuntime({ swarms: [echo], model: scriptedModel(() => ({ text: 'done' })), store });
    try {
      const client = runtime.forSwarm(echo, 's1');
      await client.run('hello');
      expect(await client.wait()).toEqual({ status: 'completed', result: 'done' });
      // Stat while the connection is open: closing the last one removes the WAL files.
      for (const file of [db, `${db}-wal`, `${db}-shm`]) {
        expect(existsSync(file), file).toBe(true);
        expect(mode(file), file).toBe('600');
      }
      expect(mode(join(root, 'project', '.xswarm'))).toBe('700');
      expect(mode(join(root, 'project'))).toBe('700');
    } finally {
      await runtime.close();
      await store.close();
    }
    // The directory that existed before keeps its mode.
    expect(mode(root)).toBe('755');
  });

  it('an existing database file keeps the mode its user gave it', async () => {
    const db = join(root, 'shared.db');
    writeFileSync(db, '');
    chmodSync(db, 0o640);
    const store = sqliteStore(db);
    await store.list();
    expect(mode(db)).toBe('640');
    await store.close();
  });
});
