/**
 * A team's budget (issue 30, item 2): every task swarm of one team draws from it, whichever
 * worker runs it and however many run at once; a task swarm it refuses pauses, which fails its
 * attempt (a task swarm has no human), and the team's spend never exceeds the cap.
 */
import { describe, expect, it } from 'vitest';
import { DefinitionError, defineSwarm, defineTeam, memoryStore, scriptedModel } from '../../src/index.js';
import { sqliteFilePerTest } from '../support/sqlite-file.js';
import { until } from '../support/wait.js';

const file = sqliteFilePerTest('xswarm-budget-team-');

const builder = defineSwarm({ id: 'builder', instructions: 'You build.' });

describe('team budgets', () => {
  it('task swarms of two workers draw from the team budget at once and never spend above it', async () => {
    let calls = 0;
    const model = scriptedModel(async (req) => {
      calls++;
      await new Promise((r) => setTimeout(r, 5));
      req.signal.throwIfAborted();
      return { text: 'built', usage: { inputTokens: 10, outputTokens: 5 } };
    });
    const team = defineTeam({ id: 'crew', workers: [{ type: 'build', swarm: builder, count: 2 }], budget: { modelCalls: 3 }, limits: { maxAttempts: 1 } });
    const store = memoryStore();
    const rt = file.runtime({ model, teams: [team], store });
    const client = rt.forTeam(team);
    await client.run(Array.from({ length: 5 }, (_, i) => ({ id: `t${i}`, subject: `task ${i}`, metadata: { type: 'build' } })));
    await client.wait();
    // The calls in flight settle; then every call made counts against the team, no more than its cap.
    const account = await until(
      'the team account to hold nothing',
      () => store.budgets!.account('team:crew'),
      (a) => a?.reserved.modelCalls === 0 && calls === a.spent.modelCalls,
    );
    expect(account!.spent.modelCalls).toBeLessThanOrEqual(3);
    // A task past the budget: its swarm paused before calling the model, so its attempt failed.
    const swarms = await rt.list();
    expect(swarms.some((s) => s.status === 'stopped' && s.result.status === 'stopped' && s.result.reason === 'a team task cannot wait for a human')).toBe(true);
    await client.stop();
  });

  it('a bad team budget is a definition error', () => {
    expect(() => defineTeam({ id: 'crew', workers: [{ type: 'build', swarm: builder }], budget: { usd: -1 } })).toThrow(DefinitionError);
    expect(() => defineTeam({ id: 'crew', workers: [{ type: 'build', swarm: builder }], budget: { usd: -1 } })).toThrow(
      'Team "crew": budget usd must be a finite number ≥ 0, got -1',
    );
  });
});
