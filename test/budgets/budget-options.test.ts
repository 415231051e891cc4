/**
 * Where budgets are given, and what a bad one says (issue 30): on a definition, per run
 * (`withParameters`, `adhoc().run`), per key over a window (`createRuntime({ keyBudgets })`);
 * `usd` through the price table, failing closed for an unpriced model; negative, NaN or
 * non-numeric caps, unknown caps and lowered caps are clear errors where they are given.
 */
import { describe, expect, it } from 'vitest';
import { createRuntime, DefinitionError, defineSwarm, scriptedModel, SwarmError } from '../../src/index.js';
import { call } from '../support/script.js';
import { sqliteFilePerTest } from '../support/sqlite-file.js';

const file = sqliteFilePerTest('xswarm-budget-options-');

/** Calls `think` (no such tool: the model reads the error) until the human says "conclude"; each call reports 100 + 20 tokens. */
const thinker = (name = 'priced') => {
  let calls = 0;
  const model = scriptedModel((req) => {
    calls++;
    const usage = { inputTokens: 100, outputTokens: 20 };
    if (req.messages.some((m) => m.content === 'conclude')) return { text: 'done', usage };
    return { ...call('think', {}), usage };
  }, name);
  return { model, calls: () => calls };
};

const swarm = (extra: Partial<Parameters<typeof defineSwarm>[0]> = {}) => defineSwarm({ id: 's', instructions: 'Think.', maxTurns: 50, ...extra });

describe('bad budgets are clear errors where they are given', () => {
  it.each([
    ['negative', { tokens: -1 }, 'budget tokens must be a finite number ≥ 0, got -1'],
    ['NaN', { usd: Number.NaN }, 'budget usd must be a finite number ≥ 0, got NaN'],
    ['text', { modelCalls: 'ten' }, 'budget modelCalls must be a finite number ≥ 0, got "ten"'],
    ['a fraction of a call', { toolCalls: 1.5 }, 'budget toolCalls must be a whole number, got 1.5'],
    ['an unknown cap', { dollars: 5 }, 'unknown budget cap "dollars" (caps: tokens, usd, modelCalls, toolCalls, wallMs)'],
    ['not an object', 5, 'a budget must be an object { tokens?, usd?, modelCalls?, toolCalls?, wallMs? }, got 5'],
  ])('%s: on a definition, per run and for an ad-hoc swarm', async (_what, budget, message) => {
    expect(() => swarm({ budget: budget as never })).toThrow(DefinitionError);
    expect(() => swarm({ budget: budget as never })).toThrow(`Swarm "s": ${message}`);
    const rt = file.runtime({ swarms: [swarm()], model: thinker().model });
    await expect(
      rt
        .forSwarm('s', 'p1')
        .withParameters({ budget: budget as never })
        .run('go'),
    ).rejects.toThrow(message);
    await expect(rt.adhoc('a1').run({ userMessage: 'go', instructions: 'Think.', budget: budget as never })).rejects.toThrow(message);
    expect(() => createRuntime({ swarms: [], model: thinker().model, keyBudgets: { acme: { budget: budget as never, windowMs: 1000 } } })).toThrow(
      `createRuntime: keyBudgets["acme"]: ${message}`,
    );
  });

  it('extend refuses a bad budget, a lowered cap and a swarm without a budget of its own, with nothing changed', async () => {
    const rt = file.runtime({ swarms: [swarm({ budget: { modelCalls: 2 } }), defineSwarm({ id: 'free', instructions: 'x', maxTurns: 1 })], model: thinker().model });
    const client = rt.forSwarm('s', 'e1');
    await client.run('go');
    expect(await client.wait()).toMatchObject({ status: 'paused', reason: { limit: { limit: 'modelCalls' } } });
    await expect(client.extend({ budget: { modelCalls: -3 } })).rejects.toMatchObject({
      code: 'invalid-input',
      message: 'budget modelCalls must be a finite number ≥ 0, got -3',
    });
    await expect(client.extend({ budget: { modelCalls: 1 } })).rejects.toMatchObject({
      code: 'invalid-input',
      message: 'budget modelCalls can only be raised: it is 2, 1 is lower',
    });
    const free = rt.forSwarm('free', 'e2');
    await free.run('go');
    await free.wait();
    await expect(free.extend({ budget: { tokens: 10 } })).rejects.toBeInstanceOf(SwarmError);
    expect(await client.getResult()).toMatchObject({ status: 'paused' });
    expect(() => createRuntime({ swarms: [], model: thinker().model, maxOutputTokens: 0 })).toThrow('maxOutputTokens must be a whole number of tokens (1 or more)');
    expect(() => createRuntime({ swarms: [], model: thinker().model, keyBudgets: { acme: { budget: {}, windowMs: 0 } } })).toThrow(
      'windowMs must be a whole number of ms ≥ 1, got 0',
    );
  });
});

