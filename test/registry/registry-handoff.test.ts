/**
 * `handoff.toBestAgent(skill)`: a swarm of `createRuntime({ registry })` hands off to the best
 * agent for a skill, chosen from the registry when the call runs. The agents are real A2A peers
 * (our own `serve()` on 127.0.0.1, see `support/registry-peers.ts`); the orchestrator is scripted.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { z } from 'zod';
import { createRuntime, defineSwarm, DefinitionError, factOf, handoff, type Runtime, sqliteStore, type SwarmEvent, type SwarmStore, tool } from '../../src/index.js';
import { createAgentRegistry, type AgentRegistry } from '../../src/registry/index.js';
import { peersClosedBy, tickingClock } from '../support/registry-peers.js';
import { call, collect, lastToolResult, queueModel, type Step } from '../support/script.js';

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c().catch(() => undefined);
});

/** A tool named `forecast`: a peer having it has the skill `forecast` on its card. */
const forecastTool = tool({
  name: 'forecast',
  description: 'Forecasts the weather for a day',
  parameters: z.object({ text: z.string() }),
  execute: ({ text }) => text,
});

const peer = peersClosedBy(cleanups);

/** Two forecasters registered in order (A first: it wins ties). */
async function forecasters() {
  const a = await peer('A', 'forecaster-a', [forecastTool]);
  const b = await peer('B', 'forecaster-b', [forecastTool]);
  const registry = createAgentRegistry({ healthIntervalMs: 0, timeoutMs: 2000, now: tickingClock() });
  cleanups.push(() => registry.close());
  await registry.register(a.cardUrl);
  await registry.register(b.cardUrl);
  return { a, b, registry };
}

/** A planner handing off to the best agent for `skill`, its orchestrator answering from `script`. */
function planner(registry: AgentRegistry, script: Step[], skill = 'forecast', more: { store?: SwarmStore; owner?: string } = {}) {
  const swarm = defineSwarm({ id: 'planner', instructions: 'Plan with the weather.', handoffs: [handoff.toBestAgent(skill)] });
  const model = queueModel({ planner: script });
  const runtime: Runtime = createRuntime({ swarms: [swarm], model, registry, ...more });
  cleanups.push(() => runtime.close());
  return { runtime, model, client: runtime.forSwarm('planner') };
}

/** The planner asks the best forecaster `request`, then completes with what it answered. */
const askOnce = (request: string): Step[] => [call('handoff_to_best_forecast', { request }), (req) => ({ text: `Plan: ${lastToolResult(req)}` })];

function handoffFacts(events: SwarmEvent[]) {
  return {
    to: events.flatMap((e) => factOf(e, 'agent-handoff')?.to ?? []),
    from: events.flatMap((e) => factOf(e, 'handoff-result')?.from ?? []),
  };
}

