/**
 * Answering pauses over MCP (issue 30, item 8) with the official v2 client: a typed pause asked
 * with a form elicitation (2026-07-28, client declares `elicitation`), accepted, declined, or
 * answered with the wrong shape (refused, nothing changed); without elicitation the paused result
 * carries the pause id and schema, and `<name>_resume` takes `pauseId` and `answer`; a limit
 * pause raised with `<name>_extend`. Replay reproduces the runs.
 */
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { afterEach, describe, expect, it } from 'vitest';
import { createRuntime, type Runtime } from '../../../src/index.js';
import { serve } from '../../../src/server/index.js';
import { answerModel, capped, dinner, GUESTS_SCHEMA, notes } from '../../support/answer-swarms.js';
import { collect } from '../../support/script.js';

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c().catch(() => undefined);
});

async function start() {
  const { model, requests } = answerModel();
  const runtime = createRuntime({ swarms: [dinner, notes, capped], model });
  cleanups.push(() => runtime.close());
  const server = await serve(runtime);
  cleanups.push(() => server.close());
  return { url: `${server.url}/mcp`, runtime, requests };
}

type Elicit = { message: string; requestedSchema: unknown };
type Reply = { action: 'accept' | 'decline' | 'cancel'; content?: Record<string, string | number | boolean | string[]> };

/** A v2 client; with `answer`, it declares form elicitation and answers each one with it. */
async function connect(url: string, mode: 'auto' | 'legacy', answer?: (params: Elicit) => Reply): Promise<{ client: Client; asked: Elicit[] }> {
  const asked: Elicit[] = [];
  const client = new Client(
    { name: 'xswarm-test', version: '1.0.0' },
    { versionNegotiation: { mode }, ...(answer ? { capabilities: { elicitation: { form: {} } } } : {}) },
  );
  if (answer) {
    client.setRequestHandler('elicitation/create', async (request) => {
      const params = request.params as Elicit;
      asked.push(params);
      return answer(params);
    });
  }
  await client.connect(new StreamableHTTPClientTransport(new URL(url)));
  cleanups.push(() => client.close());
  return { client, asked };
}

const text = (r: { content?: unknown }, i = 0) => (r.content as { type: string; text: string }[])[i]!.text;

async function replays(runtime: Runtime, swarmId: string, requests: unknown[]) {
  const calls = requests.length;
  expect(await collect(runtime.replay(swarmId))).toEqual(await collect(runtime.forSwarm(swarmId.startsWith('n') ? 'notes' : 'dinner', swarmId).events()));
  expect(requests).toHaveLength(calls);
}

describe('a typed pause over MCP elicitation (2026-07-28)', () => {
  it('asks the pause with its schema as the form; an accepted answer resumes the swarm to its result', async () => {
    const { url, runtime, requests } = await start();
    const { client, asked } = await connect(url, 'auto', () => ({ action: 'accept', content: { guests: 4, vegan: true } }));
    expect(client.getProtocolEra()).toBe('modern');
    const done = await client.callTool({ name: 'dinner_run', arguments: { input: 'plan', swarmId: 'd1', wait: true } });
    expect(asked).toEqual([
      expect.objectContaining({
        message: 'How many guests?',
        requestedSchema: { type: 'object', properties: { guests: { type: 'integer', minimum: 1 }, vegan: { type: 'boolean' } }, required: ['guests'] },
      }),
    ]);
    expect(done.structuredContent).toEqual({ swarmId: 'd1', status: 'completed', result: 'dinner for {"guests":4,"vegan":true}' });
    await replays(runtime, 'd1', requests);
  });

  it('refuses an answer of the wrong shape with nothing changed, accepted in the form or given as an argument', async () => {
    const { url, runtime, requests } = await start();
    const { client: wrong } = await connect(url, 'auto', () => ({ action: 'accept', content: { guests: 0 } }));
    const refused = await wrong.callTool({ name: 'dinner_run', arguments: { input: 'plan', swarmId: 'd2', wait: true } });
    expect(refused.isError).toBe(true);
    expect(text(refused)).toMatch(/does not match the response schema.*guests.*The swarm stays paused at "ask1": answer again with dinner_resume/s);
    const before = await runtime.store.readEvents('d2', 0);
    expect(await runtime.forSwarm('dinner', 'd2').getResult()).toMatchObject({ status: 'paused', reason: { pauseId: 'ask1' } });

    const { client: declining, asked } = await connect(url, 'auto', () => ({ action: 'decline' }));
    const paused = await declining.callTool({ name: 'dinner_resume', arguments: { swarmId: 'd2', answer: { guests: 0 }, wait: true } });
    // The typed answer given as an argument is checked too.
    expect(paused.isError).toBe(true);
    const kept = await declining.callTool({ name: 'dinner_get_result', arguments: { swarmId: 'd2' } });
    expect(kept.structuredContent).toMatchObject({ status: 'paused', reason: { pauseId: 'ask1', responseSchema: GUESTS_SCHEMA } });
    expect(await runtime.store.readEvents('d2', 0)).toEqual(before);
    expect(asked).toEqual([]);
    expect(requests).toHaveLength(1);
  });

  it('a declined elicitation returns the paused result with how to answer it', async () => {
    const { url } = await start();
    const { client, asked } = await connect(url, 'auto', () => ({ action: 'decline' }));
    const paused = await client.callTool({ name: 'dinner_run', arguments: { input: 'plan', swarmId: 'd3', wait: true } });
    expect(asked).toHaveLength(1);
    expect(paused.isError).toBeFalsy();
    expect(paused.structuredContent).toMatchObject({ swarmId: 'd3', status: 'paused', reason: { pauseId: 'ask1', responseSchema: GUESTS_SCHEMA } });
    expect(text(paused, 1)).toContain('dinner_resume { swarmId, pauseId: "ask1", answer }');
  });
});

