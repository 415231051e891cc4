/**
 * Runtimes serving each other through the transport seam, in one process: a shared in-process
 * bus (`localTransport`) and one store, as runtimes on one NATS share JetStream. The
 * hosting protocol — handoffs to definitions another runtime hosts, their cards, the deadline
 * for a target nobody hosts, `forSwarm` from a runtime without the definition, commands relayed
 * to the runtime holding a swarm — is the same over NATS (test/distribution/distributed-nats.test.ts).
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import {
  createRuntime,
  DefinitionError,
  defineSwarm,
  defineTeam,
  handoff,
  LocalBus,
  localTransport,
  type ModelRequest,
  type Runtime,
  type RuntimeOptions,
  memoryStore,
  scriptedModel,
  SwarmError,
  type SwarmStore,
  type TeamFact,
} from '../../src/index.js';
import { subjectToken } from '../../src/transport/types.js';
import { call, collect, queueModel } from '../support/script.js';
import { weatherAndPlanner } from '../support/weather-planner.js';
import { until } from '../support/wait.js';

let bus: LocalBus;
let store: SwarmStore;
const runtimes: Runtime[] = [];

beforeEach(() => {
  bus = new LocalBus();
  store = memoryStore();
});

afterEach(async () => {
  for (const r of runtimes.splice(0)) await r.close();
});

/**
 * A runtime on the shared bus and store, started (unless `start` is false: it then serves other
 * runtimes' calls but never scans the store for swarms to adopt).
 */
async function runtime(options: Omit<RuntimeOptions, 'store' | 'transport'>, start = true): Promise<Runtime> {
  const r = createRuntime({
    ...options,
    store,
    transport: localTransport(bus),
    hosting: { deadlineMs: 400, heartbeatMs: 50, heartbeatTimeoutMs: 300, ...options.hosting },
  });
  runtimes.push(r);
  if (start) await r.start();
  return r;
}

const forecasts: string[] = [];
const { weather, planner } = weatherAndPlanner((key) => forecasts.push(key));

