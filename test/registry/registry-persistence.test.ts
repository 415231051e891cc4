/**
 * `createRuntime({ registry })` keeps the registry in the runtime's store: one record of its
 * own (never adopted as a swarm), restored at `runtime.start()`. Real SQLite, real A2A peers.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { z } from 'zod';
import { createRuntime, DefinitionError, defineSwarm, factOf, handoff, scriptedModel, sqliteStore, type SwarmStore, tool } from '../../src/index.js';
import { registryRecordId } from '../../src/registry/persistence.js';
import { createAgentRegistry, type AgentRegistry } from '../../src/registry/index.js';
import { startPeer, tickingClock } from '../support/registry-peers.js';
import { call, collect, lastToolResult, queueModel } from '../support/script.js';
import { sleep } from '../support/sleep.js';

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c().catch(() => undefined);
});

function runtimeWith(registry: AgentRegistry, store: SwarmStore, leaseMs?: number) {
  const runtime = createRuntime({
    swarms: [defineSwarm({ id: 'echo', instructions: 'Repeat.' })],
    model: scriptedModel(() => ({ text: 'x' })),
    registry,
    store,
    ...(leaseMs ? { leaseMs } : {}),
  });
  cleanups.push(() => runtime.close());
  return runtime;
}

/** A SQLite store on `path` whose calls touching registry record `recordId` are counted; `renew: false` drops its renewals (its lease runs out). */
function countingStore(path: string, recordId: string, options: { renew?: boolean } = {}) {
  const base = sqliteStore(path);
  const counts = { commits: 0, renewals: 0 };
  const store: SwarmStore = {
    ...base,
    commit(c) {
      if (c.swarmId === recordId) counts.commits++;
      return base.commit(c);
    },
    renew(owner, ids, until) {
      if (!ids.includes(recordId)) return base.renew(owner, ids, until);
      counts.renewals++;
      return options.renew === false ? Promise.resolve() : base.renew(owner, ids, until);
    },
  };
  cleanups.push(() => base.close());
  return { store, counts };
}

function tempDb(): string {
  const dir = mkdtempSync(join(tmpdir(), 'xswarm-registry-store-'));
  cleanups.push(async () => rmSync(dir, { recursive: true, force: true }));
  return join(dir, 'state.db');
}

