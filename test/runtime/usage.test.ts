/**
 * A swarm's usage: the tokens of every model call made for it — its orchestrator's and its
 * agents' — read through `client.usage()`, live and from the store after a restart; each call's
 * own usage stays in its `internal:llm-call` event.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createRuntime, defineAgent, defineSwarm, handoff, type Model, type Runtime, scriptedModel, sqliteStore } from '../../src/index.js';

const weather = defineAgent({ id: 'weather-agent', instructions: 'Give the forecast.' });
const planner = defineSwarm({ id: 'planner', instructions: 'Plan the day.', handoffs: [handoff.toAgent(weather)] });

/** The orchestrator hands off once, the agent answers, the orchestrator completes; each call reports its own usage. */
function model(): Model {
  return scriptedModel((req) => {
    if (req.agentId === 'weather-agent') return { text: 'Sunny.', usage: { inputTokens: 7, outputTokens: 3 } };
    const handedOff = req.messages.some((m) => m.role === 'tool');
    return handedOff
      ? { text: 'Go hiking.', usage: { inputTokens: 20, outputTokens: 5 } }
      : { toolCalls: [{ id: 'c1', name: 'handoff_to_weather_agent', arguments: '{"request":"Saturday?"}' }], usage: { inputTokens: 11, outputTokens: 2 } };
  });
}

let runtimes: Runtime[] = [];
let dir: string | undefined;
afterEach(async () => {
  for (const r of runtimes) await r.close();
  runtimes = [];
  if (dir) rmSync(dir, { recursive: true, force: true });
  dir = undefined;
});

describe('usage', () => {
  it('counts the orchestrator and its agents, once each, as its events report them', async () => {
    const runtime = createRuntime({ swarms: [planner], model: model() });
    runtimes.push(runtime);
    const client = runtime.forSwarm(planner, 'u1');
    expect(await client.run('Saturday').then(() => client.wait())).toMatchObject({ status: 'completed', result: 'Go hiking.' });

    expect(await client.usage()).toMatchObject({ inputTokens: 11 + 7 + 20, outputTokens: 2 + 3 + 5 });
    // The same sum as the calls' own events (orchestrator's and the agent's).
    let input = 0;
    let output = 0;
    for await (const e of client.events()) {
      if (e.kind === 'internal:llm-call' && e.usage) {
        input += e.usage.inputTokens;
        output += e.usage.outputTokens;
      }
    }
    expect({ input, output }).toEqual({ input: 38, output: 10 });
  });

  it('is durable: another runtime reads it from the store; an unknown swarm is refused', async () => {
    dir = mkdtempSync(join(tmpdir(), 'xswarm-usage-'));
    const file = join(dir, 'state.db');
    const first = createRuntime({ swarms: [planner], model: model(), store: sqliteStore(file) });
    const client = first.forSwarm(planner, 'u2');
    await client.run('Saturday');
    await client.wait();
    await first.close();
    await first.store.close();

    const second = createRuntime({ swarms: [planner], model: model(), store: sqliteStore(file) });
    runtimes.push(second);
    expect(await second.forSwarm(planner, 'u2').usage()).toMatchObject({ inputTokens: 38, outputTokens: 10, modelCalls: 3 });
    await expect(second.forSwarm(planner, 'nobody').usage()).rejects.toThrow(/Unknown swarm "nobody"/);
  });
});
