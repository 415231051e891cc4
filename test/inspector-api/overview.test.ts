/**
 * The inspector page's API: `GET /inspector/api/overview` (swarms with started, turns, tokens
 * and parent; teams with their board counts; filters) and `GET /inspector/api/swarms/:id`,
 * through `serve()` and `fetch`, on a real runtime with a scripted model that reports usage:
 * the memory store (live swarms), and SQLite (a swarm read back by a runtime that never drove
 * it, and the cost bound: an unchanged list reads no snapshot twice).
 */
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createRuntime, defineSwarm, defineTeam, handoff, type ModelResponse, type Runtime, type SwarmStore, sqliteStore } from '../../src/index.js';
import { serve } from '../../src/server/index.js';
import type { InspectorOverview, SwarmRow } from '../../src/server/inspector/api.js';
import { call, queueModel } from '../support/script.js';
import { request, servedPerTest } from '../support/server-clients.js';
import { tempDirs } from '../support/temp-dirs.js';
import { sleep } from '../support/sleep.js';
import { until } from '../support/wait.js';

const served = servedPerTest();
const tempDir = tempDirs();
const TOKEN = 'api-secret';
const AUTH = { authorization: `Bearer ${TOKEN}` };

const leaf = defineSwarm({ id: 'leaf', instructions: 'Leaf work.' });
const top = defineSwarm({ id: 'top', instructions: 'Top work.', handoffs: [handoff.toSwarm(leaf)] });
const asker = defineSwarm({ id: 'asker', instructions: 'Ask.' });
const worker = defineSwarm({ id: 'worker', instructions: 'Work.' });
const crew = defineTeam({ id: 'crew', workers: [{ type: 'dev', swarm: worker }] });

/** A response with usage, so tokens are counted. */
const used = (r: ModelResponse, input: number, output: number): ModelResponse => ({ ...r, usage: { inputTokens: input, outputTokens: output } });

function model() {
  return queueModel({
    top: [used(call('handoff_to_leaf', { request: 'do leaf' }, 'l1'), 100, 10), used({ text: 'top done' }, 200, 20)],
    leaf: [used({ text: 'leaf done' }, 7, 3)],
    asker: [used(call('pause', { reason: 'Which day?' }, 'p1'), 50, 5), used({ text: 'Sunday' }, 60, 6)],
    worker: Array.from({ length: 4 }, () => used({ text: 'built' }, 1, 1)),
  });
}

async function start(store?: SwarmStore): Promise<{ url: string; rt: Runtime }> {
  const rt = createRuntime({ swarms: [top, leaf, asker, worker], teams: [crew], model: model(), ...(store ? { store } : {}) });
  served.runtime = rt;
  served.server = await serve(rt, { token: TOKEN });
  return { url: served.server.url, rt };
}

const get = (url: string, path: string) => request(url, 'GET', path, undefined, AUTH);
const overview = async (url: string, query = ''): Promise<InspectorOverview> => {
  const res = await get(url, `/inspector/api/overview${query}`);
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body as InspectorOverview;
};
const byId = (rows: SwarmRow[]) => new Map(rows.map((r) => [r.swarmId, r]));

/** Runs `top` (which runs a `leaf` child) to the end and `asker` to its pause. */
async function populate(rt: Runtime): Promise<void> {
  const before = Date.now();
  await rt.forSwarm('top', 'top-1').run('go');
  expect((await rt.forSwarm('top', 'top-1').wait()).status).toBe('completed');
  // A later millisecond: ask-1 is the most recently updated, whatever the store does with ties.
  await sleep(5);
  await rt.forSwarm('asker', 'ask-1').run('plan');
  expect((await rt.forSwarm('asker', 'ask-1').wait()).status).toBe('paused');
  expect(Date.now()).toBeGreaterThanOrEqual(before);
}

