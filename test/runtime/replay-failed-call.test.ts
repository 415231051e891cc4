/**
 * Replay of runs whose model call threw: nothing of the call is in the journal, so the replay
 * throws the recorded error again at that step — the swarm's own call (the run fails) and an
 * agent's (its handoff fails, the swarm goes on) — and gives the recorded events, with zero
 * model calls.
 */
import { describe, expect, it } from 'vitest';
import type { SwarmEvent } from '../../machines/events.js';
import { createRuntime, defineAgent, defineSwarm, handoff, scriptedModel } from '../../src/index.js';
import { call } from '../support/script.js';

async function collect(events: AsyncIterable<SwarmEvent>): Promise<SwarmEvent[]> {
  const seen: SwarmEvent[] = [];
  for await (const e of events) seen.push(e);
  return seen;
}

describe('replay of a model call that threw', () => {
  it("the swarm's own call: the replay fails the same way, with no model call", async () => {
    const swarm = defineSwarm({ id: 'boom', instructions: 'x' });
    let calls = 0;
    const model = scriptedModel(() => {
      calls++;
      throw new Error('model down');
    });
    const runtime = createRuntime({ swarms: [swarm], model });
    try {
      const client = runtime.forSwarm(swarm, 'b1');
      await client.run('go');
      expect(await client.wait()).toEqual({ status: 'failed', reason: 'Model call failed: model down' });
      const recorded = await collect(client.events());
      const before = calls;
      expect(await collect(runtime.replay('b1'))).toEqual(recorded);
      expect(calls).toBe(before);
    } finally {
      await runtime.close();
    }
  });

  it("an agent's call: its handoff fails with the recorded error, the swarm completes, the replay is the run", async () => {
    const weather = defineAgent({ id: 'weather', description: 'Forecasts', instructions: 'Forecast.' });
    const planner = defineSwarm({ id: 'planner', instructions: 'Plan.', handoffs: [handoff.toAgent(weather)] });
    let calls = 0;
    const model = scriptedModel((req) => {
      calls++;
      if (req.agentId === 'weather') throw new Error('weather model down');
      const results = req.messages.filter((m) => m.role === 'tool');
      return results.length === 0 ? call('handoff_to_weather', { request: 'Saturday?' }, 'h1') : { text: `plan without: ${results[0]!.content}` };
    });
    const runtime = createRuntime({ swarms: [planner], model });
    try {
      const client = runtime.forSwarm(planner, 'p1');
      await client.run('Plan Saturday');
      const result = await client.wait();
      expect(result).toMatchObject({ status: 'completed' });
      expect(JSON.stringify(result)).toContain('weather model down');
      const recorded = await collect(client.events());
      const before = calls;
      expect(await collect(runtime.replay('p1'))).toEqual(recorded);
      expect(calls).toBe(before);
    } finally {
      await runtime.close();
    }
  });
});
