/**
 * The list's row follows the same counts as the selected swarm's header (the fold): turns are
 * the orchestrator's model responses, also mid-handoff (the turn counts when the model answers,
 * not when the handoff returns), tokens every model call's. Over events of a real runtime.
 */
import { afterEach, expect, it } from 'vitest';
import { createRuntime, defineAgent, defineSwarm, handoff, type Runtime, scriptedModel } from '../../../src/index.js';
import { Folder } from '../../../inspector/fold.js';
import { applyToRow } from '../../../inspector/list.js';
import { collect } from '../../support/script.js';

let runtime: Runtime | undefined;
afterEach(async () => {
  await runtime?.close();
  runtime = undefined;
});

it('a row updated event by event shows the turns and tokens the fold shows, at every step', async () => {
  const weather = defineAgent({ id: 'weather', instructions: 'Forecast.' });
  const planner = defineSwarm({ id: 'planner', instructions: 'Plan.', handoffs: [handoff.toAgent(weather)] });
  const model = scriptedModel((req) => {
    const results = req.messages.filter((m) => m.role === 'tool').length;
    if (req.agentId === 'weather') return { text: 'Sunny.', usage: { inputTokens: 80, outputTokens: 20 } };
    if (results === 0)
      return { toolCalls: [{ id: 'h1', name: 'handoff_to_weather', arguments: '{"request":"Saturday?"}' }], usage: { inputTokens: 420, outputTokens: 35 } };
    return { text: 'Hike.', usage: { inputTokens: 500, outputTokens: 40 } };
  });
  runtime = createRuntime({ swarms: [planner], agents: [weather], model });
  const client = runtime.forSwarm(planner, 'sat');
  await client.run('Plan my Saturday');
  expect(await client.wait()).toMatchObject({ status: 'completed' });
  const events = await collect(client.events());

  const row = { swarmId: 'sat', definitionId: 'planner', status: 'running', startedAt: null, updatedAt: 0, lastSeq: 0, turns: 0, tokens: null } as never as Parameters<
    typeof applyToRow
  >[0];
  const folder = new Folder();
  let handoffSteps = 0;
  for (const e of events) {
    applyToRow(row, e as never);
    folder.push(e as never);
    const view = folder.snapshot();
    if (view.state === 'awaitingHandoff') handoffSteps++;
    expect({ seq: e.seq, turns: row.turns }).toEqual({ seq: e.seq, turns: view.turns });
    expect(row.tokens?.input ?? 0).toBe(view.tokens.input);
    expect(row.tokens?.output ?? 0).toBe(view.tokens.output);
  }
  // The mid-handoff steps were among them (where the row said 0 turns, the header 1).
  expect(handoffSteps).toBeGreaterThan(0);
  expect(row).toMatchObject({ turns: 2, status: 'completed', tokens: { input: 1000, output: 95, total: 1095 } });
});
