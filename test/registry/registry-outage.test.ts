/**
 * A registry dispatch through a NATS outage: the registry is kept in a runtime's store on a real
 * `nats-server -js` (127.0.0.1), its agent is an A2A peer served by `@a2a-js/sdk` itself over
 * HTTP (it executes every message it is sent, with no de-duplication of message ids), and the
 * server is killed and restarted ~3 s later while tasks run: one task is completed by its agent
 * while NATS is down, another is dispatched while NATS is down.
 *
 * Each task must complete, its message must reach the peer once, its history must show no failed
 * attempt, and the record must end up holding the tasks completed: a runtime started afterwards
 * on the same NATS restores them completed and sends nothing again. With the store's own patience
 * (`outageMs`) shorter than the outage, its record writes fail while NATS is down: the registry
 * must wait for the store, not close (which left its tasks unfinished in the record, to be sent
 * again by the next runtime).
 */
import { afterEach, describe, expect, it } from 'vitest';
import { createRuntime, defineSwarm, type Runtime, scriptedModel, type SwarmStore } from '../../src/index.js';
import { closeConnection } from '../../src/nats/connection.js';
import { connectNats, jetstreamStore, natsTransport } from '../../src/entries/nats.js';
import { type AgentRegistry, createAgentRegistry } from '../../src/registry/index.js';
import { registryRecordId } from '../../src/registry/persistence.js';
import type { RegistrySnapshot } from '../../src/registry/types.js';
import { faultPoints } from '../support/fault-points.js';
import { natsFaultFixtures } from '../support/nats-faults.js';
import { natsServerMissing } from '../support/nats-server.js';
import { type SdkPeer, startSdkPeer } from '../support/sdk-peer.js';
import { sleep } from '../support/sleep.js';

const nats = natsFaultFixtures('xswarm-registry-outage-');
const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c().catch(() => undefined);
});

/** How long the server stays down. */
const DOWN_MS = 3_000;
const REGISTRY_ID = 'outage-registry';

/**
 * A runtime keeping `registry` on this test's NATS: with `nats` (the store's default patience), or
 * on a JetStream store of its own whose commits give up after `outageMs`.
 */
async function runtimeKeeping(registry: AgentRegistry, outageMs?: number): Promise<Runtime> {
  const base = { swarms: [defineSwarm({ id: 'echo', instructions: 'Repeat.' })], model: scriptedModel(() => ({ text: 'x' })), registry };
  if (outageMs === undefined) {
    const runtime = createRuntime({ ...base, nats: { servers: nats.server.url } });
    cleanups.push(() => runtime.close());
    return runtime;
  }
  const connection = await connectNats({ servers: nats.server.url });
  const store: SwarmStore = jetstreamStore({ connection, outageMs, timeoutMs: 1_000 });
  const transport = natsTransport(connection);
  const runtime = createRuntime({ ...base, store, transport });
  cleanups.push(
    () => closeConnection(connection),
    () => store.close(),
    () => transport.close(),
    () => runtime.close(),
  );
  return runtime;
}

/** The peer, closed after the test. */
async function peer(): Promise<SdkPeer> {
  const p = await startSdkPeer();
  cleanups.push(() => p.close());
  return p;
}

/** Resolves once `registry`'s task `id` is in `state` (in memory). */
async function reaches(registry: AgentRegistry, id: string, state: string): Promise<void> {
  const deadline = Date.now() + 20_000;
  while (registry.task(id)?.state !== state) {
    if (Date.now() > deadline) throw new Error(`task ${id} is ${registry.task(id)?.state}, not ${state}`);
    await sleep(20);
  }
}

/**
 * The state of tasks `ids` in the registry's record as another process reads it, once they are all
 * in `state` (or as they are after 20 s).
 */
async function storedTasks(ids: string[], state: string): Promise<Record<string, string | undefined>> {
  const connection = await connectNats({ servers: nats.server.url });
  const store = jetstreamStore({ connection });
  try {
    const deadline = Date.now() + 20_000;
    for (;;) {
      const record = await store.load(registryRecordId(REGISTRY_ID)).catch(() => undefined);
      const tasks = (record?.snapshot as RegistrySnapshot | undefined)?.tasks ?? [];
      const states = Object.fromEntries(ids.map((id) => [id, tasks.find((t) => t.id === id)?.state]));
      if (ids.every((id) => states[id] === state) || Date.now() > deadline) return states;
      await sleep(100);
    }
  } finally {
    await store.close();
    await closeConnection(connection);
  }
}

