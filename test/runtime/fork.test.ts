/**
 * Forks of recorded swarms (`runtime.fork`, `runtime.forkPlan`): zero model and tool calls up to
 * the fork point, then live; the exact list of calls with side effects after the point; the
 * refusals (a parallel join, inside a step, unknown points); forks of paused swarms; a fork
 * that survives a restart; a fork's own replay.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createRuntime, defineAgent, defineSwarm, ForkError, handoff, type Runtime, type SwarmEvent, tool } from '../../src/index.js';
import { createW1Runtime, W1_AGENTS, W1_INPUT, W1_RESULT, W1_SWARM_ID } from '../../bench/w1.js';
import { memoryEffects, W1_RESULT as TOOLS_RESULT, w1Definitions, w1Model } from '../support/crash-w1.js';
import { askerModel, call, calls, collect, queueModel } from '../support/script.js';
import { sqliteFilePerTest } from '../support/sqlite-file.js';

const file = sqliteFilePerTest('xswarm-fork-');
const open: Runtime[] = [];
afterEach(async () => {
  for (const r of open.splice(0).reverse()) await r.close();
});
function track(r: Runtime): Runtime {
  open.push(r);
  return r;
}

/** The reason of the `ForkError` a promise rejects with. */
async function refusal(p: Promise<unknown>): Promise<string> {
  const e = await p.then(
    () => undefined,
    (err: unknown) => err,
  );
  expect(e).toBeInstanceOf(ForkError);
  return (e as ForkError).reason;
}

