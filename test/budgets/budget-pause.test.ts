/**
 * Budgets reserved before each call (issue 30, items 2 and 3): a call that would exceed a cap is
 * not made — the swarm pauses with a `LIMIT` reason saying what tripped, what was spent and what
 * is left, or fails with `onLimit: 'fail'`; `client.extend({ budget })` then `resume` go on in the
 * same conversation, durably; a replay makes no call.
 */
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { defineSwarm, type ModelRequest, scriptedModel, tool } from '../../src/index.js';
import { call, collect } from '../support/script.js';
import { sqliteFilePerTest } from '../support/sqlite-file.js';

const file = sqliteFilePerTest('xswarm-budget-pause-');

let ran = 0;
const note = tool({
  name: 'note',
  description: 'Notes a step',
  parameters: z.object({ step: z.number() }),
  execute: ({ step }) => {
    ran++;
    return `noted ${step}`;
  },
});

/** Takes notes until the human said "conclude"; each call reports 10 input and 5 output tokens. */
function notetaker() {
  const requests: ModelRequest[] = [];
  const model = scriptedModel((req) => {
    requests.push(req);
    const notes = req.messages.filter((m) => m.role === 'tool').length;
    const usage = { inputTokens: 10, outputTokens: 5 };
    if (req.messages.some((m) => m.role === 'user' && m.content === 'conclude')) return { text: `done after ${notes} notes`, usage };
    return { ...call('note', { step: notes + 1 }, `n${notes + 1}`), usage };
  }, 'notes-model');
  return { model, requests };
}

const planner = (budget: Parameters<typeof defineSwarm>[0]['budget'], extra: Partial<Parameters<typeof defineSwarm>[0]> = {}) =>
  defineSwarm({ id: 'planner', instructions: 'Take notes.', tools: [note], maxTurns: 50, budget, ...extra });

