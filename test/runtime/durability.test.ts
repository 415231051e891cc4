/**
 * Durability at the runtime level, on a SQLite file: restart and resume, paused swarms across
 * a restart, deterministic replay, versions and corrupt rows, one owner per swarm, pruning.
 */
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import {
  type AgentDefinition,
  defineSwarm,
  factOf,
  ReplayDivergenceError,
  type RuntimeOptions,
  type SwarmDefinition,
  SwarmError,
  scriptedModel,
  tool,
} from '../../src/index.js';
import { exited, firstLine, killAll, startFixture, W1_FIXTURE } from '../support/crash-process.js';
import { forbiddenModel, memoryEffects, readLines, stepLabel, W1_CALLS, W1_RESULT, w1Definitions, w1Model, w1Respond } from '../support/crash-w1.js';
import { askerModel, call, calls, collect, queueModel } from '../support/script.js';
import { sleep } from '../support/sleep.js';
import { until } from '../support/wait.js';
import { oneToN, seqs } from '../support/seqs.js';
import { peek, tamper } from '../support/sqlite-raw.js';
import { sqliteFilePerTest } from '../support/sqlite-file.js';

/**
 * The test's database file; `file.open()` is a new connection to it (as a new process would
 * open it). Closed in reverse order after each test: runtimes before the stores they use.
 */
const file = sqliteFilePerTest('xswarm-durability-', { ignoreCloseErrors: true });
afterAll(killAll);

const runtime = file.runtime;

/** Everything stored about a swarm, as bytes: its row and its events. */
function storedRows(swarmId: string) {
  return {
    row: peek(file.path, `SELECT * FROM swarms WHERE swarm_id = ?`, swarmId),
    events: peek(file.path, `SELECT * FROM events WHERE swarm_id = ? ORDER BY seq`, swarmId),
  };
}

/**
 * A swarm whose model asks a human (`pause`) and then answers with what the human said.
 * Stateless, so any runtime can continue it.
 */
const asker = (version?: number) => defineSwarm({ id: 'asker', ...(version !== undefined ? { version } : {}), instructions: 'Book a day.' });

describe('restart', () => {
  it('a runtime closed mid-run is finished by a new runtime on the same file: right result, one stream, each completed tool once', async () => {
    const effects = memoryEffects();
    const { planner, agents } = w1Definitions(effects);

    const storeA = file.open();
    const modelA = w1Model({ hold: (req) => stepLabel(req) === 'calendar-agent#1' });
    const a = runtime({ swarms: [planner], agents, model: modelA, store: storeA });
    const ca = a.forSwarm(planner, 'trip');
    await ca.run('Plan my Saturday');
    await modelA.held;
    expect(await ca.getResult()).toEqual({
      status: 'running',
      currentTurn: 2,
      maxTurns: 10,
      currentAgent: 'calendar-agent',
      inFlight: [{ callId: 'h1', kind: 'agent', target: 'calendar-agent' }],
    });
    const beforeClose = await storeA.readEvents('trip', 0);
    await a.close();
    await storeA.close();
    // Detached, not finished: the row stays unfinished and its lease was given up.
    expect(peek(file.path, `SELECT status, owner FROM swarms`)).toEqual([{ status: 'awaitingHandoff', owner: null }]);

    const storeB = file.open();
    const modelB = w1Model();
    const b = runtime({ swarms: [planner], agents, model: modelB, store: storeB });
    await b.start();
    const cb = b.forSwarm(planner, 'trip');
    expect(await cb.wait()).toEqual({ status: 'completed', result: W1_RESULT });

    const events = await collect(cb.events({ since: 0 }));
    expect(seqs(events)).toEqual(oneToN(events.length));
    expect(events.slice(0, beforeClose.length)).toEqual(beforeClose);
    expect(events.at(-1)).toMatchObject({ kind: 'status-update', final: true, metadata: { type: 'completed', result: W1_RESULT } });
    // `since` works across the restart boundary.
    expect(await collect(cb.events({ since: beforeClose.length - 2 }))).toEqual(events.slice(beforeClose.length - 2));

    // Only the call in flight at the close ran twice; no completed step ran again.
    expect(modelA.calls()).toEqual(W1_CALLS.slice(0, 6));
    expect(modelB.calls()).toEqual(W1_CALLS.slice(5));
    expect([...effects.runs.values()]).toEqual([1, 1, 1]);
    expect(effects.keys()).toEqual(['trip:t1:h0:weather-agent:t1:t_weather', 'trip:t2:h1:calendar-agent:t1:t_calendar', 'trip:t3:h2:allergen-agent:t1:t_allergen']);

    // The restarted run replays from its journal like any other.
    const replayer = runtime({ swarms: [planner], agents, model: forbiddenModel(), store: storeB });
    expect(await collect(replayer.replay('trip'))).toEqual(events);
  });

  it('a swarm paused by its model survives a restart paused and is resumed from the new runtime', async () => {
    const storeA = file.open();
    const modelA = askerModel();
    const a = runtime({ swarms: [asker()], model: modelA, store: storeA });
    const ca = a.forSwarm(asker(), 'booking');
    await ca.run('Book me in');
    const paused = { status: 'paused', reason: { type: 'HITL', message: 'Which day?', pauseId: 'p1' }, currentTurn: 1, maxTurns: 10 };
    expect(await ca.wait()).toEqual(paused);
    await a.close();

    const modelB = askerModel();
    const b = runtime({ swarms: [asker()], model: modelB, store: file.open() });
    await b.start();
    const cb = b.forSwarm(asker(), 'booking');
    expect(await cb.getResult()).toEqual(paused);
    expect(modelB.requests).toHaveLength(0);
    await cb.resume('Sunday');
    expect(await cb.wait()).toEqual({ status: 'completed', result: 'Booked for Sunday.' });
    expect(modelA.requests).toHaveLength(1);
    expect(modelB.requests).toHaveLength(1);
    // The resumed model call continues the conversation the first runtime started.
    expect(modelB.requests[0]!.messages.slice(0, 2)).toEqual(modelA.requests[0]!.messages);
    const events = await collect(cb.events());
    expect(seqs(events)).toEqual(oneToN(events.length));
    expect(events.map((e) => factOf(e, 'resumed')).find(Boolean)).toEqual({ type: 'resumed', message: 'Sunday' });
  });

  it('a swarm paused from outside during a handoff survives a restart; resume re-runs the aborted agent call only', async () => {
    const effects = memoryEffects();
    const { planner, agents } = w1Definitions(effects);
    const modelA = w1Model({ hold: (req) => stepLabel(req) === 'weather-agent#1' });
    const a = runtime({ swarms: [planner], agents, model: modelA, store: file.open() });
    const ca = a.forSwarm(planner, 'trip');
    await ca.run('Plan my Saturday');
    await modelA.held;
    await ca.pause({ type: 'EMERGENCY', message: 'hold everything' });
    expect(await ca.getResult()).toMatchObject({ status: 'paused', reason: { type: 'EMERGENCY', message: 'hold everything' } });
    await a.close();

    const modelB = w1Model();
    const b = runtime({ swarms: [planner], agents, model: modelB, store: file.open() });
    await b.start();
    const cb = b.forSwarm(planner, 'trip');
    expect(await cb.getResult()).toEqual({
      status: 'paused',
      // Paused from outside during the first handoff round: the machine names it.
      reason: { type: 'EMERGENCY', message: 'hold everything', pauseId: 'pause:t1:1' },
      currentTurn: 1,
      maxTurns: 10,
    });
    await sleep(30);
    expect(modelB.requests).toHaveLength(0);
    await cb.resume();
    expect(await cb.wait()).toEqual({ status: 'completed', result: W1_RESULT });
    expect(modelB.calls()).toEqual(W1_CALLS.slice(2));
    expect([...effects.runs.values()]).toEqual([1, 1, 1]);
  });
});