describe('fork of a finished W1 run', () => {
  it('at turn 2: zero model calls up to the fork, then live to the result; its events start with the source’s', async () => {
    const { runtime, counts } = createW1Runtime(0);
    track(runtime);
    const source = runtime.forSwarm(W1_SWARM_ID, 'w1-source');
    await source.run(W1_INPUT);
    expect((await source.wait()).status).toBe('completed');
    const before = { ...counts };
    expect(before[W1_SWARM_ID]).toBe(4);

    const plan = await runtime.forkPlan('w1-source', { atTurn: 2 });
    // Planning replays the prefix: no call at all.
    expect(counts).toEqual(before);
    const forked = await runtime.fork('w1-source', { atTurn: 2, newId: 'w1-fork' });
    expect(forked).toEqual({ ...plan, swarmId: 'w1-fork' });
    expect(forked.turn).toBe(1);
    const result = await runtime.forSwarm(W1_SWARM_ID, 'w1-fork').wait();
    expect(result).toMatchObject({ status: 'completed', result: W1_RESULT });
    // Live from turn 2 on: the orchestrator's turns 2, 3, 4 and the calendar and allergen
    // agents; turn 1 and the weather agent it handed off to came from the journal.
    expect(counts[W1_SWARM_ID]! - before[W1_SWARM_ID]!).toBe(3);
    expect(counts[W1_AGENTS[0]]).toBe(before[W1_AGENTS[0]]);
    expect(counts[W1_AGENTS[1]]! - before[W1_AGENTS[1]]!).toBe(1);
    expect(counts[W1_AGENTS[2]]! - before[W1_AGENTS[2]]!).toBe(1);

    const sourceEvents = await runtime.store.readEvents('w1-source', 0);
    const forkEvents = await runtime.store.readEvents('w1-fork', 0);
    // The fork point is just before turn 2's model call.
    const turn2 = sourceEvents.find((e) => e.kind === 'internal:llm-call' && e.agent === W1_SWARM_ID && e.turn === 2)!;
    expect(forked.seq).toBe(turn2.seq - 1);
    for (const [i, e] of forkEvents.slice(0, forked.seq).entries()) {
      expect(e.seq).toBe(sourceEvents[i]!.seq);
      expect(e.swarmId).toBe('w1-fork');
      expect(e.kind).toBe(sourceEvents[i]!.kind);
    }
    const fact = forkEvents[forked.seq]!;
    expect(fact.kind === 'status-update' && fact.metadata).toEqual({ type: 'forked', forkedFrom: { swarmId: 'w1-source', seq: forked.seq }, turn: 1, sideEffects: [] });
    // The source is untouched.
    expect(await runtime.store.readEvents('w1-source', 0)).toEqual(sourceEvents);
    // A fork replays as any finished run does.
    const replayed = await collect(runtime.replay('w1-fork'));
    expect(replayed).toEqual(forkEvents);
    expect(counts[W1_SWARM_ID]! - before[W1_SWARM_ID]!).toBe(3);
  });

  it('lists exactly the tool calls recorded after the fork point, and the branch makes them under the listed new keys', async () => {
    const effects = memoryEffects();
    const { planner, agents } = w1Definitions(effects);
    const model = w1Model();
    const runtime = track(createRuntime({ swarms: [planner], agents, model }));
    const source = runtime.forSwarm(planner, 'tools-source');
    await source.run('Plan my Saturday');
    expect(await source.wait()).toMatchObject({ status: 'completed', result: TOOLS_RESULT });
    const sourceEvents = await runtime.store.readEvents('tools-source', 0);
    const sourceKeys = effects.keys();
    expect(sourceKeys).toHaveLength(3);

    const plan = await runtime.forkPlan('tools-source', { atTurn: 2, newId: 'tools-fork' });
    const after = sourceEvents.filter((e): e is Extract<SwarmEvent, { kind: 'internal:tool-start' }> => e.kind === 'internal:tool-start' && e.seq > plan.seq);
    expect(after.map((e) => e.toolName)).toEqual(['check_calendar', 'check_allergen']);
    const completed = (callId: string) => sourceEvents.find((e) => e.kind === 'internal:tool-complete' && e.callId === callId)!;
    expect(plan.sideEffects).toEqual(
      after.map((e) => {
        const key = (completed(e.callId) as Extract<SwarmEvent, { kind: 'internal:tool-complete' }>).key;
        return {
          kind: 'tool',
          name: e.toolName,
          callId: e.callId,
          agent: e.agent,
          arguments: e.arguments,
          seq: e.seq,
          completedSeq: completed(e.callId).seq,
          key,
          newKey: `tools-fork${key.slice('tools-source'.length)}`,
        };
      }),
    );
    expect(plan.sideEffects.map((c) => c.key)).toEqual(sourceKeys.slice(1));

    const callsBefore = model.requests.length;
    await runtime.fork('tools-source', { atTurn: 2, newId: 'tools-fork' });
    expect(await runtime.forSwarm(planner, 'tools-fork').wait()).toMatchObject({ status: 'completed', result: TOOLS_RESULT });
    // The weather tool (before the point) did not run again; the two listed ones ran, once each, under their new keys.
    expect(effects.keys()).toEqual([...sourceKeys, ...plan.sideEffects.map((c) => c.newKey)]);
    expect([...effects.runs.values()].every((n) => n === 1)).toBe(true);
    expect(model.calls('tools-fork')).toEqual(model.calls('tools-source').slice(3));
    expect(model.requests.length - callsBefore).toBe(7);
    // The fork's record keeps its origin, with the same list.
    const fact = (await runtime.store.readEvents('tools-fork', plan.seq, 1))[0]!;
    expect(fact.kind === 'status-update' && fact.metadata.type === 'forked' && fact.metadata.sideEffects).toEqual(plan.sideEffects);
  });

  it('replaces the orchestrator’s instructions from the fork on', async () => {
    const { planner, agents } = w1Definitions(memoryEffects());
    const model = w1Model();
    const runtime = track(createRuntime({ swarms: [planner], agents, model }));
    await runtime.forSwarm(planner, 'instr-source').run('Plan my Saturday');
    await runtime.forSwarm(planner, 'instr-source').wait();
    await runtime.fork('instr-source', { atTurn: 3, newId: 'instr-fork', instructions: 'Prefer indoor plans.' });
    await runtime.forSwarm(planner, 'instr-fork').wait();
    const live = model.requests.filter((r) => r.swarmId === 'instr-fork' && r.agentId === 'planner');
    expect(live).toHaveLength(2);
    for (const r of live) expect(r.messages[0]).toEqual({ role: 'system', content: 'Prefer indoor plans.' });
    const fact = (await runtime.store.readEvents('instr-fork', 0)).find((e) => e.kind === 'status-update' && e.metadata.type === 'forked');
    expect(fact?.kind === 'status-update' && fact.metadata).toMatchObject({ instructions: 'Prefer indoor plans.', turn: 2 });
    // Its replay reproduces it, the replaced instructions included.
    expect(await collect(runtime.replay('instr-fork'))).toEqual(await runtime.store.readEvents('instr-fork', 0));
  });
});

