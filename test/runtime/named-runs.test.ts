/**
 * Named runs: an ad-hoc swarm's `name`, `description` and `componentId` are kept with its record
 * and shown by `runtime.list()` (filtered by `name` or `componentId`, the limit counting the
 * filtered runs), carried by its `task` event, and replayed. On each store: memory, SQLite
 * (a file written before the label column existed opens, its runs read without a label, and
 * its recorded task events without one still replay) and JetStream on a real nats-server.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import Database from 'better-sqlite3';
import { createRuntime, defineSwarm, memoryStore, type Runtime, scriptedModel, type SwarmEvent, type SwarmStore } from '../../src/index.js';
import { jetstreamStore, connectNats } from '../../src/entries/nats.js';
import { closeConnection } from '../../src/nats/connection.js';
import { type NatsServer, natsServerMissing, startNatsServer } from '../support/nats-server.js';
import { sqliteFilePerTest } from '../support/sqlite-file.js';
import { serve } from '../../src/server/index.js';
import type { InspectorOverview, SwarmRow } from '../../src/server/inspector/api.js';
import { peek, tamper } from '../support/sqlite-raw.js';

const file = sqliteFilePerTest('xswarm-named-');
const model = scriptedModel(() => ({ text: 'done' }));
const plain = defineSwarm({ id: 'plain', instructions: 'Answer.' });

/** Three ad-hoc runs (two named "digest" by two components, one unnamed) and a defined one. */
async function runAll(runtime: Runtime): Promise<void> {
  const runs: [string, Record<string, string>][] = [
    ['a1', { name: 'digest', description: 'The daily digest', componentId: 'mailer' }],
    ['a2', { name: 'digest', componentId: 'web' }],
    ['a3', {}],
  ];
  for (const [id, label] of runs) {
    const c = runtime.adhoc(id);
    await c.run({ userMessage: 'Go', instructions: 'Answer.', ...label });
    await c.wait();
  }
  const d = runtime.forSwarm(plain, 'd1');
  await d.run('Go');
  await d.wait();
}

/** The first event of a stream. */
async function firstEvent(events: AsyncIterable<SwarmEvent>): Promise<SwarmEvent> {
  for await (const e of events) return e;
  throw new Error('no event');
}

/** What every store must answer for {@link runAll}'s runs. */
async function checkListing(runtime: Runtime): Promise<void> {
  const byId = new Map((await runtime.list()).map((s) => [s.swarmId, s]));
  expect(byId.get('a1')?.label).toEqual({ name: 'digest', description: 'The daily digest', componentId: 'mailer' });
  expect(byId.get('a2')?.label).toEqual({ name: 'digest', componentId: 'web' });
  expect(byId.get('a3')).not.toHaveProperty('label');
  expect(byId.get('d1')).not.toHaveProperty('label');
  const ids = async (filter: Parameters<Runtime['list']>[0]) => (await runtime.list(filter)).map((s) => s.swarmId).sort();
  expect(await ids({ name: 'digest' })).toEqual(['a1', 'a2']);
  expect(await ids({ componentId: 'web' })).toEqual(['a2']);
  expect(await ids({ name: 'digest', componentId: 'mailer' })).toEqual(['a1']);
  expect(await ids({ name: 'nothing' })).toEqual([]);
  // The limit counts the runs the filter keeps.
  expect(await runtime.list({ name: 'digest', limit: 1 })).toHaveLength(1);
  const task = await firstEvent(runtime.adhoc('a1').events());
  expect(task).toMatchObject({ kind: 'task', metadata: { definitionId: 'xswarm.adhoc', label: { name: 'digest', componentId: 'mailer' } } });
  const plainTask = await firstEvent(runtime.forSwarm(plain, 'd1').events());
  expect(plainTask.kind === 'task' && plainTask.metadata).toEqual({ definitionId: 'plain' });
}