describe('replay', () => {
  /**
   * Replays a finished swarm in a fresh runtime on a new connection whose model throws, and
   * checks it yields exactly the stored events (timestamps included) with zero model calls and
   * zero tool executions.
   */
  async function expectReplay(options: Omit<RuntimeOptions, 'model' | 'store'>, swarmId: string, toolRuns: () => number) {
    const store = file.open();
    const stored = await store.readEvents(swarmId, 0);
    expect(stored.length).toBeGreaterThan(3);
    const model = forbiddenModel();
    const runsBefore = toolRuns();
    const rt = runtime({ ...options, model, store });
    const replayed = await collect(rt.replay(swarmId));
    expect(replayed).toEqual(stored);
    expect(model.attempts).toBe(0);
    expect(toolRuns()).toBe(runsBefore);
    return stored;
  }

  it('W1 (three agent handoffs with tools)', async () => {
    const effects = memoryEffects();
    const { planner, agents } = w1Definitions(effects);
    const rt = runtime({ swarms: [planner], agents, model: w1Model(), store: file.open() });
    const c = rt.forSwarm(planner, 'w1');
    await c.run('Plan my Saturday');
    expect(await c.wait()).toEqual({ status: 'completed', result: W1_RESULT });
    const live = await collect(c.events());
    const runs = () => [...effects.runs.values()].reduce((a, b) => a + b, 0);
    expect(runs()).toBe(3);
    const stored = await expectReplay({ swarms: [planner], agents }, 'w1', runs);
    expect(stored).toEqual(live);
  });

  it('parallel tools completing out of call order', async () => {
    let runs = 0;
    const slow = tool({
      name: 'slow',
      description: 'slow',
      parameters: z.object({ n: z.number() }),
      execute: async ({ n }) => {
        runs++;
        await sleep(40);
        return `slow ${n}`;
      },
    });
    const fast = tool({
      name: 'fast',
      description: 'fast',
      parameters: z.object({ n: z.number() }),
      execute: ({ n }) => {
        runs++;
        return `fast ${n}`;
      },
    });
    const s = defineSwarm({ id: 'par', instructions: 'go', tools: [slow, fast] });
    const model = queueModel({ par: [calls(['slow', { n: 1 }, 'a'], ['fast', { n: 2 }, 'b'], ['fast', { n: 3 }, 'c']), { text: 'all done' }] });
    const rt = runtime({ swarms: [s], model, store: file.open() });
    const c = rt.forSwarm(s, 'par-1');
    await c.run('x');
    expect(await c.wait()).toEqual({ status: 'completed', result: 'all done' });
    const stored = await expectReplay({ swarms: [s] }, 'par-1', () => runs);
    // The journal really has completions out of call order, which the replay had to follow.
    const completed = stored.filter((e) => e.kind === 'internal:tool-complete').map((e) => (e as { callId: string }).callId);
    expect(completed.indexOf('a')).toBe(2);
  });

  it('a model pause answered by resume', async () => {
    const model = askerModel();
    const rt = runtime({ swarms: [asker()], model, store: file.open() });
    const c = rt.forSwarm(asker(), 'ask-1');
    await c.run('Book me in');
    await c.wait();
    await c.resume('Friday');
    expect(await c.wait()).toEqual({ status: 'completed', result: 'Booked for Friday.' });
    await expectReplay({ swarms: [asker()] }, 'ask-1', () => 0);
  });

  it('an external pause during a model call, then resume with a message', async () => {
    const model = queueModel({
      s: [
        async (req) => {
          await sleep(5_000, req.signal);
          return { text: 'too late' };
        },
        { text: 'resumed answer' },
      ],
    });
    const s = defineSwarm({ id: 's', instructions: 'go' });
    const rt = runtime({ swarms: [s], model, store: file.open() });
    const c = rt.forSwarm(s, 'ext-1');
    await c.run('x');
    await until('the model call', () => model.requests.length === 1);
    await c.pause({ type: 'EMERGENCY', message: 'hold on' });
    await c.resume('please be brief');
    expect(await c.wait()).toEqual({ status: 'completed', result: 'resumed answer' });
    expect(model.requests).toHaveLength(2);
    await expectReplay({ swarms: [s] }, 'ext-1', () => 0);
  });

  // BUG replay-stopped-run: the machine's `stop` action emits [internal:checkpoint 'stop',
  // status-update 'stopped'], checkpoint first; replay's pump only sends STOP when the next
  // recorded event is the 'stopped' status-update, so it stalls on the checkpoint. Every stopped
  // swarm fails to replay: ReplayDivergenceError "diverged at event N: stalled waiting for
  // {"kind":"internal:checkpoint","step":"stop"}". Expected: the recorded events.
  it('stopped runs (during a model call, while paused, during a handoff)', async () => {
    const effects = memoryEffects();
    const { planner, agents } = w1Definitions(effects);
    const model = w1Model({
      hold: (req) => (req.swarmId === 'stop-thinking' && stepLabel(req) === 'planner#0') || (req.swarmId === 'stop-handoff' && stepLabel(req) === 'calendar-agent#1'),
    });
    const asking = asker();
    const rt = runtime({ swarms: [planner, asking], agents, model, store: file.open() });

    const thinking = rt.forSwarm(planner, 'stop-thinking');
    await thinking.run('x');
    await until('the first model call', () => model.calls('stop-thinking').length === 1);
    await thinking.stop('user cancelled');
    expect(await thinking.getResult()).toEqual({ status: 'stopped', reason: 'user cancelled' });

    const handing = rt.forSwarm(planner, 'stop-handoff');
    await handing.run('y');
    await until('the calendar agent', () => model.calls('stop-handoff').includes('calendar-agent#1'));
    await handing.stop('enough');
    expect(await handing.getResult()).toEqual({ status: 'stopped', reason: 'enough' });

    const pausedModel = askerModel();
    const rt2 = runtime({ swarms: [asking], model: pausedModel, store: file.open() });
    const paused = rt2.forSwarm(asking, 'stop-paused');
    await paused.run('z');
    await paused.wait();
    await paused.stop('not needed');
    expect(await paused.getResult()).toEqual({ status: 'stopped', reason: 'not needed' });

    const runs = () => effects.keys().length;
    for (const id of ['stop-thinking', 'stop-handoff']) await expectReplay({ swarms: [planner], agents }, id, runs);
    await expectReplay({ swarms: [asking] }, 'stop-paused', () => 0);
  });

  it('a typed result with a correction round, and a failed run', async () => {
    const typed = defineSwarm({
      id: 'typed',
      instructions: 'plan',
      result: z.object({ day: z.string(), activities: z.array(z.string()) }),
    });
    const model = queueModel({
      typed: [{ text: 'Saturday, hiking' }, call('complete', { result: { day: 1 } }, 'bad'), { text: '{"day":"Sat","activities":["hike"]}' }],
      failing: [call('fail', { reason: 'no tickets left' })],
    });
    const failing = defineSwarm({ id: 'failing', instructions: 'try' });
    const rt = runtime({ swarms: [typed, failing], model, store: file.open() });
    const c = rt.forSwarm(typed, 'typed-1');
    await c.run('x');
    expect(await c.wait()).toEqual({ status: 'completed', result: { day: 'Sat', activities: ['hike'] } });
    const f = rt.forSwarm(failing, 'failed-1');
    await f.run('x');
    expect(await f.wait()).toEqual({ status: 'failed', reason: 'no tickets left' });
    await expectReplay({ swarms: [typed, failing] }, 'typed-1', () => 0);
    await expectReplay({ swarms: [typed, failing] }, 'failed-1', () => 0);
  });

  it('streamed text chunks (events-only commits) are part of the replayed stream', async () => {
    const s = defineSwarm({ id: 'streamer', instructions: 'go' });
    const model = scriptedModel(async (req) => {
      // A pause longer than the host's chunk window: the first chunk is committed on its own.
      req.onText?.('Go ');
      await sleep(60);
      req.onText?.('hiking');
      await sleep(1);
      req.onText?.('.');
      return { text: 'Go hiking.' };
    });
    const rt = runtime({ swarms: [s], model, store: file.open() });
    const c = rt.forSwarm(s, 'stream-1');
    await c.run('x');
    expect(await c.wait()).toEqual({ status: 'completed', result: 'Go hiking.' });
    const stored = await expectReplay({ swarms: [s] }, 'stream-1', () => 0);
    const chunks = stored.filter((e) => e.kind === 'artifact-update' && e.artifact.name === 'stream');
    expect(chunks.length).toBeGreaterThanOrEqual(2);
    const text = chunks.map((e) => (e as { artifact: { parts: { text: string }[] } }).artifact.parts.map((p) => p.text).join(''));
    expect(text.join('')).toBe('Go hiking.');
  });

  it('refuses unknown and unfinished swarms', async () => {
    const model = askerModel();
    const rt = runtime({ swarms: [asker()], model, store: file.open() });
    const c = rt.forSwarm(asker(), 'waiting');
    await c.run('x');
    await c.wait();
    await expect(collect(rt.replay('waiting'))).rejects.toThrow('Cannot replay swarm "waiting": it is paused, not finished');
    await expect(collect(rt.replay('nope'))).rejects.toMatchObject({ name: 'SwarmError', code: 'unknown-swarm', message: 'Unknown swarm "nope"' });
  });

  it('a journal that no longer matches what the machine produces is a ReplayDivergenceError at that event', async () => {
    const effects = memoryEffects();
    const { planner, agents } = w1Definitions(effects);
    const rt = runtime({ swarms: [planner], agents, model: w1Model(), store: file.open() });
    const c = rt.forSwarm(planner, 'w1');
    await c.run('Plan my Saturday');
    await c.wait();
    await rt.close();
    const handoffEvent = (await collect(c.events())).find((e) => factOf(e, 'agent-handoff')?.to === 'calendar-agent')!;
    const body = JSON.parse(peek<{ body: string }>(file.path, `SELECT body FROM events WHERE swarm_id = 'w1' AND seq = ?`, handoffEvent.seq)[0]!.body);
    body.metadata.request = 'edited after the fact';
    tamper(file.path, `UPDATE events SET body = ? WHERE swarm_id = 'w1' AND seq = ?`, JSON.stringify(body), handoffEvent.seq);

    const replayer = runtime({ swarms: [planner], agents, model: forbiddenModel(), store: file.open() });
    const error = await collect(replayer.replay('w1')).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ReplayDivergenceError);
    expect(error).toMatchObject({ swarmId: 'w1', seq: handoffEvent.seq });
    expect((error as Error).message).toMatch(/edited after the fact/);
  });

  it('swarms recorded before pauses had ids and before a turn limit paused replay as they were recorded', async () => {
    // A pause and its answer; then a swarm that failed at its limit (what every swarm did then).
    const note = tool({ name: 'note', description: 'n', parameters: z.object({}), execute: () => 'noted' });
    const capped = defineSwarm({ id: 'capped', instructions: 'Note.', tools: [note], maxTurns: 2, onLimit: 'fail' });
    const ask = askerModel();
    const model = scriptedModel((req) => (req.agentId === 'capped' ? { toolCalls: [{ id: `n${req.messages.length}`, name: 'note', arguments: '{}' }] } : ask.call(req)));
    const rt = runtime({ swarms: [asker(), capped], model, store: file.open() });
    const a = rt.forSwarm('asker', 'old-pause');
    await a.run('Book a day');
    await a.wait();
    await a.resume('Sunday');
    await a.wait();
    const b = rt.forSwarm('capped', 'old-limit');
    await b.run('go');
    expect(await b.wait()).toEqual({ status: 'failed', reason: 'maxTurns (2) reached without a result' });
    await rt.close();

    // Made as the older code stored them: no pause id, no onLimit in the configuration.
    const paused = (await collect(a.events())).find((e) => factOf(e, 'paused'))!;
    const body = JSON.parse(peek<{ body: string }>(file.path, `SELECT body FROM events WHERE swarm_id = 'old-pause' AND seq = ?`, paused.seq)[0]!.body);
    expect(body.metadata.reason.pauseId).toBeDefined();
    delete body.metadata.reason.pauseId;
    tamper(file.path, `UPDATE events SET body = ? WHERE swarm_id = 'old-pause' AND seq = ?`, JSON.stringify(body), paused.seq);
    // The configuration is stored once per swarm (a row of its own): the older snapshot is
    // served through the store's `load`, as the older code stored it, without `onLimit`.
    const stored = file.open();
    const olderConfig = new Proxy(stored, {
      get(target, key) {
        if (key === 'load') {
          return async (id: string) => {
            const record = await target.load(id);
            if (id === 'old-limit') delete (record!.snapshot as { context: { config: { onLimit?: string } } }).context.config.onLimit;
            return record;
          };
        }
        const value = Reflect.get(target, key);
        return typeof value === 'function' ? value.bind(target) : value;
      },
    });
    const replayer = runtime({ swarms: [asker(), capped], model: forbiddenModel(), store: olderConfig });
    for (const id of ['old-pause', 'old-limit']) expect(await collect(replayer.replay(id))).toEqual(await stored.readEvents(id, 0));
  });

  // BUG replay-ignores-definitions: `runtime.replay` calls `replaySwarm(store, id)`, which never
  // sees the runtime's registry: planned calls and verdicts come from the journal and the config
  // from the stored snapshot, so a definition change (tool schema, result schema) cannot
  // diverge. Expected: ReplayDivergenceError; actual: the replay succeeds.
  it('a tool whose schema now rejects the recorded arguments diverges', async () => {
    const forecast = (day: z.ZodType) => tool({ name: 'forecast', description: 'f', parameters: z.object({ day }), execute: ({ day: d }) => `${String(d)}: sunny` });
    const v1 = defineSwarm({ id: 'weather', instructions: 'go', tools: [forecast(z.string())] });
    const model = queueModel({ weather: [call('forecast', { day: 'Saturday' }, 'f1'), { text: 'Sunny.' }] });
    const rt = runtime({ swarms: [v1], model, store: file.open() });
    const c = rt.forSwarm(v1, 'wx');
    await c.run('x');
    await c.wait();
    const v2 = defineSwarm({ id: 'weather', instructions: 'go', tools: [forecast(z.enum(['Sunday']))] });
    const replayer = runtime({ swarms: [v2], model: forbiddenModel(), store: file.open() });
    await expect(collect(replayer.replay('wx'))).rejects.toBeInstanceOf(ReplayDivergenceError);
  });

  it('replay against a runtime with a different result schema diverges', async () => {
    const v1 = defineSwarm({ id: 'typed', instructions: 'go', result: z.object({ day: z.string() }) });
    const model = queueModel({ typed: [{ text: '{"day":"Sat"}' }] });
    const rt = runtime({ swarms: [v1], model, store: file.open() });
    const c = rt.forSwarm(v1, 't1');
    await c.run('x');
    expect(await c.wait()).toEqual({ status: 'completed', result: { day: 'Sat' } });
    const v2 = defineSwarm({ id: 'typed', instructions: 'go', result: z.object({ day: z.number() }) });
    const replayer = runtime({ swarms: [v2], model: forbiddenModel(), store: file.open() });
    await expect(collect(replayer.replay('t1'))).rejects.toBeInstanceOf(ReplayDivergenceError);
  });
});

