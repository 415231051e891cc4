/**
 * A reader of a swarm live in its own process is answered from the host's memory: the events
 * committed since it started reading, exactly the durable ones, redacted as stored, instead of
 * a store read at every commit. What it yields is what the store holds, each event once, in
 * order; a reader further behind than the kept window, or one that starts before it, reads the
 * store.
 */
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createRuntime, defineSwarm, scriptedModel, type SwarmEvent, type SwarmStore, tool } from '../../src/index.js';
import { PAGE_SIZE } from '../../src/store/pages.js';
import { seqs } from '../support/seqs.js';
import { sqliteFilePerTest } from '../support/sqlite-file.js';

const TOKEN = 'tok_live_Zq8rX2mN4pL7sV1c';
const file = sqliteFilePerTest('xswarm-window-');

/** The store, counting its `readEvents` calls per swarm. */
function counted(store: SwarmStore): { store: SwarmStore; reads: Map<string, number> } {
  const reads = new Map<string, number>();
  const readEvents = store.readEvents.bind(store);
  store.readEvents = (swarmId, since, limit) => {
    reads.set(swarmId, (reads.get(swarmId) ?? 0) + 1);
    return readEvents(swarmId, since, limit);
  };
  return { store, reads };
}

/** Every stored event of `swarmId`, read page by page. */
async function stored(store: SwarmStore, swarmId: string): Promise<SwarmEvent[]> {
  const out: SwarmEvent[] = [];
  for (;;) {
    const page = await store.readEvents(swarmId, out.at(-1)?.seq ?? 0, PAGE_SIZE);
    if (page.length === 0) return out;
    out.push(...page);
  }
}

/** A swarm calling `echo` `rounds` times, `width` calls a round, each echoing a secret token, then answering. */
function echoing(rounds: number, width: number, gate?: Promise<void>) {
  const echo = tool({
    name: 'echo',
    description: 'Echoes',
    parameters: z.object({ n: z.number() }),
    execute: async ({ n }) => {
      await gate;
      await new Promise((r) => setTimeout(r, 2));
      return `echo ${n} with ${TOKEN}`;
    },
  });
  const swarm = defineSwarm({ id: 'echoer', instructions: 'Echo.', tools: [echo], maxTurns: rounds + 2 });
  const model = scriptedModel((req) => {
    const done = req.messages.filter((m) => m.role === 'tool').length;
    if (done >= rounds * width) return { text: `echoed ${done}` };
    return { toolCalls: Array.from({ length: width }, (_, i) => ({ id: `c${done + i}`, name: 'echo', arguments: JSON.stringify({ n: done + i }) })) };
  });
  return { swarm, model };
}

describe('reading a swarm live in this process', () => {
  it('follows its commits from memory: the events the store holds, redacted, each once, with a store read at most at the start', async () => {
    const { store, reads } = counted(file.open());
    const { swarm, model } = echoing(12, 1);
    const runtime = createRuntime({ swarms: [swarm], model, store, redact: [TOKEN] });
    file.track(runtime);
    const client = runtime.forSwarm(swarm, 'e1');
    await client.run('go');
    const seen: SwarmEvent[] = [];
    for await (const e of client.events()) seen.push(e);
    expect(await client.wait()).toEqual({ status: 'completed', result: 'echoed 12' });
    const readsWhileLive = reads.get('e1') ?? 0;

    const all = await stored(store, 'e1');
    expect(seen).toEqual(all);
    expect(seqs(seen)).toEqual(all.map((_, i) => i + 1));
    expect(JSON.stringify(seen)).toContain('[REDACTED]');
    expect(JSON.stringify(seen)).not.toContain(TOKEN);
    // A dozen steps, each a commit: the reader read the store once, before its window held anything.
    expect(all.length).toBeGreaterThan(40);
    expect(readsWhileLive).toBeLessThanOrEqual(1);
  });

  it('a reader behind by more than the kept window reads the store for what it missed, and goes on from memory', async () => {
    const { store, reads } = counted(file.open());
    let open!: () => void;
    const gate = new Promise<void>((r) => (open = r));
    // Two rounds of 200 calls: well over a window (a page) of events while the reader waits.
    const { swarm, model } = echoing(2, 200, gate);
    const runtime = createRuntime({ swarms: [swarm], model, store, redact: [TOKEN] });
    file.track(runtime);
    const client = runtime.forSwarm(swarm, 'e2');
    await client.run('go');
    const it = client.events()[Symbol.asyncIterator]();
    const seen: SwarmEvent[] = [(await it.next()).value as SwarmEvent];
    const before = reads.get('e2') ?? 0;
    // The reader takes nothing while the swarm commits its rounds.
    open();
    await client.wait();
    for (let r = await it.next(); !r.done; r = await it.next()) seen.push(r.value);

    const all = await stored(store, 'e2');
    expect(all.length).toBeGreaterThan(PAGE_SIZE + 100);
    expect(seen).toEqual(all);
    expect(JSON.stringify(seen)).not.toContain(TOKEN);
    expect(reads.get('e2') ?? 0).toBeGreaterThan(before);
  });

  it('a reader joining a swarm already under way reads the store first, then memory: nothing missed or repeated', async () => {
    const { store, reads } = counted(file.open());
    let open!: () => void;
    const gate = new Promise<void>((r) => (open = r));
    const { swarm, model } = echoing(8, 3, gate);
    const runtime = createRuntime({ swarms: [swarm], model, store });
    file.track(runtime);
    const client = runtime.forSwarm(swarm, 'e3');
    await client.run('go');
    // Two readers: one from the start, one from a cursor in the middle of what is stored.
    const first: SwarmEvent[] = [];
    const firstDone = (async () => {
      for await (const e of client.events()) first.push(e);
    })();
    open();
    await new Promise((r) => setTimeout(r, 30));
    const middle = (await store.readEvents('e3', 0)).length >> 1;
    const late: SwarmEvent[] = [];
    for await (const e of client.events({ since: middle })) late.push(e);
    await firstDone;

    const all = await stored(store, 'e3');
    expect(first).toEqual(all);
    expect(late).toEqual(all.slice(middle));
    expect(reads.get('e3') ?? 0).toBeLessThan(all.length / 4);
  });
});
