/**
 * Budgets on JetStream: runtimes on one NATS (and prefix) draw from the same accounts, kept in
 * the `<prefix>_budgets` bucket. Two stores on two connections — two processes, as far as NATS
 * can tell — reserve against one account at once and never overspend it; a third reads the spend
 * after they are gone; a runtime on the store pauses a swarm at its budget and another one,
 * later, resumes it within the same spend.
 */
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createRuntime, defineSwarm, scriptedModel, tool } from '../../src/index.js';
import type { BudgetAmount } from '../../src/store/budgets.js';
import { jetstreamNamespace } from '../support/jetstream-namespace.js';
import { natsServerMissing } from '../support/nats-server.js';

const ns = jetstreamNamespace('b');

const call: BudgetAmount = { tokens: 100, usd: 0, modelCalls: 1, toolCalls: 0 };

describe.skipIf(natsServerMissing)('budgets on JetStream', () => {
  it('two stores reserving at once never overspend one account; a third reads the spend', async () => {
    const [a, b] = [await ns.open(), await ns.open()];
    const caps = { tokens: 1000, modelCalls: 8 };
    const results = await Promise.all(
      Array.from({ length: 20 }, async (_, i) => {
        const ledger = (i % 2 ? a : b).budgets!;
        const refusal = await ledger.reserve({ key: `c${i}`, accounts: [{ id: 'swarm:shared', caps }], amount: call, now: Date.now(), ttlMs: 60_000 });
        if (!refusal) await ledger.settle(`c${i}`, { ...call, tokens: 60 });
        return refusal;
      }),
    );
    expect(results.filter((r) => r === undefined)).toHaveLength(8);
    expect(results.find((r) => r)).toMatchObject({ account: 'swarm:shared', limit: 'modelCalls', max: 8 });
    const c = await ns.open();
    expect(await c.budgets!.account('swarm:shared')).toMatchObject({ caps, spent: { tokens: 480, modelCalls: 8 }, reserved: { tokens: 0, modelCalls: 0 } });
  });

  it('a swarm paused at its budget by one runtime is extended and resumed by another; the spend carries over', async () => {
    const note = tool({ name: 'note', description: 'Notes', parameters: z.object({}), execute: () => 'noted' });
    const planner = defineSwarm({ id: 'planner', instructions: 'Take notes.', tools: [note], maxTurns: 20, budget: { modelCalls: 2 } });
    let calls = 0;
    const model = scriptedModel((req) => {
      calls++;
      return req.messages.some((m) => m.content === 'conclude') ? { text: 'done' } : { toolCalls: [{ id: `n${calls}`, name: 'note', arguments: '{}' }] };
    });
    const first = createRuntime({ swarms: [planner], model, store: await ns.open() });
    await first.forSwarm('planner', 'js1').run('go');
    expect(await first.forSwarm('planner', 'js1').wait()).toMatchObject({ status: 'paused', reason: { limit: { limit: 'modelCalls', spent: 2 } } });
    await first.close();

    const second = createRuntime({ swarms: [planner], model, store: await ns.open() });
    ns.onCleanup(() => second.close());
    await second.start();
    const client = second.forSwarm('planner', 'js1');
    expect((await client.usage()).budgets?.[0]).toMatchObject({ account: 'swarm:js1', spent: { modelCalls: 2 }, left: { modelCalls: 0 } });
    await client.extend({ budget: { modelCalls: 3 } });
    await client.resume('conclude');
    expect(await client.wait()).toEqual({ status: 'completed', result: 'done' });
    expect(calls).toBe(3);
  });
});