describe.skipIf(natsServerMissing)('a registry dispatch through a NATS outage', () => {
  const cases = [
    { name: 'the store retrying through the outage (default patience)', outageMs: undefined },
    { name: 'the store giving up on its writes before NATS is back', outageMs: 500 },
  ];
  for (const { name, outageMs } of cases) {
    it(`${name}: every task completes once, no failed attempt, nothing sent again after a restart`, async () => {
      const agent = await peer();
      const registry = createAgentRegistry({ id: REGISTRY_ID, healthIntervalMs: 0 });
      const runtime = await runtimeKeeping(registry, outageMs);
      await runtime.start();
      await registry.register(agent.cardUrl, { id: 'translator' });

      // One task is under way at the peer when NATS goes down, and completes while it is down.
      registry.dispatch({ id: 'before', skill: 'translate', message: 'Bonjour' });
      await agent.working('Bonjour');
      await nats.server.kill();
      agent.release('Bonjour');
      await reaches(registry, 'before', 'completed');
      // Another is dispatched while NATS is down; its agent completes it once NATS is back.
      registry.dispatch({ id: 'during', skill: 'translate', message: 'Merci' });
      await agent.working('Merci');
      await sleep(DOWN_MS);
      await nats.server.start();
      agent.release('Merci');

      for (const [id, result] of [
        ['before', 'done: Bonjour'],
        ['during', 'done: Merci'],
      ] as const) {
        const task = await registry.wait(id);
        expect(task).toMatchObject({ state: 'completed', agentId: 'translator', result });
        // One attempt, on one agent, never failed.
        expect(task.history.map((h) => h.state)).toEqual(['submitted', 'working', 'completed']);
        expect(task.history.filter((h) => h.error !== undefined)).toEqual([]);
      }
      expect(registry.closeReason).toBeUndefined();
      // Each message reached the peer once, under the task's message id.
      expect(Object.fromEntries(agent.received)).toEqual({ [`${REGISTRY_ID}:before`]: 1, [`${REGISTRY_ID}:during`]: 1 });

      // The registry's record catches up once NATS is back (nothing closed the registry meanwhile):
      // both tasks completed. The next runtime keeping the registry restores them as they ended
      // and sends nothing again.
      expect(await storedTasks(['before', 'during'], 'completed')).toEqual({ before: 'completed', during: 'completed' });
      await runtime.close();
      const next = createAgentRegistry({ id: REGISTRY_ID, healthIntervalMs: 0 });
      await (await runtimeKeeping(next)).start();
      expect(next.tasks().map((t) => [t.id, t.state])).toEqual([
        ['before', 'completed'],
        ['during', 'completed'],
      ]);
      await sleep(200);
      expect(Object.fromEntries(agent.received)).toEqual({ [`${REGISTRY_ID}:before`]: 1, [`${REGISTRY_ID}:during`]: 1 });
    }, 60_000);
  }

  it('the server killed at a random point of a dispatch of six tasks: each completes once, its message sent once, nothing sent again after a restart', async () => {
    const agent = await peer();
    const registry = createAgentRegistry({ id: REGISTRY_ID, healthIntervalMs: 0 });
    const runtime = await runtimeKeeping(registry);
    await runtime.start();
    await registry.register(agent.cardUrl, { id: 'translator' });
    const words = ['un', 'deux', 'trois', 'quatre', 'cinq', 'six'];
    // The dispatch's moments: each task reaching the peer, and each completed by it (12).
    const points = faultPoints('registry dispatch', 12, 1);
    let outage: Promise<void> | undefined;
    const moment = () => {
      if (!points.moment(outage === undefined)) return;
      outage = (async () => {
        await nats.server.kill();
        await sleep(DOWN_MS);
        await nats.server.start();
      })();
    };
    for (const [i, word] of words.entries()) registry.dispatch({ id: `t${i}`, skill: 'translate', message: word });
    for (const word of words) {
      await agent.working(word);
      moment();
      await sleep(20);
      agent.release(word);
      moment();
    }
    for (const [i, word] of words.entries()) {
      const task = await registry.wait(`t${i}`);
      expect(task, points.label).toMatchObject({ state: 'completed', result: `done: ${word}` });
      expect(task.history.map((h) => h.state)).toEqual(['submitted', 'working', 'completed']);
    }
    expect(outage, points.label).toBeDefined();
    await outage;
    const sent = Object.fromEntries(words.map((_, i) => [`${REGISTRY_ID}:t${i}`, 1]));
    expect(Object.fromEntries(agent.received), points.label).toEqual(sent);
    const ids = words.map((_, i) => `t${i}`);
    expect(await storedTasks(ids, 'completed')).toEqual(Object.fromEntries(ids.map((id) => [id, 'completed'])));
    await runtime.close();
    const next = createAgentRegistry({ id: REGISTRY_ID, healthIntervalMs: 0 });
    await (await runtimeKeeping(next)).start();
    expect(next.tasks().map((t) => [t.id, t.state])).toEqual(ids.map((id) => [id, 'completed']));
    await sleep(200);
    expect(Object.fromEntries(agent.received)).toEqual(sent);
  }, 60_000);
});
