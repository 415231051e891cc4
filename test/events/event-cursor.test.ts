/**
 * `since` beyond the end of a stream: refused with a clear error when the swarm has ended
 * (Node API, REST before the SSE starts, WebSocket before the upgrade); waited on while the
 * swarm is unfinished.
 */
import { describe, expect, it } from 'vitest';
import { createRuntime, defineSwarm, type Runtime, type SwarmEvent } from '../../src/index.js';
import { serve } from '../../src/server/index.js';
import { call, collect, queueModel } from '../support/script.js';
import { readSse, request, servedPerTest, Subscriber } from '../support/server-clients.js';

const echo = defineSwarm({ id: 'echo', instructions: 'Repeat.' });
const hitl = defineSwarm({ id: 'hitl', instructions: 'Ask the human.' });

const served = servedPerTest();

/** A served runtime with a completed swarm `done`; returns the seq of its final event. */
async function start() {
  const model = queueModel({
    echo: [{ text: 'echoed' }],
    hitl: [call('pause', { reason: 'Which day?' }), { text: 'Sunday it is' }],
  });
  served.runtime = createRuntime({ swarms: [echo, hitl], model });
  served.server = await serve(served.runtime);
  const done = served.runtime.forSwarm(echo, 'done');
  await done.run('hi');
  await done.wait();
  const last = (await served.runtime.store.readEvents('done', 0)).at(-1)!.seq;
  return { rt: served.runtime, url: served.server.url, last };
}

async function pausedSwarm(rt: Runtime, id: string): Promise<number> {
  const c = rt.forSwarm(hitl, id);
  await c.run('plan');
  await c.wait();
  return (await rt.store.readEvents(id, 0)).at(-1)!.seq;
}

describe('a swarm that has ended', () => {
  it('Node API: since beyond its last event throws invalid-cursor; since = its last event is an empty stream', async () => {
    const { rt, last } = await start();
    const client = rt.forSwarm(echo, 'done');
    await expect(collect(client.events({ since: last + 1 }))).rejects.toMatchObject({
      name: 'SwarmError',
      code: 'invalid-cursor',
      message: expect.stringContaining(`beyond the end of swarm "done"`),
    });
    expect(await collect(client.events({ since: last }))).toEqual([]);
    expect((await collect(client.events({ since: last - 1 }))).map((e) => e.seq)).toEqual([last]);
  });

  it('REST: since or Last-Event-ID beyond its last event is a 400 JSON answer, not an empty stream', async () => {
    const { url, last } = await start();
    const bySince = await request(url, 'GET', `/swarms/echo/done/events?since=${last + 1}`);
    expect(bySince.status).toBe(400);
    expect(bySince.headers.get('content-type')).toMatch(/^application\/json/);
    expect(bySince.body.error).toMatch(/Cursor \d+ is beyond the end of swarm "done": it has ended \(completed\)/);
    const byHeader = await request(url, 'GET', '/swarms/echo/done/events', undefined, { 'last-event-id': String(last + 10) });
    expect(byHeader.status).toBe(400);
    // A reconnect after the final event (EventSource does that) is a stream with nothing more.
    const atEnd = await readSse(`${url}/swarms/echo/done/events?since=${last}`);
    expect(atEnd).toMatchObject({ status: 200, events: [], ended: true });
  });

  it('WebSocket: since beyond its last event is refused with 400 before the upgrade', async () => {
    const { url, last } = await start();
    const ws = url.replace(/^http/, 'ws');
    await expect(Subscriber.open(`${ws}/events?swarmId=done&since=${last + 1}`)).rejects.toMatchObject({ status: 400 });
    const atEnd = await Subscriber.open(`${ws}/events?swarmId=done&since=${last}`);
    expect((await atEnd.closed).code).toBe(1000);
    expect(atEnd.events).toEqual([]);
  });
});

describe('an unfinished swarm', () => {
  it('since beyond its last event waits for the events after it; a reader whose cursor the swarm never reaches gets invalid-cursor', async () => {
    const { rt } = await start();
    const last = await pausedSwarm(rt, 'h1');
    const since = last + 2;
    const seen: SwarmEvent[] = [];
    const reading = (async () => {
      for await (const e of rt.forSwarm(hitl, 'h1').events({ since })) seen.push(e);
    })();
    const tooFar = collect(rt.forSwarm(hitl, 'h1').events({ since: last + 1000 }));
    await rt.forSwarm(hitl, 'h1').resume('Sunday');
    await reading;
    const all = await rt.store.readEvents('h1', 0);
    expect(all.at(-1)!.seq).toBeGreaterThan(since);
    expect(seen).toEqual(all.filter((e) => e.seq > since));
    await expect(tooFar).rejects.toMatchObject({ code: 'invalid-cursor' });
  });
});
