/**
 * What a JetStream store is delivered of other processes' writes, against a real nats-server:
 * nothing of the swarms it does not follow; a listing then reads each swarm written since the
 * previous one once, however often it was written, deletions included; and a follower is
 * delivered each value of the swarm it follows with its revision, so a finished swarm's summary
 * is answered without a read. While NATS is down, a listing synced before answers from what it
 * holds, and one never synced fails clearly.
 */
import { jetstream } from '@nats-io/jetstream';
import { Kvm } from '@nats-io/kv';
import { connect, headers, type NatsConnection } from '@nats-io/transport-node';
import { describe, expect, it } from 'vitest';
import { type Commit, SwarmError } from '../../src/index.js';
import { COMMIT_HEADER, commitHeader } from '../../src/store/jetstream/batch.js';
import { Names } from '../../src/store/jetstream/names.js';
import { RECORD_FORMAT, type StoredValue, valueBytes } from '../../src/store/jetstream/records.js';
import { jetstreamStore } from '../../src/store/jetstream/store.js';
import { jetstreamNamespace } from '../support/jetstream-namespace.js';
import { natsServerMissing, startNatsServer } from '../support/nats-server.js';
import { event, step } from '../support/store-fixtures.js';
import { sleep } from '../support/sleep.js';
import { until } from '../support/wait.js';

const ns = jetstreamNamespace('l');

/** A store on a connection of its own, and that connection (to count what it is delivered). */
async function storeAndConnection() {
  const nc = await ns.connection();
  const store = jetstreamStore({ connection: nc, prefix: ns.prefix, timeoutMs: 2000 });
  ns.onCleanup(() => store.close());
  return { store, nc };
}

/** Messages delivered to `nc` while `fn` runs (its flush included: nothing still on the way). */
async function delivered(nc: NatsConnection, fn: () => Promise<unknown>): Promise<number> {
  await nc.flush();
  const before = nc.stats().inMsgs;
  await fn();
  await nc.flush();
  return nc.stats().inMsgs - before;
}

const SWARMS = 20;
const COMMITS = 10;