describe('the registry kept in the runtime store', () => {
  it('survives a runtime restart on SQLite: agents and tasks restored, an unfinished task re-attaches and runs once', async () => {
    const a = await startPeer('A', 'translator');
    cleanups.push(() => a.close());
    const dir = mkdtempSync(join(tmpdir(), 'xswarm-registry-store-'));
    cleanups.push(async () => rmSync(dir, { recursive: true, force: true }));
    const path = join(dir, 'state.db');

    const first = createAgentRegistry({ id: 'main', healthIntervalMs: 0, timeoutMs: 2000, now: tickingClock() });
    const store1 = sqliteStore(path);
    const runtime1 = runtimeWith(first, store1);
    await first.register(a.cardUrl);
    await runtime1.start();
    await first.wait(first.dispatch({ id: 'done', skill: 'translate', message: 'one' }).id);
    const release = a.model.hold('two');
    first.dispatch({ id: 'pending', skill: 'translate', message: 'two' });
    await vi.waitFor(() => expect(a.model.seen).toEqual(['one', 'two']));
    await vi.waitFor(async () => {
      const record = await store1.load(registryRecordId('main'));
      expect(record?.snapshot).toMatchObject({
        tasks: [
          { id: 'done', state: 'completed' },
          { id: 'pending', state: 'working' },
        ],
      });
    });
    await runtime1.close();
    await first.close();
    await store1.close();

    // A new process: an empty registry with the same id, restored at start().
    const second = createAgentRegistry({ id: 'main', healthIntervalMs: 0, timeoutMs: 2000, now: tickingClock(10_000) });
    cleanups.push(() => second.close());
    const store2 = sqliteStore(path);
    cleanups.push(() => store2.close());
    const runtime2 = runtimeWith(second, store2);
    expect(second.agents()).toEqual([]);
    await runtime2.start();
    expect(second.agent('translator')).toMatchObject({ kind: 'remote', cardUrl: a.cardUrl });
    expect(second.task('done')).toMatchObject({ state: 'completed', result: 'A did: one' });
    release();
    expect(await second.wait('pending')).toMatchObject({ state: 'completed', agentId: 'translator', result: 'A did: two' });
    // The same message id: A's task was re-attached, not run again.
    expect(a.model.seen).toEqual(['one', 'two']);
    expect(await a.runtime.list()).toHaveLength(2);
    // The record is not a swarm: nothing was adopted, and it keeps being written.
    expect(runtime2.stats().live).toBe(0);
    await vi.waitFor(async () => {
      const record = await store2.load(registryRecordId('main'));
      expect(record).toMatchObject({ definitionId: 'xswarm.registry', snapshot: { tasks: [{ id: 'done' }, { id: 'pending', state: 'completed' }] } });
    });
  });

  it('one live runtime keeps a registry: another one starting with it on the same store is refused', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'xswarm-registry-store-'));
    cleanups.push(async () => rmSync(dir, { recursive: true, force: true }));
    const path = join(dir, 'state.db');
    const store1 = sqliteStore(path);
    const store2 = sqliteStore(path);
    cleanups.push(
      () => store1.close(),
      () => store2.close(),
    );
    const first = createAgentRegistry({ id: 'shared', healthIntervalMs: 0 });
    const second = createAgentRegistry({ id: 'shared', healthIntervalMs: 0 });
    cleanups.push(
      () => first.close(),
      () => second.close(),
    );
    await runtimeWith(first, store1, 150).start();
    // Long after one lease, with no change to write: the keeper renews its lease all the same.
    await sleep(500);
    await expect(runtimeWith(second, store2, 150).start()).rejects.toMatchObject({ code: 'registry-in-use' });
  });

  it('the record id is reserved: no swarm definition may take it', () => {
    const swarm = defineSwarm({ id: 'xswarm.registry', instructions: 'Pretend.' });
    expect(() => createRuntime({ swarms: [swarm], model: scriptedModel(() => ({ text: 'x' })) })).toThrow(DefinitionError);
  });

  it('closing the registry before the runtime leaves its unfinished task unfinished: a restart re-sends it and it completes', async () => {
    const a = await startPeer('A', 'translator');
    cleanups.push(() => a.close());
    const path = tempDb();
    const first = createAgentRegistry({ id: 'main', healthIntervalMs: 0, timeoutMs: 2000, now: tickingClock() });
    const store1 = sqliteStore(path);
    const runtime1 = runtimeWith(first, store1);
    await first.register(a.cardUrl);
    await runtime1.start();
    const release = a.model.hold('two');
    first.dispatch({ id: 'pending', skill: 'translate', message: 'two' });
    await vi.waitFor(() => expect(a.model.seen).toEqual(['two']));
    // The registry first, as docs/registry.md allows ("Kept in the runtime's store"): nothing about the task changes.
    await first.close();
    expect(first.task('pending')).toMatchObject({ state: 'working', agentId: 'translator' });
    await expect(first.wait('pending')).rejects.toMatchObject({ code: 'registry-closed' });
    await runtime1.close();
    await store1.close();
    const kept = await sqliteStore(path).load(registryRecordId('main'));
    expect(kept?.snapshot).toMatchObject({ tasks: [{ id: 'pending', state: 'working' }] });

    const second = createAgentRegistry({ id: 'main', healthIntervalMs: 0, timeoutMs: 2000, now: tickingClock(10_000) });
    cleanups.push(() => second.close());
    const store2 = sqliteStore(path);
    cleanups.push(() => store2.close());
    await runtimeWith(second, store2).start();
    release();
    expect(await second.wait('pending')).toMatchObject({ state: 'completed', agentId: 'translator', result: 'A did: two' });
    // Re-sent with the same message id: A's task was re-attached to, not run twice.
    expect(a.model.seen).toEqual(['two']);
    expect(await a.runtime.list()).toHaveLength(1);
  });

  it('closing the registry during a best-agent handoff interrupts the call: after a restart the swarm runs it again, not failed', async () => {
    const forecast = tool({ name: 'forecast', description: 'Forecasts the weather', parameters: z.object({ text: z.string() }), execute: ({ text }) => text });
    const a = await startPeer('A', 'forecaster', [forecast]);
    cleanups.push(() => a.close());
    const path = tempDb();
    const planner = defineSwarm({ id: 'planner', instructions: 'Plan with the weather.', handoffs: [handoff.toBestAgent('forecast')] });
    const plannerRuntime = (registry: AgentRegistry, store: SwarmStore, steps: Parameters<typeof queueModel>[0]['planner']) => {
      const runtime = createRuntime({ swarms: [planner], model: queueModel({ planner: steps }), registry, store, owner: 'planner-1' });
      cleanups.push(() => runtime.close());
      return runtime;
    };

    const first = createAgentRegistry({ id: 'main', healthIntervalMs: 0, timeoutMs: 2000, now: tickingClock() });
    await first.register(a.cardUrl);
    const store1 = sqliteStore(path);
    const runtime1 = plannerRuntime(first, store1, [call('handoff_to_best_forecast', { request: 'Tuesday?' }), (req) => ({ text: `Plan: ${lastToolResult(req)}` })]);
    await runtime1.start();
    const release = a.model.hold('Tuesday?');
    const client = runtime1.forSwarm('planner');
    await client.run('Plan Tuesday');
    await vi.waitFor(() => expect(a.model.seen).toEqual(['Tuesday?']));
    await first.close();
    // The runtime runs on a while: an answered (failed) call would be recorded and the swarm
    // would complete meanwhile; an interrupted one leaves the swarm running.
    await sleep(200);
    expect(await client.getResult()).toMatchObject({ status: 'running' });
    await runtime1.close();
    await store1.close();

    const second = createAgentRegistry({ id: 'main', healthIntervalMs: 0, timeoutMs: 2000, now: tickingClock(10_000) });
    cleanups.push(() => second.close());
    const store2 = sqliteStore(path);
    cleanups.push(() => store2.close());
    const runtime2 = plannerRuntime(second, store2, [(req) => ({ text: `Plan: ${lastToolResult(req)}` })]);
    await runtime2.start();
    release();
    expect(await runtime2.forSwarm('planner', client.swarmId).wait()).toEqual({ status: 'completed', result: 'Plan: A did: Tuesday?' });
    // One handoff result, the agent's answer: no failed call was recorded at the close.
    const results = (await collect(runtime2.forSwarm('planner', client.swarmId).events())).flatMap((e) => factOf(e, 'handoff-result') ?? []);
    expect(results).toHaveLength(1);
    expect(results[0]).toMatchObject({ from: 'forecaster' });
    expect(a.model.seen).toEqual(['Tuesday?']);
    expect(await a.runtime.list()).toHaveLength(1);
  });

  it('a lost record is reported: the registry closes with registry-in-use once another runtime took it', async () => {
    const path = tempDb();
    const recordId = registryRecordId('lost');
    // The first runtime's renewals never reach the store: its lease on the record runs out.
    const { store: store1 } = countingStore(path, recordId, { renew: false });
    const store2 = sqliteStore(path);
    cleanups.push(() => store2.close());
    const first = createAgentRegistry({ id: 'lost', healthIntervalMs: 0 });
    const second = createAgentRegistry({ id: 'lost', healthIntervalMs: 0 });
    cleanups.push(
      () => first.close(),
      () => second.close(),
    );
    await runtimeWith(first, store1, 150).start();
    // Refused (registry-in-use) until that lease has run out; then the second runtime takes the record.
    const runtime2 = runtimeWith(second, store2, 5000);
    await vi.waitFor(() => runtime2.start(), { timeout: 3000, interval: 50 });
    expect(first.closeReason).toBeUndefined();

    // The first runtime's next write is refused: its registry closes, and says why.
    first.dispatch({ id: 'late', skill: 'translate', message: 'x' });
    await vi.waitFor(() => expect(first.closeReason).toMatchObject({ code: 'registry-in-use' }));
    expect(first.closeReason!.message).toMatch(/record could not be written/);
    expect(() => first.dispatch({ skill: 'translate', message: 'y' })).toThrow(expect.objectContaining({ code: 'registry-in-use' }));
    expect(second.closeReason).toBeUndefined();
  });

  it('two concurrent start() calls share one start: one journal, one renewal timer', async () => {
    const path = tempDb();
    const recordId = registryRecordId('twice');
    const { store, counts } = countingStore(path, recordId);
    const registry = createAgentRegistry({ id: 'twice', healthIntervalMs: 0 });
    cleanups.push(() => registry.close());
    const runtime = runtimeWith(registry, store, 90);
    await Promise.all([runtime.start(), runtime.start()]);
    expect(counts.commits).toBe(1);
    expect(registry.closeReason).toBeUndefined();
    await vi.waitFor(() => expect(counts.renewals).toBeGreaterThanOrEqual(2));
    await runtime.close();
    // No timer left behind: renewals stop with the runtime (a second timer would go on).
    const after = counts.renewals;
    await sleep(200);
    expect(counts.renewals).toBe(after);
  });
});
