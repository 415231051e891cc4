/**
 * Typed, strict answers (issue 30, item 6): every pause has an id (a model's pause its call id,
 * one from outside or at a limit an id the machine makes); a pause may carry a response schema
 * (a client's zod schema, or the model's `response_schema`), stored and sent as JSON Schema;
 * `resume` is checked against the schema, the pause id and the swarm's state, and a refused
 * resume records nothing. Also over REST, and across a restart on SQLite.
 */
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import {
  defineSwarm,
  LocalBus,
  localTransport,
  memoryStore,
  type ModelRequest,
  type Runtime,
  scriptedModel,
  type SwarmEvent,
  SwarmError,
  type SwarmStore,
  tool,
} from '../../src/index.js';
import { serve } from '../../src/server/index.js';
import { call, collect } from '../support/script.js';
import { sqliteFilePerTest } from '../support/sqlite-file.js';
import { until } from '../support/wait.js';

const file = sqliteFilePerTest('xswarm-typed-');

const runtime = file.runtime;

const GUESTS_SCHEMA = {
  type: 'object',
  properties: { guests: { type: 'integer', minimum: 1 }, vegan: { type: 'boolean' } },
  required: ['guests'],
};

/**
 * A model that asks a human how many guests (a `pause` call with id `ask1` and a response
 * schema), then answers with what it read as the call's result.
 */
function askingModel(schema: unknown = GUESTS_SCHEMA) {
  const requests: ModelRequest[] = [];
  const model = scriptedModel((req) => {
    requests.push(req);
    const results = req.messages.filter((m) => m.role === 'tool');
    if (results.length === 0) return call('pause', { reason: 'How many guests?', response_schema: schema }, 'ask1');
    return { text: `read: ${results.map((m) => m.content).join(' | ')}` };
  });
  return { model, requests };
}

const planner = defineSwarm({ id: 'planner', instructions: 'Plan a dinner.' });

const refusal = (p: Promise<unknown>) =>
  p.then(
    () => undefined,
    (e: unknown) => e,
  );

/** A refused command changed nothing: the same events, the same result. */
async function unchanged(store: SwarmStore, swarmId: string, rt: Runtime, refuse: () => Promise<unknown>): Promise<unknown> {
  const before = { events: await store.readEvents(swarmId, 0), result: await rt.forSwarm('planner', swarmId).getResult() };
  const error = await refusal(refuse());
  expect(error).toBeInstanceOf(SwarmError);
  expect({ events: await store.readEvents(swarmId, 0), result: await rt.forSwarm('planner', swarmId).getResult() }).toEqual(before);
  return error;
}

const pausedFacts = (events: SwarmEvent[]) => events.flatMap((e) => (e.kind === 'status-update' && e.metadata.type === 'paused' ? [e.metadata.reason] : []));