describe('refusals', () => {
  it('refuses a fork inside a parallel join, naming it; accepts one before the round’s results', async () => {
    const ran: string[] = [];
    const swarm = defineSwarm({
      id: 'parallel',
      instructions: 'Run both.',
      tools: [
        tool({ name: 'fast', description: 'fast', parameters: z.object({}), execute: async (_a, ctx) => (ran.push(ctx.idempotencyKey), 'fast done') }),
        tool({
          name: 'slow',
          description: 'slow',
          parameters: z.object({}),
          execute: async (_a, ctx) => {
            await new Promise((r) => setTimeout(r, 40));
            ran.push(ctx.idempotencyKey);
            return 'slow done';
          },
        }),
      ],
    });
    const model = queueModel({
      parallel: [calls(['fast', {}, 'a'], ['slow', {}, 'b']), { text: 'both done' }, calls(['fast', {}, 'a'], ['slow', {}, 'b']), { text: 'again' }],
    });
    const runtime = track(createRuntime({ swarms: [swarm], model }));
    await runtime.forSwarm(swarm, 'par').run('go');
    expect(await runtime.forSwarm(swarm, 'par').wait()).toMatchObject({ status: 'completed' });
    const events = await runtime.store.readEvents('par', 0);
    const first = events.find((e) => e.kind === 'internal:tool-complete')!;
    const second = events.filter((e) => e.kind === 'internal:tool-complete')[1]!;
    // Every seq from the first result up to the second is inside a step or inside the join.
    const reasons = new Set<string>();
    for (let seq = first.seq; seq < second.seq; seq++) reasons.add(await refusal(runtime.forkPlan('par', { atSeq: seq })));
    expect(reasons.has('parallel-join')).toBe(true);
    expect([...reasons].every((r) => r === 'parallel-join' || r === 'inside-step')).toBe(true);
    const message = await runtime.forkPlan('par', { atSeq: first.seq + 1 }).catch((e: Error) => e.message);
    expect(String(message)).toMatch(/parallel join|inside a step/);
    // Before the round's results (all its calls still to make) it forks, and both calls run again.
    const plan = await runtime.fork('par', { atTurn: 1, newId: 'par-fork' });
    expect(plan.sideEffects.map((c) => [c.name, c.callId])).toEqual([
      ['fast', 'a'],
      ['slow', 'b'],
    ]);
    expect(await runtime.forSwarm(swarm, 'par-fork').wait()).toMatchObject({ status: 'completed', result: 'again' });
    expect(ran.filter((k) => k.startsWith('par-fork:'))).toEqual(plan.sideEffects.map((c) => c.newKey).sort());
  });

  it('refuses a fork between the answers of agents handed off to in parallel', async () => {
    const agents = ['quick', 'late'].map((id) => defineAgent({ id, instructions: `You are ${id}.` }));
    const swarm = defineSwarm({ id: 'fan', instructions: 'Ask both.', handoffs: agents.map((a) => handoff.toAgent(a)) });
    const model = queueModel({
      fan: [calls(['handoff_to_quick', { request: 'q?' }, 'a'], ['handoff_to_late', { request: 'l?' }, 'b']), { text: 'both answered' }],
      quick: [{ text: 'quick answer' }],
      late: [
        async () => {
          await new Promise((r) => setTimeout(r, 40));
          return { text: 'late answer' };
        },
      ],
    });
    const runtime = track(createRuntime({ swarms: [swarm], agents, model }));
    await runtime.forSwarm(swarm, 'fan-1').run('go');
    expect(await runtime.forSwarm(swarm, 'fan-1').wait()).toMatchObject({ status: 'completed' });
    const events = await runtime.store.readEvents('fan-1', 0);
    const results = events.filter((e) => e.kind === 'status-update' && e.metadata.type === 'handoff-result');
    expect(results).toHaveLength(2);
    const reasons = new Set<string>();
    for (let seq = results[0]!.seq; seq < results[1]!.seq; seq++) reasons.add(await refusal(runtime.forkPlan('fan-1', { atSeq: seq })));
    expect(reasons.has('parallel-join')).toBe(true);
    expect([...reasons].every((r) => r === 'parallel-join' || r === 'inside-step')).toBe(true);
  });

  it('refuses unknown points, a final event, a seq inside a step and a taken id, with reasons', async () => {
    const { runtime } = createW1Runtime(0);
    track(runtime);
    await runtime.forSwarm(W1_SWARM_ID, 'w1').run(W1_INPUT);
    await runtime.forSwarm(W1_SWARM_ID, 'w1').wait();
    const last = (await runtime.store.readEvents('w1', 0)).at(-1)!.seq;
    expect(await refusal(runtime.forkPlan('w1', { atSeq: last + 1 }))).toBe('unknown-seq');
    expect(await refusal(runtime.forkPlan('w1', { atSeq: 0 }))).toBe('invalid-point');
    expect(await refusal(runtime.forkPlan('w1', { atTurn: 9 }))).toBe('unknown-turn');
    expect(await refusal(runtime.forkPlan('w1', { atTurn: 5 }))).toBe('unknown-turn');
    expect(await refusal(runtime.forkPlan('w1', { atTurn: 1, atSeq: 3 } as never))).toBe('invalid-point');
    expect(await refusal(runtime.forkPlan('w1', { atSeq: last }))).toBe('ended');
    // The task and `started` of the first step: seq 1 is inside it.
    expect(await refusal(runtime.forkPlan('w1', { atSeq: 1 }))).toBe('inside-step');
    await expect(runtime.forkPlan('nope', { atSeq: 1 })).rejects.toMatchObject({ code: 'unknown-swarm' });
    await expect(runtime.fork('w1', { atTurn: 2, newId: 'w1' })).rejects.toMatchObject({ code: 'id-in-use' });
    // Nothing was made by the refusals.
    expect((await runtime.list()).map((s) => s.swarmId)).toEqual(['w1']);
  });
});

