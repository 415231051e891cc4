/**
 * The memory store's final snapshots, persisted when first read: a swarm that ends on the
 * memory store hands it its final machine snapshot, and the store persists (and redacts) it on
 * the first `load`. What a reader gets must be what an eager write would have stored: the same
 * snapshot, without known secrets, replayable. Also: the ISO times of events, formatted per
 * minute, are `Date#toISOString`'s.
 */
import { describe, expect, it } from 'vitest';
import { createRuntime, memoryStore, type Model, scriptedModel, type SwarmEvent, defineSwarm } from '../src/index.js';
import { isoTime } from '../src/runtime/host.js';
import { PendingSnapshot } from '../src/store/memory-snapshot.js';
import type { Commit, SwarmStore } from '../src/store/types.js';
import { memoryEffects, W1_RESULT, w1Definitions, w1Model } from './support/crash-w1.js';
import { recordingStore } from './support/recording-store.js';
import { collect } from './support/script.js';

/** `base` with every commit it took kept, as given. */
function keeping(base: SwarmStore) {
  const commits: Commit[] = [];
  const store: SwarmStore = Object.assign(Object.create(base) as SwarmStore, {
    commit(c: Commit) {
      commits.push(c);
      return base.commit(c);
    },
  });
  return { store, commits };
}

/** W1 (swarm `trip`) to its end on `store`; its events. */
async function runW1(store: SwarmStore): Promise<SwarmEvent[]> {
  const { planner, agents } = w1Definitions(memoryEffects());
  const runtime = createRuntime({ swarms: [planner], agents, model: w1Model(), store });
  try {
    const client = runtime.forSwarm(planner, 'trip');
    await client.run('Plan my Saturday');
    expect(await client.wait()).toEqual({ status: 'completed', result: W1_RESULT });
    return await collect(client.events());
  } finally {
    await runtime.close();
  }
}

/** A snapshot without what differs between two runs of the same script (model call durations). */
function comparable(snapshot: unknown): unknown {
  return JSON.parse(JSON.stringify(snapshot, (k, v: unknown) => (k === 'durationMs' ? 0 : v)));
}

describe('the memory store persists a final snapshot when it is read', () => {
  it('the final commit hands over the machine snapshot; the first load persists it as an eager write would have', async () => {
    const lazy = keeping(memoryStore());
    await runW1(lazy.store);
    const final = lazy.commits.at(-1)!.record!;
    expect(final.status).toBe('completed');
    expect(final.snapshot).toBeInstanceOf(PendingSnapshot);

    // The same run on a store that is not volatile: its snapshot persisted at the end, lists as rows.
    const eager = recordingStore(memoryStore(), { volatile: false });
    await runW1(eager.store);
    const written = (await eager.store.load('trip'))!.snapshot;

    const loaded = (await lazy.store.load('trip'))!;
    expect(comparable(loaded.snapshot)).toEqual(comparable(written));
    expect(loaded.snapshot).toMatchObject({ status: 'done', value: 'completed' });
    // Persisted once: later reads get the same object, and JSON of the commit is the snapshot's.
    expect((await lazy.store.load('trip'))!.snapshot).toBe(loaded.snapshot);
    expect(JSON.stringify(final.snapshot)).toBe(JSON.stringify(loaded.snapshot));
    // Nothing else of the record changed.
    const { snapshot: _a, ...summary } = loaded;
    const { snapshot: _b, ...committed } = final;
    expect(summary).toMatchObject(committed);
  });

  it('the persisted snapshot restores: replay of the finished swarm reproduces its events', async () => {
    const store = memoryStore();
    const events = await runW1(store);
    const { planner, agents } = w1Definitions(memoryEffects());
    const runtime = createRuntime({ swarms: [planner], agents, model: w1Model(), store });
    try {
      expect(await collect(runtime.replay('trip'))).toEqual(events);
    } finally {
      await runtime.close();
    }
  });

  it('known secrets are redacted from it when it is persisted, as from any written snapshot', async () => {
    const KEY = 'sk-live-1234567890abcdef';
    const model: Model = { ...scriptedModel(() => ({ text: `The key is ${KEY}.` })), secrets: [KEY] };
    const echo = defineSwarm({ id: 'echo', instructions: 'Repeat.' });
    const store = keeping(memoryStore());
    const runtime = createRuntime({ swarms: [echo], model, store: store.store });
    try {
      const client = runtime.forSwarm(echo, 's1');
      await client.run(`Say ${KEY}`);
      expect(await client.wait()).toEqual({ status: 'completed', result: 'The key is [REDACTED].' });
    } finally {
      await runtime.close();
    }
    expect(store.commits.at(-1)!.record!.snapshot).toBeInstanceOf(PendingSnapshot);
    const text = JSON.stringify((await store.store.load('s1'))!.snapshot);
    expect(text).toContain('[REDACTED]');
    expect(text).not.toContain(KEY);
  });
});

describe('ISO times of events', () => {
  it('are Date#toISOString, within a minute, across minutes, and for any other time', () => {
    const start = Date.UTC(2026, 10, 24, 4, 59, 58, 990);
    const times = [
      ...Array.from({ length: 5000 }, (_, i) => start + i * 7),
      ...Array.from({ length: 2000 }, (_, i) => Math.floor(Math.sin(i + 1) * 4e12)),
      0,
      59_999,
      60_000,
      -1,
      -60_001,
      8.64e15,
      -8.64e15,
      1.5,
      start + 0.25,
    ];
    for (const at of [...times, ...times.reverse()]) expect(isoTime(at), String(at)).toBe(new Date(at).toISOString());
  });
});
