/**
 * Usage by model and rolled up over children: a swarm's own calls (orchestrator and agents) by
 * model, and its child swarms' rolled-up usage added exactly once, with the handoff's result —
 * over three levels, across a restart mid-child (SQLite), and in a replay; cached input tokens
 * through the real `openai` client; costs from a price table.
 */
import { afterEach, describe, expect, it } from 'vitest';
import {
  createRuntime,
  defineAgent,
  defineSwarm,
  handoff,
  handoffToolName,
  memoryStore,
  type Model,
  type ModelRequest,
  type ModelResponse,
  openaiModel,
  type Runtime,
  type RuntimeOptions,
  type SwarmEvent,
  scriptedModel,
} from '../../src/index.js';
import { serve } from '../../src/server/index.js';
import { startOpenAIServer, type OpenAIServer } from '../support/openai-server.js';
import { collect } from '../support/script.js';
import { sqliteFilePerTest } from '../support/sqlite-file.js';

const file = sqliteFilePerTest('xswarm-usage-rollup-');
let runtimes: Runtime[] = [];
let server: OpenAIServer | undefined;
afterEach(async () => {
  for (const r of runtimes) await r.close();
  runtimes = [];
  await server?.close();
  server = undefined;
});

function runtime(options: RuntimeOptions): Runtime {
  const rt = createRuntime(options);
  runtimes.push(rt);
  return rt;
}

const helper = defineAgent({
  id: 'helper',
  instructions: 'Help.',
  model: scriptedModel(() => ({ text: 'Helped.', usage: { inputTokens: 7, outputTokens: 3 } }), 'small'),
});
const leaf = defineSwarm({ id: 'leaf', instructions: 'Be the leaf.' });
const mid = defineSwarm({ id: 'mid', instructions: 'Be the middle.', handoffs: [handoff.toSwarm(leaf)] });
const root = defineSwarm({ id: 'root', instructions: 'Be the root.', handoffs: [handoff.toAgent(helper), handoff.toSwarm(mid)] });

const toolResults = (req: ModelRequest) => req.messages.filter((m) => m.role === 'tool').length;
const call = (name: string, id: string) => ({ toolCalls: [{ id, name: handoffToolName(name), arguments: '{"request":"help"}' }] });

/**
 * The swarms' script on model "big": root asks the helper agent (model "small"), then the mid
 * swarm, then completes; mid hands off to leaf, then completes; leaf answers. Each call reports
 * different tokens, so a sum that counts one twice or misses one is wrong. `leafCall` answers the leaf.
 */
function script(leafCall: (req: ModelRequest) => ModelResponse | Promise<ModelResponse>): Model {
  return scriptedModel((req) => {
    if (req.agentId === 'leaf') return leafCall(req);
    if (req.agentId === 'mid')
      return toolResults(req) === 0
        ? { ...call('leaf', 'm1'), usage: { inputTokens: 40, outputTokens: 4 } }
        : { text: 'mid done', usage: { inputTokens: 50, outputTokens: 5 } };
    const n = toolResults(req);
    if (n === 0) return { ...call('helper', 'r1'), usage: { inputTokens: 100, outputTokens: 10, cachedInputTokens: 50 } };
    if (n === 1) return { ...call('mid', 'r2'), usage: { inputTokens: 200, outputTokens: 20 } };
    return { text: 'root done', usage: { inputTokens: 300, outputTokens: 30 } };
  }, 'big');
}
const leafAnswer = (): ModelResponse => ({ text: 'leaf done', usage: { inputTokens: 1000, outputTokens: 100, cachedInputTokens: 600 } });

const ROOT_OWN = {
  big: { calls: 3, inputTokens: 600, outputTokens: 60, cachedInputTokens: 50 },
  small: { calls: 1, inputTokens: 7, outputTokens: 3, cachedInputTokens: 0 },
};
const ALL = {
  big: { calls: 6, inputTokens: 600 + 90 + 1000, outputTokens: 60 + 9 + 100, cachedInputTokens: 650 },
  small: ROOT_OWN.small,
};

/** Every model call of every swarm the runtime knows, summed by model from their `internal:llm-call` events. */
async function sumOfCalls(rt: Runtime): Promise<Record<string, { calls: number; inputTokens: number; outputTokens: number; cachedInputTokens: number }>> {
  const sum: Record<string, { calls: number; inputTokens: number; outputTokens: number; cachedInputTokens: number }> = {};
  for (const s of await rt.list()) {
    for (const e of await collect(rt.forSwarm(s.definitionId, s.swarmId).events())) {
      if (e.kind !== 'internal:llm-call') continue;
      const row = (sum[e.model ?? '?'] ??= { calls: 0, inputTokens: 0, outputTokens: 0, cachedInputTokens: 0 });
      row.calls++;
      row.inputTokens += e.usage?.inputTokens ?? 0;
      row.outputTokens += e.usage?.outputTokens ?? 0;
      row.cachedInputTokens += e.usage?.cachedInputTokens ?? 0;
    }
  }
  return sum;
}