describe('forks of unfinished swarms, and restarts', () => {
  it('forks a paused swarm at its pause: the fork waits for its own answer; the source still waits for its', async () => {
    const swarm = defineSwarm({ id: 'asker', instructions: 'Book a day.' });
    const model = askerModel();
    const runtime = track(createRuntime({ swarms: [swarm], model }));
    const source = runtime.forSwarm(swarm, 'ask');
    await source.run('Book me a day');
    await expect.poll(async () => (await source.getResult()).status).toBe('paused');
    const last = (await runtime.store.readEvents('ask', 0)).at(-1)!.seq;
    const calls = model.requests.length;
    const plan = await runtime.fork('ask', { atSeq: last, newId: 'ask-fork' });
    expect(plan.seq).toBe(last);
    const fork = runtime.forSwarm(swarm, 'ask-fork');
    expect((await fork.getResult()).status).toBe('paused');
    expect(model.requests.length).toBe(calls);
    await fork.resume('Sunday');
    expect(await fork.wait()).toMatchObject({ status: 'completed', result: 'Booked for Sunday.' });
    expect((await source.getResult()).status).toBe('paused');
    await source.resume('Monday');
    expect(await source.wait()).toMatchObject({ status: 'completed', result: 'Booked for Monday.' });
  });

  it('forks a failed swarm just before the step that failed: that step runs again, live', async () => {
    const swarm = defineSwarm({
      id: 'flaky',
      instructions: 'Work.',
      tools: [tool({ name: 'work', description: 'works', parameters: z.object({}), execute: async () => 'worked' })],
    });
    const model = queueModel({
      flaky: [
        call('work', {}, 'w'),
        () => {
          throw new Error('model unavailable');
        },
        { text: 'done at last' },
      ],
    });
    const runtime = track(createRuntime({ swarms: [swarm], model }));
    await runtime.forSwarm(swarm, 'flaky-1').run('go');
    expect(await runtime.forSwarm(swarm, 'flaky-1').wait()).toMatchObject({ status: 'failed', reason: expect.stringMatching(/model unavailable/) });
    const plan = await runtime.fork('flaky-1', { atTurn: 2, newId: 'flaky-2' });
    expect(plan).toMatchObject({ turn: 1, sideEffects: [] });
    expect(await runtime.forSwarm(swarm, 'flaky-2').wait()).toEqual({ status: 'completed', result: 'done at last' });
    expect(model.requests).toHaveLength(3);
  });

  it('forks a swarm stopped during a model call just before that call, and a running one at its latest step', async () => {
    const hang = (req: { signal: AbortSignal }) =>
      new Promise<never>((_, reject) => req.signal.addEventListener('abort', () => reject(req.signal.reason), { once: true }));
    const swarm = defineSwarm({
      id: 'halt',
      instructions: 'Work.',
      tools: [tool({ name: 'work', description: 'works', parameters: z.object({}), execute: async () => 'worked' })],
    });
    const model = queueModel({ halt: [call('work', {}, 'w'), hang, { text: 'resumed by the fork' }, hang, { text: 'the running one forked' }] });
    const runtime = track(createRuntime({ swarms: [swarm], model }));
    const source = runtime.forSwarm(swarm, 'halt-1');
    await source.run('go');
    await expect.poll(() => model.requests.length).toBe(2);
    // Running, its turn 2 in flight: forked at turn 2 (the call in flight is made again by the fork).
    const running = await runtime.fork('halt-1', { atTurn: 2, newId: 'halt-running' });
    await expect.poll(() => model.requests.length).toBe(3);
    expect(await runtime.forSwarm(swarm, 'halt-running').wait()).toEqual({ status: 'completed', result: 'resumed by the fork' });
    await source.stop('enough');
    expect(await source.wait()).toMatchObject({ status: 'stopped' });
    const stopped = await runtime.fork('halt-1', { atTurn: 2, newId: 'halt-2' });
    expect(stopped.seq).toBe(running.seq);
    await expect.poll(() => model.requests.length).toBe(4);
    await runtime.forSwarm(swarm, 'halt-2').stop('again');
    const third = await runtime.fork('halt-2', { atTurn: 2, newId: 'halt-3' });
    expect(await runtime.forSwarm(swarm, 'halt-3').wait()).toEqual({ status: 'completed', result: 'the running one forked' });
    // A fork of a fork names its own source, at the same point.
    const facts = (await runtime.store.readEvents('halt-3', 0)).filter((e) => e.kind === 'status-update' && e.metadata.type === 'forked');
    expect(facts.map((e) => e.kind === 'status-update' && e.metadata.type === 'forked' && e.metadata.forkedFrom)).toEqual([
      { swarmId: 'halt-1', seq: running.seq },
      { swarmId: 'halt-2', seq: third.seq },
    ]);
  });

  it('a fork is durable: its runtime closed before it ran, a new runtime on the same file continues it', async () => {
    const { planner, agents } = w1Definitions(memoryEffects());
    // The first runtime's model hangs on the fork's first live call.
    const modelA = w1Model({ hold: (req) => req.swarmId === 'durable-fork' });
    const a = file.runtime({ swarms: [planner], agents, model: modelA, store: file.open() });
    await a.forSwarm(planner, 'durable-source').run('Plan my Saturday');
    await a.forSwarm(planner, 'durable-source').wait();
    const plan = await a.fork('durable-source', { atTurn: 2, newId: 'durable-fork' });
    await modelA.held;
    await a.close();

    const modelB = w1Model();
    const b = file.runtime({ swarms: [planner], agents, model: modelB, store: file.open() });
    await b.start();
    expect(await b.forSwarm(planner, 'durable-fork').wait()).toMatchObject({ status: 'completed', result: TOOLS_RESULT });
    // Only what follows the fork point ran in the new runtime: from the orchestrator's turn 2.
    expect(modelB.calls('durable-fork')).toEqual(modelA.calls('durable-source').slice(3));
    const events = await b.store.readEvents('durable-fork', 0);
    expect(events[plan.seq]).toMatchObject({ metadata: { type: 'forked', forkedFrom: { swarmId: 'durable-source', seq: plan.seq } } });
    expect(await collect(b.replay('durable-fork'))).toEqual(events);
  });

  it('refuses a fork while a child swarm runs; after its result, the child’s answer comes from the journal', async () => {
    const kid = defineSwarm({ id: 'kid', instructions: 'Ask, then answer.' });
    const lead = defineSwarm({ id: 'lead', instructions: 'Delegate.', handoffs: [handoff.toSwarm(kid)] });
    const model = queueModel({
      lead: [call('handoff_to_kid', { request: 'pick a day' }, 'k1'), { text: 'lead done' }, { text: 'fork done' }],
      kid: [call('pause', { reason: 'Which day?' }, 'q'), { text: 'Sunday' }],
    });
    const runtime = track(createRuntime({ swarms: [lead, kid], model }));
    const parent = runtime.forSwarm(lead, 'lead-1');
    await parent.run('go');
    const child = runtime.forSwarm(kid, 'lead-1:t1:0');
    await expect.poll(async () => (await child.getResult().catch(() => undefined))?.status).toBe('paused');
    const running = (await runtime.store.readEvents('lead-1', 0)).at(-1)!.seq;
    expect(await refusal(runtime.forkPlan('lead-1', { atSeq: running }))).toBe('child-in-flight');
    await child.resume('any');
    expect(await parent.wait()).toMatchObject({ status: 'completed', result: 'lead done' });

    const plan = await runtime.fork('lead-1', { atTurn: 2, newId: 'lead-2' });
    expect(plan.sideEffects).toEqual([]);
    expect(await runtime.forSwarm(lead, 'lead-2').wait()).toMatchObject({ status: 'completed', result: 'fork done' });
    // The child ran once (for the source); the fork read its answer from the journal.
    expect(model.requests.filter((r) => r.agentId === 'kid')).toHaveLength(2);
    expect((await runtime.list()).map((s) => s.swarmId).sort()).toEqual(['lead-1', 'lead-1:t1:0', 'lead-2']);
    // Forked before the handoff, the child swarm is listed as a side effect.
    const before = await runtime.forkPlan('lead-1', { atTurn: 1 });
    expect(before.sideEffects).toMatchObject([{ kind: 'swarm', name: 'kid', callId: 'k1', key: 'lead-1:t1:k1', newKey: '<new-id>:t1:k1' }]);
  });
});

