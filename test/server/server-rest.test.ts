/**
 * REST + Server-Sent Events, driven only with `fetch`: runs, results, commands, event streams
 * (ids, reconnects, keep-alives), and the safety rules (auth, limits, bad requests).
 */
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createRuntime, defineSwarm, isFinalEvent, memoryStore, type Runtime, type SwarmEvent, tool } from '../../src/index.js';
import { serve } from '../../src/server/index.js';
import { call, collect, queueModel } from '../support/script.js';
import { readSse, request, servedPerTest } from '../support/server-clients.js';
import { sleep } from '../support/sleep.js';
import { until } from '../support/wait.js';
import { range, seqs } from '../support/seqs.js';

// Short keep-alives so a waiting stream shows them within the test.
const KEEPALIVE_MS = 40;

const served = servedPerTest();

const work = tool({
  name: 'work',
  description: 'does a step',
  parameters: z.object({ step: z.number() }),
  execute: async ({ step }) => {
    await sleep(10);
    return `step ${step} done`;
  },
});
const steps = defineSwarm({ id: 'steps', instructions: 'Work in steps.', tools: [work] });
const hitl = defineSwarm({ id: 'hitl', instructions: 'Ask the human.' });
const typed = defineSwarm({ id: 'typed', input: z.object({ city: z.string() }), instructions: 'Plan for a city.' });

/** A model where `steps` works twice then answers, `hitl` asks then answers, `typed` answers. */
function model() {
  const script = {
    steps: [call('work', { step: 1 }), call('work', { step: 2 }), { text: 'finished' }],
    hitl: [call('pause', { reason: 'Which day?' }), { text: 'Sunday it is' }],
    typed: [{ text: 'planned' }],
  };
  // Many runs per test: repeat each script.
  const repeated = Object.fromEntries(Object.entries(script).map(([k, v]) => [k, Array.from({ length: 10 }, () => v).flat()]));
  return queueModel(repeated);
}

async function start(options: { token?: string } = {}): Promise<{ url: string; rt: Runtime }> {
  served.runtime = createRuntime({ swarms: [steps, hitl, typed], model: model() });
  served.server = await serve(served.runtime, { ...options, keepAliveMs: KEEPALIVE_MS });
  return { url: served.server.url, rt: served.runtime };
}

const status = (url: string, def: string, id: string) => request(url, 'GET', `/swarms/${def}/${id}`).then((r) => r.body);