describe('handoff.toBestAgent(skill)', () => {
  it('goes to the least-loaded healthy agent, counted in its load while the call runs; events name it', async () => {
    const { a, b, registry } = await forecasters();
    // A is busy with a dispatched task: B is less loaded.
    a.model.hold('long job');
    const busy = registry.dispatch({ agent: 'forecaster-a', message: 'long job' });
    await vi.waitFor(() => expect(registry.agent('forecaster-a')!.load).toBe(1));
    const releaseB = b.model.hold('Saturday?');

    const { model, client, runtime } = planner(registry, askOnce('Saturday?'));
    await client.run('Plan my weekend');
    await vi.waitFor(() => expect(registry.agent('forecaster-b')!.load).toBe(1));
    releaseB();
    expect(await client.wait()).toEqual({ status: 'completed', result: 'Plan: B did: Saturday?' });
    expect(registry.agent('forecaster-b')!.load).toBe(0);
    expect(a.model.seen).toEqual(['long job']);

    // The tool the model saw: its name and the skill's description from the agents' cards.
    const spec = model.requests[0]!.tools.find((t) => t.name === 'handoff_to_best_forecast');
    expect(spec?.description).toBe('The best available agent for forecast: Forecasts the weather for a day');
    expect(spec?.parameters).toMatchObject({ properties: { request: { type: 'string' } }, required: ['request'] });
    // The start names the skill; the result names the agent that answered.
    expect(handoffFacts(await collect(client.events()))).toEqual({ to: ['best:forecast'], from: ['forecaster-b'] });
    // A replay (no agent asked) reproduces the same events, the chosen agent included.
    expect(handoffFacts(await collect(runtime.replay(client.swarmId)))).toEqual({ to: ['best:forecast'], from: ['forecaster-b'] });

    a.model.releaseAll();
    expect(await registry.wait(busy.id)).toMatchObject({ state: 'completed' });
  });

  it('retries on the next agent when the chosen one is broken; a healthy agent’s failure is its answer', async () => {
    const { a, b, registry } = await forecasters();
    // A wins the tie but its server is gone (the registry has not noticed yet).
    await a.stop();
    expect(registry.agent('forecaster-a')!.health).toBe('healthy');
    const first = planner(registry, askOnce('Sunday?'));
    await first.client.run('Plan my weekend');
    expect(await first.client.wait()).toEqual({ status: 'completed', result: 'Plan: B did: Sunday?' });
    expect(handoffFacts(await collect(first.client.events()))).toEqual({ to: ['best:forecast'], from: ['forecaster-b'] });
    // The failure made the registry check A: unhealthy now, so skipped from the start.
    expect(registry.agent('forecaster-a')).toMatchObject({ health: 'unhealthy' });
    await first.runtime.close();

    // A back and healthy; its own failed answer is not retried on B.
    await a.restart();
    await registry.checkHealth('forecaster-a');
    const second = planner(registry, askOnce('FAIL Monday'));
    await second.client.run('Plan my week');
    expect(await second.client.wait()).toEqual({ status: 'completed', result: 'Plan: The remote agent "forecaster-a" failed: A cannot do "FAIL Monday"' });
    expect(handoffFacts(await collect(second.client.events())).from).toEqual(['forecaster-a']);
    expect(b.model.seen).toEqual(['Sunday?']);
  });

  it('an agent asking for input pauses the swarm with its question; resume answers it on the same task', async () => {
    const { a, b, registry } = await forecasters();
    const { client } = planner(registry, askOnce('ASK forecast'));
    await client.run('Plan my weekend');
    expect(await client.wait()).toMatchObject({ status: 'paused', reason: { type: 'HITL', message: 'A asks: which city?' } });
    // Still A's call while it waits: counted in its load.
    expect(registry.agent('forecaster-a')!.load).toBe(1);

    await client.resume('Paris');
    expect(await client.wait()).toEqual({ status: 'completed', result: 'Plan: A did: ASK forecast in Paris' });
    // One remote task on A, answered in place.
    const [task, ...others] = await a.runtime.list();
    expect(others).toEqual([]);
    expect(await a.runtime.forSwarm('forecaster-a', task!.swarmId).getResult()).toEqual({ status: 'completed', result: 'A did: ASK forecast in Paris' });
    expect(b.model.seen).toEqual([]);
  });

  it('no agent with the skill is a tool error the model reads; the swarm still completes', async () => {
    const { registry } = await forecasters();
    const { client, model } = planner(
      registry,
      [call('handoff_to_best_cooking', { request: 'a recipe' }), (req) => ({ text: `Fallback: ${lastToolResult(req)}` })],
      'cooking',
    );
    await client.run('Dinner?');
    expect(await client.wait()).toEqual({ status: 'completed', result: 'Fallback: No healthy agent has the skill "cooking"' });
    expect(model.requests[0]!.tools.find((t) => t.name === 'handoff_to_best_cooking')?.description).toBe('The best available agent for cooking');
  });

  it('a restart mid-call re-sends the same message: the agent re-attaches to its task, which runs once', async () => {
    const { a, registry } = await forecasters();
    const dir = mkdtempSync(join(tmpdir(), 'xswarm-registry-handoff-'));
    cleanups.push(async () => rmSync(dir, { recursive: true, force: true }));
    const path = join(dir, 'state.db');
    const release = a.model.hold('Tuesday?');
    const first = planner(registry, [call('handoff_to_best_forecast', { request: 'Tuesday?' })], 'forecast', { store: sqliteStore(path), owner: 'planner-1' });
    await first.client.run('Plan Tuesday');
    await vi.waitFor(() => expect(a.model.seen).toEqual(['Tuesday?']));
    const swarmId = first.client.swarmId;
    await first.runtime.close();
    await first.runtime.store.close();

    const store = sqliteStore(path);
    cleanups.push(() => store.close());
    const second = planner(registry, [(req) => ({ text: `Plan: ${lastToolResult(req)}` })], 'forecast', { store, owner: 'planner-1' });
    await second.runtime.start();
    release();
    expect(await second.runtime.forSwarm('planner', swarmId).wait()).toEqual({ status: 'completed', result: 'Plan: A did: Tuesday?' });
    // The same message id reached A twice: one task there, run once.
    expect(a.model.seen).toEqual(['Tuesday?']);
    expect(await a.runtime.list()).toHaveLength(1);
  });

  it('a handoff to the best agent without a registry is an error when the runtime is created', () => {
    const swarm = defineSwarm({ id: 'planner', instructions: 'Plan.', handoffs: [handoff.toBestAgent('forecast')] });
    expect(() => createRuntime({ swarms: [swarm], model: queueModel({}) })).toThrow(DefinitionError);
    expect(() => createRuntime({ swarms: [swarm], model: queueModel({}) })).toThrow(
      'Swarm "planner" hands off to the best agent for "forecast", but the runtime has no agent registry: pass createRuntime({ registry })',
    );
  });
});
