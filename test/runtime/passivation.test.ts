/**
 * Passivation (`createRuntime({ passivateAfterMs })`): a swarm that only waits — paused for a
 * human, or awaiting a child swarm — leaves memory once it has waited that long and is restored
 * from the store by the next command or by its child's next lifecycle step. It reads, streams,
 * restarts and keeps its lease exactly as a live one.
 */
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { describe, expect, it } from 'vitest';
import { createRuntime, defineSwarm, factOf, handoff, type Runtime, type RuntimeOptions, scriptedModel, type SwarmEvent } from '../../src/index.js';
import { serve } from '../../src/server/index.js';
import type { SwarmStore } from '../../src/store/types.js';
import { askerModel, call, collect, lastToolResult, queueModel } from '../support/script.js';
import { sleep } from '../support/sleep.js';
import { until } from '../support/wait.js';
import { sqliteFilePerTest } from '../support/sqlite-file.js';

/** The test's SQLite file, and what each test opened, closed after it (last opened first). */
const file = sqliteFilePerTest('xswarm-passivation-', { ignoreCloseErrors: true });

const PASSIVATE_MS = 50;

/** A runtime that passivates after {@link PASSIVATE_MS}, on a store of the test's file, closed after the test. */
function runtime(options: Omit<RuntimeOptions, 'store'> & { store?: SwarmStore }): Runtime {
  return file.runtime({ passivateAfterMs: PASSIVATE_MS, store: file.open({ synchronous: 'NORMAL' }), ...options });
}

/** A swarm whose model asks a human which day, then books the day the human answers. */
const asker = defineSwarm({ id: 'asker', instructions: 'Book a day.' });
const PAUSED = { status: 'paused', reason: { type: 'HITL', message: 'Which day?', pauseId: 'p1' }, currentTurn: 1, maxTurns: 10 };

const passivated = (rt: Runtime) => () => rt.stats().passivated > 0 && rt.stats().live === 0;

