/**
 * The JetStream store's stream layout: a commit is one message of the events stream (its events
 * and its list writes, record format 3), and streams written before it (a message per event,
 * a message per list row in the messages stream, format 2 values) still read: events, pages,
 * message lists, an outbox an older writer left unpublished, and a swarm continued in the new
 * layout over the old one.
 */
import { jetstream, jetstreamManager } from '@nats-io/jetstream';
import { Kvm } from '@nats-io/kv';
import { headers } from '@nats-io/transport-node';
import { describe, expect, it } from 'vitest';
import type { StoredValue } from '../../src/store/jetstream/records.js';
import { subjectToken } from '../../src/transport/types.js';
import { jetstreamNamespace } from '../support/jetstream-namespace.js';
import { natsServerMissing } from '../support/nats-server.js';
import { oneToN, seqs } from '../support/seqs.js';
import { event, record, step } from '../support/store-fixtures.js';
import { until } from '../support/wait.js';

const ns = jetstreamNamespace('l');
const { connection, open } = ns;

/** Raw handles on the namespace (its streams and bucket made by a store first). */
async function raw() {
  await (await open()).list();
  const nc = await connection();
  const js = jetstream(nc);
  const jsm = await jetstreamManager(nc);
  const kv = await new Kvm(js).open(`${ns.prefix}_swarms`, { allow_direct: true });
  const eventSubject = (swarmId: string) => `${ns.prefix}.ev.${subjectToken(swarmId)}`;
  return {
    kv,
    /** Publishes events as the store did before format 3: a message each, its seq in its id. */
    async oldEvents(swarmId: string, from: number, to: number) {
      for (let s = from; s <= to; s++) await js.publish(eventSubject(swarmId), JSON.stringify(event(swarmId, s)), { msgID: `${swarmId}:${s}` });
    },
    /** Publishes list rows as the store did before format 3: a message each in the messages stream, its index in a header. */
    async oldRows(swarmId: string, list: string, from: number, items: unknown[]) {
      for (const [i, item] of items.entries()) {
        const h = headers();
        h.set('Xswarm-Index', String(from + i));
        await js.publish(`${ns.prefix}.msg.${subjectToken(swarmId)}.m${subjectToken(list)}`, JSON.stringify(item), { headers: h });
      }
    },
    /** The `Xswarm-Commit` headers of a swarm's messages, in stream order (direct gets). */
    async commitHeaders(swarmId: string) {
      const out: string[] = [];
      for (let pos = 1; ; ) {
        const m = await jsm.direct.getMessage(`${ns.prefix}_events`, { next_by_subj: eventSubject(swarmId), seq: pos });
        if (!m) return out;
        out.push(m.header.get('Xswarm-Commit'));
        pos = m.seq + 1;
      }
    },
    /**
     * Expects the events stream to hold `n` messages of a swarm: a commit's publish follows its
     * KV update in the background, so the count is awaited, then checked to be exact.
     */
    async expectMessages(swarmId: string, n: number) {
      const count = async () => {
        const info = await jsm.streams.info(`${ns.prefix}_events`, { subjects_filter: eventSubject(swarmId) });
        return Object.values(info.state.subjects ?? {}).reduce((a, b) => a + b, 0);
      };
      await until(`${n} messages of ${swarmId}`, count, (c) => c >= n);
      expect(await count()).toBe(n);
    },
  };
}

const ref = (length: number) => ({ context: { messages: { xswarm$messages: '', length } } });
const rows = (n: number) => Array.from({ length: n }, (_, i) => `m${i}`);

