/**
 * A remote A2A peer's reported usage counts against the budget of the swarm that called it
 * (issue 30, item 2: "a remote's reported usage settles against the parent"): it was spent
 * elsewhere, so it is charged with the result rather than reserved, and the swarm's next call
 * is refused once the budget is spent.
 */
import { afterEach, expect, it } from 'vitest';
import { createRuntime, defineSwarm, handoff, handoffToolName, memoryStore, type Runtime, scriptedModel } from '../../src/index.js';
import { serve } from '../../src/server/index.js';

const runtimes: Runtime[] = [];
afterEach(async () => {
  for (const r of runtimes.splice(0)) await r.close();
});

it("a remote peer's reported usage is charged to the caller's budget", async () => {
  const weather = defineSwarm({ id: 'weather', description: 'Answers weather questions', instructions: 'Forecast.' });
  const peer = createRuntime({ swarms: [weather], model: scriptedModel(() => ({ text: 'Sunny', usage: { inputTokens: 30, outputTokens: 3 } }), 'peer-model') });
  runtimes.push(peer);
  const server = await serve(peer);
  try {
    const planner = defineSwarm({
      id: 'planner',
      instructions: 'Plan.',
      budget: { modelCalls: 2, tokens: 100_000 },
      handoffs: [handoff.toRemoteAgent(`${server.url}/a2a/weather/.well-known/agent-card.json`)],
    });
    let calls = 0;
    const model = scriptedModel(() => {
      calls++;
      return { toolCalls: [{ id: 'w1', name: handoffToolName('weather'), arguments: '{"request":"weekend?"}' }], usage: { inputTokens: 5, outputTokens: 1 } };
    }, 'big');
    const store = memoryStore();
    const home = createRuntime({ swarms: [planner], model, store });
    runtimes.push(home);
    const client = home.forSwarm(planner, 'r1');
    await client.run('weekend');
    // Its own call (1) and the peer's (1): the budget of 2 model calls is spent, the next is not made.
    expect(await client.wait()).toMatchObject({ status: 'paused', reason: { type: 'LIMIT', limit: { limit: 'modelCalls', max: 2, spent: 2, left: 0 } } });
    expect(calls).toBe(1);
    expect(await store.budgets!.account('swarm:r1')).toMatchObject({ spent: { modelCalls: 2, tokens: 6 + 33 }, reserved: { modelCalls: 0 } });
    await client.stop();
  } finally {
    await server.close();
  }
});