describe('a paused swarm', () => {
  it('is passivated after passivateAfterMs, reads the same, and a resume restores and completes it', async () => {
    const rt = runtime({ swarms: [asker], model: askerModel() });
    const c = rt.forSwarm(asker, 'book-1');
    await c.run('Book me in');
    expect(await c.wait()).toEqual(PAUSED);
    const listedLive = await rt.list();
    expect(rt.stats()).toEqual({ live: 1, passivated: 0 });

    await until('passivation', passivated(rt));
    expect(rt.stats()).toEqual({ live: 0, passivated: 1 });
    // Reading a passivated swarm does not restore it, and answers what the live one answered.
    expect(await c.getResult()).toEqual(PAUSED);
    expect(await c.wait()).toEqual(PAUSED);
    expect((await rt.list()).map(({ updatedAt: _u, lease: _l, ...s }) => s)).toEqual(listedLive.map(({ updatedAt: _u, lease: _l, ...s }) => s));
    expect(rt.stats()).toEqual({ live: 0, passivated: 1 });

    await c.resume('Friday');
    expect(await c.wait()).toEqual({ status: 'completed', result: 'Booked for Friday.' });
    expect(rt.stats().passivated).toBe(0);
    // One stream, numbered without a gap across the eviction.
    const events = await collect(c.events());
    expect(events.map((e) => e.seq)).toEqual(events.map((_, i) => i + 1));
  });

  it('a passivated swarm is stopped by stop()', async () => {
    const rt = runtime({ swarms: [asker], model: askerModel() });
    const c = rt.forSwarm(asker, 'book-2');
    await c.run('Book me in');
    await until('passivation', passivated(rt));
    await c.stop('changed my mind');
    expect(await c.getResult()).toEqual({ status: 'stopped', reason: 'changed my mind' });
    expect(rt.stats()).toEqual({ live: 0, passivated: 0 });
    // Commands on it now say it ended, as for any ended swarm.
    await expect(c.resume('x')).rejects.toMatchObject({ code: 'wrong-state' });
  });

  it('pause on a passivated paused swarm is refused as already paused; it passivates again', async () => {
    const rt = runtime({ swarms: [asker], model: askerModel() });
    const c = rt.forSwarm(asker, 'book-3');
    await c.run('Book me in');
    await until('passivation', passivated(rt));
    await expect(c.pause('again')).rejects.toMatchObject({ code: 'wrong-state' });
    await until('passivation again', passivated(rt));
    await c.resume('Monday');
    expect(await c.wait()).toEqual({ status: 'completed', result: 'Booked for Monday.' });
  });

  it('events() of a passivated swarm streams the stored events, then follows it live after a resume', async () => {
    const rt = runtime({ swarms: [asker], model: askerModel() });
    const c = rt.forSwarm(asker, 'book-4');
    await c.run('Book me in');
    await c.wait();
    const before = await rt.store.readEvents('book-4', 0);
    await until('passivation', passivated(rt));

    const seen: SwarmEvent[] = [];
    const reading = (async () => {
      for await (const e of c.events()) seen.push(e);
    })();
    await until('the stored events', () => seen.length === before.length);
    expect(seen).toEqual(before);
    expect(rt.stats().live).toBe(0);

    await c.resume('Sunday');
    await reading;
    expect(seen).toEqual(await rt.store.readEvents('book-4', 0));
    const last = seen.at(-1)!;
    expect(last.kind === 'status-update' && last.final && last.status.state).toBe('completed');
  });

  it('a runtime without passivateAfterMs keeps a paused swarm in memory', async () => {
    const rt = runtime({ swarms: [asker], model: askerModel(), passivateAfterMs: undefined });
    const c = rt.forSwarm(asker, 'book-5');
    await c.run('Book me in');
    await c.wait();
    await sleep(PASSIVATE_MS * 4);
    expect(rt.stats()).toEqual({ live: 1, passivated: 0 });
  });

  it('passivateAfterMs must be a finite, non-negative number', () => {
    expect(() => createRuntime({ model: askerModel(), passivateAfterMs: -1 })).toThrow(TypeError);
    expect(() => createRuntime({ model: askerModel(), passivateAfterMs: Number.NaN })).toThrow(TypeError);
  });
});

