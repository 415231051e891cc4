/**
 * `runtime.subscribe`: what its TSDoc promises — every event of every swarm this runtime
 * drives (child swarms and internal events included), in commit order, once it is durable;
 * the returned function stops delivery; a throwing listener is ignored — checked against a
 * recording store that knows what was committed, and when.
 */
import { describe, expect, it } from 'vitest';
import { createRuntime, factOf, memoryStore, type Runtime, type SwarmEvent } from '../../src/index.js';
import { JOIN_RESULT, joinChildIdOf, joinDefinitions, joinModel } from '../support/crash-join.js';
import { type RecordingOptions, recordingStore } from '../support/recording-store.js';
import { memoryEffects, stepLabel, W1_RESULT, w1Definitions, w1Model } from '../support/crash-w1.js';

const HUB = 'join';
const CREW = joinChildIdOf(HUB);

/** The parallel join on a recording store; `subscribe` is called before the run starts. */
async function runJoin(options: RecordingOptions, subscribe: (runtime: Runtime, rec: ReturnType<typeof recordingStore>) => void) {
  const rec = recordingStore(memoryStore(), options);
  const { hub, swarms, agents } = joinDefinitions(memoryEffects());
  const runtime = createRuntime({ swarms, agents, model: joinModel(), store: rec.store });
  try {
    subscribe(runtime, rec);
    const client = runtime.forSwarm(hub, HUB);
    await client.run('Prepare the trip');
    expect(await client.wait()).toEqual({ status: 'completed', result: JOIN_RESULT });
    await runtime.forSwarm('crew', CREW).wait();
    return { rec, hub: await rec.store.readEvents(HUB, 0), crew: await rec.store.readEvents(CREW, 0) };
  } finally {
    await runtime.close();
  }
}

const of = (events: SwarmEvent[], swarmId: string) => events.filter((e) => e.swarmId === swarmId);

describe('runtime.subscribe delivers', () => {
  it('every event of every swarm the runtime drives, as stored, once: the child swarm’s and internal ones too', async () => {
    const delivered: SwarmEvent[] = [];
    const { hub, crew } = await runJoin({}, (runtime) => void runtime.subscribe((e) => delivered.push(e)));
    expect(of(delivered, HUB)).toEqual(hub);
    expect(of(delivered, CREW)).toEqual(crew);
    expect(delivered).toHaveLength(hub.length + crew.length);
    expect(delivered.some((e) => e.kind.startsWith('internal:'))).toBe(true);
  });

  it('in commit order, across swarms: the order the store took the commits in', async () => {
    const delivered: SwarmEvent[] = [];
    // A slow store: each commit is durable a few ms after it was issued, so the hub's parallel
    // branches and the child's steps overlap.
    const { rec } = await runJoin({ delayMs: 3 }, (runtime) => void runtime.subscribe((e) => delivered.push(e)));
    expect(delivered.map((e) => `${e.swarmId}#${e.seq}`)).toEqual(rec.commits.flatMap((c) => c.events.map((e) => `${e.swarmId}#${e.seq}`)));
  });

  it('each event only once it is durable, never when the machine emits it', async () => {
    const early: string[] = [];
    let deliveries = 0;
    await runJoin({ delayMs: 3 }, (runtime, rec) =>
      runtime.subscribe((e) => {
        deliveries++;
        if (rec.durableSeq(e.swarmId) < e.seq) early.push(`${e.swarmId}#${e.seq} ${e.kind}`);
      }),
    );
    expect(deliveries).toBeGreaterThan(30);
    expect(early).toEqual([]);
  });

  it('the rest of a swarm another runtime left unfinished, from where its stream stopped: no gap, no repeat', async () => {
    const store = memoryStore();
    const { planner, agents } = w1Definitions(memoryEffects());
    const modelA = w1Model({ hold: (req) => stepLabel(req) === 'calendar-agent#1' });
    const a = createRuntime({ swarms: [planner], agents, model: modelA, store });
    await a.forSwarm(planner, 'trip').run('Plan my Saturday');
    await modelA.held;
    await a.close();
    const before = await store.readEvents('trip', 0);

    const delivered: SwarmEvent[] = [];
    const b = createRuntime({ swarms: [planner], agents, model: w1Model(), store });
    try {
      b.subscribe((e) => delivered.push(e));
      await b.start();
      expect(await b.forSwarm(planner, 'trip').wait()).toEqual({ status: 'completed', result: W1_RESULT });
      const all = await store.readEvents('trip', 0);
      expect(delivered).toEqual(all.slice(before.length));
      expect(delivered[0]!.seq).toBe(before.length + 1);
    } finally {
      await b.close();
    }
  });

  it('nothing of swarms another runtime drives on the same store', async () => {
    const store = memoryStore();
    const { planner, agents } = w1Definitions(memoryEffects());
    const driver = createRuntime({ swarms: [planner], agents, model: w1Model(), store });
    const bystander = createRuntime({ swarms: [planner], agents, model: w1Model(), store });
    const seen: SwarmEvent[] = [];
    bystander.subscribe((e) => seen.push(e));
    try {
      const c = driver.forSwarm(planner, 'trip');
      await c.run('Plan my Saturday');
      await c.wait();
      expect(seen).toEqual([]);
    } finally {
      await driver.close();
      await bystander.close();
    }
  });
});

describe('unsubscribing and failing listeners', () => {
  it('after the returned function is called, the listener gets nothing more — even from the commit being delivered', async () => {
    const kept: SwarmEvent[] = [];
    const leaver: SwarmEvent[] = [];
    let stop: () => void = () => undefined;
    let stoppedAt = 0;
    const { hub } = await runJoin({}, (runtime) => {
      runtime.subscribe((e) => kept.push(e));
      stop = runtime.subscribe((e) => {
        leaver.push(e);
        // Leave at the first handoff: its commit holds more events after it.
        if (e.swarmId === HUB && factOf(e, 'agent-handoff') && !stoppedAt) {
          stoppedAt = e.seq;
          stop();
        }
      });
    });
    expect(stoppedAt).toBeGreaterThan(0);
    expect(leaver.at(-1)).toMatchObject({ swarmId: HUB, seq: stoppedAt });
    expect(of(kept, HUB)).toEqual(hub);
    // Calling it again is harmless and does not touch other listeners.
    expect(() => stop()).not.toThrow();
  });

  it('unsubscribed between runs: nothing of the next run', async () => {
    const store = memoryStore();
    const { planner, agents } = w1Definitions(memoryEffects());
    const runtime = createRuntime({ swarms: [planner], agents, model: w1Model(), store });
    const seen: SwarmEvent[] = [];
    const stop = runtime.subscribe((e) => seen.push(e));
    try {
      const first = runtime.forSwarm(planner, 'first');
      await first.run('Plan my Saturday');
      await first.wait();
      const count = seen.length;
      expect(count).toBe((await store.readEvents('first', 0)).length);
      stop();
      const second = runtime.forSwarm(planner, 'second');
      await second.run('Plan my Sunday');
      await second.wait();
      expect(seen).toHaveLength(count);
    } finally {
      await runtime.close();
    }
  });

  it('a throwing listener is ignored: the swarm completes and the other listeners get everything', async () => {
    const after: SwarmEvent[] = [];
    let thrown = 0;
    const { hub, crew } = await runJoin({}, (runtime) => {
      runtime.subscribe(() => {
        thrown++;
        throw new Error('listener bug');
      });
      runtime.subscribe((e) => after.push(e));
    });
    expect(thrown).toBe(hub.length + crew.length);
    expect(of(after, HUB)).toEqual(hub);
    expect(of(after, CREW)).toEqual(crew);
  });
});