describe('fork across a deploy', () => {
  it('a run of version 1 forks onto version 1 while it is registered beside version 2', async () => {
    const v1 = defineSwarm({ id: 'greeter', instructions: 'Greet (v1).' });
    const v2 = defineSwarm({ id: 'greeter', version: 2, instructions: 'Greet (v2).' });
    const old = track(createRuntime({ swarms: [v1], model: queueModel({ greeter: [call('pause', { reason: 'Whom?' }, 'p1')] }), store: file.open() }));
    await old.forSwarm('greeter', 'g1').run('Greet someone');
    expect((await old.forSwarm('greeter', 'g1').wait()).status).toBe('paused');
    await old.close();
    open.splice(open.indexOf(old), 1);

    const model = queueModel({ greeter: [{ text: 'Hello, Ada.' }] });
    const both = track(createRuntime({ swarms: [v1, v2], model, store: file.open() }));
    const forked = await both.fork('g1', { atSeq: (await both.store.readEvents('g1', 0)).length, newId: 'g1-fork' });
    expect(forked.swarmId).toBe('g1-fork');
    expect((await both.store.load('g1-fork'))?.definitionVersion).toBe(1);
    await both.forSwarm('greeter', 'g1-fork').resume('Ada');
    expect(await both.forSwarm('greeter', 'g1-fork').wait()).toMatchObject({ status: 'completed', result: 'Hello, Ada.' });
    // It ran on version 1: the model was given v1's instructions.
    expect((await both.store.load('g1-fork'))?.definitionVersion).toBe(1);
    expect(model.requests[0]!.messages[0]).toMatchObject({ role: 'system', content: expect.stringContaining('Greet (v1).') });
  });
});
