/**
 * Children draw from their parent's budget (issue 30, item 2): agents, child swarms and
 * parallel handoffs reserve at once and never spend above the root's cap, whatever the order
 * their calls take (seeded random delays); a child's own, lower slice wins; every call made is
 * settled (nothing stays reserved).
 */
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { defineAgent, defineSwarm, handoff, handoffToolName, memoryStore, type ModelRequest, scriptedModel, tool } from '../../src/index.js';
import { calls, call } from '../support/script.js';
import { sqliteFilePerTest } from '../support/sqlite-file.js';
import { until } from '../support/wait.js';
import { seeded } from '../support/seeded.js';

const file = sqliteFilePerTest('xswarm-budget-fanout-');

const dig = tool({ name: 'dig', description: 'Digs', parameters: z.object({ n: z.number() }), execute: ({ n }) => `dug ${n}` });
const digger = defineAgent({ id: 'digger', instructions: 'Dig forever.', tools: [dig], maxTurns: 100 });
const sifter = defineAgent({ id: 'sifter', instructions: 'Dig forever.', tools: [dig], maxTurns: 100 });
const miner = (budget?: { tokens: number }) => defineSwarm({ id: 'miner', instructions: 'Dig forever.', tools: [dig], maxTurns: 100, ...(budget ? { budget } : {}) });
const root = (tokens: number) =>
  defineSwarm({
    id: 'root',
    instructions: 'Fan out.',
    maxTurns: 100,
    budget: { tokens },
    handoffs: [handoff.toAgent(digger), handoff.toAgent(sifter), handoff.toSwarm('miner')],
  });

/**
 * Everyone digs forever, after a seeded random delay; the root first hands off to all three at
 * once. Each call reports tokens within its worst case (a quarter of the prompt's bytes, and at
 * most the output ceiling); `spent` sums what was reported, by caller.
 */
function diggers(seed: number) {
  const rand = seeded(seed);
  const spent = new Map<string, number>();
  const made: ModelRequest[] = [];
  const model = scriptedModel(async (req) => {
    made.push(req);
    await new Promise((r) => setTimeout(r, Math.floor(rand() * 4)));
    // A call cut short by a pause delivers nothing (it settles at its worst case: see below).
    req.signal.throwIfAborted();
    const bytes = req.messages.reduce((n, m) => n + m.content.length, 0);
    const usage = { inputTokens: Math.ceil(bytes / 4), outputTokens: 1 + Math.floor(rand() * (req.maxOutputTokens ?? 0)) };
    spent.set(req.swarmId, (spent.get(req.swarmId) ?? 0) + usage.inputTokens + usage.outputTokens);
    const tools = req.messages.filter((m) => m.role === 'tool').length;
    if (req.agentId === 'root' && tools === 0) {
      return {
        ...calls(
          [handoffToolName('digger'), { request: 'dig' }, 'h1'],
          [handoffToolName('sifter'), { request: 'dig' }, 'h2'],
          [handoffToolName('miner'), { request: 'dig' }, 'h3'],
        ),
        usage,
      };
    }
    return { ...call('dig', { n: tools + 1 }, `d${tools + 1}`), usage };
  });
  return { model, spent, made };
}

describe('children draw from their parent budget', () => {
  it.each([1, 2, 3, 4, 5])('parallel agents and a child swarm never overspend the root (seed %i)', async (seed) => {
    const cap = 6000;
    const { model, spent, made } = diggers(seed);
    const store = memoryStore();
    const rt = file.runtime({ swarms: [root(cap), miner()], agents: [digger, sifter], model, store, maxOutputTokens: 40 });
    const client = rt.forSwarm('root', `r${seed}`);
    await client.run('Go');
    // Everyone runs until the root's budget refuses them: the root pauses, and so does the child.
    await until(
      'the root to pause at its budget',
      () => client.getResult(),
      (r) => r.status === 'paused',
    );
    await until(
      'the child to pause',
      () =>
        rt
          .forSwarm('miner', `r${seed}:t1:2`)
          .getResult()
          .catch(() => undefined),
      (r) => r?.status === 'paused',
    );
    const settled = made.length;
    await new Promise((r) => setTimeout(r, 20));
    expect(made.length).toBe(settled);
    const account = await store.budgets!.account(`swarm:r${seed}`);
    const reported = [...spent.values()].reduce((a, b) => a + b, 0);
    // Every call made settled: nothing is held any more. Calls that answered count what they
    // reported; calls a pause cut short count their worst case (what they were billed is unknown).
    expect(account?.reserved.tokens).toBe(0);
    expect(account!.spent.tokens).toBeGreaterThanOrEqual(reported);
    expect(account!.spent.tokens).toBeLessThanOrEqual(cap);
    // Everybody drew from it: the orchestrator, both agents, the child swarm.
    expect(new Set(made.map((r) => r.agentId))).toEqual(new Set(['root', 'digger', 'sifter', 'miner']));
    await client.stop();
  });

  it("a child's own lower slice wins; it pauses at its own limit while the root has room", async () => {
    const { model, made } = diggers(7);
    const store = memoryStore();
    const rt = file.runtime({ swarms: [root(1_000_000), miner({ tokens: 3000 })], agents: [digger, sifter], model, store, maxOutputTokens: 40 });
    const client = rt.forSwarm('root', 'slice');
    await client.run('Go');
    const childId = 'slice:t1:2';
    const child = await until(
      'the child to pause at its own budget',
      () =>
        rt
          .forSwarm('miner', childId)
          .getResult()
          .catch(() => undefined),
      (r) => r?.status === 'paused',
    );
    expect(child).toMatchObject({ reason: { type: 'LIMIT', limit: { limit: 'tokens', max: 3000, account: `swarm:${childId}` } } });
    const own = await store.budgets!.account(`swarm:${childId}`);
    expect(own!.spent.tokens).toBeLessThanOrEqual(3000);
    // The root's account counts the child's calls too.
    const rootAccount = await store.budgets!.account('swarm:slice');
    expect(rootAccount!.spent.tokens).toBeGreaterThanOrEqual(own!.spent.tokens);
    expect(made.some((r) => r.agentId === 'miner')).toBe(true);
    await client.stop();
  });
});