describe('REST', () => {
  it('lists definitions, runs a swarm from start to completed and reads its result', async () => {
    const { url } = await start();
    const defs = await request(url, 'GET', '/swarms');
    expect(defs.status).toBe(200);
    expect(defs.body.map((d: { id: string }) => d.id).sort()).toEqual(['hitl', 'steps', 'typed']);

    const created = await request(url, 'POST', '/swarms/steps', { input: 'do it', swarmId: 'run-1' });
    expect(created).toMatchObject({ status: 201, body: { swarmId: 'run-1' } });
    expect(created.headers.get('location')).toBe('/swarms/steps/run-1');

    const done = await until(
      'run-1 to end',
      () => status(url, 'steps', 'run-1'),
      (r) => r.status !== 'running',
    );
    expect(done).toEqual({ status: 'completed', result: 'finished' });

    // A generated id when none is given; listings show both.
    const second = await request(url, 'POST', '/swarms/typed', { input: { city: 'Oslo' } });
    expect(second.status).toBe(201);
    expect(second.body.swarmId).toMatch(/^[0-9a-f-]{36}$/);
    const listed = await request(url, 'GET', '/swarms/steps?status=completed&limit=5');
    expect(listed.status).toBe(200);
    expect(listed.body.map((s: { swarmId: string }) => s.swarmId)).toEqual(['run-1']);
    expect(listed.body[0]).not.toHaveProperty('snapshot');
  });

  it('answers 400 for invalid input, 409 for an id in use, 404 for unknown definitions and swarms', async () => {
    const { url } = await start();
    const bad = await request(url, 'POST', '/swarms/typed', { input: { city: 3 } });
    expect(bad.status).toBe(400);
    expect(bad.body.error).toMatch(/^Invalid input for swarm "typed": city: /);
    expect((await request(url, 'POST', '/swarms/typed', { input: { city: 'Oslo' }, swarmId: 42 })).status).toBe(400);
    expect((await request(url, 'POST', '/swarms/typed', [1, 2])).status).toBe(400);

    expect((await request(url, 'POST', '/swarms/typed', { input: { city: 'Oslo' }, swarmId: 'same' })).status).toBe(201);
    const dup = await request(url, 'POST', '/swarms/typed', { input: { city: 'Rome' }, swarmId: 'same' });
    expect(dup).toMatchObject({ status: 409, body: { error: 'Swarm id "same" is already in use' } });

    expect((await request(url, 'POST', '/swarms/nope', { input: 'x' })).status).toBe(404);
    expect((await request(url, 'GET', '/swarms/nope')).status).toBe(404);
    expect((await request(url, 'GET', '/swarms/typed/missing')).status).toBe(404);
    // A swarm exists, but under another definition: not found at this URL.
    expect((await request(url, 'GET', '/swarms/steps/same')).status).toBe(404);
    expect((await request(url, 'POST', '/swarms/typed/missing/stop', {})).status).toBe(404);
    expect((await request(url, 'GET', '/swarms/typed/missing/events')).status).toBe(404);
    expect((await request(url, 'GET', '/swarms/typed/same/unknown-action')).status).toBe(404);
  });

  it('HITL: the model pauses, GET shows paused, POST resume with a message completes it', async () => {
    const { url } = await start();
    const { body } = await request(url, 'POST', '/swarms/hitl', { input: 'Plan my weekend' });
    const id = body.swarmId as string;
    const paused = await until(
      'the hitl swarm to end',
      () => status(url, 'hitl', id),
      (r) => r.status !== 'running',
    );
    expect(paused).toMatchObject({ status: 'paused', reason: { type: 'HITL', message: 'Which day?' } });

    const resumed = await request(url, 'POST', `/swarms/hitl/${id}/resume`, { message: 'Sunday' });
    expect(resumed.status).toBe(200);
    expect(resumed.body.ok).toBe(true);
    const done = await until(
      'the hitl swarm to end',
      () => status(url, 'hitl', id),
      (r) => r.status !== 'running',
    );
    expect(done).toEqual({ status: 'completed', result: 'Sunday it is' });
    // Resuming what is not paused does not fit its state.
    const again = await request(url, 'POST', `/swarms/hitl/${id}/resume`, { message: 'x' });
    expect(again.status).toBe(409);
    expect(again.body.error).toMatch(/it has ended \(completed\)/);
  });

  it('pause and stop from outside; commands that do not fit the state answer 409', async () => {
    const { url } = await start();
    const { body } = await request(url, 'POST', '/swarms/hitl', { input: 'x' });
    const id = body.swarmId as string;
    await until(
      'the hitl swarm to be paused',
      () => status(url, 'hitl', id),
      (r) => r.status === 'paused',
    );
    const pauseAgain = await request(url, 'POST', `/swarms/hitl/${id}/pause`, { reason: 'hold on' });
    expect(pauseAgain).toMatchObject({ status: 409, body: { error: `Swarm "${id}" is already paused` } });
    expect((await request(url, 'POST', `/swarms/hitl/${id}/pause`, { reason: 5 })).status).toBe(400);
    const stopped = await request(url, 'POST', `/swarms/hitl/${id}/stop`, { reason: 'enough' });
    expect(stopped).toMatchObject({ status: 200, body: { ok: true, result: { status: 'stopped', reason: 'enough' } } });
    expect((await request(url, 'POST', `/swarms/hitl/${id}/stop`, {})).status).toBe(409);
    expect((await request(url, 'POST', `/swarms/hitl/${id}/pause`, {})).status).toBe(409);
  });

  it('pauses a running swarm over REST and resumes it', async () => {
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const slow = tool({ name: 'slow', description: 's', parameters: z.object({}), execute: async () => (await gate, 'ok') });
    const s = defineSwarm({ id: 'slow', instructions: 'x', tools: [slow] });
    served.runtime = createRuntime({ swarms: [s], model: queueModel({ slow: [call('slow', {}), { text: 'done' }] }) });
    served.server = await serve(served.runtime, { keepAliveMs: KEEPALIVE_MS });
    const url = served.server.url;
    await request(url, 'POST', '/swarms/slow', { input: 'x', swarmId: 'p1' });
    const paused = await request(url, 'POST', '/swarms/slow/p1/pause', { reason: 'check', type: 'APPROVAL_NEEDED' });
    expect(paused).toMatchObject({ status: 200, body: { ok: true, result: { status: 'paused', reason: { type: 'APPROVAL_NEEDED', message: 'check' } } } });
    release();
    const resumed = await request(url, 'POST', '/swarms/slow/p1/resume', {});
    expect(resumed.status).toBe(200);
    expect(
      await until(
        'p1 to end',
        () => status(url, 'slow', 'p1'),
        (r) => r.status !== 'running',
      ),
    ).toEqual({ status: 'completed', result: 'done' });
  });
});

