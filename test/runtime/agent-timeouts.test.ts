/**
 * Agent handoff timeouts (`defineAgent({ timeoutMs })`, issue 30 item 4): the deadline counts
 * from the orchestrator response that handed off; past it the agent is stopped (its tools' and
 * model call's signals abort) and the orchestrator's model reads the timeout as the handoff's
 * result. A restored swarm keeps the deadline; a replay reproduces the run with zero calls.
 */
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createRuntime, DefinitionError, defineAgent, defineSwarm, handoff, type ModelRequest, scriptedModel, tool } from '../../src/index.js';
import { serve } from '../../src/server/index.js';
import { forbiddenModel } from '../support/crash-w1.js';
import { call, collect, lastToolResult } from '../support/script.js';
import { sleep } from '../support/sleep.js';
import { sqliteFilePerTest } from '../support/sqlite-file.js';

const file = sqliteFilePerTest('xswarm-agent-timeouts-');

/** A tool that settles only when its signal aborts; records its starts and aborts. */
function hangingTool() {
  let markStarted!: () => void;
  const seen = { starts: [] as number[], aborts: [] as number[], started: new Promise<void>((r) => (markStarted = r)) };
  const hang = tool({
    name: 'hang',
    description: 'Waits for ever',
    parameters: z.object({}),
    execute: (_args, ctx) =>
      new Promise((_resolve, reject) => {
        seen.starts.push(Date.now());
        markStarted();
        ctx.signal.addEventListener('abort', () => {
          seen.aborts.push(Date.now());
          reject(ctx.signal.reason);
        });
      }),
  });
  return { hang, seen };
}

/**
 * The orchestrator hands off to `slow-agent` once and answers with what it read; the agent
 * calls `hang` (or, with `agentHangs`, its model never answers). Records when it handed off.
 */
function models(options: { agentHangs?: boolean } = {}) {
  const handedOff: number[] = [];
  const modelAborts: number[] = [];
  const model = scriptedModel(async (req: ModelRequest) => {
    if (req.agentId === 'slow-agent') {
      if (options.agentHangs) {
        await new Promise<never>((_, reject) =>
          req.signal.addEventListener('abort', () => {
            modelAborts.push(Date.now());
            reject(req.signal.reason);
          }),
        );
      }
      return req.messages.some((m) => m.role === 'tool') ? { text: 'Agent done.' } : call('hang', {}, 'a1');
    }
    if (req.messages.some((m) => m.role === 'tool')) return { text: lastToolResult(req) };
    handedOff.push(Date.now());
    return call('handoff_to_slow_agent', { request: 'Do it.' }, 'h1');
  });
  return { model, handedOff, modelAborts };
}

function definitions(hang: ReturnType<typeof hangingTool>['hang'], timeoutMs: number) {
  const agent = defineAgent({ id: 'slow-agent', instructions: 'Work.', tools: [hang], timeoutMs });
  const lead = defineSwarm({ id: 'lead', instructions: 'Delegate.', handoffs: [handoff.toAgent(agent)] });
  return { swarms: [lead], agents: [agent] };
}

const timedOut = (ms: number) => `Agent "slow-agent" timed out after ${ms} ms (timeoutMs)`;

