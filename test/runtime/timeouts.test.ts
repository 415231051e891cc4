/**
 * Timeouts (issue 30, item 4): `timeoutMs` on tools and on child-swarm handoffs (the handoff's
 * own, else the child definition's), and `modelTimeoutMs` on the runtime. A call past its
 * deadline has its signal aborted and answers with a timeout the model reads; the deadline is
 * counted from the model response that asked for the call and stored with the call, so a
 * runtime that restores the swarm enforces the same deadline, not a fresh one.
 */
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createRuntime, DefinitionError, defineSwarm, handoff, handoffToolName, scriptedModel, tool } from '../../src/index.js';
import { call, collect, lastToolResult, queueModel } from '../support/script.js';
import { sleep } from '../support/sleep.js';
import { until } from '../support/wait.js';
import { serve } from '../../src/server/index.js';
import { sqliteFilePerTest } from '../support/sqlite-file.js';

const file = sqliteFilePerTest('xswarm-timeouts-');

const runtime = file.runtime;

/** What a hanging tool saw: each start, and the reason its signal aborted with (if it did). */
interface Hang {
  starts: number[];
  aborts: { at: number; reason: unknown }[];
  started: Promise<void>;
}

/**
 * A tool `hang` that never finishes on its own: it settles only when its signal aborts
 * (rejecting with the signal's reason), or never, with `ignoresSignal`.
 */
function hangingTool(timeoutMs: number, options: { ignoresSignal?: boolean } = {}) {
  let markStarted!: () => void;
  const seen: Hang = { starts: [], aborts: [], started: new Promise<void>((r) => (markStarted = r)) };
  const hang = tool({
    name: 'hang',
    description: 'Waits for ever',
    parameters: z.object({}),
    timeoutMs,
    execute: (_args, ctx) =>
      new Promise((_resolve, reject) => {
        seen.starts.push(Date.now());
        markStarted();
        ctx.signal.addEventListener('abort', () => {
          seen.aborts.push({ at: Date.now(), reason: ctx.signal.reason });
          if (!options.ignoresSignal) reject(ctx.signal.reason);
        });
      }),
  });
  return { hang, seen };
}

/** An orchestrator that calls `hang` once, then answers with the tool result it read; records when it asked. */
function callsHangThenEchoes() {
  const asked: number[] = [];
  const model = scriptedModel((req) => {
    if (req.messages.some((m) => m.role === 'tool')) return { text: lastToolResult(req) };
    asked.push(Date.now());
    return call('hang', {}, 'c1');
  });
  return { model, asked };
}