describe('Server-Sent Events', () => {
  it('streams a finished swarm: id = seq, event = kind, data = the event; ends after the final event', async () => {
    const { url, rt } = await start();
    await request(url, 'POST', '/swarms/steps', { input: 'x', swarmId: 'f1' });
    await until(
      'f1 to be completed',
      () => status(url, 'steps', 'f1'),
      (r) => r.status === 'completed',
    );
    const stored = await collect(rt.forSwarm('steps', 'f1').events());

    const { events, ended, contentType } = await readSse(`${url}/swarms/steps/f1/events`);
    expect(contentType).toMatch(/^text\/event-stream/);
    expect(ended).toBe(true);
    expect(events.map((e) => e.data)).toEqual(stored);
    expect(events.map((e) => e.id)).toEqual(stored.map((e) => String(e.seq)));
    expect(events.map((e) => e.event)).toEqual(stored.map((e) => e.kind));
    expect(isFinalEvent(events.at(-1)!.data)).toBe(true);
  });

  it('a stream, a result and a command find the swarm by its summary when the store reads one: its snapshot and conversations are not loaded', async () => {
    // A store that reads summaries alone (as the JetStream store does), counting full loads.
    const store = memoryStore();
    const loads: string[] = [];
    const load = store.load.bind(store);
    store.load = (swarmId) => {
      loads.push(swarmId);
      return load(swarmId);
    };
    store.summary = async (swarmId) => {
      const record = await load(swarmId);
      if (!record) return undefined;
      const { snapshot: _s, ...summary } = record;
      return summary;
    };
    served.runtime = createRuntime({ swarms: [steps, hitl, typed], model: model(), store });
    served.server = await serve(served.runtime, { keepAliveMs: KEEPALIVE_MS });
    const { url } = served.server;
    await request(url, 'POST', '/swarms/hitl', { input: 'x', swarmId: 'h1' });
    const paused = await readSse(`${url}/swarms/hitl/h1/events`, { stopAfter: (e) => e.data.kind === 'status-update' && e.data.metadata.type === 'paused' });
    expect(paused.events.length).toBeGreaterThan(0);
    expect(await status(url, 'hitl', 'h1')).toMatchObject({ status: 'paused' });
    expect((await request(url, 'POST', '/swarms/hitl/h1/resume', { message: 'Sunday' })).status).toBe(200);
    const { events, ended } = await readSse(`${url}/swarms/hitl/h1/events?since=${paused.events.at(-1)!.id}`);
    expect(ended).toBe(true);
    expect(isFinalEvent(events.at(-1)!.data)).toBe(true);
    expect((await request(url, 'GET', '/swarms/hitl/nope/events')).status).toBe(404);
    expect(loads).toEqual([]);
  });

  it('streams a live swarm through pause and resume, with keep-alive comments while it waits', async () => {
    const { url, rt } = await start();
    await request(url, 'POST', '/swarms/hitl', { input: 'x', swarmId: 'live' });
    let pings = 0;
    let resumed = false;
    const reading = readSse(`${url}/swarms/hitl/live/events`, {
      onComment: (text) => {
        if (text === 'ping') pings++;
        // Resume only once the stream, waiting on the paused swarm, has kept the connection alive.
        if (pings === 3 && !resumed) {
          resumed = true;
          void request(url, 'POST', '/swarms/hitl/live/resume', { message: 'Sunday' });
        }
      },
    });
    const { events, ended } = await reading;
    expect(ended).toBe(true);
    expect(pings).toBeGreaterThanOrEqual(3);
    const stored = await collect(rt.forSwarm('hitl', 'live').events());
    expect(events.map((e) => e.data)).toEqual(stored);
    expect(seqs(events.map((e) => e.data))).toEqual(range(1, stored.length));
    expect(stored.some((e) => e.kind === 'status-update' && e.metadata.type === 'paused')).toBe(true);
  });

  it('reconnecting with Last-Event-ID or ?since= misses nothing and sees nothing twice', async () => {
    const { url, rt } = await start();
    await request(url, 'POST', '/swarms/steps', { input: 'x', swarmId: 'rc' });
    // Drop the connection after three events, while the swarm may still be running.
    const first = await readSse(`${url}/swarms/steps/rc/events`, { stopAfter: (_e, all) => all.length === 3 });
    expect(first.ended).toBe(false);
    const lastId = first.events.at(-1)!.id!;
    // Last-Event-ID wins over ?since= (an EventSource reconnects to its original URL).
    const second = await readSse(`${url}/swarms/steps/rc/events?since=1`, { headers: { 'last-event-id': lastId } });
    expect(second.ended).toBe(true);
    const stored = await collect(rt.forSwarm('steps', 'rc').events());
    expect([...first.events, ...second.events].map((e) => e.data)).toEqual(stored);

    const tail = await readSse(`${url}/swarms/steps/rc/events?since=${stored.length - 2}`);
    expect(seqs(tail.events.map((e) => e.data))).toEqual([stored.length - 1, stored.length]);
    const bad = await request(url, 'GET', '/swarms/steps/rc/events?since=-1');
    expect(bad.status).toBe(400);
    const badHeader = await request(url, 'GET', '/swarms/steps/rc/events', undefined, { 'last-event-id': 'abc' });
    expect(badHeader.status).toBe(400);
  });

  it('a client that disconnects stops its stream; the swarm and the server carry on', async () => {
    const { url } = await start();
    await request(url, 'POST', '/swarms/hitl', { input: 'x', swarmId: 'gone' });
    await until(
      'gone to be paused',
      () => status(url, 'hitl', 'gone'),
      (r) => r.status === 'paused',
    );
    const controller = new AbortController();
    const res = await fetch(`${url}/swarms/hitl/gone/events`, { signal: controller.signal });
    const reader = res.body!.getReader();
    await reader.read();
    controller.abort();
    await reader.read().catch(() => undefined);
    const resumed = await request(url, 'POST', '/swarms/hitl/gone/resume', { message: 'ok' });
    expect(resumed.status).toBe(200);
    expect(
      await until(
        'gone to end',
        () => status(url, 'hitl', 'gone'),
        (r) => r.status !== 'running',
      ),
    ).toMatchObject({ status: 'completed' });
  });
});