describe('usd, per run and per key', () => {
  it('usd: reserves the worst case through the price table, settles what was used, pauses before the cap', async () => {
    const { model, calls } = thinker();
    // $1 per 1000 tokens either way: a call reporting 120 tokens costs $0.12.
    const prices = { priced: { inputPerMTok: 1000, outputPerMTok: 1000 } };
    const rt = file.runtime({ swarms: [swarm()], model, prices, maxOutputTokens: 50 });
    const client = rt.forSwarm('s', 'u1').withParameters({ budget: { usd: 1 } });
    await client.run('go');
    const paused = await client.wait();
    expect(paused).toMatchObject({ status: 'paused', reason: { type: 'LIMIT', limit: { limit: 'usd', max: 1, account: 'swarm:u1' } } });
    const trip = paused.status === 'paused' ? paused.reason.limit! : undefined;
    expect(trip!.spent).toBeCloseTo(0.12 * calls(), 9);
    expect(trip!.spent).toBeLessThanOrEqual(1);
  });

  it('an unpriced model under a usd budget fails closed, naming the model; no call is made', async () => {
    const { model, calls } = thinker('mystery');
    const rt = file.runtime({ swarms: [swarm({ budget: { usd: 5 } })], model, prices: { other: { inputPerMTok: 1, outputPerMTok: 1 } } });
    const client = rt.forSwarm('s', 'u2');
    await client.run('go');
    expect(await client.wait()).toMatchObject({ status: 'failed', reason: expect.stringContaining('model "mystery" has no price in the runtime\'s price table') });
    expect(calls()).toBe(0);
  });

  it('a key budget is shared by every run naming the key, within its window; an unknown key fails the run clearly', async () => {
    const { model, calls } = thinker();
    const keyBudgets = { acme: { budget: { modelCalls: 3 }, windowMs: 86_400_000 } };
    const rt = file.runtime({ swarms: [swarm()], model, keyBudgets, store: file.open() });
    const first = rt.adhoc('k1');
    await first.run({ userMessage: 'conclude', instructions: 'Think.', budgetKey: 'acme' });
    expect(await first.wait()).toMatchObject({ status: 'completed' });
    const second = rt.forSwarm('s', 'k2').withParameters({ budgetKey: 'acme' });
    await second.run('go');
    const paused = await second.wait();
    const day = new Date(Math.floor(Date.now() / 86_400_000) * 86_400_000).toISOString();
    expect(paused).toMatchObject({ status: 'paused', reason: { limit: { limit: 'modelCalls', max: 3, spent: 3, account: `key:acme@${day}` } } });
    expect(calls()).toBe(3);
    // Another key's runs are not limited by it.
    const other = rt.forSwarm('s', 'k3').withParameters({ budgetKey: 'nobody' });
    await other.run('go');
    expect(await other.wait()).toMatchObject({ status: 'failed', reason: expect.stringContaining('budget key "nobody" is not configured') });
  });
});