describe('GET /inspector/api/overview', () => {
  it('lists swarms newest first with started, turns, tokens and the parent of a child swarm', async () => {
    const { url, rt } = await start();
    const before = Date.now();
    await populate(rt);
    const { swarms, teams } = await overview(url);
    // The parent ends right after its child: the two may share a millisecond, so either order.
    expect(swarms[0]!.swarmId).toBe('ask-1');
    expect(new Set(swarms.map((s) => s.swarmId))).toEqual(new Set(['ask-1', 'top-1', 'top-1:t1:0']));
    expect(teams).toEqual([]);
    const rows = byId(swarms);
    const topRow = rows.get('top-1')!;
    expect(topRow).toMatchObject({ definitionId: 'top', status: 'completed', turns: 2, tokens: { input: 300, output: 30, total: 330 } });
    expect(topRow.parentSwarmId).toBeUndefined();
    expect(topRow.startedAt).toBeGreaterThanOrEqual(before);
    expect(topRow.startedAt).toBeLessThanOrEqual(topRow.updatedAt);
    expect(topRow.lastSeq).toBeGreaterThan(3);
    // The child: its own turn and tokens (a child swarm counts its own), and its parent.
    expect(rows.get('top-1:t1:0')).toMatchObject({
      definitionId: 'leaf',
      status: 'completed',
      turns: 1,
      tokens: { input: 7, output: 3, total: 10 },
      parentSwarmId: 'top-1',
    });
    // Paused, live in this runtime: the turn from its result, the tokens from its context.
    expect(rows.get('ask-1')).toMatchObject({ status: 'paused', turns: 1, tokens: { input: 50, output: 5, total: 55 } });
    // Newest first.
    for (let i = 1; i < swarms.length; i++) expect(swarms[i - 1]!.updatedAt).toBeGreaterThanOrEqual(swarms[i]!.updatedAt);

    // Moving on: the row follows (new turn, more tokens).
    await rt.forSwarm('asker', 'ask-1').resume('Sunday');
    await until(
      'ask-1 to complete',
      async () => byId((await overview(url)).swarms).get('ask-1')!,
      (r) => r.status === 'completed',
    );
    expect(byId((await overview(url)).swarms).get('ask-1')).toMatchObject({ turns: 2, tokens: { input: 110, output: 11, total: 121 } });
  });

  it('filters by status, definition and text, and bounds the list with limit', async () => {
    const { url, rt } = await start();
    await populate(rt);
    expect((await overview(url, '?status=paused')).swarms.map((s) => s.swarmId)).toEqual(['ask-1']);
    expect((await overview(url, '?status=paused,completed')).swarms).toHaveLength(3);
    expect((await overview(url, '?definitionId=leaf')).swarms.map((s) => s.swarmId)).toEqual(['top-1:t1:0']);
    expect((await overview(url, '?q=TOP-1')).swarms.map((s) => s.swarmId).sort()).toEqual(['top-1', 'top-1:t1:0']);
    expect((await overview(url, '?q=paus')).swarms.map((s) => s.swarmId)).toEqual(['ask-1']);
    expect((await overview(url, '?q=nothing-like-it')).swarms).toEqual([]);
    expect((await overview(url, '?limit=1')).swarms.map((s) => s.swarmId)).toEqual(['ask-1']);
    expect((await overview(url, '?limit=2&q=top')).swarms.map((s) => s.swarmId).sort()).toEqual(['top-1', 'top-1:t1:0']);
    expect((await overview(url, '?limit=1&q=top')).swarms).toHaveLength(1);
  });

  it('refuses a bad status or limit (400) and other methods (405), and needs the token (401)', async () => {
    const { url } = await start();
    for (const query of ['?status=bogus', '?status=running,nope', '?limit=0', '?limit=5001', '?limit=abc', '?limit=1.5']) {
      const res = await get(url, `/inspector/api/overview${query}`);
      expect(res.status, query).toBe(400);
      expect(res.body.error, query).toMatch(/status|limit/);
    }
    expect((await get(url, '/inspector/api/overview?limit=5000')).status).toBe(200);
    expect((await request(url, 'GET', '/inspector/api/overview')).status).toBe(401);
    const post = await request(url, 'POST', '/inspector/api/overview', {}, AUTH);
    expect(post.status).toBe(405);
    expect(post.headers.get('allow')).toBe('GET');
    expect((await get(url, '/inspector/api/nothing')).status).toBe(404);
    expect((await request(url, 'GET', '/inspector/api/overview', undefined, { ...AUTH, origin: 'http://evil.example' })).status).toBe(403);
  });

  it("lists teams with their board's counts", async () => {
    const { url, rt } = await start();
    const team = rt.forTeam('crew', 'crew-1');
    await team.run([
      { id: 'a', subject: 'a', metadata: { type: 'dev' } },
      { id: 'b', subject: 'b', metadata: { type: 'dev' }, dependencies: ['a'] },
    ]);
    expect((await team.wait()).status).toBe('completed');
    // The runtime's listing: records only, with the store's status, written just after the run's end.
    await until(
      "the team's record to say completed",
      () => rt.listTeams(),
      (l) => l[0]?.status === 'completed',
    );
    expect(await rt.listTeams()).toEqual([{ teamId: 'crew-1', definitionId: 'crew', status: 'completed', updatedAt: expect.any(Number) }]);
    expect(await rt.listTeams({ definitionId: 'unknown' })).toEqual([]);
    expect(await rt.listTeams({ limit: 1 })).toHaveLength(1);
    const { swarms, teams } = await overview(url);
    expect(teams).toEqual([{ teamId: 'crew-1', definitionId: 'crew', status: 'completed', counts: expect.objectContaining({ total: 2, completed: 2 }) }]);
    // The team's record is no swarm; its task swarms are.
    expect(swarms.every((s) => s.definitionId === 'worker')).toBe(true);
    expect(swarms).toHaveLength(2);
    expect((await overview(url, '?definitionId=crew')).teams).toHaveLength(1);
    expect((await overview(url, '?status=running')).teams).toEqual([]);
    expect((await overview(url, '?q=crew-1')).teams).toHaveLength(1);
    expect((await get(url, '/inspector/api/swarms/crew-1')).status).toBe(404);
  });
});