describe('versions and corruption', () => {
  /**
   * Leaves two unfinished swarms in the store: `victim` (asker, paused by its model) and
   * `healthy` (W1, in the middle of the calendar handoff).
   */
  async function twoUnfinished() {
    const effects = memoryEffects();
    const { planner, agents } = w1Definitions(effects);
    const model = w1Model({ hold: (req) => stepLabel(req) === 'calendar-agent#0' });
    const askModel = askerModel();
    const store = file.open();
    const a = runtime({ swarms: [planner], agents, model, store });
    const a2 = runtime({ swarms: [asker()], model: askModel, store });
    const victim = a2.forSwarm(asker(), 'victim');
    await victim.run('x');
    expect((await victim.wait()).status).toBe('paused');
    await a.forSwarm(planner, 'healthy').run('Plan my Saturday');
    await model.held;
    await a.close();
    await a2.close();
    return { effects, planner, agents };
  }

  /** Starts a runtime with `askerDef` next to W1 and checks the victim fails, untouched, while W1 finishes. */
  async function expectReportedFailed(
    askerDef: ReturnType<typeof asker>,
    setup: { planner: SwarmDefinition<any, any>; agents: readonly AgentDefinition[] },
    reason: RegExp,
  ) {
    const before = storedRows('victim');
    const model = w1Model();
    const askModel = askerModel();
    const store = file.open();
    // Short lease: the adoption loop runs many times during the test, and must keep its hands off.
    const both = scriptedModel((req) => (req.agentId === 'asker' ? askModel.call(req) : model.call(req)));
    const b = runtime({ swarms: [setup.planner, askerDef], agents: setup.agents, model: both, store, leaseMs: 100 });
    await b.start();
    const victim = b.forSwarm(askerDef, 'victim');
    const result = await victim.getResult();
    expect(result.status).toBe('failed');
    expect((result as { reason: string }).reason).toMatch(reason);
    expect((result as { reason: string }).reason).toContain('"victim"');
    expect(await victim.wait()).toEqual(result);
    await expect(victim.resume('Monday')).rejects.toThrow(SwarmError);
    await expect(victim.resume('Monday')).rejects.toThrow(reason);

    expect(await b.forSwarm(setup.planner, 'healthy').wait()).toEqual({ status: 'completed', result: W1_RESULT });
    await sleep(250);
    expect(askModel.requests).toHaveLength(0);
    expect(storedRows('victim')).toEqual(before);
    return result;
  }

  // Issue 31 (deploys) changed this: such a record used to read failed; it now waits, in its
  // stored status, naming the version it needs, until a runtime that has it adopts it.
  it('a record from another definition version (no migrate) waits naming the version; its row is untouched; others go on', async () => {
    const setup = await twoUnfinished();
    const before = storedRows('victim');
    const askModel = askerModel();
    const both = scriptedModel((req) => (req.agentId === 'asker' ? askModel.call(req) : w1Model().call(req)));
    const b = runtime({ swarms: [setup.planner, asker(2)], agents: setup.agents, model: both, store: file.open(), leaseMs: 100 });
    await b.start();
    const victim = b.forSwarm(asker(2), 'victim');
    const result = await victim.getResult();
    expect(result).toMatchObject({ status: 'paused', waitingFor: 'asker@1' });
    expect((result as { waitingReason: string }).waitingReason).toMatch(/"asker" version 1 is not registered with this runtime \(it has version 2\)/);
    await expect(victim.resume('Monday')).rejects.toThrow(/asker@1/);
    expect(await b.forSwarm(setup.planner, 'healthy').wait()).toEqual({ status: 'completed', result: W1_RESULT });
    await sleep(250);
    expect(askModel.requests).toHaveLength(0);
    expect(storedRows('victim')).toEqual(before);
    await b.close();
    // The same data is still usable by the code that wrote it.
    const model = askerModel();
    const c = runtime({ swarms: [asker()], model, store: file.open() });
    await c.start();
    await c.forSwarm(asker(), 'victim').resume('Tuesday');
    expect(await c.forSwarm(asker(), 'victim').wait()).toEqual({ status: 'completed', result: 'Booked for Tuesday.' });
  });

  it('a corrupt snapshot row is reported failed naming the problem; its row is untouched; others go on', async () => {
    const setup = await twoUnfinished();
    tamper(file.path, `UPDATE swarms SET snapshot = 'not json' WHERE swarm_id = 'victim'`);
    await expectReportedFailed(asker(), setup, /stored snapshot is corrupt/);
  });

  it('a snapshot written by another machine version is reported failed naming it; its row is untouched; others go on', async () => {
    const setup = await twoUnfinished();
    tamper(file.path, `UPDATE swarms SET machine_version = 999 WHERE swarm_id = 'victim'`);
    await expectReportedFailed(asker(), setup, /machine version 999, this runtime runs version 2/);
  });

  it('a snapshot that is JSON but not a machine snapshot is reported failed; others go on', async () => {
    const setup = await twoUnfinished();
    tamper(file.path, `UPDATE swarms SET snapshot = '{"status":"active","value":"nowhere","context":{}}' WHERE swarm_id = 'victim'`);
    const before = storedRows('victim');
    const b = runtime({ swarms: [setup.planner, asker()], agents: setup.agents, model: w1Model(), store: file.open(), leaseMs: 100 });
    await b.start();
    const result = await b.forSwarm(asker(), 'victim').getResult();
    expect(result).toMatchObject({ status: 'failed' });
    expect((result as { reason: string }).reason).toMatch(/^Cannot restore swarm "victim": /);
    expect(await b.forSwarm(setup.planner, 'healthy').wait()).toEqual({ status: 'completed', result: W1_RESULT });
    // Snapshot, events and status are as they were (the claim may have recorded an owner).
    const after = storedRows('victim');
    const data = (rows: typeof before) => ({ ...rows, row: rows.row.map((r) => ({ ...(r as object), owner: null, lease_until: 0 })) });
    expect(data(after)).toEqual(data(before));
  });
});

