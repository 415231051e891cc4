/**
 * `GET /metrics`: swarms of three kinds (W1's handoffs, a swarm with a working and a failing
 * tool and token usage, one paused at its turn limit) run on a runtime with metrics; the text
 * scraped over HTTP parses with a strict Prometheus parser and its counters match the runs
 * exactly. The token guards it unless `publicMetrics`; a runtime without metrics answers 404.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createRuntime, defineAgent, defineSwarm, handoff, memoryStore, type Runtime, scriptedModel, type SwarmStore, tool } from '../../src/index.js';
import { serve, type SwarmServer } from '../../src/server/index.js';
import { newCounts, runW1, W1_AGENTS, W1_MODEL_CALLS, w1Respond } from '../../bench/w1.js';
import { parsePromText, sampleValue } from '../support/prom-text.js';
import { until } from '../support/wait.js';

const TOKEN = 'metrics-test-token';
const USAGE = { inputTokens: 10, outputTokens: 3 };

const price = tool({ name: 'price', description: 'a price', parameters: z.object({}), execute: async () => '4 EUR' });
const broken = tool({
  name: 'broken',
  description: 'always fails',
  parameters: z.object({}),
  execute: async () => {
    throw new Error('out of order');
  },
});
const agents = W1_AGENTS.map((id) => defineAgent({ id, instructions: 'Answer.' }));
const planner = defineSwarm({ id: 'planner', instructions: 'Plan.', handoffs: agents.map((a) => handoff.toAgent(a)) });
// Calls price, then broken, then answers: 3 model calls, 2 tool calls (one failing) per run.
const shop = defineSwarm({ id: 'shop', instructions: 'Shop.', tools: [price, broken] });
// Calls price in every turn: its one turn ends at the limit, and it pauses.
const looper = defineSwarm({ id: 'looper', instructions: 'Loop.', tools: [price], maxTurns: 1 });

function model() {
  const counts = newCounts();
  return scriptedModel((req) => {
    if (req.agentId === 'shop') {
      const results = req.messages.filter((m) => m.role === 'tool').length;
      const toolCalls = results === 0 ? [{ id: 'p', name: 'price', arguments: '{}' }] : results === 1 ? [{ id: 'b', name: 'broken', arguments: '{}' }] : undefined;
      return toolCalls ? { toolCalls, usage: USAGE } : { text: 'bought', usage: USAGE };
    }
    if (req.agentId === 'looper') return { toolCalls: [{ id: `l${req.messages.length}`, name: 'price', arguments: '{}' }] };
    return w1Respond(req, counts);
  });
}

/** A store counting its commits: the commit histogram must count exactly these. */
function countingStore(): { store: SwarmStore; commits: () => number } {
  const inner = memoryStore();
  let commits = 0;
  const store = new Proxy(inner, {
    get(target, key) {
      if (key === 'commit') return (c: Parameters<SwarmStore['commit']>[0]) => (commits++, target.commit(c));
      const v: unknown = Reflect.get(target, key, target);
      return typeof v === 'function' ? v.bind(target) : v;
    },
  });
  return { store, commits: () => commits };
}

let runtime: Runtime | undefined;
let server: SwarmServer | undefined;
afterEach(async () => {
  await server?.close();
  await runtime?.close();
  server = undefined;
  runtime = undefined;
});

async function scrape(url: string, token?: string): Promise<Response> {
  return fetch(`${url}/metrics`, token ? { headers: { authorization: `Bearer ${token}` } } : {});
}

