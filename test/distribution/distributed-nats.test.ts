/**
 * Faults a distributed swarm survives, on a real `nats-server -js` started by each test on
 * 127.0.0.1, with real processes killed by SIGKILL: a worker dying mid-handoff, the
 * orchestrating process dying, the server restarting mid-run, a handoff nobody hosts.
 * The fixture process is test/fixtures/nats-node.ts.
 */
import type { ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { createRuntime, defineAgent, defineSwarm, handoff, scriptedModel, type SwarmEvent, tool } from '../../src/index.js';
import { z } from 'zod';
import { exited, startFixture } from '../support/crash-process.js';
import { jsonLine, natsFaultFixtures } from '../support/nats-faults.js';
import { natsServerMissing } from '../support/nats-server.js';
import { collect } from '../support/script.js';
import { sleep } from '../support/sleep.js';

const NODE = fileURLToPath(new URL('../fixtures/nats-node.ts', import.meta.url));

const nats = natsFaultFixtures('xswarm-nats-faults-');

/** The value of the next JSON line of a child's stdout that has `key`. */
function line<T>(child: ChildProcess, key: string, timeoutMs = 30_000): Promise<T> {
  return jsonLine<Record<string, unknown>>(child, (l) => key in l, timeoutMs).then((l) => l[key] as T);
}

/** Starts a fixture process of `role` on this test's server. */
function node(role: 'worker' | 'orchestrator' | 'adopter', swarmId?: string, env: Record<string, string> = {}): ChildProcess {
  return startFixture(NODE, swarmId ? [role, swarmId] : [role], {
    NATS_URL: nats.server.url,
    SIDE_EFFECTS: join(nats.dir, 'side-effects'),
    MODEL_LOG: join(nats.dir, 'model-log'),
    KILL_MARKER: join(nats.dir, 'killed'),
    ...env,
  });
}

function lines(file: string): string[] {
  try {
    return readFileSync(join(nats.dir, file), 'utf8').split('\n').filter(Boolean);
  } catch {
    return [];
  }
}

const UNINTERRUPTED = { status: 'completed', result: 'Plan: Saturday is sunny' };

describe.skipIf(natsServerMissing)('distributed over NATS: faults', () => {
  it('runs the planner with its agent in a worker process, exactly as in one process', async () => {
    const worker = node('worker');
    await line(worker, 'ready');
    const orchestrator = node('orchestrator', 'calm');
    expect(await line(orchestrator, 'result')).toEqual(UNINTERRUPTED);
    expect(lines('side-effects')).toHaveLength(1);
    expect(lines('model-log')).toEqual(['planner:1', 'weather:1', 'weather:2', 'planner:2']);
    worker.kill('SIGTERM');
    await exited(worker);
  });

  it('a worker killed mid-handoff: the worker already running completes the swarm, no completed step runs twice', async () => {
    // Both workers would die at the agent's second model call (after its tool step is durable);
    // the marker lets only the first to get there die.
    const workers = [node('worker', undefined, { KILL_AT: 'weather:2' }), node('worker', undefined, { KILL_AT: 'weather:2' })];
    await Promise.all(workers.map((w) => line(w, 'ready')));
    const orchestrator = node('orchestrator', 'trip');
    expect(await line(orchestrator, 'result', 40_000)).toEqual(UNINTERRUPTED);
    // One worker died by SIGKILL; the forecast (a completed step's side effect) ran once.
    expect(workers.filter((w) => w.signalCode === 'SIGKILL')).toHaveLength(1);
    expect(lines('side-effects')).toHaveLength(1);
    expect(lines('model-log').filter((l) => l === 'weather:1')).toHaveLength(1);
  });

  it('a worker killed mid-handoff: a worker started afterwards completes the swarm', async () => {
    const first = node('worker', undefined, { KILL_AT: 'weather:2' });
    await line(first, 'ready');
    const orchestrator = node('orchestrator', 'later');
    await exited(first);
    expect(first.signalCode).toBe('SIGKILL');
    const second = node('worker');
    await line(second, 'ready');
    expect(await line(orchestrator, 'result', 40_000)).toEqual(UNINTERRUPTED);
    expect(lines('side-effects')).toHaveLength(1);
  });

  it('the orchestrating process killed: another process adopts the swarm and completes it', async () => {
    const worker = node('worker');
    await line(worker, 'ready');
    const orchestrator = node('orchestrator', 'orphan', { KILL_AT: 'planner:2' });
    await exited(orchestrator);
    expect(orchestrator.signalCode).toBe('SIGKILL');
    const adopter = node('adopter', 'orphan');
    expect(await line(adopter, 'result', 40_000)).toEqual(UNINTERRUPTED);
    // The handoff's result was durable before the kill: the agent did not run again.
    expect(lines('side-effects')).toHaveLength(1);
    expect(lines('model-log').filter((l) => l.startsWith('weather:'))).toEqual(['weather:1', 'weather:2']);
  });
});

describe.skipIf(natsServerMissing)('distributed over NATS: in-process runtimes', () => {
  const forecast = tool({
    name: 'get_forecast',
    description: 'Forecast',
    parameters: z.object({ day: z.string() }),
    execute: async ({ day }) => ({ day, sky: 'sunny' }),
  });
  const weather = defineAgent({ id: 'weather', description: 'Weather', instructions: 'Forecast.', tools: [forecast] });
  const planner = defineSwarm({ id: 'planner', instructions: 'Plan.', handoffs: [handoff.toAgent('weather')] });
  const slow = (ms: number) =>
    scriptedModel(async (req) => {
      await sleep(ms);
      const last = req.messages.filter((m) => m.role === 'tool').at(-1)?.content;
      if (req.agentId === 'weather') return last === undefined ? { toolCalls: [{ id: 'f1', name: 'get_forecast', arguments: '{"day":"Sat"}' }] } : { text: 'sunny' };
      return last === undefined ? { toolCalls: [{ id: 'h1', name: 'handoff_to_weather', arguments: '{"request":"Sat?"}' }] } : { text: `Plan: ${last}` };
    });
  const on = (options: Parameters<typeof createRuntime>[0]) => {
    const r = createRuntime({ ...options, nats: { servers: nats.server.url }, hosting: { deadlineMs: 500, heartbeatMs: 100, heartbeatTimeoutMs: 2_000 } });
    nats.runtimes.push(r);
    return r;
  };

  it('survives a nats-server restart mid-run: runs complete, no event lost or duplicated; commands meanwhile are "unavailable"', async () => {
    const worker = on({ agents: [weather], model: slow(150) });
    const home = on({ swarms: [planner], model: slow(150) });
    await Promise.all([worker.start(), home.start()]);
    const clients = Array.from({ length: 5 }, (_, i) => home.forSwarm(planner, `restart-${i}`));
    await Promise.all(clients.map((c) => c.run('Plan')));
    await nats.server.kill();
    // While the connection is down: refused at once, nothing applied.
    await sleep(300);
    await expect(clients[0]!.pause()).rejects.toMatchObject({ code: 'unavailable' });
    await expect(home.forSwarm(planner, 'during-outage').run('Plan')).rejects.toMatchObject({ code: 'unavailable' });
    await sleep(700);
    await nats.server.start();
    for (const c of clients) expect(await c.wait()).toEqual({ status: 'completed', result: 'Plan: sunny' });
    for (const c of clients) {
      const events: SwarmEvent[] = await collect(c.events());
      expect(events.map((e) => e.seq)).toEqual(events.map((_, i) => i + 1));
      expect(events.at(-1)).toMatchObject({ kind: 'status-update', final: true });
    }
    // Read from a runtime that ran none of them: the same streams.
    const reader = on({ model: slow(0) });
    const again: SwarmEvent[] = await collect(reader.forSwarm('planner', 'restart-0').events());
    expect(again).toEqual(await collect(clients[0]!.events()));
  }, 40_000);

  it('gives the full client from a runtime without the definition: run, wait, events, pause, resume, stop', async () => {
    const asker = defineSwarm({ id: 'asker', instructions: 'Ask.' });
    const model = scriptedModel((req) => {
      const last = req.messages.filter((m) => m.role === 'tool').at(-1)?.content;
      return last === undefined ? { toolCalls: [{ id: 'p1', name: 'pause', arguments: '{"reason":"Which day?"}' }] } : { text: `Booked for ${last}` };
    });
    const holder = on({ swarms: [asker], model });
    const elsewhere = on({ model: slow(0) });
    await Promise.all([holder.start(), elsewhere.start()]);
    const client = elsewhere.forSwarm('asker', 'far-1');
    await client.run('Book');
    expect(await client.wait()).toMatchObject({ status: 'paused', reason: { message: 'Which day?' } });
    await client.resume('Sunday');
    expect(await client.wait()).toEqual({ status: 'completed', result: 'Booked for Sunday' });
    const second = elsewhere.forSwarm('asker', 'far-2');
    await second.run('Book');
    expect((await second.wait()).status).toBe('paused');
    await second.stop('changed my mind');
    expect(await second.getResult()).toEqual({ status: 'stopped', reason: 'changed my mind' });
    const events: SwarmEvent[] = await collect(second.events());
    expect(events.at(-1)).toMatchObject({ kind: 'status-update', final: true, status: { state: 'canceled' } });
    await expect(second.pause()).rejects.toMatchObject({ code: 'wrong-state' });
  });

  it('turns a handoff to an agent nobody hosts into a tool error the model reads, after the deadline', async () => {
    const model = scriptedModel((req) => {
      const last = req.messages.filter((m) => m.role === 'tool').at(-1)?.content;
      return last === undefined ? { toolCalls: [{ id: 'h1', name: 'handoff_to_weather', arguments: '{"request":"Sat?"}' }] } : { text: `Tool said: ${last}` };
    });
    const home = on({ swarms: [planner], model });
    await home.start();
    const client = home.forSwarm(planner, 'nobody');
    const started = Date.now();
    await client.run('Plan');
    const result = (await client.wait()) as { status: string; result: string };
    expect(Date.now() - started).toBeGreaterThanOrEqual(500);
    expect(result.status).toBe('completed');
    expect(result.result).toMatch(/^Tool said: Agent "weather" could not start: No runtime hosts/);
  });
});
