/**
 * A follower of a swarm another process drives, on a real nats-server: each new value of the
 * swarm's key and each commit message reach it through its subscriptions with the events the
 * commit holds, so it takes them from there instead of reading the events stream again at every
 * commit; events that are in no value (an events-only commit's: a streamed text's chunks) are
 * known once the next commit continues them, else read, in order. Once a commit came on its subscription, the store says that every later
 * one will (a reader given the events up to it needs no read), until the connection drops.
 */
import { jetstream } from '@nats-io/jetstream';
import { type NatsConnection, connect, headers } from '@nats-io/transport-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createRuntime, defineSwarm, type Runtime, type SwarmEvent, scriptedModel, tool } from '../../src/index.js';
import { COMMIT_HEADER, commitHeader } from '../../src/store/jetstream/batch.js';
import { Names } from '../../src/store/jetstream/names.js';
import { jetstreamStore } from '../../src/store/jetstream/store.js';
import { type NatsServer, natsServerMissing, startNatsServer } from '../support/nats-server.js';
import { sleep } from '../support/sleep.js';
import { event, step } from '../support/store-fixtures.js';
import { oneToN, seqs } from '../support/seqs.js';
import { collect } from '../support/script.js';
import { until } from '../support/wait.js';

let server: NatsServer;
const runtimes: Runtime[] = [];
const connections: NatsConnection[] = [];

beforeAll(async () => {
  if (!natsServerMissing) server = await startNatsServer();
});
afterAll(async () => {
  for (const r of runtimes.splice(0)) await r.close();
  for (const nc of connections.splice(0)) await nc.close();
  await server?.stop();
});

/** Counts the JetStream API requests any process makes from now on (reads: gets, consumers), by subject. */
async function apiRequests(): Promise<{ subjects: () => Promise<string[]> }> {
  const nc = await connect({ servers: server.url });
  connections.push(nc);
  const seen: string[] = [];
  nc.subscribe('$JS.API.>', { callback: (_e, m) => void seen.push(m.subject) });
  await nc.flush();
  return {
    subjects: async () => {
      await nc.flush();
      return seen;
    },
  };
}

const TURNS = 8;
const tick = tool({ name: 'tick', description: 'Waits a moment', parameters: z.object({}), execute: async () => (await sleep(40), 'ok') });
const looping = defineSwarm({ id: 'looping', instructions: 'Tick, then answer.', tools: [tick] });
const model = scriptedModel((req) => {
  const ticks = req.messages.filter((m) => m.role === 'tool').length;
  return ticks < TURNS ? { toolCalls: [{ id: `t${ticks}`, name: 'tick', arguments: '{}' }] } : { text: 'done' };
});