describe('GET /metrics', () => {
  it('counts the runs exactly: swarms by state, model and tool calls, tokens, handoffs, steps, commits, leases', async () => {
    const { store, commits } = countingStore();
    runtime = createRuntime({ swarms: [planner, shop, looper], agents, model: model(), store, metrics: true });
    server = await serve(runtime, { token: TOKEN });

    for (let i = 0; i < 3; i++) await runW1(runtime);
    for (let i = 0; i < 2; i++) {
      const c = runtime.forSwarm(shop);
      await c.run('Buy.');
      expect(await c.wait()).toMatchObject({ status: 'completed', result: 'bought' });
    }
    const loop = runtime.forSwarm(looper, 'loop-1');
    await loop.run('Loop.');
    await until(
      'the looper pauses',
      async () => (await loop.getResult()).status,
      (s) => s === 'paused',
    );

    expect((await scrape(server.url)).status).toBe(401);
    const res = await scrape(server.url, TOKEN);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
    const m = parsePromText(await res.text());

    const at = (name: string, labels: Record<string, string> = {}) => sampleValue(m, name, labels);
    expect(at('xswarm_model_calls_total', { definition: 'planner', model: 'scripted' })).toBe(3 * W1_MODEL_CALLS);
    expect(at('xswarm_model_calls_total', { definition: 'shop', model: 'scripted' })).toBe(6);
    expect(at('xswarm_model_calls_total', { definition: 'looper', model: 'scripted' })).toBe(1);
    for (const agent of W1_AGENTS) expect(at('xswarm_handoffs_total', { definition: 'planner', to: agent })).toBe(3);
    expect(at('xswarm_tool_calls_total', { definition: 'shop', tool: 'price', outcome: 'ok' })).toBe(2);
    expect(at('xswarm_tool_calls_total', { definition: 'shop', tool: 'broken', outcome: 'error' })).toBe(2);
    expect(at('xswarm_tool_calls_total', { definition: 'looper', tool: 'price', outcome: 'ok' })).toBe(1);
    expect(at('xswarm_tokens_total', { definition: 'shop', model: 'scripted', direction: 'input' })).toBe(60);
    expect(at('xswarm_tokens_total', { definition: 'shop', model: 'scripted', direction: 'output' })).toBe(18);
    expect(at('xswarm_step_duration_seconds_count', { definition: 'planner', step: 'model' })).toBe(3 * W1_MODEL_CALLS);
    expect(at('xswarm_step_duration_seconds_count', { definition: 'shop', step: 'tool' })).toBe(4);
    expect(at('xswarm_swarms_started_total', { definition: 'planner' })).toBe(3);
    expect(at('xswarm_swarms_finished_total', { definition: 'planner', state: 'completed' })).toBe(3);
    expect(at('xswarm_swarms_finished_total', { definition: 'shop', state: 'completed' })).toBe(2);
    // Only the paused swarm is still held: the finished ones left the gauge.
    expect(m.get('xswarm_swarms')!.samples).toEqual([{ name: 'xswarm_swarms', labels: { definition: 'looper', state: 'paused' }, value: 1 }]);
    expect(at('xswarm_leases_held')).toBe(1);
    expect(at('xswarm_store_commit_duration_seconds_count', { outcome: 'ok' })).toBe(commits());
    expect(at('xswarm_nats_reconnects_total')).toBe(0);
    // No default process metrics: only the runtime's own families.
    expect([...m.keys()].every((name) => name.startsWith('xswarm_'))).toBe(true);

    await loop.stop('enough');
    const after = parsePromText(await (await scrape(server.url, TOKEN)).text());
    expect(after.get('xswarm_swarms')!.samples).toEqual([]);
    expect(sampleValue(after, 'xswarm_swarms_finished_total', { definition: 'looper', state: 'stopped' })).toBe(1);
    expect(sampleValue(after, 'xswarm_leases_held')).toBe(0);
  });

  it('keeps counting a passivated swarm as paused and leased, and drops it once stopped', async () => {
    runtime = createRuntime({ swarms: [looper], model: model(), metrics: true, passivateAfterMs: 0 });
    const loop = runtime.forSwarm(looper, 'loop-2');
    await loop.run('Loop.');
    await until(
      'the looper is passivated',
      () => runtime!.stats(),
      (s) => s.passivated === 1,
    );
    const m = parsePromText(await runtime.metrics!.metrics());
    expect(sampleValue(m, 'xswarm_swarms', { definition: 'looper', state: 'paused' })).toBe(1);
    expect(sampleValue(m, 'xswarm_leases_held')).toBe(1);
    await loop.stop('enough');
    const after = parsePromText(await runtime.metrics!.metrics());
    expect(after.get('xswarm_swarms')!.samples).toEqual([]);
    expect(sampleValue(after, 'xswarm_swarms_finished_total', { definition: 'looper', state: 'stopped' })).toBe(1);
  });

  it('is served without the token with publicMetrics, into a registry the caller gave', async () => {
    const { Registry } = await import('prom-client');
    const registry = new Registry();
    runtime = createRuntime({ swarms: [planner], agents, model: model(), metrics: registry });
    expect(runtime.metrics).toBe(registry);
    server = await serve(runtime, { token: TOKEN, publicMetrics: true });
    await runW1(runtime);
    const res = await scrape(server.url);
    expect(res.status).toBe(200);
    expect(sampleValue(parsePromText(await res.text()), 'xswarm_model_calls_total', { definition: 'planner', model: 'scripted' })).toBe(W1_MODEL_CALLS);
    // Only /metrics is public: the rest still needs the token.
    expect((await fetch(`${server.url}/swarms`)).status).toBe(401);
  });

  it('answers 404 for a runtime without metrics, which has no registry', async () => {
    runtime = createRuntime({ swarms: [planner], agents, model: model() });
    expect(runtime.metrics).toBeUndefined();
    server = await serve(runtime);
    const res = await scrape(server.url);
    expect(res.status).toBe(404);
    expect(await res.text()).toContain('metrics: true');
  });

  it('refuses a metrics option that is neither true nor a registry', () => {
    expect(() => createRuntime({ swarms: [planner], agents, model: model(), metrics: {} as never })).toThrow(/metrics must be true or a prom-client Registry/);
  });
});

describe('the strict Prometheus text parser of these tests', () => {
  const ok = '# HELP a_total A.\n# TYPE a_total counter\na_total{x="1"} 2\n';
  it('reads valid text and refuses what Prometheus would refuse', () => {
    expect(sampleValue(parsePromText(ok), 'a_total', { x: '1' })).toBe(2);
    for (const bad of [
      'a_total 1\n', // no TYPE
      `${ok}a_total{x="1"} 3\n`, // a repeated series
      '# TYPE a_total counter\na_total{x="\\q"} 1\n', // an unknown escape
      '# TYPE a_total counter\na_total{x="1" y="2"} 1\n', // labels without a comma
      '# TYPE a_total counter\na_total 1x\n', // a bad value
      '# TYPE h histogram\nh_bucket{le="1"} 2\nh_bucket{le="+Inf"} 1\nh_sum 1\nh_count 1\n', // buckets not cumulative
      '# TYPE h histogram\nh_bucket{le="+Inf"} 2\nh_sum 1\nh_count 1\n', // +Inf is not _count
      '# TYPE a gauge\na 1\n# TYPE b gauge\nb 1\n# TYPE a gauge\n', // a family split in two
      ok.slice(0, -1), // no final newline
    ]) {
      expect(() => parsePromText(bad), bad).toThrow();
    }
  });
});
