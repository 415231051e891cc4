/**
 * `SwarmStore.remove` (what deleting a finished team uses): the finished swarms named lose their
 * record, events and message lists; running or unknown ones are left; a removed id can be used
 * again. On the memory, SQLite and JetStream stores (the last on a real nats-server).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { memoryStore, sqliteStore } from '../../src/index.js';
import type { SwarmStore } from '../../src/store/types.js';
import { jetstreamNamespace } from '../support/jetstream-namespace.js';
import { natsServerMissing } from '../support/nats-server.js';
import { seqs } from '../support/seqs.js';
import { step } from '../support/store-fixtures.js';

const ns = jetstreamNamespace('rm');
const dirs: string[] = [];
const stores: SwarmStore[] = [];
afterEach(async () => {
  for (const store of stores.splice(0)) await store.close();
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

async function removes(store: SwarmStore): Promise<void> {
  await store.commit({ ...step('done', 1, 1, 3, 'A', { status: 'completed' }), messages: [{ list: '', from: 0, items: [{ role: 'user', content: 'hi' }] }] });
  await store.commit(step('failed', 1, 1, 2, 'A', { status: 'failed' }));
  await store.commit(step('running', 1, 1, 2, 'A', { status: 'running' }));
  await store.commit(step('other', 1, 1, 2, 'A', { status: 'completed' }));
  expect(await store.remove!(['done', 'failed', 'running', 'unknown'])).toBe(2);
  for (const gone of ['done', 'failed']) {
    expect(await store.load(gone)).toBeUndefined();
    expect(await store.readEvents(gone, 0)).toEqual([]);
  }
  expect((await store.list()).map((s) => s.swarmId).sort()).toEqual(['other', 'running']);
  expect(await store.readEvents('running', 0)).toHaveLength(2);
  expect(await store.remove!(['done'])).toBe(0);
  // A removed id can be used again.
  await store.commit(step('done', 1, 1, 1));
  expect(seqs(await store.readEvents('done', 0))).toEqual([1]);
}

describe('SwarmStore.remove', () => {
  it('memory', async () => removes(memoryStore()));

  it('SQLite', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'xswarm-remove-'));
    dirs.push(dir);
    const store = sqliteStore(join(dir, 'state.db'));
    stores.push(store);
    await removes(store);
  });

  it.skipIf(natsServerMissing)('JetStream', async () => removes(await ns.open()));
});
