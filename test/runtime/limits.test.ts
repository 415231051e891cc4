/**
 * Limits that pause (issue 30, item 3), for `maxTurns`: reaching it pauses the swarm with a
 * `LIMIT` reason (what tripped, what was spent, what is left) instead of failing it, unless
 * `onLimit: 'fail'`; `client.extend({ maxTurns })` raises it durably and `resume` goes on in the
 * same conversation; across a restart; a child at its limit pauses and its parent shows it.
 */
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { DefinitionError, defineSwarm, handoff, handoffToolName, type ModelRequest, scriptedModel, SwarmError, tool } from '../../src/index.js';
import { serve } from '../../src/server/index.js';
import { call, collect } from '../support/script.js';
import { sqliteFilePerTest } from '../support/sqlite-file.js';
import { until } from '../support/wait.js';

const file = sqliteFilePerTest('xswarm-limits-');

const runtime = file.runtime;

const note = tool({ name: 'note', description: 'Notes a step', parameters: z.object({ step: z.number() }), execute: ({ step }) => `noted ${step}` });

/** A model that takes notes until the human said "conclude", then completes with the notes it saw. */
function notetaker() {
  const requests: ModelRequest[] = [];
  const model = scriptedModel((req) => {
    requests.push(req);
    const notes = req.messages.filter((m) => m.role === 'tool').length;
    if (req.messages.some((m) => m.role === 'user' && m.content === 'conclude')) return { text: `done after ${notes} notes` };
    return call('note', { step: notes + 1 }, `n${notes + 1}`);
  });
  return { model, requests };
}

const planner = (maxTurns: number, extra: Partial<Parameters<typeof defineSwarm>[0]> = {}) =>
  defineSwarm({ id: 'planner', instructions: 'Take notes.', tools: [note], maxTurns, ...extra });

const limitReason = (max: number, spent = max, n = 1) => ({
  type: 'LIMIT',
  message: `maxTurns (${max}) reached without a result: extend the swarm's limits to go on, or stop it`,
  limit: { limit: 'maxTurns', max, spent, left: max - spent },
  // The machine names a limit pause by its turn and its count of such pauses.
  pauseId: `limit:t${spent}:${n}`,
});

describe('maxTurns pauses', () => {
  it('pauses at the limit, refuses a resume until extended, then goes on in the same conversation; replay equals the run', async () => {
    const { model, requests } = notetaker();
    const rt = runtime({ swarms: [planner(2)], model });
    const client = rt.forSwarm('planner', 'p1');
    await client.run('Plan');
    expect(await client.wait()).toEqual({ status: 'paused', reason: limitReason(2), currentTurn: 2, maxTurns: 2 });
    expect(requests).toHaveLength(2);

    // Resumed at its limit it would only pause again: refused, nothing changes.
    const refused = await client.resume('conclude').catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(SwarmError);
    expect(refused).toMatchObject({ code: 'wrong-state', message: expect.stringContaining('paused at its limit of 2 turns: extend it') });
    expect(requests).toHaveLength(2);

    await client.extend({ maxTurns: 3 });
    expect(await client.getResult()).toEqual({ status: 'paused', reason: limitReason(2), currentTurn: 2, maxTurns: 3 });
    await client.resume('conclude');
    expect(await client.wait()).toEqual({ status: 'completed', result: 'done after 2 notes' });
    // The same conversation: the third call saw both notes and the human's word.
    expect(requests).toHaveLength(3);
    expect(requests[2]!.messages.filter((m) => m.role === 'tool').map((m) => m.content)).toEqual(['noted 1', 'noted 2']);

    const events = await collect(client.events());
    const facts = events.flatMap((e) => (e.kind === 'status-update' ? [e.metadata.type] : []));
    expect(facts).toEqual(expect.arrayContaining(['paused', 'extended', 'resumed', 'completed']));
    expect(events).toContainEqual(
      expect.objectContaining({
        kind: 'status-update',
        status: expect.objectContaining({ state: 'input-required' }),
        metadata: { type: 'extended', maxTurns: 3, previousMaxTurns: 2 },
      }),
    );
    expect(await collect(rt.replay('p1'))).toEqual(events);
  });

  it("onLimit: 'fail' fails at the limit, on the definition, per run, and for an ad-hoc swarm", async () => {
    const rt = runtime({
      swarms: [planner(1, { onLimit: 'fail' }), defineSwarm({ id: 'other', instructions: 'x', tools: [note], maxTurns: 1 })],
      model: notetaker().model,
    });
    const byDefinition = rt.forSwarm('planner', 'f1');
    await byDefinition.run('Plan');
    expect(await byDefinition.wait()).toEqual({ status: 'failed', reason: 'maxTurns (1) reached without a result' });

    const perRun = rt.forSwarm('other', 'f2').withParameters({ onLimit: 'fail' });
    await perRun.run('Plan');
    expect(await perRun.wait()).toEqual({ status: 'failed', reason: 'maxTurns (1) reached without a result' });

    const adhoc = rt.adhoc('f3');
    await adhoc.run({ userMessage: 'Plan', instructions: 'Take notes.', tools: [note], maxTurns: 1, onLimit: 'fail' });
    expect(await adhoc.wait()).toEqual({ status: 'failed', reason: 'maxTurns (1) reached without a result' });
  });

  it('survives restarts: paused at the limit, extended in one runtime, resumed in the next', async () => {
    const a = runtime({ swarms: [planner(1)], model: notetaker().model, store: file.open() });
    await a.forSwarm('planner', 'r1').run('Plan');
    expect(await a.forSwarm('planner', 'r1').wait()).toMatchObject({ status: 'paused', reason: { type: 'LIMIT' } });
    await a.close();

    const b = runtime({ swarms: [planner(1)], model: notetaker().model, store: file.open() });
    await b.start();
    await b.forSwarm('planner', 'r1').extend({ maxTurns: 2 });
    await b.close();

    const { model, requests } = notetaker();
    const c = runtime({ swarms: [planner(1)], model, store: file.open() });
    await c.start();
    const client = c.forSwarm('planner', 'r1');
    // The definition still says 1: the extension was stored with the swarm.
    expect(await client.getResult()).toMatchObject({ status: 'paused', maxTurns: 2 });
    await client.resume('conclude');
    expect(await client.wait()).toEqual({ status: 'completed', result: 'done after 1 notes' });
    expect(requests).toHaveLength(1);
  });

  it('a child swarm at its limit pauses; its parent shows it and goes on once the child is extended and resumed', async () => {
    const child = defineSwarm({ id: 'researcher', instructions: 'Take notes.', tools: [note], maxTurns: 1 });
    const lead = defineSwarm({ id: 'lead', instructions: 'Lead.', handoffs: [handoff.toSwarm(child)] });
    const model = scriptedModel((req) => {
      if (req.agentId === 'researcher') {
        const notes = req.messages.filter((m) => m.role === 'tool').length;
        return req.messages.some((m) => m.content === 'conclude') ? { text: `found ${notes}` } : call('note', { step: notes + 1 });
      }
      const answer = req.messages.find((m) => m.role === 'tool');
      return answer ? { text: `lead: ${answer.content}` } : call(handoffToolName('researcher'), { request: 'Research' }, 'h1');
    });
    const rt = runtime({ swarms: [lead, child], model });
    const parent = rt.forSwarm('lead', 'l1');
    await parent.run('Go');
    const childClient = rt.forSwarm('researcher', 'l1:t1:0');
    await until(
      'the child paused at its limit',
      () => childClient.getResult().catch(() => undefined),
      (r) => r?.status === 'paused',
    );
    expect(await childClient.getResult()).toMatchObject({ reason: limitReason(1) });
    // The parent waits on it; its result lists the paused child and why, and its stream says so.
    expect(await parent.getResult()).toMatchObject({
      status: 'running',
      currentChildSwarm: 'l1:t1:0',
      pausedChildren: [{ swarmId: 'l1:t1:0', reason: limitReason(1) }],
    });
    let relayed: unknown;
    for await (const e of parent.events()) {
      if (e.kind === 'status-update' && e.metadata.type === 'child-swarm' && e.metadata.lifecycle === 'paused') {
        relayed = e;
        break;
      }
    }
    expect(relayed).toMatchObject({ metadata: { childSwarmId: 'l1:t1:0', reason: expect.stringContaining('maxTurns (1) reached') } });

    await childClient.extend({ maxTurns: 2 });
    await childClient.resume('conclude');
    expect(await parent.wait()).toEqual({ status: 'completed', result: 'lead: found 1' });
    expect(await parent.getResult()).not.toHaveProperty('pausedChildren');
  });
});