describe('a budget pauses the swarm before the call that would exceed it', () => {
  it('modelCalls: pauses with what tripped, refuses nothing it already did, goes on once extended; replay makes no call', async () => {
    const { model, requests } = notetaker();
    const rt = file.runtime({ swarms: [planner({ modelCalls: 2 })], model, store: file.open() });
    const client = rt.forSwarm('planner', 'b1');
    await client.run('Plan');
    const paused = await client.wait();
    expect(paused).toMatchObject({
      status: 'paused',
      reason: { type: 'LIMIT', limit: { limit: 'modelCalls', max: 2, spent: 2, left: 0, account: 'swarm:b1' } },
    });
    expect(paused.status === 'paused' && paused.reason.message).toContain('budget modelCalls (2) of swarm "b1" would be exceeded: 2 spent, 0 left');
    // The third call was never made.
    expect(requests).toHaveLength(2);

    await client.extend({ budget: { modelCalls: 3 } });
    await client.resume('conclude');
    expect(await client.wait()).toEqual({ status: 'completed', result: 'done after 2 notes' });
    expect(requests).toHaveLength(3);
    // The same conversation: the third call saw both notes.
    expect(requests[2]!.messages.filter((m) => m.role === 'tool').map((m) => m.content)).toEqual(['noted 1', 'noted 2']);

    const events = await collect(client.events());
    expect(events).toContainEqual(
      expect.objectContaining({ kind: 'status-update', metadata: { type: 'extended', maxTurns: 50, previousMaxTurns: 50, budget: { modelCalls: 3 } } }),
    );
    const before = requests.length;
    expect(await collect(rt.replay('b1'))).toEqual(events);
    expect(requests).toHaveLength(before);
  });

  it('tokens: reserves the prompt estimate plus the output ceiling, and the model is asked for at most that ceiling', async () => {
    const { model, requests } = notetaker();
    // Room for about two calls' worst case (prompt bytes + 100) but not three.
    const rt = file.runtime({ swarms: [planner({ tokens: 500 })], model, maxOutputTokens: 100 });
    const client = rt.forSwarm('planner', 't1');
    await client.run('Plan');
    const paused = await client.wait();
    expect(paused).toMatchObject({ status: 'paused', reason: { type: 'LIMIT', limit: { limit: 'tokens', max: 500 } } });
    expect(requests.every((r) => r.maxOutputTokens === 100)).toBe(true);
    // What was spent is what the calls reported (15 each), never above the cap.
    const trip = paused.status === 'paused' ? paused.reason.limit! : undefined;
    expect(trip?.spent).toBe(15 * requests.length);
    expect(trip!.spent).toBeLessThanOrEqual(500);
  });

  it("onLimit: 'fail' fails the swarm with what tripped; no call beyond the cap is made", async () => {
    const { model, requests } = notetaker();
    const rt = file.runtime({ swarms: [planner({ modelCalls: 1 }, { onLimit: 'fail' })], model });
    const client = rt.forSwarm('planner', 'f1');
    await client.run('Plan');
    const result = await client.wait();
    expect(result).toMatchObject({ status: 'failed', reason: expect.stringContaining('budget modelCalls (1) of swarm "f1" would be exceeded') });
    expect(requests).toHaveLength(1);
  });

  it('toolCalls: the tool is not run past its cap; extended, it runs', async () => {
    ran = 0;
    const { model } = notetaker();
    const rt = file.runtime({ swarms: [planner({ toolCalls: 1 })], model });
    const client = rt.forSwarm('planner', 'tc1');
    await client.run('Plan');
    expect(await client.wait()).toMatchObject({ status: 'paused', reason: { type: 'LIMIT', limit: { limit: 'toolCalls', max: 1, spent: 1, left: 0 } } });
    expect(ran).toBe(1);
    await client.extend({ budget: { toolCalls: 2 } });
    await client.resume();
    expect(await client.wait()).toMatchObject({ status: 'paused', reason: { limit: { limit: 'toolCalls', max: 2, spent: 2 } } });
    expect(ran).toBe(2);
    await client.stop();
    // A replay runs none of it again: no tool, no model call.
    const events = await collect(client.events());
    expect(await collect(rt.replay('tc1'))).toEqual(events);
    expect(ran).toBe(2);
  });

  it('wallMs: a deadline from the first call; past it no call is made, extended it goes on', async () => {
    let calls = 0;
    const model = scriptedModel(async (req) => {
      calls++;
      if (calls === 1) await new Promise((r) => setTimeout(r, 80));
      if (req.messages.some((m) => m.role === 'user' && m.content === 'conclude')) return { text: 'done' };
      return call('note', { step: calls }, `w${calls}`);
    });
    const rt = file.runtime({ swarms: [planner({ wallMs: 50 })], model });
    const client = rt.forSwarm('planner', 'w1');
    await client.run('Plan');
    const paused = await client.wait();
    expect(paused).toMatchObject({ status: 'paused', reason: { type: 'LIMIT', limit: { limit: 'wallMs', max: 50, left: 0, account: 'swarm:w1' } } });
    expect(paused.status === 'paused' && paused.reason.message).toMatch(/^budget wallMs \(50 ms\) of swarm "w1" ran out: \d+ ms elapsed/);
    expect(calls).toBe(1);
    await client.extend({ budget: { wallMs: 60_000 } });
    await client.resume('conclude');
    expect(await client.wait()).toEqual({ status: 'completed', result: 'done' });
  });

  it('survives restarts: spend is kept in the store, extended in one runtime, resumed in the next', async () => {
    const a = file.runtime({ swarms: [planner({ modelCalls: 2 })], model: notetaker().model, store: file.open() });
    await a.forSwarm('planner', 'r1').run('Plan');
    expect(await a.forSwarm('planner', 'r1').wait()).toMatchObject({ status: 'paused', reason: { limit: { limit: 'modelCalls' } } });
    await a.close();

    const { model, requests } = notetaker();
    const b = file.runtime({ swarms: [planner({ modelCalls: 2 })], model, store: file.open() });
    await b.start();
    const client = b.forSwarm('planner', 'r1');
    // Resumed without room: the spend was kept, so it pauses again without calling the model.
    await client.resume();
    await expect.poll(async () => (await client.getResult()).status).toBe('paused');
    expect(requests).toHaveLength(0);
    await client.extend({ budget: { modelCalls: 3 } });
    await client.resume('conclude');
    expect(await client.wait()).toEqual({ status: 'completed', result: 'done after 2 notes' });
    expect(requests).toHaveLength(1);
  });
});