describe('one owner', () => {
  it('two runtimes starting on the same file drive each unfinished swarm exactly once', async () => {
    const effects = memoryEffects();
    const { planner, agents } = w1Definitions(effects);
    const ids = ['s1', 's2', 's3', 's4', 's5', 's6'];
    const model0 = w1Model({ hold: (req) => stepLabel(req) === 'calendar-agent#1' });
    const r0 = runtime({ swarms: [planner], agents, model: model0, store: file.open() });
    for (const id of ids) await r0.forSwarm(planner, id).run('Plan my Saturday');
    await until('all swarms at the calendar agent', () => ids.every((id) => model0.calls(id).includes('calendar-agent#1')));
    await r0.close();

    const modelB = w1Model();
    const modelC = w1Model();
    // Short leases so that the adoption loops tick during the test (every 750 ms).
    const b = runtime({ swarms: [planner], agents, model: modelB, store: file.open(), leaseMs: 1_500 });
    const c = runtime({ swarms: [planner], agents, model: modelC, store: file.open(), leaseMs: 1_500 });
    await Promise.all([b.start(), c.start()]);
    await until('all swarms completed', () => peek(file.path, `SELECT status FROM swarms WHERE status = 'completed'`).length === ids.length);
    for (const id of ids) {
      expect(await b.forSwarm(planner, id).getResult(), id).toEqual({ status: 'completed', result: W1_RESULT });
    }
    // Let the adoption loops tick again.
    await sleep(800);
    for (const id of ids) {
      const byB = modelB.calls(id);
      const byC = modelC.calls(id);
      expect(
        [byB, byC].filter((x) => x.length > 0),
        id,
      ).toHaveLength(1);
      expect([...byB, ...byC], id).toEqual(W1_CALLS.slice(5));
      const events = peek<{ seq: number }>(file.path, `SELECT seq FROM events WHERE swarm_id = ? ORDER BY seq`, id).map((r) => r.seq);
      expect(events, id).toEqual(oneToN(events.length));
    }
    expect([...effects.runs.values()]).toEqual(Array(ids.length * 3).fill(1));
  });

  it('run with an id the other runtime already uses fails clearly and starts nothing', async () => {
    const { planner, agents } = w1Definitions(memoryEffects());
    const modelB = w1Model({ hold: (req) => stepLabel(req) === 'weather-agent#0' });
    const modelC = w1Model();
    const b = runtime({ swarms: [planner], agents, model: modelB, store: file.open() });
    const c = runtime({ swarms: [planner], agents, model: modelC, store: file.open() });
    await b.start();
    await c.start();
    await b.forSwarm(planner, 'mine').run('Plan my Saturday');
    await expect(c.forSwarm(planner, 'mine').run('Plan my Sunday')).rejects.toMatchObject({
      name: 'SwarmError',
      code: 'id-in-use',
      message: 'Swarm id "mine" is already in use',
    });
    await modelB.held;
    expect(modelC.requests).toHaveLength(0);
    expect(peek(file.path, `SELECT count(*) AS n FROM swarms`)).toEqual([{ n: 1 }]);
    const events = await b.store.readEvents('mine', 0);
    expect(events[0]).toMatchObject({ kind: 'task', history: [{ parts: [{ kind: 'text', text: 'Plan my Saturday' }] }] });
  });

  it('after an owner process on another host dies (SIGKILL, no release), a started runtime adopts the swarm once the lease expired', async () => {
    const effectsFile = join(file.dir, 'effects.txt');
    const effects = memoryEffects();
    const { planner, agents } = w1Definitions(effects);
    const store = file.open();
    const modelB = w1Model();
    const b = runtime({ swarms: [planner], agents, model: modelB, store, leaseMs: 200 });
    await b.start();

    const child = startFixture(W1_FIXTURE, [file.path, effectsFile, 'orphan', 'hold'], { HOLD_AT: 'calendar-agent#1', LEASE_MS: '1500' });
    const held = await firstLine<{ held: string }>(child);
    expect(held.held).toBe('calendar-agent#1');
    // The owner is alive and renewing (every 500 ms): B must keep its hands off for longer
    // than a whole lease.
    await sleep(1_700);
    expect(modelB.calls('orphan')).toEqual([]);
    const { owner } = peek<{ owner: string }>(file.path, `SELECT owner FROM swarms WHERE swarm_id = 'orphan'`)[0]!;
    expect(owner).toBeTruthy();
    // As if the owner ran on another host: its death cannot be seen from here, so its lease is
    // waited out (a dead owner of this host is taken over at once: test/leases/owner-restart.test.ts).
    const raw = new Database(file.path);
    raw.prepare(`UPDATE swarms SET owner_host = 'elsewhere' WHERE swarm_id = 'orphan'`).run();
    raw.close();

    const leaseUntil = peek<{ lease_until: number }>(file.path, `SELECT lease_until FROM swarms WHERE swarm_id = 'orphan'`)[0]!.lease_until;
    child.kill('SIGKILL');
    await exited(child);
    const client = b.forSwarm(planner, 'orphan');
    await until('B adopts the orphan', () => modelB.calls('orphan').length > 0, { timeout: 5_000 });
    // Not before the dead owner's lease ran out.
    expect(Date.now()).toBeGreaterThanOrEqual(leaseUntil);
    expect(await client.wait()).toEqual({ status: 'completed', result: W1_RESULT });

    expect(modelB.calls('orphan')).toEqual(W1_CALLS.slice(5));
    const keys = [...readLines(effectsFile), ...effects.keys()];
    expect(keys).toEqual(['orphan:t1:h0:weather-agent:t1:t_weather', 'orphan:t2:h1:calendar-agent:t1:t_calendar', 'orphan:t3:h2:allergen-agent:t1:t_allergen']);
    const events = await collect(client.events());
    expect(seqs(events)).toEqual(oneToN(events.length));
    expect(peek(file.path, `SELECT owner FROM swarms WHERE swarm_id = 'orphan'`)).not.toEqual([{ owner }]);
  });
});