/** The usage by model a swarm's events account for: its own calls, and its children's from their handoff results. */
function ledgerOf(events: readonly SwarmEvent[]) {
  const own: Record<string, number[]> = {};
  const children: Record<string, number[]> = {};
  const add = (to: Record<string, number[]>, name: string, u: number[]) => {
    to[name] = (to[name] ?? [0, 0, 0, 0]).map((x, i) => x + u[i]!);
  };
  for (const e of events) {
    if (e.kind === 'internal:llm-call') add(own, e.model ?? '?', [1, e.usage?.inputTokens ?? 0, e.usage?.outputTokens ?? 0, e.usage?.cachedInputTokens ?? 0]);
    if (e.kind === 'status-update' && e.metadata.type === 'handoff-result' && e.metadata.usage) {
      for (const [name, u] of Object.entries(e.metadata.usage)) add(children, name, [u.calls, u.inputTokens, u.outputTokens, u.cachedInputTokens]);
    }
  }
  return { own, children };
}

describe('usage rolled up over children', () => {
  it('three levels (root → mid → leaf, plus an agent on another model): the total is the sum of every call, each once', async () => {
    const rt = runtime({ swarms: [root, mid, leaf], agents: [helper], model: script(leafAnswer) });
    const client = rt.forSwarm(root, 'u3');
    await client.run('go');
    expect(await client.wait()).toEqual({ status: 'completed', result: 'root done' });

    const usage = await client.usage();
    // Its own calls: what `usage()` always reported, now with cached tokens, calls and models.
    expect(usage).toMatchObject({ inputTokens: 607, outputTokens: 63, cachedInputTokens: 50, modelCalls: 4, byModel: ROOT_OWN, unpriced: ['big', 'small'] });
    expect(usage.usd).toBeUndefined();
    expect(usage.total).toEqual({ inputTokens: 1697, outputTokens: 172, cachedInputTokens: 650, modelCalls: 7, byModel: ALL, unpriced: ['big', 'small'] });
    expect(usage.total.byModel).toEqual(await sumOfCalls(rt));

    // The mid swarm's own report rolls its leaf up too; the root counted mid's total once.
    const events = await collect(client.events());
    const results = events.filter((e) => e.kind === 'status-update' && e.metadata.type === 'handoff-result' && e.metadata.usage);
    expect(results).toHaveLength(1);
    const midId = (results[0] as { metadata: { childSwarmId: string } }).metadata.childSwarmId;
    expect((await rt.forSwarm('mid', midId).usage()).total.byModel).toEqual({ big: { calls: 3, inputTokens: 1090, outputTokens: 109, cachedInputTokens: 600 } });

    // runtime.list reports it when asked: each swarm's rolled-up total; without the option, summaries as before.
    const listed = await rt.list({}, { usage: true });
    expect(listed.find((s) => s.swarmId === 'u3')?.usage).toEqual(usage.total);
    expect(listed.find((s) => s.swarmId === midId)?.usage?.modelCalls).toBe(3);
    expect((await rt.list()).every((s) => !('usage' in s))).toBe(true);

    // Each model call's event names its model.
    expect(events.filter((e) => e.kind === 'internal:llm-call').map((e) => (e as { model?: string }).model)).toEqual(['big', 'small', 'big', 'big']);
  });

  it('replays to the same events, and the replayed events account for the same usage', async () => {
    const rt = runtime({ swarms: [root, mid, leaf], agents: [helper], model: script(leafAnswer) });
    const client = rt.forSwarm(root, 'u4');
    await client.run('go');
    await client.wait();
    const recorded = await collect(client.events());
    const replayed = await collect(rt.replay('u4'));
    expect(replayed).toEqual(recorded);
    const ledger = ledgerOf(replayed);
    const usage = await client.usage();
    for (const [name, u] of Object.entries(usage.byModel)) expect(ledger.own[name]).toEqual([u.calls, u.inputTokens, u.outputTokens, u.cachedInputTokens]);
    expect(ledger.children).toEqual({ big: [3, 1090, 109, 600] });
  });

  it('a restart mid-child (SQLite): the child is counted once, after the parent is restored', async () => {
    let leafAsked!: () => void;
    const asked = new Promise<void>((resolve) => (leafAsked = resolve));
    // The first runtime's leaf call hangs until the runtime closes (its signal aborts it).
    const hanging = script(
      (req) =>
        new Promise<ModelResponse>((_, reject) => {
          leafAsked();
          req.signal?.addEventListener('abort', () => reject(new Error('closed')), { once: true });
        }),
    );
    const store = file.open();
    const first = createRuntime({ swarms: [root, mid, leaf], agents: [helper], model: hanging, store });
    await first.forSwarm(root, 'u5').run('go');
    await asked;
    await first.close();

    const second = runtime({ swarms: [root, mid, leaf], agents: [helper], model: script(leafAnswer), store: file.open() });
    await second.start();
    const client = second.forSwarm(root, 'u5');
    expect(await client.wait()).toEqual({ status: 'completed', result: 'root done' });
    const usage = await client.usage();
    // The leaf's hung call never completed: it reported nothing and counts nothing.
    expect(usage.total.byModel).toEqual(ALL);
    expect(usage.total.byModel).toEqual(await sumOfCalls(second));
    expect(usage.byModel).toEqual(ROOT_OWN);
  });
});