describe.skipIf(natsServerMissing)('the JetStream store: what other processes’ writes cost a process', () => {
  it('a process is delivered nothing of swarms it does not follow; its next listing reads each changed swarm once, deletions included', async () => {
    const a = await ns.open();
    const { store: b, nc } = await storeAndConnection();
    await Promise.all([a.list(), b.list()]);

    // 200 commits of 20 swarms in another process: none of it reaches b.
    const writes = await delivered(nc, async () => {
      for (let c = 1; c <= COMMITS; c++) await Promise.all(Array.from({ length: SWARMS }, (_, i) => a.commit(step(`s${i}`, c, c, c))));
      await sleep(100);
    });
    expect(writes).toBe(0);

    // The listing reads the 20 swarms' latest values once each (plus a few API replies), not
    // the 200 values written.
    let listed: Awaited<ReturnType<typeof b.list>> = [];
    const listing = await delivered(nc, async () => {
      listed = await b.list();
    });
    expect(listed.map((s) => s.swarmId).sort()).toEqual(Array.from({ length: SWARMS }, (_, i) => `s${i}`).sort());
    expect(listed.every((s) => s.revision === COMMITS && s.lastSeq === COMMITS)).toBe(true);
    expect(listing).toBeGreaterThanOrEqual(SWARMS);
    expect(listing).toBeLessThan(SWARMS + 10);

    // Nothing written since: the next listing is one request.
    expect(await delivered(nc, () => b.list())).toBe(1);

    // A swarm finished and removed in the other process leaves b's next listing; one written
    // since is there at its new revision.
    await a.commit(step('s0', COMMITS + 1, COMMITS + 1, COMMITS + 1, 'A', { status: 'completed' }));
    expect(await a.remove?.(['s0'])).toBe(1);
    await a.commit(step('s1', COMMITS + 1, COMMITS + 1, COMMITS + 1));
    const after = await b.list();
    expect(after.map((s) => s.swarmId)).not.toContain('s0');
    expect(after.find((s) => s.swarmId === 's1')).toMatchObject({ revision: COMMITS + 1, lastSeq: COMMITS + 1 });
    expect(after).toHaveLength(SWARMS - 1);
  });

  it('a follower is delivered each value of the swarm it follows with its revision: the finished swarm’s summary is answered without a read', async () => {
    const a = await ns.open();
    const b = await ns.open();
    await Promise.all([a.list(), b.list()]);
    await a.commit(step('f', 1, 1, 2));
    let wakes = 0;
    const stop = b.watch('f', () => wakes++);
    // Its first read (the value before it followed), then its subscriptions are in place.
    expect((await b.readEvents('f', 0)).map((e) => e.seq)).toEqual([1, 2]);
    await sleep(50);

    // Every JetStream API request any connection makes from here (b's reads would be direct gets).
    const spy = await connect({ servers: ns.server.url });
    ns.onCleanup(() => spy.close());
    const requests: string[] = [];
    spy.subscribe('$JS.API.>', { callback: (_e, m) => void requests.push(m.subject) });
    await spy.flush();

    await a.commit(step('f', 2, 3, 3));
    await a.commit(step('f', 3, 4, 5, 'A', { status: 'completed' }));
    await until('the follower holds the finished swarm’s events', () => b.knownEvents('f', 0).at(-1)?.seq === 5);
    expect(b.knownEvents('f', 2).map((e) => e.seq)).toEqual([3, 4, 5]);
    expect(wakes).toBeGreaterThanOrEqual(2);
    const summary = await b.summary('f');
    expect(summary).toMatchObject({ swarmId: 'f', status: 'completed', revision: 3, lastSeq: 5 });
    await spy.flush();
    expect(requests.filter((s) => s.startsWith('$JS.API.DIRECT.GET'))).toEqual([]);
    stop();
  });

  it('a follower takes a value published on the key only once its commit message names its revision: a value the bucket refused, delivered too, is never taken', async () => {
    const a = await ns.open();
    const b = await ns.open();
    await Promise.all([a.list(), b.list()]);
    const told: (number | undefined)[] = [];
    let placed = false;
    const stop = b.watch('raced', (lastSeq) => {
      placed = true;
      told.push(lastSeq);
    });
    await until('b’s subscriptions in place', () => placed);
    await a.commit(step('raced', 1, 1, 2));
    await until('b holds the first commit’s events', () => b.knownEvents('raced', 0).length === 2);

    // Two writers race for the swarm's next step, written by hand as a writer writes it: a
    // value for events 3–4 that finishes the swarm, refused by the bucket's compare-and-set (its
    // writer is behind), and the lease holder's, stored, for the same events with other contents.
    // A core subscription on the key's subject is delivered the refused value too.
    const nc = await ns.connection();
    const kv = await new Kvm(jetstream(nc)).open(`${ns.prefix}_swarms`, { allow_direct: true });
    const names = new Names(ns.prefix);
    const key = names.key('raced');
    const before = (await kv.get(key))!.revision;
    const storedOf = (c: Commit): StoredValue => {
      const { lease: _l, ...record } = c.record!;
      return { v: RECORD_FORMAT, w: 'by hand', record, lease: c.lease!, outbox: { events: c.events, messages: [] } };
    };
    const held = step('raced', 2, 3, 4, 'A');
    const refused = step('raced', 2, 3, 4, 'B', { status: 'completed' });
    refused.events = [event('raced', 3, 'not stored'), event('raced', 4, 'not stored')];
    const refuse = () => expect(kv.update(key, valueBytes(storedOf(refused)).bytes, before + 1000)).rejects.toThrow(/wrong last sequence/);
    await refuse();
    // Nothing of the refused value is taken: no events, no finished summary, nobody told.
    await sleep(100);
    expect(b.knownEvents('raced', 2)).toEqual([]);
    expect(told.filter((s) => s !== undefined && s > 2)).toEqual([]);
    expect(await b.summary('raced')).toMatchObject({ status: 'running', revision: 1, lastSeq: 2 });

    // The stored value, then the refused one delivered again before the stored one's commit message.
    const stored = valueBytes(storedOf(held));
    const rev = await kv.update(key, stored.bytes, before);
    await refuse();
    await sleep(50);
    expect(b.knownEvents('raced', 2)).toEqual([]);
    // The stored value's commit message, as its writer publishes it once the value is stored.
    const h = headers();
    h.set(COMMIT_HEADER, commitHeader({ first: 3, last: 4, rev, writes: 0 }));
    await jetstream(nc).publish(names.eventSubject('raced'), stored.body!, { headers: h, msgID: names.commitId('raced', rev, 3, 4) });
    await until('b holds the second commit’s events', () => b.knownEvents('raced', 2).length === 2);
    expect(b.knownEvents('raced', 2)).toEqual(held.events);
    expect(told.at(-1)).toBe(4);
    expect(await b.summary('raced')).toMatchObject({ swarmId: 'raced', status: 'running', revision: 2, lastSeq: 4 });

    // A deletion the bucket refuses (a pruner behind the swarm's writes) is delivered too: the
    // swarm stays listed, and its events are read again, not lost.
    expect((await b.list()).map((s) => s.swarmId)).toContain('raced');
    await expect(kv.delete(key, { previousSeq: before })).rejects.toThrow(/wrong last sequence/);
    await sleep(50);
    expect((await b.list()).map((s) => s.swarmId)).toContain('raced');
    expect((await b.readEvents('raced', 2)).map((e) => e.seq)).toEqual([3, 4]);
    stop();
  });

  it('while NATS is down, a listing synced before answers from what it holds; one never synced fails with `unavailable`; both catch up once it is back', async () => {
    const server = await startNatsServer();
    ns.onCleanup(() => server.stop());
    const open = async () => {
      const nc = await connect({ servers: server.url, maxReconnectAttempts: -1, reconnectTimeWait: 50 });
      ns.onCleanup(() => nc.close());
      const store = jetstreamStore({ connection: nc, timeoutMs: 500 });
      ns.onCleanup(() => store.close());
      return store;
    };
    const [a, b, never] = await Promise.all([open(), open(), open()]);
    await a.commit(step('s1', 1, 1, 1));
    expect((await b.list()).map((s) => s.swarmId)).toEqual(['s1']);

    await server.kill();
    await until('b sees the connection down', () => b.connected?.() === false);
    const started = Date.now();
    expect((await b.list()).map((s) => s.swarmId)).toEqual(['s1']);
    expect(Date.now() - started).toBeLessThan(250);
    const refused = await never.list().then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(refused).toBeInstanceOf(SwarmError);
    expect(refused).toMatchObject({ code: 'unavailable' });

    await server.start();
    await until('b sees the connection back', () => b.connected?.() === true);
    await a.commit(step('s2', 1, 1, 1));
    // A read that NATS, just back, does not answer in time fails (and is made again here).
    const listed = (store: typeof b) =>
      store.list().then(
        (l) => l.map((s) => s.swarmId).sort(),
        () => [],
      );
    for (const store of [b, never])
      await until(
        'the listing once NATS is back',
        () => listed(store),
        (ids) => ids.join() === 's1,s2',
      );
  }, 30_000);
});