describe('agent handoff timeouts', () => {
  it("an agent whose tool hangs is stopped at its deadline: the tool's signal aborts, the orchestrator reads the timeout; replay makes no call", async () => {
    const { hang, seen } = hangingTool();
    const m = models();
    const store = file.open();
    const rt = file.runtime({ ...definitions(hang, 300), model: m.model, store });
    const client = rt.forSwarm('lead', 'a1');
    await client.run('go');
    expect(await client.wait()).toEqual({ status: 'completed', result: timedOut(300) });
    expect(seen.aborts).toHaveLength(1);
    expect(seen.aborts[0]! - m.handedOff[0]!).toBeGreaterThanOrEqual(290);
    const events = await collect(client.events({ since: 0 }));
    expect(events).toContainEqual(
      expect.objectContaining({
        kind: 'status-update',
        metadata: expect.objectContaining({ type: 'handoff-result', from: 'slow-agent', ok: false, content: timedOut(300) }),
      }),
    );
    const replayer = file.runtime({ ...definitions(hang, 300), model: forbiddenModel(), store });
    expect(await collect(replayer.replay('a1'))).toEqual(events);
  });

  it("an agent whose model call hangs is stopped too: the model call's signal aborts", async () => {
    const { hang } = hangingTool();
    const m = models({ agentHangs: true });
    const rt = file.runtime({ ...definitions(hang, 250), model: m.model, store: file.open() });
    const client = rt.forSwarm('lead', 'a2');
    await client.run('go');
    expect(await client.wait()).toEqual({ status: 'completed', result: timedOut(250) });
    expect(m.modelAborts).toHaveLength(1);
    expect(m.modelAborts[0]! - m.handedOff[0]!).toBeGreaterThanOrEqual(240);
  });

  it('an agent that answers in time is not affected, and its replay is equal', async () => {
    const quick = tool({ name: 'hang', description: 'Answers at once', parameters: z.object({}), execute: () => 'ok' });
    const store = file.open();
    const rt = file.runtime({ ...definitions(quick, 5_000), model: models().model, store });
    const client = rt.forSwarm('lead', 'a3');
    await client.run('go');
    expect(await client.wait()).toEqual({ status: 'completed', result: 'Agent done.' });
    const events = await collect(client.events({ since: 0 }));
    const replayer = file.runtime({ ...definitions(quick, 5_000), model: forbiddenModel(), store });
    expect(await collect(replayer.replay('a3'))).toEqual(events);
  });

  it('a restart keeps the deadline: restored after it passed, the agent times out at once', async () => {
    const timeoutMs = 400;
    const first = hangingTool();
    const rtA = createRuntime({ ...definitions(first.hang, timeoutMs), model: models().model, store: file.open() });
    await rtA.forSwarm('lead', 'a4').run('go');
    await first.seen.started;
    await rtA.close();
    await sleep(timeoutMs + 100);

    const second = hangingTool();
    const rtB = file.runtime({ ...definitions(second.hang, timeoutMs), model: models().model, store: file.open() });
    const restartedAt = Date.now();
    await rtB.start();
    expect(await rtB.forSwarm('lead', 'a4').wait()).toEqual({ status: 'completed', result: timedOut(timeoutMs) });
    // Not a fresh deadline: well before another timeoutMs went by.
    expect(Date.now() - restartedAt).toBeLessThan(timeoutMs - 100);
  });

  it('a restart before the deadline cuts the agent at the original deadline, not a fresh one', async () => {
    const timeoutMs = 1_500;
    const first = hangingTool();
    const a = models();
    const rtA = createRuntime({ ...definitions(first.hang, timeoutMs), model: a.model, store: file.open() });
    await rtA.forSwarm('lead', 'a5').run('go');
    await first.seen.started;
    await rtA.close();
    await sleep(500);
    const second = hangingTool();
    const rtB = file.runtime({ ...definitions(second.hang, timeoutMs), model: models().model, store: file.open() });
    const restartedAt = Date.now();
    await rtB.start();
    expect(await rtB.forSwarm('lead', 'a5').wait()).toEqual({ status: 'completed', result: timedOut(timeoutMs) });
    const cutAt = second.seen.aborts[0]!;
    expect(cutAt - a.handedOff[0]!).toBeGreaterThanOrEqual(timeoutMs - 10);
    expect(cutAt - restartedAt).toBeLessThan(timeoutMs - 300);
  });

  it('a bad timeoutMs is refused where the agent is defined', () => {
    expect(() => defineAgent({ id: 'x', instructions: 'X.', timeoutMs: 0 })).toThrow(DefinitionError);
    expect(() => defineAgent({ id: 'x', instructions: 'X.', timeoutMs: 1.5 })).toThrow(/Agent "x": timeoutMs must be a whole number/);
  });
});