describe('prices', () => {
  const prices = { big: { inputPerMTok: 2, outputPerMTok: 10, cachedInputPerMTok: 0.5 }, small: { inputPerMTok: 1, outputPerMTok: 4 } };

  it('turn tokens into USD per model and in total; cached input at its own price', async () => {
    const rt = runtime({ swarms: [root, mid, leaf], agents: [helper], model: script(leafAnswer), prices });
    const client = rt.forSwarm(root, 'p1');
    await client.run('go');
    await client.wait();
    const usage = await client.usage();
    const big = ((600 - 50) * 2 + 50 * 0.5 + 60 * 10) / 1e6;
    const small = (7 * 1 + 3 * 4) / 1e6;
    expect(usage.byModel.big!.usd).toBeCloseTo(big, 12);
    expect(usage.byModel.small!.usd).toBeCloseTo(small, 12);
    expect(usage.usd).toBeCloseTo(big + small, 12);
    expect(usage.unpriced).toBeUndefined();
    expect(usage.total.usd).toBeCloseTo(((1690 - 650) * 2 + 650 * 0.5 + 169 * 10) / 1e6 + small, 12);
  });

  it('a model without a price is unpriced: listed, and no USD guessed for it or the total', async () => {
    const rt = runtime({ swarms: [root, mid, leaf], agents: [helper], model: script(leafAnswer), prices: { small: prices.small } });
    const client = rt.forSwarm(root, 'p2');
    await client.run('go');
    await client.wait();
    const usage = await client.usage();
    expect(usage.byModel.small!.usd).toBeCloseTo(19 / 1e6, 12);
    expect(usage.byModel.big!.usd).toBeUndefined();
    expect(usage.usd).toBeUndefined();
    expect(usage.unpriced).toEqual(['big']);
    expect(usage.total).toMatchObject({ unpriced: ['big'] });
    expect(usage.total.usd).toBeUndefined();
  });

  it('an invalid price table is refused, naming the entry', () => {
    const model = scriptedModel(() => ({ text: 'x' }));
    expect(() => createRuntime({ model, prices: { m: { inputPerMTok: -1, outputPerMTok: 1 } } })).toThrow(
      new TypeError('createRuntime: prices["m"].inputPerMTok must be a finite number of USD per million tokens, 0 or more (got -1)'),
    );
    expect(() => createRuntime({ model, prices: { m: { inputPerMTok: 1, outputPerMTok: '2' as unknown as number } } })).toThrow(/prices\["m"\]\.outputPerMTok/);
    expect(() => createRuntime({ model, prices: { m: { inputPerMTok: 1, outputPerMTok: 1, cachedInputPerMTok: Number.NaN } } })).toThrow(
      /prices\["m"\]\.cachedInputPerMTok/,
    );
    expect(() => createRuntime({ model, prices: { m: null as unknown as { inputPerMTok: number; outputPerMTok: number } } })).toThrow(TypeError);
    expect(() => createRuntime({ model, prices: [] as unknown as Record<string, never> })).toThrow(/prices must be/);
  });
});