describe('a parent awaiting a child swarm', () => {
  const lifecycle = (events: SwarmEvent[]) => events.map((e) => factOf(e, 'child-swarm')?.lifecycle).filter(Boolean);

  it('is passivated while the child works, and restored by the child’s completion to complete', async () => {
    const child = defineSwarm({ id: 'child', instructions: 'Do the work.' });
    const parent = defineSwarm({ id: 'parent', instructions: 'Delegate.', handoffs: [handoff.toSwarm(child)] });
    let release!: () => void;
    const childMayAnswer = new Promise<void>((resolve) => (release = resolve));
    const model = scriptedModel(async (req) => {
      if (req.agentId === 'child') {
        await childMayAnswer;
        return { text: 'child result' };
      }
      return req.messages.some((m) => m.role === 'tool') ? { text: 'parent done' } : call('handoff_to_child', { request: 'work' }, 'h1');
    });
    const rt = runtime({ swarms: [parent, child], model });
    const c = rt.forSwarm(parent, 'par-1');
    await c.run('go');
    // The parent only waits on its child (whose model call is in flight): it leaves memory.
    await until('the parent passivated', () => rt.stats().passivated === 1);
    expect(rt.stats()).toEqual({ live: 1, passivated: 1 });
    expect((await c.getResult()).status).toBe('running');

    release();
    expect(await c.wait()).toEqual({ status: 'completed', result: 'parent done' });
    const events = await collect(c.events());
    expect(lifecycle(events)).toEqual(['started', 'completed']);
    expect(events.map((e) => e.seq)).toEqual(events.map((_, i) => i + 1));
  });

  it('a child paused for its own human and its parent both passivate; resuming the child completes both', async () => {
    const child = defineSwarm({ id: 'child', instructions: 'Ask a human.' });
    const parent = defineSwarm({ id: 'parent', instructions: 'Delegate.', handoffs: [handoff.toSwarm(child)] });
    const model = scriptedModel((req) => {
      const answer = req.messages.find((m) => m.role === 'tool');
      if (req.agentId === 'child') return answer ? { text: `child heard ${answer.content}` } : call('pause', { reason: 'Which day?' }, 'p1');
      return answer ? { text: `parent got: ${answer.content}` } : call('handoff_to_child', { request: 'work' }, 'h1');
    });
    const rt = runtime({ swarms: [parent, child], model });
    const c = rt.forSwarm(parent, 'par-2');
    await c.run('go');
    await until('both passivated', () => rt.stats().passivated === 2);
    expect(rt.stats().live).toBe(0);
    const [childSummary] = await rt.list({ definitionId: 'child' });
    expect(childSummary?.status).toBe('paused');

    await rt.forSwarm(child, childSummary!.swarmId).resume('Tuesday');
    expect(await c.wait()).toEqual({ status: 'completed', result: 'parent got: child heard Tuesday' });
    expect(lifecycle(await collect(c.events()))).toEqual(['started', 'paused', 'resumed', 'completed']);
  });

  it('stopping a passivated parent stops its passivated child', async () => {
    const child = defineSwarm({ id: 'child', instructions: 'Ask a human.' });
    const parent = defineSwarm({ id: 'parent', instructions: 'Delegate.', handoffs: [handoff.toSwarm(child)] });
    const model = scriptedModel((req) => (req.agentId === 'child' ? call('pause', { reason: 'Which day?' }, 'p1') : call('handoff_to_child', { request: 'work' }, 'h1')));
    const rt = runtime({ swarms: [parent, child], model });
    const c = rt.forSwarm(parent, 'par-3');
    await c.run('go');
    await until('both passivated', () => rt.stats().passivated === 2);
    const [childSummary] = await rt.list({ definitionId: 'child' });
    await c.stop('no longer needed');
    const childClient = rt.forSwarm(child, childSummary!.swarmId);
    await until('the child stopped', async () => (await childClient.getResult()).status === 'stopped');
    expect(await childClient.getResult()).toEqual({ status: 'stopped', reason: 'parent swarm "par-3" stopped' });
    expect(rt.stats()).toEqual({ live: 0, passivated: 0 });
    expect(await c.getResult()).toEqual({ status: 'stopped', reason: 'no longer needed' });
  });
});

describe('a swarm a remote agent asked a question', () => {
  it('is passivated while its human is asked; the resume restores it, the answer reaches the remote task once, both complete', async () => {
    // Server B: a remote `weather` swarm that asks which city (A2A input-required).
    const weather = defineSwarm({ id: 'weather', description: 'Answers weather questions', instructions: 'Forecast.' });
    const remoteModel = queueModel({ weather: [call('pause', { reason: 'Which city?' }), (req) => ({ text: `Sunny in ${lastToolResult(req)}` })] });
    const b = createRuntime({ swarms: [weather], model: remoteModel });
    const server = await serve(b);
    file.track(b);
    file.track(server);
    // Runtime A hands off to it, and passivates.
    const planner = defineSwarm({
      id: 'planner',
      instructions: 'Plan with the weather.',
      handoffs: [handoff.toRemoteAgent(`${server.url}/a2a/weather/.well-known/agent-card.json`)],
    });
    const model = queueModel({ planner: [call('handoff_to_weather', { request: 'forecast' }), (req) => ({ text: `Plan: ${lastToolResult(req)}` })] });
    const a = runtime({ swarms: [planner], model });
    const c = a.forSwarm(planner, 'plan-1');
    await c.run('Plan my weekend');
    await until('the remote question', async () => (await c.getResult()).status === 'paused');
    await until('passivation', passivated(a));
    expect(await c.getResult()).toMatchObject({ status: 'paused', reason: { type: 'HITL', message: 'Which city?' } });

    await c.resume('Paris');
    expect(await c.wait()).toEqual({ status: 'completed', result: 'Plan: Sunny in Paris' });
    const [task] = await b.list({ definitionId: 'weather' });
    expect(await b.forSwarm('weather', task!.swarmId).getResult()).toEqual({ status: 'completed', result: 'Sunny in Paris' });
    // The remote swarm ran once and was answered once: the re-attached call did not ask again.
    expect(await b.list({ definitionId: 'weather' })).toHaveLength(1);
    expect(remoteModel.requests).toHaveLength(2);
    expect(model.requests).toHaveLength(2);
  });
});