describe('extend refuses what it cannot do, with a clear error', () => {
  it.each([
    ['no limit', {}, 'invalid-input', 'extend needs a limit to raise: { maxTurns?, budget? }'],
    ['zero', { maxTurns: 0 }, 'invalid-input', 'maxTurns must be a positive whole number, got 0'],
    ['a fraction', { maxTurns: 2.5 }, 'invalid-input', 'maxTurns must be a positive whole number, got 2.5'],
    ['text', { maxTurns: 'many' as unknown as number }, 'invalid-input', 'maxTurns must be a positive whole number, got "many"'],
    ['no room', { maxTurns: 2 }, 'invalid-input', 'maxTurns 2 leaves swarm "b1" no room: it has made 2 turns already'],
  ])('%s', async (_what, limits, code, message) => {
    const rt = runtime({ swarms: [planner(2)], model: notetaker().model });
    const client = rt.forSwarm('planner', 'b1');
    await client.run('Plan');
    await client.wait();
    const error = await client.extend(limits).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(SwarmError);
    expect(error).toMatchObject({ code, message });
    expect(await client.getResult()).toMatchObject({ status: 'paused', maxTurns: 2 });
  });

  it('an ended swarm cannot be extended; an onLimit that is not pause or fail is a definition error', async () => {
    const rt = runtime({ swarms: [planner(2)], model: scriptedModel(() => ({ text: 'done' })) });
    const client = rt.forSwarm('planner', 'e1');
    await client.run('Plan');
    await client.wait();
    await expect(client.extend({ maxTurns: 5 })).rejects.toMatchObject({ code: 'wrong-state' });
    expect(() => defineSwarm({ id: 's', instructions: 'i', onLimit: 'retry' as 'fail' })).toThrow(DefinitionError);
    expect(() => defineSwarm({ id: 's', instructions: 'i', onLimit: 'retry' as 'fail' })).toThrow(`Swarm "s": onLimit must be 'pause' or 'fail', got "retry"`);
  });

  it('over REST: POST …/extend { maxTurns } raises the limit; a bad value is a 400 with the reason', async () => {
    const rt = runtime({ swarms: [planner(1)], model: notetaker().model });
    const server = await serve(rt, { port: 0 });
    file.track(server);
    const client = rt.forSwarm('planner', 'h1');
    await client.run('Plan');
    await client.wait();
    const post = (body: unknown) =>
      fetch(`${server.url}/swarms/planner/h1/extend`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
    const bad = await post({ maxTurns: -1 });
    expect(bad.status).toBe(400);
    expect(await bad.json()).toEqual({ error: 'maxTurns must be a positive whole number, got -1' });
    const ok = await post({ maxTurns: 3 });
    expect(ok.status).toBe(200);
    expect(await ok.json()).toMatchObject({ ok: true, result: { status: 'paused', maxTurns: 3 } });
  });
});