describe('lease lost', () => {
  it('a runtime whose lease was taken over stops driving the swarm: nothing more is written or run', async () => {
    const effects = memoryEffects();
    const { planner, agents } = w1Definitions(effects);
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const requests: string[] = [];
    const model = scriptedModel(async (req) => {
      requests.push(stepLabel(req));
      if (stepLabel(req) === 'weather-agent#0') await gate;
      return w1Respond(req);
    });
    const a = runtime({ swarms: [planner], agents, model, store: file.open() });
    await a.forSwarm(planner, 'trip').run('Plan my Saturday');
    await until('the weather agent', () => requests.includes('weather-agent#0'));
    const before = storedRows('trip');

    // Another owner takes the swarm over (as if A had stopped renewing long ago).
    const thief = file.open();
    expect(await thief.claim('trip', { owner: 'thief', until: Date.now() + 60_000 }, Date.now() + 3_600_000)).toBe(true);
    release();
    await sleep(100);

    // A's next commit was refused: it ran nothing after it (the tool never executed).
    expect(requests).toEqual(['planner#0', 'weather-agent#0']);
    expect(effects.keys()).toEqual([]);
    const after = storedRows('trip');
    expect(after.events).toEqual(before.events);
    expect(after.row).toEqual([{ ...(before.row[0] as object), owner: 'thief', lease_until: expect.any(Number), owner_host: null, owner_pid: null }]);
  });

  // BUG wait-not-live: `wait()` on a swarm that is unfinished in the store but not (yet) driven
  // by this runtime (its dead owner's lease has not expired; the runtime adopts it later)
  // resolves at once with `{ status: 'running', ... }`, although it is documented to resolve
  // "once the swarm is paused or has ended". Expected: it waits until this runtime adopted and
  // finished the swarm ({ status: 'completed' }).
  it('wait() on a swarm awaiting adoption waits for its end', async () => {
    const { planner, agents } = w1Definitions(memoryEffects());
    const storeA = file.open();
    const modelA = w1Model({ hold: (req) => stepLabel(req) === 'calendar-agent#1' });
    const a = runtime({ swarms: [planner], agents, model: modelA, store: storeA, leaseMs: 400 });
    await a.forSwarm(planner, 'trip').run('Plan my Saturday');
    await modelA.held;
    // A dies without releasing its lease: its store goes away before it can.
    await storeA.close();
    await a.close();
    const b = runtime({ swarms: [planner], agents, model: w1Model(), store: file.open(), leaseMs: 100 });
    await b.start();
    expect(await b.forSwarm(planner, 'trip').wait()).toEqual({ status: 'completed', result: W1_RESULT });
  });
});