describe.skipIf(natsServerMissing)('jetstreamStore stream layout', () => {
  it('a commit with several events and list writes is one message; the events read back in order, in pages', async () => {
    const store = await open();
    const { expectMessages } = await raw();
    await store.commit({ ...step('s1', 1, 1, 5), record: { ...record('s1', 1, 5), snapshot: ref(3) }, messages: [{ list: '', from: 0, items: rows(3) }] });
    await store.commit({ swarmId: 's1', events: [event('s1', 6), event('s1', 7)] });
    await store.commit({ ...step('s1', 2, 8, 12), record: { ...record('s1', 2, 12), snapshot: ref(3) } });
    await expectMessages('s1', 3);
    const reader = await open();
    expect(seqs(await reader.readEvents('s1', 0))).toEqual(oneToN(12));
    expect(seqs(await reader.readEvents('s1', 3, 4))).toEqual([4, 5, 6, 7]);
    expect(seqs(await reader.readEvents('s1', 7, 2))).toEqual([8, 9]);
    expect(seqs(await reader.readEvents('s1', 9))).toEqual([10, 11, 12]);
    expect((await reader.load('s1'))?.snapshot).toEqual({ context: { messages: rows(3) } });
  });

  it('commits resolve at their KV update, their publishes pipelined: each swarm’s messages stay in commit order, once each, while swarms commit together', async () => {
    const store = await open();
    const { commitHeaders, expectMessages, kv } = await raw();
    const swarms = Array.from({ length: 8 }, (_, i) => `p${i}`);
    await Promise.all(
      swarms.map(async (id) => {
        for (let r = 1; r <= 15; r++) {
          await store.commit({
            ...step(id, r, 2 * r - 1, 2 * r),
            record: { ...record(id, r, 2 * r), snapshot: ref(r) },
            messages: [{ list: '', from: r - 1, items: [`m${r - 1}`] }],
          });
          // Every third step, an events-only commit: it waits for the outbox before it.
          if (r % 3 === 0) await store.commit({ swarmId: id, events: [] });
        }
      }),
    );
    for (const id of swarms) {
      await expectMessages(id, 15);
      const headers = await commitHeaders(id);
      const revs = headers.map((h) => Number(h.split(' ')[2]));
      expect(
        headers.map((h) => h.split(' ').slice(0, 2).join(' ')),
        id,
      ).toEqual(Array.from({ length: 15 }, (_, i) => `${2 * i + 1} ${2 * i + 2}`));
      expect(
        [...revs].sort((a, b) => a - b),
        id,
      ).toEqual(revs);
      expect(revs.at(-1), id).toBe((await kv.get(subjectToken(id)))!.revision);
    }
    const reader = await open();
    for (const id of swarms) {
      expect(seqs(await reader.readEvents(id, 0)), id).toEqual(oneToN(30));
      expect((await reader.load(id))?.snapshot, id).toEqual({ context: { messages: rows(15) } });
    }
  });

  it('a swarm written in the old layout reads, and continues in the new one over it', async () => {
    const { kv, oldEvents, oldRows, expectMessages } = await raw();
    await oldEvents('s1', 1, 3);
    await oldRows('s1', '', 0, rows(2));
    const old: Omit<StoredValue, 'v'> & { v: 2 } = {
      v: 2,
      w: 'old-writer',
      record: { ...record('s1', 1, 3), snapshot: ref(2) },
      lease: { owner: 'A', until: Date.now() + 60_000 },
      lists: { '': 2 },
    };
    await kv.create(subjectToken('s1'), JSON.stringify(old));

    const a = await open();
    expect(await a.readEvents('s1', 0)).toEqual([1, 2, 3].map((n) => event('s1', n)));
    expect(seqs(await a.readEvents('s1', 1, 1))).toEqual([2]);
    expect((await a.load('s1'))?.snapshot).toEqual({ context: { messages: rows(2) } });

    // The next commit is written in the new layout: one message, a format 3 value.
    await a.commit({ ...step('s1', 2, 4, 6), record: { ...record('s1', 2, 6), snapshot: ref(3) }, messages: [{ list: '', from: 2, items: ['m2'] }] });
    await expectMessages('s1', 4);
    expect((await kv.get(subjectToken('s1')))!.json<StoredValue>()).toMatchObject({ v: 3, legacyRows: true });

    const b = await open();
    expect(seqs(await b.readEvents('s1', 0))).toEqual(oneToN(6));
    expect(seqs(await b.readEvents('s1', 2, 3))).toEqual([3, 4, 5]);
    expect((await b.load('s1'))?.snapshot).toEqual({ context: { messages: rows(3) } });
    // A rewrite replaces the old rows too; a lease write keeps what it says of them.
    await a.commit({ ...step('s1', 3, 7, 7), record: { ...record('s1', 3, 7), snapshot: ref(1) }, messages: [{ list: '', from: 0, items: ['x'] }] });
    await a.renew('A', ['s1'], Date.now() + 120_000);
    expect((await kv.get(subjectToken('s1')))!.json<StoredValue>()).toMatchObject({ v: 3, legacyRows: true });
    expect((await b.load('s1'))?.snapshot).toEqual({ context: { messages: ['x'] } });
    expect(seqs(await b.readEvents('s1', 0))).toEqual(oneToN(7));
  });

  it('an outbox an older writer left unpublished is merged by readers, and published once, as one message, by the next writer', async () => {
    const { kv, oldEvents, oldRows, expectMessages } = await raw();
    await oldEvents('s1', 1, 2);
    await oldRows('s1', '', 0, rows(2));
    const old = {
      v: 2,
      w: 'crashed-old-writer',
      record: { ...record('s1', 2, 5), snapshot: ref(3) },
      lease: { owner: 'A', until: Date.now() - 1 },
      lists: { '': 3 },
      outbox: { events: [3, 4, 5].map((n) => event('s1', n)), messages: [{ list: '', from: 2, items: ['m2'] }] },
    };
    await kv.create(subjectToken('s1'), JSON.stringify(old));
    const b = await open();
    expect(seqs(await b.readEvents('s1', 0))).toEqual(oneToN(5));
    expect((await b.load('s1'))?.snapshot).toEqual({ context: { messages: rows(3) } });
    expect(await b.claim('s1', { owner: 'B', until: Date.now() + 60_000 }, Date.now())).toBe(true);
    await expectMessages('s1', 3);
    // Claimed again: nothing published twice.
    expect(await (await open()).claim('s1', { owner: 'B', until: Date.now() + 60_000 }, Date.now())).toBe(true);
    await expectMessages('s1', 3);
    await b.commit({ ...step('s1', 3, 6, 6, 'B'), record: { ...record('s1', 3, 6), snapshot: ref(4) }, messages: [{ list: '', from: 3, items: ['m3'] }] });
    const c = await open();
    expect(await c.readEvents('s1', 0)).toEqual(oneToN(6).map((n) => event('s1', n)));
    expect((await c.load('s1'))?.snapshot).toEqual({ context: { messages: rows(4) } });
  });
});