describe.each(['legacy', 'auto'] as const)('answering over MCP without elicitation (%s era)', (mode) => {
  it('the paused result carries the pause id and schema; resume takes pauseId and a typed answer; stale ids and wrong shapes are refused', async () => {
    const { url, runtime, requests } = await start();
    const { client } = await connect(url, mode);
    const paused = await client.callTool({ name: 'dinner_run', arguments: { input: 'plan', swarmId: 'd4', wait: true } });
    expect(paused.structuredContent).toEqual({
      swarmId: 'd4',
      status: 'paused',
      reason: { type: 'HITL', message: 'How many guests?', pauseId: 'ask1', responseSchema: GUESTS_SCHEMA },
      currentTurn: 1,
      maxTurns: 10,
    });
    const before = await runtime.store.readEvents('d4', 0);
    const wrong = await client.callTool({ name: 'dinner_resume', arguments: { swarmId: 'd4', pauseId: 'ask1', answer: { guests: 'many' } } });
    expect(wrong.isError).toBe(true);
    expect(text(wrong)).toMatch(/does not match the response schema/);
    const stale = await client.callTool({ name: 'dinner_resume', arguments: { swarmId: 'd4', pauseId: 'ask0', answer: { guests: 4 } } });
    expect(stale.isError).toBe(true);
    expect(text(stale)).toMatch(/stale pause id/);
    expect(await runtime.store.readEvents('d4', 0)).toEqual(before);

    const done = await client.callTool({ name: 'dinner_resume', arguments: { swarmId: 'd4', pauseId: 'ask1', answer: { guests: 2 }, wait: true } });
    expect(done.structuredContent).toEqual({ swarmId: 'd4', status: 'completed', result: 'dinner for {"guests":2}' });
    await replays(runtime, 'd4', requests);
  });

  it('a limit pause: resume is refused until <name>_extend raises it; then it completes', async () => {
    const { url, runtime, requests } = await start();
    const { client } = await connect(url, mode);
    const paused = await client.callTool({ name: 'notes_run', arguments: { input: 'go', swarmId: 'n1', wait: true } });
    expect(paused.structuredContent).toMatchObject({
      status: 'paused',
      reason: { type: 'LIMIT', pauseId: 'limit:t1:1', limit: { limit: 'maxTurns', max: 1, spent: 1, left: 0 } },
    });
    expect(text(paused, 1)).toContain('notes_extend');
    const early = await client.callTool({ name: 'notes_resume', arguments: { swarmId: 'n1', message: 'conclude' } });
    expect(early.isError).toBe(true);
    expect(text(early)).toMatch(/extend it/);
    const bad = await client.callTool({ name: 'notes_extend', arguments: { swarmId: 'n1', maxTurns: 0 } });
    expect(bad.isError).toBe(true);

    const extended = await client.callTool({ name: 'notes_extend', arguments: { swarmId: 'n1', maxTurns: 2 } });
    expect(extended.structuredContent).toMatchObject({ status: 'paused', maxTurns: 2 });
    const done = await client.callTool({ name: 'notes_resume', arguments: { swarmId: 'n1', pauseId: 'limit:t1:1', message: 'conclude', wait: true } });
    expect(done.structuredContent).toEqual({ swarmId: 'n1', status: 'completed', result: 'done after 1 notes' });
    await replays(runtime, 'n1', requests);
  });

  it('a budget pause: <name>_extend raises the cap that tripped; then it completes', async () => {
    const { url, runtime } = await start();
    const { client } = await connect(url, mode);
    const paused = await client.callTool({ name: 'capped_run', arguments: { input: 'go', swarmId: 'b1', wait: true } });
    expect(paused.structuredContent).toMatchObject({ status: 'paused', reason: { type: 'LIMIT', limit: { limit: 'modelCalls', max: 1, spent: 1, left: 0 } } });
    expect(text(paused, 1)).toContain('capped_extend { swarmId, budget: { modelCalls } }');
    const lowered = await client.callTool({ name: 'capped_extend', arguments: { swarmId: 'b1', budget: { modelCalls: -1 } } });
    expect(lowered.isError).toBe(true);
    expect((await runtime.forSwarm('capped', 'b1').usage()).modelCalls).toBe(1);
    await client.callTool({ name: 'capped_extend', arguments: { swarmId: 'b1', budget: { modelCalls: 3 } } });
    const done = await client.callTool({ name: 'capped_resume', arguments: { swarmId: 'b1', message: 'conclude', wait: true } });
    expect(done.structuredContent).toEqual({ swarmId: 'b1', status: 'completed', result: 'done after 1 notes' });
  });
});