describe('prune', () => {
  it('finished swarms older than the cutoff lose result and events; unfinished ones are untouched', async () => {
    const echo = defineSwarm({ id: 'echo', instructions: 'Repeat.' });
    const model = scriptedModel((req) => (req.agentId === 'asker' ? askerModel().call(req) : { text: `echo ${req.messages.at(-1)!.content}` }));
    const rt = runtime({ swarms: [echo, asker()], model, store: file.open() });
    const run = async (def: typeof echo, id: string) => {
      const c = rt.forSwarm(def, id);
      await c.run(id);
      return c.wait();
    };
    expect(await run(echo, 'old')).toEqual({ status: 'completed', result: 'echo old' });
    expect((await run(asker(), 'waiting')).status).toBe('paused');
    await sleep(15);
    const cutoff = Date.now();
    await sleep(15);
    expect(await run(echo, 'new')).toEqual({ status: 'completed', result: 'echo new' });
    const waitingBefore = storedRows('waiting');

    expect(await rt.prune({ olderThan: cutoff })).toBe(1);
    await expect(rt.forSwarm(echo, 'old').getResult()).rejects.toMatchObject({ name: 'SwarmError', code: 'unknown-swarm', message: 'Unknown swarm "old"' });
    await expect(collect(rt.forSwarm(echo, 'old').events())).rejects.toThrow('Unknown swarm "old"');
    expect(peek(file.path, `SELECT count(*) AS n FROM events WHERE swarm_id = 'old'`)).toEqual([{ n: 0 }]);
    expect(await rt.forSwarm(echo, 'new').getResult()).toEqual({ status: 'completed', result: 'echo new' });

    // A cutoff in the future takes every finished swarm, and still no unfinished one.
    expect(await rt.prune({ olderThan: new Date(Date.now() + 60_000) })).toBe(1);
    expect(peek(file.path, `SELECT swarm_id FROM swarms`)).toEqual([{ swarm_id: 'waiting' }]);
    expect(storedRows('waiting')).toEqual(waitingBefore);
    const waiting = rt.forSwarm(asker(), 'waiting');
    await waiting.resume('Monday');
    expect(await waiting.wait()).toEqual({ status: 'completed', result: 'Booked for Monday.' });
    // The ids of pruned swarms can be used again.
    expect(await run(echo, 'old')).toEqual({ status: 'completed', result: 'echo old' });
  });
});
