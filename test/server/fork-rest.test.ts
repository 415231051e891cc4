/**
 * `POST /swarms/:definitionId/:swarmId/fork` over `fetch`: a plan (`dryRun`), a fork that runs
 * live to its result, and the errors: 400 for a bad body, 404 for an unknown swarm, 409 for a
 * refused fork (with its reason) and for an id in use.
 */
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createRuntime, defineSwarm, tool } from '../../src/index.js';
import { serve } from '../../src/server/index.js';
import { call, queueModel } from '../support/script.js';
import { request, servedPerTest } from '../support/server-clients.js';
import { until } from '../support/wait.js';

const served = servedPerTest();

const done: string[] = [];
const work = tool({
  name: 'work',
  description: 'does a step',
  parameters: z.object({ step: z.number() }),
  execute: async ({ step }, ctx) => {
    done.push(ctx.idempotencyKey);
    return `step ${step} done`;
  },
});
const steps = defineSwarm({ id: 'steps', instructions: 'Work in steps.', tools: [work] });

describe('REST fork', () => {
  it('plans and makes a fork; refuses bad bodies (400), unknown swarms (404), refused forks and taken ids (409)', async () => {
    const script = [call('work', { step: 1 }, 'w1'), call('work', { step: 2 }, 'w2'), { text: 'finished' }];
    served.runtime = createRuntime({ swarms: [steps], model: queueModel({ steps: [...script, call('work', { step: 2 }, 'w2'), { text: 'forked' }] }) });
    served.server = await serve(served.runtime);
    const url = served.server.url;
    await request(url, 'POST', '/swarms/steps', { input: 'go', swarmId: 'src' });
    await until(
      'src to end',
      () => request(url, 'GET', '/swarms/steps/src').then((r) => r.body),
      (r) => r.status === 'completed',
    );

    const plan = await request(url, 'POST', '/swarms/steps/src/fork', { atTurn: 2, dryRun: true });
    expect(plan.status).toBe(200);
    expect(plan.body.plan).toMatchObject({
      sourceId: 'src',
      turn: 1,
      sideEffects: [{ kind: 'tool', name: 'work', callId: 'w2', arguments: '{"step":2}', key: 'src:t2:w2' }],
    });

    const forked = await request(url, 'POST', '/swarms/steps/src/fork', { atTurn: 2, newId: 'branch' });
    expect(forked.status).toBe(201);
    expect(forked.headers.get('location')).toBe('/swarms/steps/branch');
    expect(forked.body).toEqual({
      swarmId: 'branch',
      plan: { ...plan.body.plan, swarmId: 'branch', sideEffects: [{ ...plan.body.plan.sideEffects[0], newKey: 'branch:t2:w2' }] },
    });
    const result = await until(
      'the fork to end',
      () => request(url, 'GET', '/swarms/steps/branch').then((r) => r.body),
      (r) => r.status !== 'running',
    );
    expect(result).toEqual({ status: 'completed', result: 'forked' });
    expect(done).toEqual(['src:t1:w1', 'src:t2:w2', 'branch:t2:w2']);

    const bad = await Promise.all([
      request(url, 'POST', '/swarms/steps/src/fork', {}),
      request(url, 'POST', '/swarms/steps/src/fork', { atSeq: 3, atTurn: 1 }),
      request(url, 'POST', '/swarms/steps/src/fork', { atTurn: 1.5 }),
      request(url, 'POST', '/swarms/steps/src/fork', { atTurn: 1, extra: true }),
      request(url, 'POST', '/swarms/steps/src/fork', { atTurn: 1, newId: 'bad id!' }),
    ]);
    for (const r of bad) expect(r.status, JSON.stringify(r.body)).toBe(400);
    expect(bad[0]!.body.error).toMatch(/exactly one of atSeq and atTurn/);
    expect(bad[3]!.body.error).toMatch(/extra/);
    expect((await request(url, 'POST', '/swarms/steps/nope/fork', { atTurn: 1 })).status).toBe(404);
    const refused = await request(url, 'POST', '/swarms/steps/src/fork', { atTurn: 7 });
    expect(refused).toMatchObject({ status: 409, body: { reason: 'unknown-turn', error: expect.stringMatching(/turn 7/) } });
    expect((await request(url, 'POST', '/swarms/steps/src/fork', { atTurn: 2, newId: 'branch' })).status).toBe(409);
    expect((await request(url, 'GET', '/swarms/steps/src/fork')).status).toBe(405);
  });
});