describe('ownership', () => {
  it('a restart on the same SQLite file restores passivated swarms as paused, and they resume', async () => {
    const a = runtime({ swarms: [asker], model: askerModel() });
    for (const id of ['r-1', 'r-2']) await a.forSwarm(asker, id).run('Book me in');
    await until('passivation', () => a.stats().passivated === 2);
    await a.close();

    const b = runtime({ swarms: [asker], model: askerModel() });
    await b.start();
    expect(await b.forSwarm(asker, 'r-1').getResult()).toEqual(PAUSED);
    // Restored, then passivated again by the new runtime.
    await until('passivation in the new runtime', () => b.stats().passivated === 2);
    await b.forSwarm(asker, 'r-1').resume('Friday');
    await b.forSwarm(asker, 'r-2').resume('Saturday');
    expect(await b.forSwarm(asker, 'r-1').wait()).toEqual({ status: 'completed', result: 'Booked for Friday.' });
    expect(await b.forSwarm(asker, 'r-2').wait()).toEqual({ status: 'completed', result: 'Booked for Saturday.' });
  });

  it('another runtime on the same store cannot adopt a passivated swarm while its owner lives', async () => {
    const leaseMs = 150;
    const a = runtime({ swarms: [asker], model: askerModel(), leaseMs });
    const ca = a.forSwarm(asker, 'owned');
    await ca.run('Book me in');
    await until('passivation', passivated(a));

    const b = runtime({ swarms: [asker], model: askerModel(), leaseMs });
    await b.start();
    // Several lease periods: the owner keeps renewing the passivated swarm's lease.
    await sleep(leaseMs * 4);
    expect(b.stats()).toEqual({ live: 0, passivated: 0 });
    await expect(b.forSwarm(asker, 'owned').resume('from b')).rejects.toMatchObject({ code: 'not-live' });

    await ca.resume('Friday');
    expect(await ca.wait()).toEqual({ status: 'completed', result: 'Booked for Friday.' });
  });
});

describe('memory', () => {
  it('10,000 passivated paused swarms cost little heap each', { timeout: 120_000 }, async () => {
    setFlagsFromString('--expose-gc');
    const gc = runInNewContext('gc') as () => void;
    const heap = () => {
      gc();
      gc();
      return process.memoryUsage().heapUsed;
    };
    const rt = runtime({ swarms: [asker], model: askerModel() });
    // Warm up the code paths before the baseline.
    await rt.forSwarm(asker, 'warm').run('Book me in');
    await until('warm-up passivated', () => rt.stats().passivated === 1);
    const base = heap();
    const n = 10_000;
    for (let i = 0; i < n; i += 100) {
      await Promise.all(Array.from({ length: 100 }, (_, j) => rt.forSwarm(asker, `m-${i + j}`).run('Book me in')));
    }
    await until('all passivated', () => rt.stats().passivated === n + 1, { timeout: 60_000 });
    const perSwarm = (heap() - base) / n;
    expect(perSwarm).toBeLessThan(4096);
    // Still owned and usable.
    await rt.forSwarm(asker, 'm-42').resume('Friday');
    expect(await rt.forSwarm(asker, 'm-42').wait()).toEqual({ status: 'completed', result: 'Booked for Friday.' });
  });
});