describe('typed answers to the model’s pause', () => {
  it('names the pause by its call id, refuses a wrong shape or a stale id with nothing changed, and the model reads a good answer as JSON; replay equals the run', async () => {
    const store = memoryStore();
    const { model, requests } = askingModel();
    const rt = runtime({ swarms: [planner], model, store });
    const client = rt.forSwarm('planner', 'm1');
    await client.run('Dinner on Friday');
    const paused = await client.wait();
    expect(paused).toMatchObject({ status: 'paused', reason: { type: 'HITL', message: 'How many guests?', pauseId: 'ask1', responseSchema: GUESTS_SCHEMA } });

    const wrongField = await unchanged(store, 'm1', rt, () => client.resume({ guests: 'four' }));
    expect(wrongField).toMatchObject({ code: 'invalid-input', message: expect.stringMatching(/does not match the response schema.*guests: .*number/) });
    const missing = await unchanged(store, 'm1', rt, () => client.resume({ vegan: true }));
    expect(missing).toMatchObject({ code: 'invalid-input', message: expect.stringContaining('guests:') });
    const noAnswer = await unchanged(store, 'm1', rt, () => client.resume());
    expect(noAnswer).toMatchObject({ code: 'invalid-input', message: expect.stringContaining('waits for an answer matching its response schema') });
    const stale = await unchanged(store, 'm1', rt, () => client.resume({ guests: 4 }, { pauseId: 'ask0' }));
    expect(stale).toMatchObject({ code: 'wrong-state', message: expect.stringContaining('not paused at "ask0" (a stale pause id): its current pause is "ask1"') });
    expect(requests).toHaveLength(1);

    await client.resume({ guests: 4, vegan: true }, { pauseId: 'ask1' });
    expect(await client.wait()).toEqual({ status: 'completed', result: 'read: {"guests":4,"vegan":true}' });
    // Answered: the same id is now the id of no pause.
    const after = await refusal(client.resume({ guests: 5 }, { pauseId: 'ask1' }));
    expect(after).toMatchObject({ code: 'wrong-state' });

    const events = await collect(client.events());
    expect(pausedFacts(events)).toEqual([{ type: 'HITL', message: 'How many guests?', pauseId: 'ask1', responseSchema: GUESTS_SCHEMA }]);
    expect(events).toContainEqual(expect.objectContaining({ metadata: { type: 'resumed', message: '{"guests":4,"vegan":true}' } }));
    expect(await collect(rt.replay('m1'))).toEqual(events);
  });

  it('takes a JSON text answer that matches, and refuses a response_schema that is no JSON Schema object with a tool error the model reads', async () => {
    const { model } = askingModel();
    const rt = runtime({ swarms: [planner], model });
    const client = rt.forSwarm('planner', 'm2');
    await client.run('Dinner');
    await client.wait();
    // What a command line or a text box sends: JSON text, checked parsed.
    await client.resume('{"guests": 2}');
    expect(await client.wait()).toEqual({ status: 'completed', result: 'read: {"guests":2}' });

    const bad = askingModel('a list of guests');
    const rt2 = runtime({ swarms: [planner], model: bad.model });
    await rt2.forSwarm('planner', 'm3').run('Dinner');
    // Not paused: the model read why, and answered with it.
    const result = await rt2.forSwarm('planner', 'm3').wait();
    expect(result).toMatchObject({ status: 'completed', result: expect.stringContaining('pause: "response_schema" is not usable: it must be a JSON Schema object') });
    expect(bad.requests).toHaveLength(2);

    // An object, but no JSON Schema the validator reads.
    const unreadable = askingModel({ type: 'frobnicate' });
    const rt3 = runtime({ swarms: [planner], model: unreadable.model });
    await rt3.forSwarm('planner', 'm4').run('Dinner');
    expect(await rt3.forSwarm('planner', 'm4').wait()).toMatchObject({
      status: 'completed',
      result: expect.stringContaining('the response schema is not a JSON Schema this runtime can check: Unsupported type: frobnicate'),
    });
  });
});