describe('handoffs to definitions another runtime hosts', () => {
  it('runs a handoff to an agent hosted by a worker runtime: the worker persists its steps, the parent gets its answer', async () => {
    forecasts.length = 0;
    const workerModel = queueModel({
      weather: [call('get_forecast', { day: 'Saturday' }), { text: 'Saturday: sunny' }],
    });
    await runtime({ agents: [weather], model: workerModel });
    const orchestratorModel = queueModel({
      planner: [call('handoff_to_weather', { request: 'Weather on Saturday?' }, 'h1'), (req) => ({ text: `Plan: ${req.messages.at(-1)?.content}` })],
    });
    const home = await runtime({ swarms: [planner], model: orchestratorModel });
    const client = home.forSwarm(planner, 'trip');
    await client.run('Plan Saturday');
    expect(await client.wait()).toEqual({ status: 'completed', result: 'Plan: Saturday: sunny' });
    // The model of the worker was asked as the agent, with the agent's own tools.
    expect(workerModel.requests.map((r) => r.agentId)).toEqual(['weather', 'weather']);
    expect(workerModel.requests[0]!.tools.map((t) => t.name)).toContain('get_forecast');
    // The handoff's tool carried the description given at definition time.
    expect(orchestratorModel.requests[0]!.tools.find((t) => t.name === 'handoff_to_weather')?.description).toBe('Asks the weather agent');
    expect(forecasts).toHaveLength(1);
    // The call's keep-alive ended with it: nobody listens to the child's heartbeats any more
    // (the shared subscription is let go one macrotask after its last listener left).
    await new Promise((resolve) => setImmediate(resolve));
    expect(bus.receivers(`xswarm.beat.${subjectToken('trip:t1:0')}`)).toEqual([]);
    // The agent ran as a swarm of its own, under the call's derived id, durable in the store.
    const child = (await home.list()).find((s) => s.definitionId === 'xswarm.agent.weather');
    expect(child).toMatchObject({ swarmId: 'trip:t1:0', status: 'completed' });
    const events = await collect(home.forSwarm('planner', 'trip').events());
    expect(events.some((e) => e.kind === 'status-update' && e.metadata.type === 'child-swarm' && e.metadata.lifecycle === 'completed')).toBe(true);
  });

  it('moves a hosted call to another worker when its worker leaves mid-handoff: completed steps do not run again', async () => {
    forecasts.length = 0;
    let leave!: () => void;
    const left = new Promise<void>((resolve) => (leave = resolve));
    // The first worker forecasts, then leaves while its model thinks about the answer.
    const first = await runtime({
      agents: [weather],
      model: queueModel({
        weather: [
          call('get_forecast', { day: 'Saturday' }),
          () => {
            leave();
            return new Promise(() => undefined);
          },
        ],
      }),
    });
    const home = await runtime({
      swarms: [planner],
      model: queueModel({ planner: [call('handoff_to_weather', { request: 'Saturday?' }, 'h1'), (req) => ({ text: String(req.messages.at(-1)?.content) })] }),
    });
    const client = home.forSwarm(planner, 'moved');
    await client.run('Plan');
    await left;
    await first.close();
    // A worker started afterwards takes the call over from the stored state, when the parent,
    // hearing no heartbeat, sends it again (this worker does not scan the store for orphans).
    const second = await runtime({ agents: [weather], model: queueModel({ weather: [(req) => ({ text: `From ${req.messages.at(-1)?.content}` })] }) }, false);
    expect(await client.wait()).toEqual({ status: 'completed', result: 'From {"day":"Saturday","sky":"sunny"}' });
    expect(forecasts).toHaveLength(1);
    expect(second.stats().live).toBe(0);
  });

  it('turns a handoff nobody hosts into a tool error the model reads, after the deadline', async () => {
    const model = queueModel({
      planner: [call('handoff_to_weather', { request: 'Weather?' }), (req) => ({ text: `Gave up: ${req.messages.at(-1)?.content}` })],
    });
    const home = await runtime({ swarms: [planner], model });
    const client = home.forSwarm(planner, 'alone');
    const started = Date.now();
    await client.run('Plan');
    const result = await client.wait();
    expect(Date.now() - started).toBeGreaterThanOrEqual(400);
    expect(result.status).toBe('completed');
    expect((result as { result: string }).result).toMatch(/^Gave up: Agent "weather" could not start: No runtime hosts "xswarm\.agent\.weather"/);
  });

  it('offers a structured swarm hosted elsewhere with its own input schema, from its card', async () => {
    const booking = defineSwarm({
      id: 'booking',
      description: 'Books a table',
      input: z.object({ guests: z.number().int() }),
      instructions: 'Book.',
    });
    await runtime({ swarms: [booking], model: queueModel({ booking: [{ text: 'Booked for 4' }] }) });
    const host = defineSwarm({ id: 'host', instructions: 'Host.', handoffs: [handoff.toSwarm('booking')] });
    const model = queueModel({ host: [call('handoff_to_booking', { guests: 4 }), (req) => ({ text: String(req.messages.at(-1)?.content) })] });
    const home = await runtime({ swarms: [host], model });
    const client = home.forSwarm(host, 'dinner');
    await client.run('Dinner for 4');
    expect(await client.wait()).toEqual({ status: 'completed', result: 'Booked for 4' });
    const spec = model.requests[0]!.tools.find((t) => t.name === 'handoff_to_booking')!;
    expect(spec.description).toBe('Books a table');
    expect(spec.parameters).toMatchObject({ type: 'object', properties: { guests: { type: 'integer' } } });
  });

  it('refuses unknown handoff targets at definition time when the runtime has no transport', () => {
    expect(() => createRuntime({ swarms: [planner], model: queueModel({}) })).toThrow(DefinitionError);
  });
});