describe('GET /inspector/api/swarms/:swarmId', () => {
  it('answers one row, 404 for an unknown swarm, 400 for a malformed id', async () => {
    const { url, rt } = await start();
    await populate(rt);
    const child = await get(url, `/inspector/api/swarms/${encodeURIComponent('top-1:t1:0')}`);
    expect(child.status).toBe(200);
    expect(child.body).toMatchObject({ swarmId: 'top-1:t1:0', definitionId: 'leaf', status: 'completed', parentSwarmId: 'top-1', turns: 1 });
    expect((await get(url, '/inspector/api/swarms/nobody')).status).toBe(404);
    expect((await get(url, '/inspector/api/swarms/a%20b')).status).toBe(400);
    expect((await get(url, '/inspector/api/swarms/a/b')).status).toBe(404);
  });
});

describe('on SQLite', () => {
  it('reads turns and tokens from the stored snapshots for a runtime that never drove the swarms, and an unchanged list reads none twice', async () => {
    const path = join(tempDir('xswarm-inspector-api-'), 'state.db');
    const first = createRuntime({ swarms: [top, leaf, asker, worker], teams: [crew], model: model(), store: sqliteStore(path) });
    try {
      await populate(first);
    } finally {
      await first.close();
    }
    // Counts the store's snapshot loads.
    const store = sqliteStore(path);
    let loads = 0;
    const load = store.load.bind(store);
    store.load = (id) => (loads++, load(id));
    const { url } = await start(store);
    const rows = byId((await overview(url)).swarms);
    expect(rows.get('top-1')).toMatchObject({ status: 'completed', turns: 2, tokens: { input: 300, output: 30, total: 330 } });
    expect(rows.get('top-1:t1:0')).toMatchObject({ turns: 1, tokens: { total: 10 }, parentSwarmId: 'top-1' });
    // Paused and not live here (it is restored on demand): the tokens from its stored snapshot.
    expect(rows.get('ask-1')).toMatchObject({ status: 'paused', turns: 1, tokens: { input: 50, output: 5, total: 55 } });
    expect(rows.get('ask-1')!.startedAt).toBeTypeOf('number');
    const after = loads;
    expect(after).toBeGreaterThan(0);
    expect(byId((await overview(url)).swarms)).toEqual(rows);
    expect(loads).toBe(after);
  });
});