describe('named runs', () => {
  it('are listed, filtered and carried by their task event on the memory store, and replay', async () => {
    const runtime = createRuntime({ swarms: [plain], model, store: memoryStore() });
    try {
      await runAll(runtime);
      await checkListing(runtime);
      const replayed = [];
      for await (const e of runtime.replay('a1')) replayed.push(e);
      expect(replayed[0]).toMatchObject({ kind: 'task', metadata: { label: { name: 'digest' } } });
    } finally {
      await runtime.close();
    }
  });

  it('are kept by SQLite, and a file from before the label column still opens, reads and replays', async () => {
    const first = file.runtime({ swarms: [plain], model, store: file.open() });
    await runAll(first);
    await checkListing(first);
    expect(peek<{ label: string }>(file.path, `SELECT label FROM swarms WHERE swarm_id = 'a2'`)[0]!.label).toBe('{"name":"digest","componentId":"web"}');
    await first.close();
    // The file as an xswarm before named runs left it: no label column, task events without labels.
    const db = new Database(file.path);
    db.exec('ALTER TABLE swarms DROP COLUMN label');
    db.close();
    tamper(file.path, `UPDATE events SET body = json_remove(body, '$.metadata.label') WHERE swarm_id = 'a1' AND seq = 1`);
    expect(peek(file.path, `SELECT name FROM pragma_table_info('swarms') WHERE name = 'label'`)).toEqual([]);

    const second = file.runtime({ swarms: [plain], model, store: file.open() });
    const listed = await second.list();
    expect(listed.map((s) => s.swarmId).sort()).toEqual(['a1', 'a2', 'a3', 'd1']);
    expect(listed.every((s) => !('label' in s))).toBe(true);
    expect(await second.list({ name: 'digest' })).toEqual([]);
    // Recorded before task events carried the label: its replay still matches the recording.
    const replayed = [];
    for await (const e of second.replay('a1')) replayed.push(e);
    expect(replayed[0]).toMatchObject({ kind: 'task', metadata: { definitionId: 'xswarm.adhoc' } });
    expect(replayed[0]!.kind === 'task' && replayed[0]!.metadata.label).toBeUndefined();
    // New runs on the old file are named again.
    const c = second.adhoc('a4');
    await c.run({ userMessage: 'Go', instructions: 'Answer.', name: 'fresh', componentId: 'cli' });
    await c.wait();
    expect((await second.list({ componentId: 'cli' })).map((s) => [s.swarmId, s.label])).toEqual([['a4', { name: 'fresh', componentId: 'cli' }]]);
  });

  it('are shown by the inspector API, whose text filter finds them by name and component id', async () => {
    const runtime = createRuntime({ swarms: [plain], model });
    const server = await serve(runtime);
    try {
      await runAll(runtime);
      const overview = async (q: string) => {
        const res = await fetch(`${server.url}/inspector/api/overview?q=${q}`);
        expect(res.status).toBe(200);
        return ((await res.json()) as InspectorOverview).swarms.map((s) => [s.swarmId, s.label]);
      };
      expect((await overview('digest')).sort()).toEqual([
        ['a1', { name: 'digest', description: 'The daily digest', componentId: 'mailer' }],
        ['a2', { name: 'digest', componentId: 'web' }],
      ]);
      expect(await overview('mailer')).toEqual([['a1', { name: 'digest', description: 'The daily digest', componentId: 'mailer' }]]);
      const row = (await (await fetch(`${server.url}/inspector/api/swarms/a2`)).json()) as SwarmRow;
      expect(row.label).toEqual({ name: 'digest', componentId: 'web' });
    } finally {
      await server.close();
      await runtime.close();
    }
  });

  it('refuses a name that is not a string', async () => {
    const runtime = createRuntime({ swarms: [plain], model });
    try {
      await expect(runtime.adhoc().run({ userMessage: 'Go', instructions: 'Answer.', name: 42 as never })).rejects.toThrow('adhoc run: name must be a string');
    } finally {
      await runtime.close();
    }
  });
});

describe.skipIf(natsServerMissing)('named runs on JetStream', () => {
  let nats: NatsServer | undefined;
  beforeAll(async () => {
    nats = await startNatsServer();
  });
  afterAll(async () => {
    await nats?.stop();
  });

  it('are listed and filtered', async () => {
    const connection = await connectNats({ servers: nats!.url });
    const store: SwarmStore = jetstreamStore({ connection, prefix: 'named' });
    const runtime = createRuntime({ swarms: [plain], model, store });
    try {
      await runAll(runtime);
      await checkListing(runtime);
    } finally {
      await runtime.close();
      await store.close();
      await closeConnection(connection);
    }
  });
});