describe('forSwarm from a runtime that does not have the definition', () => {
  const asker = defineSwarm({ id: 'asker', instructions: 'Ask.' });

  it('a run started with files from a runtime without the definition keeps them: its task has the parts as sent', async () => {
    await runtime({ swarms: [asker], model: queueModel({ asker: [{ text: 'read' }] }) });
    const elsewhere = await runtime({ model: queueModel({}) });
    const inputParts = [
      { kind: 'text' as const, text: 'Read this' },
      { kind: 'file' as const, file: { name: 'a.txt', mimeType: 'text/plain', bytes: Buffer.from('hello').toString('base64') } },
    ];
    const client = elsewhere.forSwarm('asker', 'with-files');
    await client.run('Read this\n<file name="a.txt" type="text/plain">\nhello\n</file>', { inputParts });
    expect(await client.wait()).toEqual({ status: 'completed', result: 'read' });
    const [task] = await collect(client.events());
    expect(task).toMatchObject({ kind: 'task', history: [{ role: 'user', parts: inputParts }] });
  });

  it('starts, reads, pauses, resumes and stops a swarm held by another runtime', async () => {
    const model = queueModel({
      asker: [
        call('pause', { reason: 'Which day?' }, 'p1'),
        (req) => ({ text: `Booked for ${req.messages.at(-1)?.content}` }),
        call('pause', { reason: 'Again?' }, 'p2'),
      ],
    });
    await runtime({ swarms: [asker], model });
    const elsewhere = await runtime({ model: queueModel({}) });
    const client = elsewhere.forSwarm('asker', 'remote-1');
    await client.run('Book something');
    expect(await client.wait()).toMatchObject({ status: 'paused', reason: { message: 'Which day?' } });
    await client.resume('Sunday');
    expect(await client.wait()).toEqual({ status: 'completed', result: 'Booked for Sunday' });
    const events = await collect(client.events());
    expect(events.at(-1)).toMatchObject({ kind: 'status-update', final: true });
    expect(events.map((e) => e.seq)).toEqual(events.map((_, i) => i + 1));

    const second = elsewhere.forSwarm('asker', 'remote-2');
    await second.run('Again');
    expect((await second.wait()).status).toBe('paused');
    await second.stop('no longer needed');
    expect(await second.getResult()).toEqual({ status: 'stopped', reason: 'no longer needed' });
    // The holder's own refusals come back as they are.
    await expect(second.pause()).rejects.toMatchObject({ code: 'wrong-state' });
    await expect(elsewhere.forSwarm('asker', 'remote-2').run('Again')).rejects.toMatchObject({ code: 'id-in-use' });
    await expect(elsewhere.forSwarm('nobody-has-this', 'x').run('hi')).rejects.toBeInstanceOf(SwarmError);
  });
});

/**
 * The shared store, announcing its commits to watchers (as JetStream does between processes),
 * with a count of the watches open per swarm: a reader that let go leaves none behind.
 */
function watchedStore(inner: SwarmStore): { store: SwarmStore; watching: (swarmId: string) => number } {
  const watchers = new Map<string, Set<() => void>>();
  const notify = (swarmId: string) => {
    for (const listener of [...(watchers.get(swarmId) ?? [])]) listener();
  };
  const store = new Proxy(inner, {
    get(target, prop) {
      if (prop === 'watch') {
        return (swarmId: string, onChange: () => void) => {
          const set = watchers.get(swarmId) ?? new Set();
          watchers.set(swarmId, set);
          const listener = () => onChange();
          set.add(listener);
          return () => set.delete(listener);
        };
      }
      if (prop === 'commit') {
        return async (commit: Parameters<SwarmStore['commit']>[0]) => {
          await target.commit(commit);
          queueMicrotask(() => notify(commit.swarmId));
        };
      }
      const value = Reflect.get(target, prop, target) as unknown;
      return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(target) : value;
    },
  });
  return { store, watching: (swarmId) => watchers.get(swarmId)?.size ?? 0 };
}