describe('tool timeouts', () => {
  it('a hung tool times out: its signal aborts with the timeout, the model reads it, the swarm completes', async () => {
    const { hang, seen } = hangingTool(300);
    const { model, asked } = callsHangThenEchoes();
    const rt = runtime({ swarms: [defineSwarm({ id: 'planner', instructions: 'Plan.', tools: [hang] })], model });
    const client = rt.forSwarm('planner', 'p1');
    await client.run('go');
    expect(await client.wait()).toEqual({ status: 'completed', result: 'Tool "hang" timed out after 300 ms (timeoutMs)' });
    expect(seen.starts).toHaveLength(1);
    expect(seen.aborts).toHaveLength(1);
    expect(seen.aborts[0]!.reason).toMatchObject({ name: 'CallTimeoutError', timeoutMs: 300 });
    // Counted from the model's response, not from some later point.
    expect(seen.aborts[0]!.at - asked[0]!).toBeGreaterThanOrEqual(290);
    // The journal says what the model read, and a replay (zero calls) gives the same events.
    const events = await collect(client.events({ since: 0 }));
    expect(events).toContainEqual(
      expect.objectContaining({ kind: 'internal:tool-complete', toolName: 'hang', ok: false, content: 'Tool "hang" timed out after 300 ms (timeoutMs)' }),
    );
    expect(events).toContainEqual(
      expect.objectContaining({ kind: 'internal:llm-call', calls: [{ id: 'c1', name: 'hang', kind: 'tool', arguments: '{}', timeoutMs: 300 }] }),
    );
    expect(await collect(rt.replay('p1'))).toEqual(events);
  });

  it('a tool that ignores its signal still times out: the swarm does not wait for it', async () => {
    const { hang, seen } = hangingTool(200, { ignoresSignal: true });
    const { model } = callsHangThenEchoes();
    const rt = runtime({ swarms: [defineSwarm({ id: 'planner', instructions: 'Plan.', tools: [hang] })], model });
    const client = rt.forSwarm('planner', 'p2');
    await client.run('go');
    expect(await client.wait()).toEqual({ status: 'completed', result: 'Tool "hang" timed out after 200 ms (timeoutMs)' });
    expect(seen.aborts).toHaveLength(1);
  });

  it('a tool that answers in time is not affected by its timeout', async () => {
    const quick = tool({ name: 'quick', description: 'Answers at once', parameters: z.object({}), timeoutMs: 5_000, execute: () => 'done' });
    const model = queueModel({ planner: [call('quick', {}), (req) => ({ text: lastToolResult(req) })] });
    const rt = runtime({ swarms: [defineSwarm({ id: 'planner', instructions: 'Plan.', tools: [quick] })], model });
    const client = rt.forSwarm('planner', 'p3');
    await client.run('go');
    expect(await client.wait()).toEqual({ status: 'completed', result: 'done' });
  });

  it('a restart keeps the deadline: restored before it, the call is cut at the original deadline, not a fresh one', async () => {
    const timeoutMs = 3_000;
    const first = hangingTool(timeoutMs);
    const a = callsHangThenEchoes();
    const planner = (hang: ReturnType<typeof hangingTool>['hang']) => defineSwarm({ id: 'planner', instructions: 'Plan.', tools: [hang] });
    const rtA = runtime({ swarms: [planner(first.hang)], model: a.model, store: file.open() });
    await rtA.forSwarm('planner', 'r1').run('go');
    await first.seen.started;
    await rtA.close();
    // Some of the time passes while no runtime holds the swarm.
    await sleep(1_000);

    const second = hangingTool(timeoutMs);
    const rtB = runtime({ swarms: [planner(second.hang)], model: callsHangThenEchoes().model, store: file.open() });
    const restartedAt = Date.now();
    await rtB.start();
    expect(await rtB.forSwarm('planner', 'r1').wait()).toEqual({ status: 'completed', result: 'Tool "hang" timed out after 3000 ms (timeoutMs)' });
    // The call ran again (its round was open), and was cut at the deadline set by the first run's model response.
    expect(second.seen.starts).toHaveLength(1);
    expect(second.seen.aborts).toHaveLength(1);
    const cutAt = second.seen.aborts[0]!.at;
    expect(cutAt - a.asked[0]!).toBeGreaterThanOrEqual(timeoutMs - 10);
    expect(cutAt - restartedAt).toBeLessThan(timeoutMs - 500);
  });

  it('a restart after the deadline answers the timeout at once, without running the tool again', async () => {
    const timeoutMs = 400;
    const first = hangingTool(timeoutMs, { ignoresSignal: true });
    const a = callsHangThenEchoes();
    // The first runtime's model never sees the result: it is closed while the tool hangs...
    const rtA = runtime({ swarms: [defineSwarm({ id: 'planner', instructions: 'Plan.', tools: [first.hang] })], model: a.model, store: file.open() });
    await rtA.forSwarm('planner', 'r2').run('go');
    await first.seen.started;
    await rtA.close();
    // ... and the deadline passes before another runtime takes the swarm.
    await sleep(timeoutMs + 100);

    const second = hangingTool(timeoutMs);
    const rtB = runtime({
      swarms: [defineSwarm({ id: 'planner', instructions: 'Plan.', tools: [second.hang] })],
      model: callsHangThenEchoes().model,
      store: file.open(),
    });
    await rtB.start();
    expect(await rtB.forSwarm('planner', 'r2').wait()).toEqual({ status: 'completed', result: 'Tool "hang" timed out after 400 ms (timeoutMs)' });
    expect(second.seen.starts).toEqual([]);
  });
});

describe('child swarm timeouts', () => {
  /** A child swarm whose model waits until its call is aborted (the child stopped). */
  function stallingChild(timeoutMs?: number) {
    return defineSwarm({ id: 'researcher', instructions: 'Research.', ...(timeoutMs !== undefined ? { timeoutMs } : {}) });
  }
  const stallingModel = () =>
    scriptedModel((req) => {
      if (req.agentId === 'researcher') {
        return new Promise((_resolve, reject) => req.signal?.addEventListener('abort', () => reject(req.signal?.reason)));
      }
      if (req.messages.some((m) => m.role === 'tool')) return { text: lastToolResult(req) };
      return call(handoffToolName('researcher'), { request: 'Find out' }, 'h1');
    });

  it("the handoff's timeoutMs stops the child; the parent's model reads the stop", async () => {
    const child = stallingChild();
    const parent = defineSwarm({ id: 'lead', instructions: 'Lead.', handoffs: [handoff.toSwarm(child, { timeoutMs: 300 })] });
    const rt = runtime({ swarms: [parent, child], model: stallingModel() });
    const client = rt.forSwarm('lead', 'l1');
    await client.run('go');
    const result = await client.wait();
    expect(result).toEqual({ status: 'completed', result: 'Swarm "researcher" (l1:t1:0) was stopped: timed out after 300 ms (timeoutMs)' });
    expect(await rt.forSwarm('researcher', 'l1:t1:0').getResult()).toEqual({ status: 'stopped', reason: 'timed out after 300 ms (timeoutMs)' });
  });

  it("without one on the handoff, the child definition's timeoutMs applies; the handoff's wins over it", async () => {
    const child = stallingChild(250);
    const byDefinition = defineSwarm({ id: 'lead', instructions: 'Lead.', handoffs: [handoff.toSwarm(child)] });
    const rt = runtime({ swarms: [byDefinition, child], model: stallingModel() });
    await rt.forSwarm('lead', 'l2').run('go');
    expect(await rt.forSwarm('lead', 'l2').wait()).toMatchObject({ result: expect.stringContaining('timed out after 250 ms (timeoutMs)') });

    const byHandoff = defineSwarm({ id: 'lead', instructions: 'Lead.', handoffs: [handoff.toSwarm(child, { timeoutMs: 150 }).withDescription('Researches')] });
    const rt2 = runtime({ swarms: [byHandoff, child], model: stallingModel() });
    await rt2.forSwarm('lead', 'l3').run('go');
    expect(await rt2.forSwarm('lead', 'l3').wait()).toMatchObject({ result: expect.stringContaining('timed out after 150 ms (timeoutMs)') });
  });
});