describe('safety', () => {
  it('with a token every REST and SSE path needs the bearer token (401 otherwise)', async () => {
    const { url } = await start({ token: 't' });
    const auth = { authorization: 'Bearer t' };
    const ok = await request(url, 'POST', '/swarms/typed', { input: { city: 'Oslo' }, swarmId: 'a1' }, auth);
    expect(ok.status).toBe(201);
    const paths: [string, string, unknown?][] = [
      ['GET', '/swarms'],
      ['GET', '/swarms/typed'],
      ['POST', '/swarms/typed', { input: { city: 'Oslo' } }],
      ['GET', '/swarms/typed/a1'],
      ['POST', '/swarms/typed/a1/pause', {}],
      ['POST', '/swarms/typed/a1/resume', {}],
      ['POST', '/swarms/typed/a1/stop', {}],
      ['GET', '/swarms/typed/a1/events'],
      ['GET', '/swarms/nope/x'],
    ];
    for (const [method, path, body] of paths) {
      const none = await request(url, method, path, body);
      expect([path, none.status]).toEqual([path, 401]);
      expect(none.headers.get('www-authenticate')).toBe('Bearer');
      const wrong = await request(url, method, path, body, { authorization: 'Bearer nope' });
      expect([path, wrong.status]).toEqual([path, 401]);
    }
    expect((await request(url, 'GET', '/swarms/typed/a1', undefined, auth)).status).toBe(200);
    const sse = await readSse(`${url}/swarms/typed/a1/events`, { headers: auth });
    expect(sse.status).toBe(200);
    expect(isFinalEvent(sse.events.at(-1)!.data as SwarmEvent)).toBe(true);
  });

  it('413 over 1 MiB, 400 for malformed JSON, 404 unknown, 405 wrong method; the server keeps serving', async () => {
    const { url } = await start();
    const huge = JSON.stringify({ input: 'x'.repeat(1024 * 1024 + 10) });
    expect((await request(url, 'POST', '/swarms/steps', huge)).status).toBe(413);
    // Without a content-length (chunked), the limit holds while reading.
    const chunked = await fetch(`${url}/swarms/steps`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: new ReadableStream({
        start(c) {
          for (let i = 0; i < 20; i++) c.enqueue(new TextEncoder().encode('x'.repeat(100 * 1024)));
          c.close();
        },
      }),
      duplex: 'half',
    } as RequestInit);
    expect(chunked.status).toBe(413);
    expect((await request(url, 'POST', '/swarms/hitl/whatever/resume', huge)).status).toBe(404);

    const malformed = await request(url, 'POST', '/swarms/steps', '{"input": ');
    expect(malformed.status).toBe(400);
    expect(malformed.body.error).toMatch(/^Malformed JSON body/);
    expect((await request(url, 'POST', '/swarms/steps', 'null')).status).toBe(400);

    expect((await request(url, 'GET', '/swarms/nope')).status).toBe(404);
    expect((await request(url, 'GET', '/swarms/%E0%A4%A/x')).status).toBe(400);

    for (const [method, path, allow] of [
      ['DELETE', '/swarms/steps/x', 'GET'],
      ['PUT', '/swarms', 'GET'],
      ['DELETE', '/swarms/steps', 'GET, POST'],
      ['GET', '/swarms/steps/x/pause', 'POST'],
      ['POST', '/swarms/steps/x/events', 'GET'],
    ] as const) {
      const r = await request(url, method, path, method === 'GET' ? undefined : {});
      expect([method, path, r.status]).toEqual([method, path, 405]);
      expect(r.headers.get('allow')).toBe(allow);
    }

    const created = await request(url, 'POST', '/swarms/typed', { input: { city: 'Oslo' } });
    expect(created.status).toBe(201);
    expect(
      await until(
        'the typed swarm to end',
        () => status(url, 'typed', created.body.swarmId),
        (r) => r.status !== 'running',
      ),
    ).toEqual({
      status: 'completed',
      result: 'planned',
    });
  });
});