/** Resolves with the first fact of the team's stream `match` accepts. */
async function factOf(runtime: Runtime, teamId: string, match: (fact: TeamFact) => boolean): Promise<TeamFact> {
  for await (const event of runtime.forTeam('crew', teamId).events({ signal: AbortSignal.timeout(10_000) })) if (match(event.metadata)) return event.metadata;
  throw new Error('the team stream ended without the fact');
}

/** Rejects when `signal` aborts. */
function aborted(signal: AbortSignal): Promise<never> {
  return new Promise((_, reject) => signal.addEventListener('abort', () => reject(signal.reason), { once: true }));
}

/** A model whose calls tell `called` (with the request) and never answer: they end when aborted. */
function modelUntilAborted(called: (req: ModelRequest) => void) {
  return scriptedModel((req) => {
    called(req);
    return aborted(req.signal);
  });
}

describe('stops of what nobody holds', () => {
  const builder = defineSwarm({ id: 'builder', instructions: 'Build.' });
  const crew = defineTeam({ id: 'crew', workers: [{ type: 'dev', swarm: 'builder', count: 1 }], limits: { workerTimeoutMs: 600, maxAttempts: 5 } });

  /**
   * A team whose one worker process takes attempt 1 of task b and leaves mid-task (its lease
   * released, the attempt unfinished in the store): no worker process is up when the team
   * releases it. Resolves once the release happened.
   */
  async function releasedWithNobodyUp() {
    const watched = watchedStore(store);
    store = watched.store;
    let working!: () => void;
    const busy = new Promise<void>((resolve) => (working = resolve));
    const first = await runtime({
      swarms: [builder],
      model: modelUntilAborted(working),
    });
    const leader = await runtime({ teams: [crew], model: queueModel({}), hosting: { heartbeatTimeoutMs: 30_000 } });
    const client = leader.forTeam('crew', 'tl');
    await client.run([{ id: 'b', subject: 'b' }]);
    await busy;
    await first.close();
    await factOf(leader, 'tl', (f) => f.type === 'team-task-released' && f.attempt === 1);
    return { watched, leader, client };
  }

  it("the leader's wait on a released attempt ends with it: no watch on its swarm is left", async () => {
    const { watched } = await releasedWithNobodyUp();
    await until("the leader's watch on the released attempt to end", () => watched.watching('tl:b:1') === 0, { timeout: 2_000 });
  });

  it('a released attempt whose stop finds no worker process up is stopped once one comes up, never completed', async () => {
    const { leader, client } = await releasedWithNobodyUp();
    // Attempts 2 and 3 find no worker process within the deadline: the stop sent at the release
    // (within the same deadline) has found none either by then.
    await factOf(leader, 'tl', (f) => f.type === 'team-task-failed' && f.attempt === 3);

    // A worker process comes up: it adopts the orphaned attempt 1 (whose model would answer only
    // after the run) and hosts the next attempt.
    let late!: () => void;
    const afterRun = new Promise<void>((resolve) => (late = resolve));
    await runtime({
      swarms: [builder],
      model: scriptedModel(async (req) => {
        if (req.swarmId === 'tl:b:1') await Promise.race([afterRun, aborted(req.signal)]);
        return { text: `built by ${req.swarmId}` };
      }),
    });
    expect(await client.wait()).toMatchObject({ status: 'completed', counts: { completed: 1 } });
    const [task] = client.board().tasks;
    expect(task).toMatchObject({ status: 'completed', result: `built by tl:b:${task!.attempts}` });
    expect(task!.attempts).toBeGreaterThanOrEqual(4);
    // The team's owed stop reaches attempt 1 in the new worker process before its model answers.
    const attempt1 = leader.forSwarm('builder', 'tl:b:1');
    await until('attempt 1 to end', async () => (await attempt1.getResult()).status !== 'running', { timeout: 5_000 }).catch(() => undefined);
    late();
    expect(await attempt1.wait()).toMatchObject({ status: 'stopped' });
    const facts: TeamFact[] = [];
    for await (const event of client.events()) facts.push(event.metadata);
    expect(facts.filter((f) => f.type === 'team-released-attempt-completed')).toEqual([]);
  });

  it('a swarm nobody holds, taken over to be stopped, is stopped before its in-flight model call is made again', async () => {
    const waiter = defineSwarm({ id: 'waiter', instructions: 'Wait.' });
    let working!: () => void;
    const busy = new Promise<void>((resolve) => (working = resolve));
    const first = await runtime({
      swarms: [waiter],
      model: modelUntilAborted(working),
    });
    await first.forSwarm('waiter', 'w1').run('go');
    await busy;
    // Its lease released with the model call in flight: the swarm is stored unfinished, held by nobody.
    await first.close();
    // Hosts the definition but adopts nothing by itself (not started): only the stop brings the swarm here.
    const calls: string[] = [];
    const second = await runtime(
      {
        swarms: [waiter],
        model: modelUntilAborted((req) => calls.push(req.swarmId)),
      },
      false,
    );
    await second.forSwarm('waiter', 'w1').stop('no longer needed');
    expect(await second.forSwarm('waiter', 'w1').wait()).toEqual({ status: 'stopped', reason: 'no longer needed' });
    const facts = (await collect(second.forSwarm('waiter', 'w1').events())).flatMap((e) => (e.kind === 'status-update' ? [e.metadata.type] : []));
    expect(facts.filter((f) => f === 'stopped')).toHaveLength(1);
    expect(calls).toEqual([]);
  });

  it('a parent nobody holds, taken over to be stopped, stops its child swarm hosted by another runtime', async () => {
    const kitchen = defineSwarm({ id: 'kitchen', description: 'Cooks', instructions: 'Cook.' });
    let cooking!: () => void;
    const busy = new Promise<void>((resolve) => (cooking = resolve));
    const worker = await runtime({
      swarms: [kitchen],
      model: modelUntilAborted(cooking),
    });
    const host = defineSwarm({ id: 'host', instructions: 'Host.', handoffs: [handoff.toSwarm('kitchen')] });
    const first = await runtime({ swarms: [host], model: queueModel({ host: [call('handoff_to_kitchen', { request: 'soup' }, 'k1')] }) });
    await first.forSwarm(host, 'dinner').run('Dinner');
    await busy;
    const [child] = await worker.list({ definitionId: 'kitchen' });
    expect(child).toMatchObject({ status: 'running' });
    // The parent's lease released while it awaits its child: stored unfinished, held by nobody.
    await first.close();
    const second = await runtime({ swarms: [host], model: queueModel({}) }, false);
    await second.forSwarm(host, 'dinner').stop('no longer needed');
    expect(await second.forSwarm(host, 'dinner').wait()).toEqual({ status: 'stopped', reason: 'no longer needed' });
    expect(await worker.forSwarm(kitchen, child!.swarmId).wait()).toEqual({ status: 'stopped', reason: 'parent swarm "dinner" stopped' });
  });

  it('a stop of an ad-hoc swarm nobody holds fails at once with not-live', async () => {
    const first = await runtime({ model: queueModel({ 'xswarm.adhoc': [call('pause', { reason: 'Which day?' }, 'p1')] }), hosting: { deadlineMs: 3_000 } });
    await first.adhoc('lonely').run({ userMessage: 'Book', instructions: 'Ask.' });
    expect(await first.adhoc('lonely').wait()).toMatchObject({ status: 'paused' });
    await first.close();
    // Not started: it does not adopt the orphan itself (which any runtime could, ad-hoc swarms
    // carrying their own parameters), so the stop has to find a runtime holding it.
    const other = await runtime({ model: queueModel({}), hosting: { deadlineMs: 3_000 } }, false);
    const started = Date.now();
    const error = await other
      .adhoc('lonely')
      .stop('no longer needed')
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(SwarmError);
    expect(error).toMatchObject({ code: 'not-live', message: expect.stringMatching(/no runtime hosting "xswarm\.adhoc" answered/) });
    expect(Date.now() - started).toBeLessThan(1_500);
  });
});