describe('remote agent timeouts', () => {
  it("the handoff's timeoutMs cancels the remote task; the model reads the timeout", async () => {
    // The remote side: a runtime serving `weather` over A2A, whose model waits until aborted.
    const remoteModel = scriptedModel((req) => new Promise((_resolve, reject) => req.signal?.addEventListener('abort', () => reject(req.signal?.reason))));
    const remote = runtime({ swarms: [defineSwarm({ id: 'weather', description: 'Forecasts', instructions: 'Forecast.' })], model: remoteModel });
    const server = await serve(remote, { port: 0 });
    file.track(server);
    const cardUrl = `${server.url}/a2a/weather/.well-known/agent-card.json`;

    const planner = defineSwarm({ id: 'planner', instructions: 'Plan.', handoffs: [handoff.toRemoteAgent(cardUrl, { timeoutMs: 500 })] });
    const model = scriptedModel((req) => {
      if (req.messages.some((m) => m.role === 'tool')) return { text: lastToolResult(req) };
      return call(req.tools.find((t) => t.name.startsWith('handoff_to_'))!.name, { request: 'Saturday?' }, 'h1');
    });
    const rt = runtime({ swarms: [planner], model });
    await rt.forSwarm('planner', 'rm1').run('go');
    expect(await rt.forSwarm('planner', 'rm1').wait()).toEqual({
      status: 'completed',
      result: `The remote agent "weather" (${cardUrl}) timed out after 500 ms (timeoutMs)`,
    });
    // The remote task was canceled: its swarm there is stopped, not left running.
    await until(
      'the remote swarm ended',
      async () => (await remote.list({ definitionId: 'weather' }))[0]?.status,
      (s) => s === 'stopped',
    );
  });
});

describe('model call timeouts', () => {
  it('modelTimeoutMs aborts a model call that takes longer and fails the swarm, naming the timeout', async () => {
    const aborted: unknown[] = [];
    const model = scriptedModel(
      (req) =>
        new Promise((_resolve, reject) =>
          req.signal?.addEventListener('abort', () => {
            aborted.push(req.signal?.reason);
            reject(req.signal?.reason);
          }),
        ),
    );
    const rt = runtime({ swarms: [defineSwarm({ id: 'planner', instructions: 'Plan.' })], model, modelTimeoutMs: 200 });
    const client = rt.forSwarm('planner', 'm1');
    await client.run('go');
    expect(await client.wait()).toEqual({ status: 'failed', reason: 'Model call failed: scripted: the model call timed out after 200 ms (modelTimeoutMs)' });
    expect(aborted).toEqual([expect.objectContaining({ name: 'CallTimeoutError' })]);
  });
});

describe('bad timeouts are refused where they are declared', () => {
  it.each([
    [
      'a negative tool timeout',
      () => tool({ name: 't', description: 'd', parameters: z.object({}), execute: () => 1, timeoutMs: -5 }),
      'Tool "t": timeoutMs must be a whole number of milliseconds from 1 to 2147483647, got -5',
    ],
    [
      'a fractional swarm timeout',
      () => defineSwarm({ id: 's', instructions: 'i', timeoutMs: 1.5 }),
      'Swarm "s": timeoutMs must be a whole number of milliseconds from 1 to 2147483647, got 1.5',
    ],
    [
      'a zero handoff timeout',
      () => handoff.toSwarm('s', { timeoutMs: 0 }),
      'The handoff to swarm "s": timeoutMs must be a whole number of milliseconds from 1 to 2147483647, got 0',
    ],
    [
      'a text remote timeout',
      () => handoff.toRemoteAgent('http://127.0.0.1:1/card.json', { timeoutMs: '5s' as unknown as number }),
      'The handoff to http://127.0.0.1:1/card.json: timeoutMs must be a whole number of milliseconds from 1 to 2147483647, got "5s"',
    ],
  ])('%s', (_what, declare, message) => {
    expect(declare).toThrow(DefinitionError);
    expect(declare).toThrow(message);
  });

  it('a runtime modelTimeoutMs that is not a whole number of ms is a TypeError naming it', () => {
    expect(() => createRuntime({ model: scriptedModel(() => ({ text: 'x' })), modelTimeoutMs: Number.NaN })).toThrow(
      'createRuntime: modelTimeoutMs must be a whole number of milliseconds from 1 to 2147483647',
    );
  });
});
