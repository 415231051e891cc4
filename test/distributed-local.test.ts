/**
 * Runtimes serving each other through the transport seam, in one process: a shared in-process
 * bus (`localTransport`) and one store, as runtimes on one NATS share JetStream. The
 * hosting protocol — handoffs to definitions another runtime hosts, their cards, the deadline
 * for a target nobody hosts, `forSwarm` from a runtime without the definition, commands relayed
 * to the runtime holding a swarm — is the same over NATS (test/distributed-nats.test.ts).
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import {
  createRuntime,
  DefinitionError,
  defineSwarm,
  handoff,
  LocalBus,
  localTransport,
  type Runtime,
  type RuntimeOptions,
  memoryStore,
  SwarmError,
  type SwarmStore,
} from '../src/index.js';
import { subjectToken } from '../src/transport/types.js';
import { call, collect, queueModel } from './support/script.js';
import { weatherAndPlanner } from './support/weather-planner.js';

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
    // The call's keep-alive ended with it: nobody listens to the child's heartbeats any more.
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