describe('typed answers to a client’s pause', () => {
  it('names outside pauses pause:t<turn>:<n>, stores a zod schema as JSON Schema, checks the answer, and refuses a resume of a running swarm', async () => {
    const store = memoryStore();
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const slow = tool({ name: 'slow', description: 'Waits', parameters: z.object({}), execute: async () => (await gate, 'slow done') });
    const requests: ModelRequest[] = [];
    const model = scriptedModel((req) => {
      requests.push(req);
      const last = req.messages.at(-1)!;
      if (last.role === 'user' && req.messages.length > 2) return { text: `human said ${last.content}` };
      return req.messages.some((m) => m.role === 'tool') ? { text: 'no answer' } : call('slow', {}, 's1');
    });
    const rt = runtime({ swarms: [defineSwarm({ id: 'planner', instructions: 'Plan.', tools: [slow] })], model, store });
    const client = rt.forSwarm('planner', 'c1');
    await client.run('Plan');
    await until('the slow tool to start', async () => (await store.readEvents('c1', 0)).some((e) => e.kind === 'internal:tool-start'));

    // A running swarm: nothing to answer.
    const running = await unchanged(store, 'c1', rt, () => client.resume('now'));
    expect(running).toMatchObject({ code: 'wrong-state', message: 'Swarm "c1" is running, not paused' });

    const budget = z.object({ usd: z.number().positive(), note: z.string().optional() });
    await client.pause({ type: 'HITL', message: 'Which budget?', responseSchema: budget });
    const paused = await client.getResult();
    expect(paused).toMatchObject({ status: 'paused', reason: { type: 'HITL', message: 'Which budget?', pauseId: 'pause:t1:1' } });
    const schema = paused.status === 'paused' ? paused.reason.responseSchema : undefined;
    expect(schema).toMatchObject({ type: 'object', properties: { usd: { type: 'number', exclusiveMinimum: 0 } }, required: ['usd'] });

    const negative = await unchanged(store, 'c1', rt, () => client.resume({ usd: -3 }));
    expect(negative).toMatchObject({ code: 'invalid-input', message: expect.stringContaining('usd: Too small') });
    const text = await unchanged(store, 'c1', rt, () => client.resume('forty dollars'));
    expect(text).toMatchObject({ code: 'invalid-input', message: expect.stringContaining('expected object') });

    release();
    await client.resume({ usd: 40 }, { pauseId: 'pause:t1:1' });
    // The answer joined the conversation after the tool result, as JSON.
    expect(await client.wait()).toEqual({ status: 'completed', result: 'human said {"usd":40}' });
    const events = await collect(client.events());
    expect(pausedFacts(events)).toEqual([{ type: 'HITL', message: 'Which budget?', pauseId: 'pause:t1:1', responseSchema: schema }]);
    expect(await collect(rt.replay('c1'))).toEqual(events);
  });

  it('refuses a schema that cannot be written as JSON Schema and an answer that is not text for a pause without one; a limit pause is named limit:t<turn>:<n>', async () => {
    const note = tool({ name: 'note', description: 'Notes', parameters: z.object({}), execute: () => 'noted' });
    const model = scriptedModel((req) => (req.messages.at(-1)?.content === 'conclude' ? { text: 'done' } : call('note', {})));
    const store = memoryStore();
    const rt = runtime({ swarms: [defineSwarm({ id: 'planner', instructions: 'Plan.', tools: [note], maxTurns: 1 })], model, store });
    const client = rt.forSwarm('planner', 'l1');
    await client.run('Plan');
    expect(await client.wait()).toMatchObject({ status: 'paused', reason: { type: 'LIMIT', pauseId: 'limit:t1:1' } });
    await client.extend({ maxTurns: 3 });
    // No schema: text only.
    const json = await unchanged(store, 'l1', rt, () => client.resume({ go: true }));
    expect(json).toMatchObject({ code: 'invalid-input', message: expect.stringContaining('has no response schema: answer with text, not object') });
    await client.resume('go on', { pauseId: 'limit:t1:1' });
    expect(await client.wait()).toMatchObject({ status: 'paused', reason: { type: 'LIMIT', pauseId: 'limit:t3:2' } });

    const bad = await refusal(client.pause({ type: 'HITL', message: 'x', responseSchema: 'not a schema' as unknown as Record<string, unknown> }));
    expect(bad).toMatchObject({ message: expect.stringContaining('a response schema must be a JSON Schema object') });
  });
});

