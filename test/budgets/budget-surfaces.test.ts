/**
 * A budget seen and raised from outside: `client.usage()` reports each budget's caps, spend and
 * what is left; REST `POST …/extend { budget }` and `xswarm extend <id> --budget '<json>'` raise
 * it (a bad one is a 400 / a usage error with the reason).
 */
import { afterAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { defineSwarm, scriptedModel, tool } from '../../src/index.js';
import { serve } from '../../src/server/index.js';
import { killCliProcesses, runCli } from '../support/cli-process.js';
import { call } from '../support/script.js';
import { sqliteFilePerTest } from '../support/sqlite-file.js';

const file = sqliteFilePerTest('xswarm-budget-surfaces-');
afterAll(killCliProcesses);

const note = tool({ name: 'note', description: 'Notes', parameters: z.object({}), execute: () => 'noted' });
const model = () =>
  scriptedModel((req) => {
    const usage = { inputTokens: 10, outputTokens: 5 };
    return req.messages.some((m) => m.content === 'conclude') ? { text: 'done', usage } : { ...call('note', {}), usage };
  });
const planner = defineSwarm({ id: 'planner', instructions: 'Take notes.', tools: [note], maxTurns: 20, budget: { modelCalls: 2, tokens: 100_000 } });

describe('budgets from outside', () => {
  it('usage() reports the budget: caps, spent, held and left', async () => {
    const rt = file.runtime({ swarms: [planner], model: model() });
    const client = rt.forSwarm('planner', 'u1');
    await client.run('go');
    await client.wait();
    expect((await client.usage()).budgets).toEqual([
      {
        account: 'swarm:u1',
        caps: { modelCalls: 2, tokens: 100_000 },
        spent: { tokens: 30, usd: 0, modelCalls: 2, toolCalls: 2 },
        reserved: { tokens: 0, usd: 0, modelCalls: 0, toolCalls: 0 },
        left: { modelCalls: 0, tokens: 100_000 - 30 },
      },
    ]);
  });

  it('REST and the CLI raise it; a bad budget is refused with its reason', async () => {
    const rt = file.runtime({ swarms: [planner], model: model() });
    const server = await serve(rt, { port: 0 });
    file.track(server);
    const client = rt.forSwarm('planner', 'h1');
    await client.run('go');
    expect(await client.wait()).toMatchObject({ status: 'paused', reason: { limit: { limit: 'modelCalls' } } });
    const post = (body: unknown) =>
      fetch(`${server.url}/swarms/planner/h1/extend`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
    const bad = await post({ budget: { modelCalls: -1 } });
    expect(bad.status).toBe(400);
    expect(await bad.json()).toEqual({ error: 'budget modelCalls must be a finite number ≥ 0, got -1' });
    const ok = await post({ budget: { modelCalls: 3 } });
    expect(ok.status).toBe(200);
    expect((await client.usage()).budgets?.[0]?.caps).toEqual({ modelCalls: 3, tokens: 100_000 });

    const cli = await runCli(['extend', 'h1', '--budget', '{"modelCalls":4}', '--url', server.url]);
    expect(cli.code, cli.stderr).toBe(0);
    expect((await client.usage()).budgets?.[0]?.caps).toEqual({ modelCalls: 4, tokens: 100_000 });
    const notJson = await runCli(['extend', 'h1', '--budget', 'lots', '--url', server.url]);
    expect(notJson.code).not.toBe(0);
    expect(notJson.stderr).toContain(`--budget takes JSON, e.g. --budget '{"usd":5}': lots is not JSON`);
    await client.resume('conclude');
    expect(await client.wait()).toEqual({ status: 'completed', result: 'done' });
  });
});