describe("onTimeout: 'fail' — a call past its deadline fails the swarm instead of being a result", () => {
  /** An orchestrator that calls `hang` once (and would answer with what it read). */
  const callsHang = () => scriptedModel((req) => (req.messages.some((m) => m.role === 'tool') ? { text: lastToolResult(req) } : call('hang', {}, 'c1')));

  it("a tool's: the swarm fails naming the timeout; the result is recorded first; replay makes no call", async () => {
    const { hang, seen } = hangingTool();
    const failing = tool({ ...hang, timeoutMs: 200, onTimeout: 'fail' });
    const store = file.open();
    const swarms = [defineSwarm({ id: 'planner', instructions: 'Plan.', tools: [failing] })];
    const rt = file.runtime({ swarms, model: callsHang(), store });
    const client = rt.forSwarm('planner', 'f1');
    await client.run('go');
    expect(await client.wait()).toEqual({ status: 'failed', reason: `Tool "hang" timed out after 200 ms (timeoutMs) (onTimeout: 'fail')` });
    expect(seen.aborts).toHaveLength(1);
    const events = await collect(client.events({ since: 0 }));
    expect(events).toContainEqual(expect.objectContaining({ kind: 'internal:tool-complete', toolName: 'hang', ok: false, failsSwarm: true }));
    const replayer = file.runtime({ swarms, model: forbiddenModel(), store });
    expect(await collect(replayer.replay('f1'))).toEqual(events);
  });

  it("an agent's: the agent stops and the swarm fails; replay makes no call", async () => {
    const { hang, seen } = hangingTool();
    const agent = defineAgent({ id: 'slow-agent', instructions: 'Work.', tools: [hang], timeoutMs: 250, onTimeout: 'fail' });
    const definitions = { swarms: [defineSwarm({ id: 'lead', instructions: 'Delegate.', handoffs: [handoff.toAgent(agent)] })], agents: [agent] };
    const store = file.open();
    const rt = file.runtime({ ...definitions, model: models().model, store });
    const client = rt.forSwarm('lead', 'f2');
    await client.run('go');
    expect(await client.wait()).toEqual({ status: 'failed', reason: `${timedOut(250)} (onTimeout: 'fail')` });
    expect(seen.aborts).toHaveLength(1);
    const events = await collect(client.events({ since: 0 }));
    expect(events).toContainEqual(expect.objectContaining({ metadata: expect.objectContaining({ type: 'handoff-result', failsSwarm: true }) }));
    const replayer = file.runtime({ ...definitions, model: forbiddenModel(), store });
    expect(await collect(replayer.replay('f2'))).toEqual(events);
  });

  it("a tool's, called by an agent: the agent ends with it and the swarm fails", async () => {
    const { hang } = hangingTool();
    const failing = tool({ ...hang, timeoutMs: 200, onTimeout: 'fail' });
    const agent = defineAgent({ id: 'slow-agent', instructions: 'Work.', tools: [failing] });
    const definitions = { swarms: [defineSwarm({ id: 'lead', instructions: 'Delegate.', handoffs: [handoff.toAgent(agent)] })], agents: [agent] };
    const store = file.open();
    const rt = file.runtime({ ...definitions, model: models().model, store });
    const client = rt.forSwarm('lead', 'f3');
    await client.run('go');
    expect(await client.wait()).toEqual({ status: 'failed', reason: `Tool "hang" timed out after 200 ms (timeoutMs) (onTimeout: 'fail')` });
    const events = await collect(client.events({ since: 0 }));
    const replayer = file.runtime({ ...definitions, model: forbiddenModel(), store });
    expect(await collect(replayer.replay('f3'))).toEqual(events);
  });

  it('restored after the deadline passed, the swarm fails at once', async () => {
    const first = hangingTool();
    const swarms = (hang: ReturnType<typeof hangingTool>['hang']) => [
      defineSwarm({ id: 'planner', instructions: 'Plan.', tools: [tool({ ...hang, timeoutMs: 300, onTimeout: 'fail' })] }),
    ];
    const rtA = createRuntime({ swarms: swarms(first.hang), model: callsHang(), store: file.open() });
    await rtA.forSwarm('planner', 'f4').run('go');
    await first.seen.started;
    await rtA.close();
    await sleep(400);
    const second = hangingTool();
    const rtB = file.runtime({ swarms: swarms(second.hang), model: callsHang(), store: file.open() });
    await rtB.start();
    expect(await rtB.forSwarm('planner', 'f4').wait()).toEqual({ status: 'failed', reason: `Tool "hang" timed out after 300 ms (timeoutMs) (onTimeout: 'fail')` });
    expect(second.seen.starts).toEqual([]);
  });

  it("without it (or with 'result') the timeout stays a result; a bad value is refused", async () => {
    const { hang } = hangingTool();
    const rt = file.runtime({
      swarms: [defineSwarm({ id: 'planner', instructions: 'Plan.', tools: [tool({ ...hang, timeoutMs: 150, onTimeout: 'result' })] })],
      model: callsHang(),
      store: file.open(),
    });
    await rt.forSwarm('planner', 'f5').run('go');
    expect(await rt.forSwarm('planner', 'f5').wait()).toEqual({ status: 'completed', result: 'Tool "hang" timed out after 150 ms (timeoutMs)' });
    expect(() => tool({ ...hang, timeoutMs: 150, onTimeout: 'explode' as never })).toThrow(/Tool "hang": onTimeout must be 'result' or 'fail'/);
    expect(() => defineAgent({ id: 'x', instructions: 'X.', onTimeout: 'later' as never })).toThrow(DefinitionError);
  });

  /** A parent that hands off once to `target` and answers with what it read; the child's (or peer's) model waits until aborted. */
  const stalling = () =>
    scriptedModel((req) => {
      if (req.agentId === 'researcher' || req.agentId === 'weather') {
        return new Promise((_resolve, reject) => req.signal.addEventListener('abort', () => reject(req.signal.reason)));
      }
      if (req.messages.some((m) => m.role === 'tool')) return { text: lastToolResult(req) };
      return call(req.tools.find((t) => t.name.startsWith('handoff_to_'))!.name, { request: 'Find out' }, 'h1');
    });

  it("a child swarm handoff's (or, without one, the child definition's): the child is stopped and the parent fails; replay makes no call", async () => {
    const child = defineSwarm({ id: 'researcher', instructions: 'Research.', timeoutMs: 250, onTimeout: 'fail' });
    const store = file.open();
    const byDefinition = [defineSwarm({ id: 'lead', instructions: 'Lead.', handoffs: [handoff.toSwarm(child)] }), child];
    const rt = file.runtime({ swarms: byDefinition, model: stalling(), store });
    await rt.forSwarm('lead', 'c1').run('go');
    expect(await rt.forSwarm('lead', 'c1').wait()).toEqual({
      status: 'failed',
      reason: `Swarm "researcher" (c1:t1:0) was stopped: timed out after 250 ms (timeoutMs) (onTimeout: 'fail')`,
    });
    expect(await rt.forSwarm('researcher', 'c1:t1:0').getResult()).toEqual({ status: 'stopped', reason: 'timed out after 250 ms (timeoutMs)' });
    const events = await collect(rt.forSwarm('lead', 'c1').events({ since: 0 }));
    const replayer = file.runtime({ swarms: byDefinition, model: forbiddenModel(), store });
    expect(await collect(replayer.replay('c1'))).toEqual(events);
    // The handoff's own onTimeout wins over the definition's.
    const byHandoff = [defineSwarm({ id: 'lead', instructions: 'Lead.', handoffs: [handoff.toSwarm(child, { onTimeout: 'result' })] }), child];
    const rt2 = file.runtime({ swarms: byHandoff, model: stalling(), store: file.open() });
    await rt2.forSwarm('lead', 'c2').run('go');
    expect(await rt2.forSwarm('lead', 'c2').wait()).toMatchObject({ status: 'completed', result: expect.stringContaining('timed out after 250 ms (timeoutMs)') });
  });

  it("a remote agent handoff's: the remote task is canceled and the swarm fails", async () => {
    const remote = file.runtime({ swarms: [defineSwarm({ id: 'weather', description: 'Forecasts', instructions: 'Forecast.' })], model: stalling(), store: file.open() });
    const server = await serve(remote, { port: 0 });
    file.track(server);
    const cardUrl = `${server.url}/a2a/weather/.well-known/agent-card.json`;
    const planner = defineSwarm({ id: 'planner', instructions: 'Plan.', handoffs: [handoff.toRemoteAgent(cardUrl, { timeoutMs: 400, onTimeout: 'fail' })] });
    const rt = file.runtime({ swarms: [planner], model: stalling(), store: file.open() });
    await rt.forSwarm('planner', 'r1').run('go');
    expect(await rt.forSwarm('planner', 'r1').wait()).toEqual({
      status: 'failed',
      reason: `The remote agent "weather" (${cardUrl}) timed out after 400 ms (timeoutMs) (onTimeout: 'fail')`,
    });
    expect(() => handoff.toSwarm('x', { onTimeout: 'never' as never })).toThrow(/The handoff to swarm "x": onTimeout must be 'result' or 'fail'/);
  });
});