describe('cached input tokens through the openai client', () => {
  it('reads prompt_tokens_details.cached_tokens, streamed and not', async () => {
    server = await startOpenAIServer(() => ({ text: 'hi', usage: { prompt_tokens: 120, completion_tokens: 4, prompt_tokens_details: { cached_tokens: 96 } } }));
    const s = defineSwarm({ id: 's', instructions: 'Answer.' });
    for (const stream of [true, false]) {
      const rt = runtime({ swarms: [s], model: openaiModel({ model: 'gpt-test', baseURL: server.url, apiKey: 'k', stream }) });
      const client = rt.forSwarm(s, `c-${stream}`);
      await client.run('q');
      expect(await client.wait()).toEqual({ status: 'completed', result: 'hi' });
      const events = await collect(client.events());
      expect(events.find((e) => e.kind === 'internal:llm-call')).toMatchObject({
        model: 'gpt-test',
        usage: { inputTokens: 120, outputTokens: 4, cachedInputTokens: 96 },
      });
      expect(await client.usage()).toMatchObject({
        inputTokens: 120,
        outputTokens: 4,
        cachedInputTokens: 96,
        byModel: { 'gpt-test': { calls: 1, inputTokens: 120, outputTokens: 4, cachedInputTokens: 96 } },
      });
    }
  });
});

describe('a remote A2A peer that reports its usage', () => {
  it("our server reports a swarm's rolled-up usage in its final status update; our client counts it once", async () => {
    const weather = defineSwarm({ id: 'weather', description: 'Answers weather questions', instructions: 'Forecast.' });
    const b = runtime({
      swarms: [weather],
      model: scriptedModel(() => ({ text: 'Sunny', usage: { inputTokens: 30, outputTokens: 3, cachedInputTokens: 10 } }), 'peer-model'),
    });
    const serverB = await serve(b);
    try {
      const planner = defineSwarm({ id: 'planner', instructions: 'Plan.', handoffs: [handoff.toRemoteAgent(`${serverB.url}/a2a/weather/.well-known/agent-card.json`)] });
      const a = runtime({
        swarms: [planner],
        model: scriptedModel(
          (req) =>
            toolResults(req) === 0
              ? { ...call('weather', 'w1'), usage: { inputTokens: 5, outputTokens: 1 } }
              : { text: 'Plan: sunny', usage: { inputTokens: 6, outputTokens: 2 } },
          'big',
        ),
      });
      const client = a.forSwarm(planner, 'r1');
      await client.run('weekend');
      expect(await client.wait()).toEqual({ status: 'completed', result: 'Plan: sunny' });
      const usage = await client.usage();
      expect(usage.byModel).toEqual({ big: { calls: 2, inputTokens: 11, outputTokens: 3, cachedInputTokens: 0 } });
      expect(usage.total.byModel).toEqual({ big: usage.byModel.big, 'peer-model': { calls: 1, inputTokens: 30, outputTokens: 3, cachedInputTokens: 10 } });
      const results = (await collect(client.events())).filter((e) => e.kind === 'status-update' && e.metadata.type === 'handoff-result');
      expect(results).toMatchObject([{ metadata: { usage: { 'peer-model': { calls: 1 } } } }]);
    } finally {
      await serverB.close();
    }
  });
});

describe('snapshots from before usage was kept by model', () => {
  it('restore and go on: the ledger starts empty, the own token totals keep counting', async () => {
    const store = memoryStore();
    const s = defineSwarm({ id: 's', instructions: 'Ask, then answer.' });
    const model = scriptedModel(
      (req) =>
        toolResults(req) === 0
          ? { toolCalls: [{ id: 'p', name: 'pause', arguments: '{"reason":"Which day?"}' }], usage: { inputTokens: 10, outputTokens: 1 } }
          : { text: 'Saturday it is.', usage: { inputTokens: 20, outputTokens: 2 } },
      'm',
    );
    const first = createRuntime({ swarms: [s], model, store });
    await first.forSwarm(s, 'old').run('go');
    expect(await first.forSwarm(s, 'old').wait()).toMatchObject({ status: 'paused' });
    await first.close();

    // The store as the previous version left it: no `usageByModel` in the snapshot's context
    // (until the swarm goes on, and this version stores it).
    let before = true;
    const old = new Proxy(store, {
      get(target, key) {
        if (key === 'load') {
          return async (id: string) => {
            const record = await target.load(id);
            const context = (record?.snapshot as { context?: Record<string, unknown> } | undefined)?.context;
            if (context && before) delete context.usageByModel;
            return record;
          };
        }
        const value = Reflect.get(target, key) as unknown;
        return typeof value === 'function' ? value.bind(target) : value;
      },
    });
    const second = runtime({ swarms: [s], model, store: old });
    await second.start();
    const client = second.forSwarm(s, 'old');
    expect(await client.usage()).toMatchObject({ inputTokens: 10, outputTokens: 1, byModel: {}, total: { modelCalls: 0 } });
    before = false;
    await client.resume('Saturday');
    expect(await client.wait()).toEqual({ status: 'completed', result: 'Saturday it is.' });
    expect(await client.usage()).toMatchObject({ inputTokens: 30, outputTokens: 3, byModel: { m: { calls: 1, inputTokens: 20, outputTokens: 2 } } });
  });
});