describe('typed answers over REST and across a restart', () => {
  it('POST …/resume takes { answer, pauseId }: 400 for a wrong shape, 409 for a stale id, 200 for a good answer', async () => {
    const { model } = askingModel();
    const rt = runtime({ swarms: [planner], model });
    const server = await serve(rt, { port: 0 });
    file.track(server);
    const client = rt.forSwarm('planner', 'h1');
    await client.run('Dinner');
    await client.wait();
    const post = (body: unknown) =>
      fetch(`${server.url}/swarms/planner/h1/resume`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
    const shape = await post({ answer: { guests: 0 } });
    expect(shape.status).toBe(400);
    expect(await shape.json()).toEqual({ error: expect.stringContaining('guests: Too small') });
    const stale = await post({ answer: { guests: 3 }, pauseId: 'old' });
    expect(stale.status).toBe(409);
    expect(await stale.json()).toEqual({ error: expect.stringContaining('stale pause id') });
    const both = await post({ answer: { guests: 3 }, message: '3' });
    expect(both.status).toBe(400);
    const ok = await post({ answer: { guests: 3 }, pauseId: 'ask1' });
    expect(ok.status).toBe(200);
    expect(await client.wait()).toEqual({ status: 'completed', result: 'read: {"guests":3}' });
  });

  it('a typed pause survives a restart on SQLite and is answered, strictly, in the next runtime', async () => {
    const a = runtime({ swarms: [planner], model: askingModel().model, store: file.open() });
    await a.forSwarm('planner', 'r1').run('Dinner');
    expect(await a.forSwarm('planner', 'r1').wait()).toMatchObject({ status: 'paused', reason: { pauseId: 'ask1' } });
    await a.close();

    const { model, requests } = askingModel();
    const store = file.open();
    const b = runtime({ swarms: [planner], model, store });
    await b.start();
    const client = b.forSwarm('planner', 'r1');
    expect(await client.getResult()).toMatchObject({ status: 'paused', reason: { pauseId: 'ask1', responseSchema: GUESTS_SCHEMA } });
    const wrong = await unchanged(store, 'r1', b, () => client.resume({ guests: 2.5 }));
    expect(wrong).toMatchObject({ code: 'invalid-input', message: expect.stringContaining('guests:') });
    await client.resume({ guests: 6 }, { pauseId: 'ask1' });
    expect(await client.wait()).toEqual({ status: 'completed', result: 'read: {"guests":6}' });
    expect(requests).toHaveLength(1);
    expect(await collect(b.replay('r1'))).toEqual(await collect(client.events()));
  });
});

describe('pauses stored before pauses had ids', () => {
  it('resume all the same: there is no id to check', async () => {
    const store = memoryStore();
    const a = runtime({ swarms: [planner], model: askingModel({ type: 'object' }).model, store });
    await a.forSwarm('planner', 'o1').run('Dinner');
    await a.forSwarm('planner', 'o1').wait();
    await a.close();

    // The snapshot as an earlier version stored it: a pause without an id.
    const old: SwarmStore = Object.create(store);
    old.load = async (swarmId) => {
      const record = await store.load(swarmId);
      const reason = (record?.snapshot as { context?: { pause?: { reason?: { pauseId?: string } } } } | undefined)?.context?.pause?.reason;
      if (reason) delete reason.pauseId;
      return record;
    };
    const b = runtime({ swarms: [planner], model: askingModel().model, store: old });
    await b.start();
    const client = b.forSwarm('planner', 'o1');
    expect(await client.getResult()).toMatchObject({ status: 'paused', reason: { message: 'How many guests?' } });
    expect(await client.getResult()).not.toHaveProperty('reason.pauseId');
    await client.resume({ any: 'thing' }, { pauseId: 'whatever' });
    expect(await client.wait()).toEqual({ status: 'completed', result: 'read: {"any":"thing"}' });
  });
});

describe('typed answers relayed to the runtime holding the swarm', () => {
  it('the owner command carries the answer and the pause id; the holder checks them and its refusal reaches the caller', async () => {
    const store = memoryStore();
    const bus = new LocalBus();
    const hosting = { deadlineMs: 400, heartbeatMs: 50, heartbeatTimeoutMs: 300 };
    const { model } = askingModel();
    const holder = runtime({ swarms: [planner], model, store, transport: localTransport(bus), hosting });
    await holder.start();
    const elsewhere = runtime({ model: scriptedModel(() => ({ text: 'unused' })), store, transport: localTransport(bus), hosting });
    await elsewhere.start();
    const client = elsewhere.forSwarm('planner', 'd1');
    await client.run('Dinner');
    expect(await client.wait()).toMatchObject({ status: 'paused', reason: { pauseId: 'ask1', responseSchema: GUESTS_SCHEMA } });

    const shape = await unchanged(store, 'd1', elsewhere, () => client.resume({ guests: 'many' }));
    expect(shape).toMatchObject({ code: 'invalid-input', message: expect.stringContaining('guests:') });
    const stale = await unchanged(store, 'd1', elsewhere, () => client.resume({ guests: 2 }, { pauseId: 'ask0' }));
    expect(stale).toMatchObject({ code: 'wrong-state', message: expect.stringContaining('stale pause id') });
    await client.resume({ guests: 2 }, { pauseId: 'ask1' });
    expect(await client.wait()).toEqual({ status: 'completed', result: 'read: {"guests":2}' });
  });
});