describe.skipIf(natsServerMissing)('following a swarm driven by another process', () => {
  it('takes each commit’s events from the value the watch delivered: every event in order, the stream hardly read', async () => {
    const driver = createRuntime({ swarms: [looping], model, nats: { servers: server.url } });
    const follower = createRuntime({ swarms: [looping], model, nats: { servers: server.url } });
    runtimes.push(driver, follower);
    await Promise.all([driver.start(), follower.start()]);
    // Warm-up: the store's setup and watches on both sides.
    await driver.forSwarm(looping, 'warm').run('Go.');
    await collect(follower.forSwarm(looping, 'warm').events());

    const api = await apiRequests();
    await driver.forSwarm(looping, 'followed').run('Go.');
    const followed = await collect(follower.forSwarm(looping, 'followed').events());
    const requests = [...(await api.subjects())];
    const stored = await collect(driver.forSwarm(looping, 'followed').events());
    expect(followed).toEqual(stored);
    expect(followed.at(-1)).toMatchObject({ kind: 'status-update', final: true });
    // Each tick is a commit the follower is woken by (three per tick); it reads the store at its
    // start (the events before it followed, and again once its subscription is in place: each a
    // direct get of the stream and of the key; once more the key when a value lands between
    // that read and its subscriptions), then takes the rest from what its subscriptions
    // delivered. Before: a read (one or two direct gets) per commit, 46 requests here.
    expect(requests.length).toBeLessThanOrEqual(5);
  }, 30_000);

  it('reads the events of events-only commits, which no value holds, in order with the others', async () => {
    const nc = await connect({ servers: server.url });
    connections.push(nc);
    const writer = jetstreamStore({ connection: nc });
    const follower = createRuntime({ swarms: [], model, nats: { servers: server.url } });
    runtimes.push(follower);
    await follower.start();
    // A swarm held by a live owner elsewhere (its lease runs a minute: nobody takes it over).
    await writer.commit(step('chunky', 1, 1, 3, 'elsewhere'));
    // The fixtures' records name the definition "planner".
    const reading = collect(follower.forSwarm('planner', 'chunky').events());
    await sleep(100);
    // Chunks (in no KV value), then a record, then more chunks and the final record.
    await writer.commit({ swarmId: 'chunky', events: [event('chunky', 4), event('chunky', 5)] });
    await sleep(50);
    await writer.commit(step('chunky', 2, 6, 7, 'elsewhere'));
    await sleep(50);
    await writer.commit({ swarmId: 'chunky', events: [event('chunky', 8)] });
    await sleep(50);
    const last: SwarmEvent = { ...event('chunky', 9), kind: 'status-update', final: true } as SwarmEvent;
    const final = step('chunky', 3, 9, 9, 'elsewhere', { status: 'completed' });
    await writer.commit({ ...final, events: [last] });
    const got = await reading;
    expect(seqs(got)).toEqual(oneToN(9));
    expect(got.slice(0, 8)).toEqual(oneToN(8).map((n) => event('chunky', n)));
    await writer.close();
  }, 30_000);

  it('knows an events-only commit’s events once the next commit continues them, with no read; tells its readers of one nothing continues after a moment; never takes one the stream did not store', async () => {
    const [wc, rc] = await Promise.all([connect({ servers: server.url }), connect({ servers: server.url })]);
    connections.push(wc, rc);
    const writer = jetstreamStore({ connection: wc });
    const reader = jetstreamStore({ connection: rc });
    const told: (number | undefined)[] = [];
    let placed = false;
    const stop = reader.watch('streamed', (lastSeq) => {
      placed = true;
      told.push(lastSeq);
    });
    await until('the reader’s subscriptions in place', () => placed);
    await writer.commit(step('streamed', 1, 1, 2, 'elsewhere'));
    await until('the first commit known', () => reader.knownEvents('streamed', 0).length === 2);
    const api = await apiRequests();

    // A streamed text's chunks, one events-only commit per window: each is held until the next
    // commit continues it, which its writer writes only once this one is stored.
    const committed = Date.now();
    await writer.commit({ swarmId: 'streamed', events: [event('streamed', 3)] });
    await sleep(30);
    expect(reader.knownEvents('streamed', 2)).toEqual([]);
    // Nobody was woken for it (unless this process stalled past the 100 ms a chunk is held).
    if (Date.now() - committed < 90) expect(told.filter((s) => s !== undefined && s >= 3)).toEqual([]);
    await writer.commit({ swarmId: 'streamed', events: [event('streamed', 4)] });
    await until('the first chunk known', () => reader.knownEvents('streamed', 2).length === 1);
    expect(told).toContain(3);
    // The step that ends the stream, a record commit, continues the second.
    await writer.commit(step('streamed', 2, 5, 5, 'elsewhere'));
    await until('every event known', () => reader.knownEvents('streamed', 2).length === 3);
    expect(reader.knownEvents('streamed', 2)).toEqual([3, 4, 5].map((n) => event('streamed', n)));
    expect(await api.subjects()).toEqual([]);

    // A chunk nothing continues (the writer stalls): its readers are told of it, to read it.
    const before = told.length;
    await writer.commit({ swarmId: 'streamed', events: [event('streamed', 6)] });
    await until('the stalled chunk told', () => told.slice(before).includes(6));
    expect(reader.knownEvents('streamed', 5)).toEqual([]);
    expect(await reader.readEvents('streamed', 5)).toEqual([event('streamed', 6)]);

    // A chunk delivered but not stored (here a publish the stream refuses), then the commit its
    // writer makes instead, at the same seq: the refused chunk is never taken.
    const refused = headers();
    refused.set(COMMIT_HEADER, commitHeader({ first: 7, last: 7, rev: 0, writes: 0 }));
    const names = new Names('xswarm');
    await expect(
      jetstream(wc).publish(names.eventSubject('streamed'), JSON.stringify({ events: [event('streamed', 7, 'not stored')] }), {
        headers: refused,
        expect: { lastSubjectSequence: 1 },
      }),
    ).rejects.toThrow(/wrong last sequence/);
    await writer.commit(step('streamed', 3, 7, 8, 'elsewhere'));
    await until('the commit after it known', () => reader.knownEvents('streamed', 6).length === 2);
    expect(reader.knownEvents('streamed', 6)).toEqual([7, 8].map((n) => event('streamed', n)));
    stop();
    await Promise.all([writer.close(), reader.close()]);
  }, 30_000);

  it('forgets the events its watches delivered for a swarm deleted and made again under its id', async () => {
    const [wc, rc] = await Promise.all([connect({ servers: server.url }), connect({ servers: server.url })]);
    connections.push(wc, rc);
    const writer = jetstreamStore({ connection: wc });
    const reader = jetstreamStore({ connection: rc });
    // The reader is woken once its subscriptions are in place: what is written from then on
    // reaches it (a reader woken so looks at the store for anything written before).
    let placed = false;
    const stop = reader.watch('again', () => {
      placed = true;
    });
    await until('the reader’s subscriptions in place', () => placed);
    // Finished (only a finished swarm can be removed).
    await writer.commit(step('again', 1, 1, 3, 'elsewhere', { status: 'completed' }));
    await until(
      'the first events known',
      () => seqs(reader.knownEvents('again', 0)),
      (s) => s.length === 3,
    );
    expect(await writer.remove!(['again'])).toBe(1);
    await until(
      'the deletion seen',
      () => reader.knownEvents('again', 0),
      (e) => e.length === 0,
    );
    const anew = { ...step('again', 1, 1, 2, 'elsewhere'), events: [event('again', 1, 'new 1'), event('again', 2, 'new 2')] };
    await writer.commit(anew);
    expect(
      await until(
        'the new events known',
        () => reader.knownEvents('again', 0),
        (e) => e.length > 0,
      ),
    ).toEqual(anew.events);
    stop();
    await Promise.all([writer.close(), reader.close()]);
  }, 30_000);

  it('says every later commit reaches its followers once one came on its subscription, and not after the connection came back until one comes again', async () => {
    // A server of its own: this test restarts it.
    const own = await startNatsServer();
    const open = async () => {
      const nc = await connect({ servers: own.url, maxReconnectAttempts: -1, reconnectTimeWait: 50 });
      connections.push(nc);
      return jetstreamStore({ connection: nc, timeoutMs: 2000 });
    };
    const [writer, reader] = await Promise.all([open(), open()]);
    try {
      let placed = false;
      const stop = reader.watch('told', () => {
        placed = true;
      });
      await until('the reader’s subscriptions in place', () => placed);
      expect(reader.announcesAfter('told', 0)).toBe(false);
      await writer.commit(step('told', 1, 1, 2, 'elsewhere'));
      // Its commit message delivered: its events are known, and every later commit will be delivered.
      await until('the first commit’s message delivered', () => reader.announcesAfter('told', 2));
      expect(reader.knownEvents('told', 0)).toHaveLength(2);
      // Holding events 1–2, a reader needs no read to hear of later ones; holding only event 1, it does.
      expect(reader.announcesAfter('told', 1)).toBe(false);

      // While the connection was down, commits may have been published that reached nobody.
      await own.restart({ downMs: 100 });
      await until('the reader back', () => reader.connected?.() === true);
      expect(reader.announcesAfter('told', 2)).toBe(false);
      await writer.commit(step('told', 2, 3, 3, 'elsewhere'));
      await until('the next commit’s message delivered', () => reader.announcesAfter('told', 3));
      expect(reader.knownEvents('told', 2)).toHaveLength(1);

      // Nobody follows it any more: nothing is delivered, so nothing is said.
      stop();
      expect(reader.announcesAfter('told', 3)).toBe(false);
    } finally {
      await Promise.all([writer.close(), reader.close()]);
      await own.stop();
    }
  }, 30_000);
});
