/**
 * The JetStream store against a real nats-server: the store contract as the SQLite store meets
 * it (atomic commits, revision compare-and-set, leases, reading, listing, pruning, unreadable
 * data, message lists), two stores on two connections sharing state, a commit whose KV write
 * landed but whose publishes were lost, a server restart with commits in flight, and a runtime
 * run finished by a second runtime on another connection.
 */
import { spawn } from 'node:child_process';
import { jetstream, jetstreamManager } from '@nats-io/jetstream';
import { Kvm } from '@nats-io/kv';
import { connect, headers, type NatsConnection } from '@nats-io/transport-node';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import {
  CorruptEventError,
  createRuntime,
  defineSwarm,
  LeaseLostError,
  type ModelRequest,
  type ModelResponse,
  RevisionConflictError,
  type Runtime,
  type SwarmEvent,
  type SwarmStatus,
  type SwarmStore,
  scriptedModel,
  tool,
} from '../../src/index.js';
import { jetstreamStore } from '../../src/store/jetstream/store.js';
import type { StoredValue } from '../../src/store/jetstream/records.js';
import { CONFIG_LIST } from '../../src/store/messages.js';
import type { Commit } from '../../src/store/types.js';
import { subjectToken } from '../../src/transport/types.js';
import { jetstreamNamespace } from '../support/jetstream-namespace.js';
import { natsServerMissing } from '../support/nats-server.js';
import { collect } from '../support/script.js';
import { event, expectNotHeldByFilter, record, step, T0 } from '../support/store-fixtures.js';
import { sleep } from '../support/sleep.js';
import { until } from '../support/wait.js';
import { oneToN, seqs } from '../support/seqs.js';
import { REPO_ROOT } from '../support/repo-root.js';

const ns = jetstreamNamespace('t');
const { connection, open } = ns;

/** Raw JetStream handles on the test's namespace, for what the store API cannot do. */
async function raw() {
  const nc = await connection();
  const js = jetstream(nc);
  const jsm = await jetstreamManager(nc);
  const kv = await new Kvm(js).open(`${ns.prefix}_swarms`, { allow_direct: true });
  /** How many messages the events stream holds for a swarm (duplicates included). */
  const eventCount = async (swarmId: string) => {
    const info = await jsm.streams.info(`${ns.prefix}_events`, { subjects_filter: `${ns.prefix}.ev.${subjectToken(swarmId)}` });
    return Object.values(info.state.subjects ?? {}).reduce((a, b) => a + b, 0);
  };
  /**
   * Expects the events stream to hold `n` messages of a swarm: a commit's publish follows its
   * KV update in the background, so the count is awaited, then checked to be exact.
   */
  const expectMessages = async (swarmId: string, n: number) => {
    await until(
      `${n} messages of ${swarmId}`,
      () => eventCount(swarmId),
      (c) => c >= n,
    );
    expect(await eventCount(swarmId), swarmId).toBe(n);
  };
  return { nc, js, jsm, kv, eventCount, expectMessages };
}

/**
 * Counts the publishes of every connection to the test's events and messages streams (a core
 * subscriber on their subjects sees each publish once, whatever the stream does with it).
 */
function collectPublishes(nc: NatsConnection) {
  const seen = { events: 0, messages: 0 };
  nc.subscribe(`${ns.prefix}.ev.>`, { callback: () => void seen.events++ });
  nc.subscribe(`${ns.prefix}.msg.>`, { callback: () => void seen.messages++ });
  return {
    ready: nc.flush(),
    async count() {
      await nc.flush();
      return { ...seen };
    },
  };
}

/**
 * Counts the JetStream API requests every connection makes on the test's namespace, by kind
 * (`CONSUMER.CREATE`, `DIRECT.GET`, `STREAM.PURGE`, …; a consumer of the events or messages
 * stream is `READER`, apart from the KV watches' consumers): what the hot path must not do.
 */
async function apiCalls() {
  const nc = await connection();
  const seen: string[] = [];
  nc.subscribe('$JS.API.>', { callback: (_e, m) => void (m.subject.includes(`${ns.prefix}_`) && seen.push(m.subject)) });
  await nc.flush();
  return {
    async count(kind: string): Promise<number> {
      await nc.flush();
      const start = kind === 'READER' ? `$JS.API.CONSUMER.CREATE.${ns.prefix}_` : `$JS.API.${kind}.`;
      return seen.filter((subject) => subject.startsWith(start)).length;
    },
    reset: () => void (seen.length = 0),
  };
}

describe.skipIf(natsServerMissing)('jetstreamStore', () => {
  describe('commit', () => {
    it('writes the events and the record; events-only commits append without touching the record', async () => {
      const store = await open();
      await store.commit(step('s1', 1, 1, 3));
      expect(await store.readEvents('s1', 0)).toEqual([event('s1', 1), event('s1', 2), event('s1', 3)]);
      const loaded = await store.load('s1');
      // A store shared by processes names the lease's holder in load too.
      expect(loaded).toEqual({ ...record('s1', 1, 3), lease: { owner: 'A', until: expect.any(Number) } });
      await store.commit({ swarmId: 's1', events: [event('s1', 4), event('s1', 5)] });
      await store.commit(step('s1', 2, 6, 6));
      expect(seqs(await store.readEvents('s1', 0))).toEqual(oneToN(6));
      expect((await store.load('s1'))?.revision).toBe(2);
      expect(store.stats()).toEqual({ commits: 3, transactions: 3 });
      // Each commit is one message of the stream, whatever number of events it holds.
      await (await raw()).expectMessages('s1', 3);
    });

    it('a refused commit leaves neither its events nor its record', async () => {
      const store = await open();
      await store.commit(step('s1', 1, 1, 2));
      await expect(store.commit(step('s1', 3, 3, 4))).rejects.toThrow(RevisionConflictError);
      expect(seqs(await store.readEvents('s1', 0))).toEqual([1, 2]);
      expect(await store.load('s1')).toMatchObject(record('s1', 1, 2));
      expect(store.stats().commits).toBe(1);
    });

    it('an append to a message list that does not start at its stored length is refused, and the step writes nothing', async () => {
      const store = await open();
      const list = (n: number) => Array.from({ length: n }, (_, i) => ({ role: 'user', content: `m${i}` }));
      const snap = (n: number) => ({ context: { messages: { xswarm$messages: '', length: n } } });
      await store.commit({ ...step('s1', 1, 1, 1), record: { ...record('s1', 1, 1), snapshot: snap(2) }, messages: [{ list: '', from: 0, items: list(2) }] });
      const refused = store.commit({ ...step('s1', 2, 2, 2), messages: [{ list: '', from: 1, items: [{ role: 'user', content: 'other' }] }] });
      await expect(refused).rejects.toThrow('Swarm "s1": message list "" has 2 stored messages, the commit appends at 1');
      expect(seqs(await store.readEvents('s1', 0))).toEqual([1]);
      expect(await store.load('s1')).toMatchObject({ revision: 1, snapshot: { context: { messages: list(2) } } });
      // A rewrite from 0 replaces the list.
      await store.commit({ ...step('s1', 2, 2, 2), record: { ...record('s1', 2, 2), snapshot: snap(1) }, messages: [{ list: '', from: 0, items: list(1) }] });
      expect((await (await open()).load('s1'))?.snapshot).toEqual({ context: { messages: list(1) } });
    });
  });

  describe('revision compare-and-set', () => {
    it('a stale revision is a RevisionConflictError naming expected and found revisions', async () => {
      const store = await open();
      await store.commit(step('s1', 1, 1, 1));
      await store.commit(step('s1', 2, 2, 2));
      const error = await Promise.resolve(
        store.commit({ swarmId: 's1', events: [], record: record('s1', 2, 2, { status: 'paused' }), lease: { owner: 'A', until: Date.now() + 1000 } }),
      ).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(RevisionConflictError);
      expect(error).toMatchObject({ swarmId: 's1', expected: 1, actual: 2 });
      expect((await store.load('s1'))?.status).toBe('running');
    });

    it('two stores (two processes) creating the same swarm: the second is refused and nothing of it is stored; after a takeover the old owner gets LeaseLostError', async () => {
      const a = await open();
      const b = await open();
      await a.commit(step('s1', 1, 1, 3, 'A', { definitionId: 'first' }));
      await expect(b.commit(step('s1', 1, 1, 3, 'B', { definitionId: 'second' }))).rejects.toThrow(RevisionConflictError);
      expect((await b.load('s1'))?.definitionId).toBe('first');
      expect(await b.readEvents('s1', 0)).toEqual([event('s1', 1), event('s1', 2), event('s1', 3)]);
      expect(await b.claim('s1', { owner: 'B', until: Date.now() + 60_000 }, Date.now() + 120_000)).toBe(true);
      await b.commit(step('s1', 2, 4, 5, 'B'));
      // A still remembers revision 1 as stored: its write is refused on what is stored now.
      await expect(a.commit(step('s1', 2, 4, 6, 'A'))).rejects.toThrow(LeaseLostError);
      expect(seqs(await a.readEvents('s1', 0))).toEqual(oneToN(5));
    });
  });

  describe('a new swarm’s first commit', () => {
    it('is a create with no read first; on a swarm that exists it is refused after one read, and writes nothing', async () => {
      const calls = await apiCalls();
      const a = await open();
      await a.commit(step('s1', 1, 1, 2, 'A', { definitionId: 'first' }));
      expect(await calls.count('DIRECT.GET')).toBe(0);
      // Another process (nothing of s1 known to it) starting the same id: its create is refused,
      // then decided on one read of the key.
      const b = await open();
      await expect(b.commit(step('s1', 1, 1, 2, 'B', { definitionId: 'second' }))).rejects.toThrow(RevisionConflictError);
      expect(await calls.count('DIRECT.GET')).toBe(1);
      expect(await a.load('s1')).toMatchObject({ definitionId: 'first', revision: 1, lease: { owner: 'A' } });
      await (await raw()).expectMessages('s1', 1);
      // A key that was deleted (a pruned swarm) holds a marker: the create falls back to a read.
      await a.commit(step('s1', 2, 3, 3, 'A', { status: 'completed', updatedAt: 1000 }));
      expect(await a.prune(2000)).toBe(1);
      await b.commit(step('s1', 1, 1, 1, 'B', { definitionId: 'second' }));
      expect(await a.load('s1')).toMatchObject({ definitionId: 'second', revision: 1 });
    });
  });

  describe('leases', () => {
    it('claim is refused while another owner’s lease is live, granted once expired, or to a takeover', async () => {
      const store = await open();
      const until = Date.now() + 10_000;
      await store.commit({ ...step('s1', 1, 1, 1, 'A'), lease: { owner: 'A', until, host: 'h1', pid: 7 } });
      expect(await store.claim('s1', { owner: 'B', until: until + 10_000 }, until - 1)).toBe(false);
      expect(await store.claim('s1', { owner: 'A', until }, until - 1)).toBe(true);
      expect(await store.claim('s1', { owner: 'B', until: until + 10_000 }, until)).toBe(true);
      expect((await store.list())[0]?.lease).toEqual({ owner: 'B', until: until + 10_000 });
      expect(await store.claim('s1', { owner: 'A', until: until + 20_000 }, until + 1)).toBe(false);
      expect(await store.claim('s1', { owner: 'C', until: until + 20_000 }, until + 1, 'B')).toBe(true);
    });

    it('a commit by a writer that is not the owner is a LeaseLostError and writes nothing', async () => {
      const store = await open();
      await store.commit(step('s1', 1, 1, 1, 'A'));
      expect(await store.claim('s1', { owner: 'B', until: Date.now() + 60_000 }, Date.now() + 120_000)).toBe(true);
      const error = await store.commit(step('s1', 2, 2, 3, 'A')).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(LeaseLostError);
      expect(error).toMatchObject({ swarmId: 's1', holder: 'B' });
      expect(seqs(await store.readEvents('s1', 0))).toEqual([1]);
      await store.commit(step('s1', 2, 2, 3, 'B'));
      expect((await store.load('s1'))?.revision).toBe(2);
    });

    it('a listing can leave out the swarms an owner holds (what an adoption scan need not read)', async () => {
      await expectNotHeldByFilter(await open());
    });

    it('release lets another owner claim at once; renew extends only the owner’s own leases; finished swarms cannot be claimed', async () => {
      const store = await open();
      await store.commit(step('s1', 1, 1, 1, 'A'));
      await store.commit(step('s2', 1, 1, 1, 'B'));
      await store.commit(step('done', 1, 1, 1, 'A', { status: 'completed' }));
      const leaseOf = async (id: string) => (await store.list()).find((s) => s.swarmId === id)?.lease;
      const before = (await leaseOf('s2'))!.until;
      await store.renew('A', ['s1', 's2'], Date.now() + 600_000);
      expect((await leaseOf('s1'))!.until).toBeGreaterThan(Date.now() + 500_000);
      expect((await leaseOf('s2'))!.until).toBe(before);
      expect(await store.claim('s1', { owner: 'C', until: Date.now() + 1000 }, Date.now())).toBe(false);
      await store.release('A', ['s1', 'done']);
      expect(await leaseOf('s1')).toBeUndefined();
      expect(await store.claim('s1', { owner: 'C', until: Date.now() + 1000 }, Date.now())).toBe(true);
      expect(await store.claim('done', { owner: 'C', until: Date.now() + 1000 }, Date.now())).toBe(false);
      expect(await store.claim('nope', { owner: 'C', until: Date.now() + 1000 }, Date.now())).toBe(false);
      // The new owner continues the swarm.
      await store.commit(step('s1', 2, 2, 2, 'C'));
    });
  });

  describe('reading and listing', () => {
    it('readEvents(since, limit) pages through a long stream in order, per swarm', async () => {
      const store = await open();
      await store.commit(step('s1', 1, 1, 3));
      await store.commit(step('s2', 1, 1, 2));
      for (let r = 2; r <= 40; r++) await store.commit(step('s1', r, 3 * r - 2, 3 * r));
      expect(seqs(await store.readEvents('s1', 0))).toEqual(oneToN(120));
      expect(seqs(await store.readEvents('s1', 115))).toEqual([116, 117, 118, 119, 120]);
      expect(await store.readEvents('s1', 120)).toEqual([]);
      expect(await store.readEvents('s2', 1)).toEqual([event('s2', 2)]);
      expect(await store.readEvents('unknown', 0)).toEqual([]);
      expect(await store.load('unknown')).toBeUndefined();
      const paged: number[] = [];
      for (let since = 0; ; ) {
        const page = await store.readEvents('s1', since, 7);
        if (page.length === 0) break;
        expect(page.length).toBeLessThanOrEqual(7);
        paged.push(...seqs(page));
        since = page.at(-1)!.seq;
      }
      expect(paged).toEqual(oneToN(120));
    });

    it('a store that never read a long stream finds where to start reading in it (interleaved with another swarm)', async () => {
      const a = await open();
      for (let r = 1; r <= 12; r++) {
        await a.commit(step('long', r, 50 * r - 49, 50 * r));
        await a.commit(step(`other${r}`, 1, 1, 3));
      }
      const b = await open();
      expect(seqs(await b.readEvents('long', 550))).toEqual(oneToN(50).map((n) => n + 550));
      expect(seqs(await b.readEvents('long', 300, 5))).toEqual([301, 302, 303, 304, 305]);
      expect(await b.readEvents('long', 600)).toEqual([]);
      expect(seqs(await b.readEvents('long', 0, 3))).toEqual([1, 2, 3]);
    });

    it('list filters by definition and status, newest first, with a limit; summaries carry no snapshot', async () => {
      const store = await open();
      const statuses: SwarmStatus[] = ['running', 'awaitingHandoff', 'paused', 'completed', 'failed', 'stopped'];
      for (const [i, status] of statuses.entries()) await store.commit(step(status, 1, 1, 1, 'A', { status, updatedAt: T0 + i, definitionId: i % 2 ? 'odd' : 'even' }));
      const live = await store.list({ status: ['running', 'awaitingHandoff', 'paused'] });
      expect(live.map((r) => r.swarmId)).toEqual(['paused', 'awaitingHandoff', 'running']);
      const { snapshot: _s, ...summary } = record('paused', 1, 1, { status: 'paused', updatedAt: T0 + 2, definitionId: 'even' });
      expect(live[0]).toMatchObject(summary);
      expect(live[0]).not.toHaveProperty('snapshot');
      expect((await store.list({ definitionId: 'odd' })).map((r) => r.swarmId)).toEqual(['stopped', 'completed', 'awaitingHandoff']);
      expect((await store.list({ limit: 2 })).map((r) => r.swarmId)).toEqual(['stopped', 'failed']);
    });

    it('prune deletes only finished records older than the cutoff, with their events and messages', async () => {
      const store = await open();
      const at = (t: number) => ({ updatedAt: t });
      await store.commit({
        ...step('old-done', 1, 1, 3, 'A', { status: 'completed', ...at(1000) }),
        messages: [{ list: '', from: 0, items: [{ role: 'user', content: 'hi' }] }],
      });
      await store.commit(step('old-failed', 1, 1, 2, 'A', { status: 'failed', ...at(1500) }));
      await store.commit(step('old-running', 1, 1, 2, 'A', { status: 'running', ...at(1000) }));
      await store.commit(step('new-done', 1, 1, 2, 'A', { status: 'stopped', ...at(3000) }));
      await store.commit(step('edge-done', 1, 1, 2, 'A', { status: 'completed', ...at(2000) }));
      expect(await store.prune(2000)).toBe(2);
      for (const gone of ['old-done', 'old-failed']) {
        expect(await store.load(gone)).toBeUndefined();
        expect(await store.readEvents(gone, 0)).toEqual([]);
      }
      for (const kept of ['old-running', 'new-done', 'edge-done']) expect((await store.readEvents(kept, 0)).length, kept).toBe(2);
      expect((await store.list()).map((s) => s.swarmId).sort()).toEqual(['edge-done', 'new-done', 'old-running']);
      expect(await store.prune(2000)).toBe(0);
      // A pruned id can be used again.
      await store.commit(step('old-done', 1, 1, 1));
      expect(seqs(await store.readEvents('old-done', 0))).toEqual([1]);
    });
  });

  describe('the hot path', () => {
    it('a reader in another process gets a swarm’s latest commits from their KV values, with direct gets and no consumer; events-only commits are read too', async () => {
      const a = await open();
      const b = await open();
      const stop = b.watch('s1', () => undefined);
      const api = await apiCalls();
      // What is asserted is the reader's path once the value has reached it (its KV watch); a
      // read before that falls back to the stream (correct, and counted as a consumer).
      const seen = (lastSeq: number) => until(`b to list s1 at seq ${lastSeq}`, async () => (await b.list()).find((x) => x.swarmId === 's1')?.lastSeq === lastSeq);
      await a.commit(step('s1', 1, 1, 3));
      await seen(3);
      expect(seqs(await b.readEvents('s1', 0))).toEqual([1, 2, 3]);
      await a.commit(step('s1', 2, 4, 6));
      await seen(6);
      expect(await b.readEvents('s1', 3)).toEqual([4, 5, 6].map((n) => event('s1', n)));
      expect(seqs(await b.readEvents('s1', 1, 2))).toEqual([2, 3]);
      expect(await b.readEvents('s1', 6)).toEqual([]);
      expect(await api.count('READER')).toBe(0);
      // Events after the record's, stored by an events-only commit: the KV value does not hold them.
      await a.commit({ swarmId: 's1', events: [event('s1', 7), event('s1', 8)] });
      expect(seqs(await b.readEvents('s1', 6))).toEqual([7, 8]);
      expect(await b.readEvents('s1', 8)).toEqual([]);
      await a.commit(step('s1', 3, 9, 10));
      await seen(10);
      api.reset();
      expect(seqs(await b.readEvents('s1', 8))).toEqual([9, 10]);
      // The 8 events before the outbox's are read with direct gets too.
      expect(seqs(await b.readEvents('s1', 0))).toEqual(oneToN(10));
      expect(await api.count('READER')).toBe(0);
      stop();
    });

    it('a follower reads a swarm of a few commits from its start, and catches up on several commits and events-only commits, with direct gets however many events a commit holds; a swarm of many commits takes a stream read', async () => {
      const a = await open();
      const b = await open();
      const c = await open();
      const stops = [b.watch('s1', () => undefined), c.watch('s1', () => undefined)];
      const api = await apiCalls();
      const seen = (store: typeof b, lastSeq: number) =>
        until(`s1 listed at seq ${lastSeq}`, async () => (await store.list()).find((x) => x.swarmId === 's1')?.lastSeq === lastSeq);
      const ten = (rev: number) => step('s1', rev, 10 * rev - 9, 10 * rev);
      for (const rev of [1, 2, 3]) await a.commit(ten(rev));
      await seen(b, 30);
      // 20 events before the latest outbox, in two messages.
      expect(await b.readEvents('s1', 0)).toEqual(oneToN(30).map((n) => event('s1', n)));
      expect(await b.readEvents('s1', 30)).toEqual([]);
      for (const rev of [4, 5, 6]) await a.commit(ten(rev));
      await seen(b, 60);
      await seen(c, 60);
      // A follower three commits behind; a reader that read nothing before (from the subject's start).
      expect(await b.readEvents('s1', 30)).toEqual(oneToN(30).map((n) => event('s1', 30 + n)));
      expect(seqs(await c.readEvents('s1', 25, 10))).toEqual(oneToN(10).map((n) => 25 + n));
      // Events-only commits after the record (a streamed text's chunks): not in any KV value.
      const chunks = (from: number) => ({ swarmId: 's1', events: oneToN(5).map((n) => event('s1', from + n)) });
      await a.commit(chunks(60));
      await a.commit(chunks(65));
      expect(await b.readEvents('s1', 60)).toEqual(oneToN(10).map((n) => event('s1', 60 + n)));
      expect(seqs(await c.readEvents('s1', 55))).toEqual(oneToN(15).map((n) => 55 + n));
      expect(await api.count('READER')).toBe(0);
      expect(await api.count('DIRECT.GET')).toBeGreaterThan(0);

      // Twenty commits of one event, followed once written (the reader holds only the latest
      // outbox): more messages than a read walks with direct gets.
      for (let rev = 1; rev <= 20; rev++) await a.commit(step('s2', rev, rev, rev));
      await until('s2 listed at seq 20', async () => (await b.list()).find((x) => x.swarmId === 's2')?.lastSeq === 20);
      const stop = b.watch('s2', () => undefined);
      api.reset();
      expect(await b.readEvents('s2', 0)).toEqual(oneToN(20).map((n) => event('s2', n)));
      expect(await api.count('READER')).toBe(1);
      for (const f of [...stops, stop]) f();
    });

    it('summary reads one KV value: the record without its snapshot, with its lease, its message lists left in the stream', async () => {
      const a = await open();
      const until = Date.now() + 60_000;
      await a.commit({
        ...step('s1', 1, 1, 2),
        record: { ...record('s1', 1, 2), snapshot: { context: { messages: { xswarm$messages: '', length: 1 } } } },
        messages: [{ list: '', from: 0, items: [{ role: 'user', content: 'hi' }] }],
        lease: { owner: 'A', until },
      });
      const b = await open();
      await b.list();
      const api = await apiCalls();
      const { snapshot: _s, ...summary } = record('s1', 1, 2);
      expect(await b.summary('s1')).toEqual({ ...summary, lease: { owner: 'A', until } });
      expect(await b.summary('unknown')).toBeUndefined();
      expect(await api.count('DIRECT.GET')).toBe(2);
      expect(await api.count('READER')).toBe(0);
      const { kv } = await raw();
      await kv.put(subjectToken('bad'), 'not json');
      expect(await b.summary('bad')).toMatchObject({ status: 'failed', problem: expect.stringMatching(/stored record is corrupt/) });
    });

    it('a commit’s events and list writes are one message; a rewrite of a stored list needs no purge', async () => {
      const store = await open();
      const api = await apiCalls();
      const list = (n: number, tag = 'm') => Array.from({ length: n }, (_, i) => ({ role: 'user', content: `${tag}${i}` }));
      const ref = (list: string, length: number) => ({ xswarm$messages: list, length });
      const snap = (n: number, k = 0) => ({ context: { messages: ref('', n) }, children: k ? { x: { snapshot: { context: { messages: ref('x', k) } } } } : {} });
      const { expectMessages, nc } = await raw();
      const published = collectPublishes(nc);
      await published.ready;
      await store.commit({ ...step('s1', 1, 1, 3), record: { ...record('s1', 1, 3), snapshot: snap(3) }, messages: [{ list: '', from: 0, items: list(3) }] });
      expect(await api.count('STREAM.PURGE')).toBe(0);
      // Three events and three rows: one publish, nothing on the messages stream.
      await expectMessages('s1', 1);
      expect(await published.count()).toEqual({ events: 1, messages: 0 });
      await store.commit({
        ...step('s1', 2, 4, 4),
        record: { ...record('s1', 2, 4), snapshot: snap(2, 2) },
        messages: [
          { list: '', from: 0, items: list(2, 'r') },
          { list: 'x', from: 0, items: list(2, 'x') },
        ],
      });
      expect(await api.count('STREAM.PURGE')).toBe(0);
      await expectMessages('s1', 2);
      expect(await published.count()).toEqual({ events: 2, messages: 0 });
      expect((await (await open()).load('s1'))?.snapshot).toEqual({
        context: { messages: list(2, 'r') },
        children: { x: { snapshot: { context: { messages: list(2, 'x') } } } },
      });
    });
  });

  describe('unreadable data', () => {
    it('an event that is not JSON ends the read with CorruptEventError carrying the events before it', async () => {
      const store = await open();
      await store.commit(step('s1', 1, 1, 2));
      const { js } = await raw();
      await js.publish(`${ns.prefix}.ev.${subjectToken('s1')}`, 'not json', { msgID: 's1:3' });
      await js.publish(`${ns.prefix}.ev.${subjectToken('s1')}`, JSON.stringify(event('other', 4)), { msgID: 's1:4' });
      const error = await store.readEvents('s1', 0).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(CorruptEventError);
      expect(error).toMatchObject({ swarmId: 's1', seq: 3, code: 'corrupt', readable: [event('s1', 1), event('s1', 2)] });
      const wrong = await store.readEvents('s1', 3).catch((e: unknown) => e);
      expect(wrong).toMatchObject({ seq: 4, readable: [] });
      expect((wrong as Error).message).toMatch(/names swarm "other"/);
    });

    it('a record that cannot be read reads failed with the problem, in load and list alike; so does an unfinished swarm with an unreadable message', async () => {
      const store = await open();
      await store.commit(step('good', 1, 1, 1));
      await store.commit({ ...step('rows', 1, 1, 1), messages: [{ list: '', from: 0, items: [{ role: 'user', content: 'a' }] }] });
      await store.commit(step('rows', 2, 2, 2));
      const { kv, js } = await raw();
      await kv.put(subjectToken('bad'), 'not json');
      // List writes of the swarm's current revision that are not JSON spoil its lists.
      const h = headers();
      h.set('Xswarm-Commit', `3 2 ${(await kv.get(subjectToken('rows')))!.revision} 1`);
      await js.publish(`${ns.prefix}.ev.${subjectToken('rows')}`, '{oops', { headers: h });
      const bad = await store.load('bad');
      expect(bad).toMatchObject({ swarmId: 'bad', status: 'failed', problem: expect.stringMatching(/^stored record is corrupt \(.+\)$/) });
      expect(bad?.result).toEqual({ status: 'failed', reason: `Cannot read swarm "bad": ${bad?.problem}` });
      await until('the listing shows it', async () => (await store.list({ status: ['failed'] })).some((s) => s.swarmId === 'bad'));
      expect((await store.list({ status: ['running'] })).map((s) => s.swarmId).sort()).toEqual(['good', 'rows']);
      const rows = await store.load('rows');
      expect(rows).toMatchObject({ status: 'failed', problem: expect.stringMatching(/^stored snapshot is corrupt \(the list writes of revision \d+ cannot be read/) });
      expect((await store.load('good'))?.problem).toBeUndefined();
    });
  });

  describe('message lists', () => {
    it('a 200-message list written in appends, rewritten and deleted, is restored exactly by another store', async () => {
      const a = await open();
      const msg = (i: number) => ({ role: i % 2 ? 'assistant' : 'user', content: `message ${i} ${'x'.repeat(i % 50)}` });
      const all = Array.from({ length: 200 }, (_, i) => msg(i));
      const snap = (n: number, agent?: number) => ({
        status: 'active',
        context: { messages: { xswarm$messages: '', length: n } },
        children: agent === undefined ? {} : { a1: { snapshot: { context: { messages: { xswarm$messages: '/a1', length: agent } } } } },
      });
      await a.commit({ ...step('s1', 1, 1, 1), record: { ...record('s1', 1, 1), snapshot: snap(150) }, messages: [{ list: '', from: 0, items: all.slice(0, 150) }] });
      await a.commit({
        ...step('s1', 2, 2, 2),
        record: { ...record('s1', 2, 2), snapshot: snap(200, 3) },
        messages: [
          { list: '', from: 150, items: all.slice(150) },
          { list: '/a1', from: 0, items: all.slice(0, 3) },
        ],
      });
      const b = await open();
      expect((await b.load('s1'))?.snapshot).toEqual({
        ...snap(200, 3),
        context: { messages: all },
        children: { a1: { snapshot: { context: { messages: all.slice(0, 3) } } } },
      });
      // A rewrite replaces the list; a deletion removes it.
      await a.commit({
        ...step('s1', 3, 3, 3),
        record: { ...record('s1', 3, 3), snapshot: snap(2) },
        messages: [
          { list: '', from: 0, items: [msg(7), msg(8)] },
          { list: '/a1', from: 0, items: [] },
        ],
      });
      expect((await b.load('s1'))?.snapshot).toEqual({ ...snap(2), context: { messages: [msg(7), msg(8)] } });
    });
  });

  describe('several processes', () => {
    it('two stores on two connections see each other’s writes: list, readEvents, and watch wakes the reader', async () => {
      const a = await open();
      const b = await open();
      // Both create the bucket and streams on first use, at once.
      await Promise.all([a.list(), b.list()]);
      await a.commit(step('s1', 1, 1, 2));
      await until('b lists it', async () => (await b.list()).some((s) => s.swarmId === 's1'));
      expect(seqs(await b.readEvents('s1', 0))).toEqual([1, 2]);
      let wakes = 0;
      const stop = b.watch('s1', () => wakes++);
      await sleep(50);
      await a.commit({ swarmId: 's1', events: [event('s1', 3)] });
      await until('an event wakes the watcher', () => wakes > 0);
      const afterEvents = wakes;
      // A lease-only write (no event) wakes it too, through the index.
      await a.renew('A', ['s1'], Date.now() + 120_000);
      await until('a record write wakes the watcher', () => wakes > afterEvents);
      stop();
      const stopped = wakes;
      await a.commit(step('s1', 2, 4, 4));
      await sleep(100);
      expect(wakes).toBe(stopped);
      expect(seqs(await b.readEvents('s1', 2))).toEqual([3, 4]);
      // The writer's own listing reflects its write at once.
      await a.commit(step('s1', 3, 5, 5, 'A', { status: 'paused' }));
      expect((await a.list())[0]).toMatchObject({ swarmId: 's1', status: 'paused', revision: 3 });
    });

    it('a commit whose KV write landed but whose publishes were lost: readers merge its outbox, claim republishes it once', async () => {
      const a = await open();
      await a.commit({
        ...step('s1', 1, 1, 2),
        record: { ...record('s1', 1, 2), snapshot: { context: { messages: { xswarm$messages: '', length: 2 } } } },
        messages: [{ list: '', from: 0, items: ['m0', 'm1'] }],
      });
      await a.close();
      // A writer died between its KV update (revision 2: events 3..5, an appended message) and the publishes.
      const { kv, eventCount, expectMessages } = await raw();
      const entry = await kv.get(subjectToken('s1'));
      const stored = entry!.json<StoredValue>();
      const next: StoredValue = {
        ...stored,
        w: 'crashed-writer',
        record: { ...record('s1', 2, 5), snapshot: { context: { messages: { xswarm$messages: '', length: 3 } } } },
        lease: { owner: 'A', until: Date.now() - 1 },
        outbox: { events: [event('s1', 3), event('s1', 4), event('s1', 5)], messages: [{ list: '', from: 2, items: ['m2'] }] },
      };
      await kv.update(subjectToken('s1'), JSON.stringify(next), entry!.revision);
      expect(await eventCount('s1')).toBe(1);

      const b = await open();
      expect(seqs(await b.readEvents('s1', 0))).toEqual(oneToN(5));
      expect(seqs(await b.readEvents('s1', 3))).toEqual([4, 5]);
      expect(seqs(await b.readEvents('s1', 1, 2))).toEqual([2, 3]);
      expect((await b.load('s1'))?.snapshot).toEqual({ context: { messages: ['m0', 'm1', 'm2'] } });
      expect(await eventCount('s1')).toBe(1);

      // The outbox is published as one message.
      expect(await b.claim('s1', { owner: 'B', until: Date.now() + 60_000 }, Date.now())).toBe(true);
      expect(await eventCount('s1')).toBe(2);
      // Claiming again (another process, or the same) publishes nothing twice.
      const c = await open();
      expect(await c.claim('s1', { owner: 'B', until: Date.now() + 60_000 }, Date.now())).toBe(true);
      await b.commit({ ...step('s1', 3, 6, 6, 'B'), record: { ...record('s1', 3, 6), snapshot: { context: { messages: { xswarm$messages: '', length: 3 } } } } });
      await expectMessages('s1', 3);
      expect(seqs(await c.readEvents('s1', 0))).toEqual(oneToN(6));
      expect((await c.load('s1'))?.snapshot).toEqual({ context: { messages: ['m0', 'm1', 'm2'] } });
    });

    it('a KV update that timed out but landed is recognised by its write id: the commit resolves, written once', async () => {
      const store = await open({ timeoutMs: 300 });
      await store.commit(step('s1', 1, 1, 1));
      // The server stops answering (not a disconnect): the update reaches it, its answer comes too late.
      const pid = ns.server.pid;
      process.kill(pid, 'SIGSTOP');
      let pending: Promise<void>;
      try {
        pending = store.commit(step('s1', 2, 2, 3));
        await sleep(700);
      } finally {
        process.kill(pid, 'SIGCONT');
      }
      await pending;
      const { expectMessages } = await raw();
      expect((await store.load('s1'))?.revision).toBe(2);
      expect(seqs(await store.readEvents('s1', 0))).toEqual([1, 2, 3]);
      // One message per commit: the retried publish was not stored twice.
      await expectMessages('s1', 2);
      await store.commit(step('s1', 3, 4, 4));
      expect(store.stats().commits).toBe(3);
    });

    it('with NATS down, a commit waits for it (even the first, before the bucket exists); past outageMs it fails with a clear error', async () => {
      await ns.server.kill();
      const nc = connect({ servers: ns.server.url, maxReconnectAttempts: -1, reconnectTimeWait: 50, waitOnFirstConnect: true });
      ns.onCleanup(async () => (await nc).close());
      const store = jetstreamStore({ connection: nc, prefix: ns.prefix, timeoutMs: 300 });
      ns.onCleanup(() => store.close());
      const first = store.commit(step('s1', 1, 1, 2));
      await sleep(400);
      await ns.server.start();
      await first;
      expect(seqs(await store.readEvents('s1', 0))).toEqual([1, 2]);

      const impatient = jetstreamStore({ connection: await connection(), prefix: ns.prefix, timeoutMs: 300, outageMs: 600 });
      ns.onCleanup(() => impatient.close());
      expect(await impatient.list()).toHaveLength(1);
      await ns.server.kill();
      const error = await impatient.commit(step('s2', 1, 1, 1)).catch((e: unknown) => e);
      await ns.server.start();
      expect(error).toMatchObject({
        name: 'SwarmError',
        code: 'unavailable',
        message: expect.stringMatching(/^Commit of swarm "s2": NATS has been unreachable for 1 s/),
      });
    }, 20_000);

    it('a server restart with commits in flight: every commit resolves once it is back, and each event is stored once', async () => {
      const store = await open({ timeoutMs: 500 });
      const other = await open({ timeoutMs: 500 });
      const swarms = ['r1', 'r2', 'r3'];
      for (const id of swarms) await store.commit(step(id, 1, 1, 1));
      await until('the other store lists them', async () => (await other.list()).length === 3);
      const done: Promise<void>[] = [];
      let back = Infinity;
      let resolvedAfter = 0;
      const run = async (id: string) => {
        for (let r = 2; r <= 30; r++) {
          await store.commit(step(id, r, 2 * r - 2, 2 * r - 1));
          if (Date.now() >= back) resolvedAfter++;
          await sleep(5);
        }
      };
      for (const id of swarms) done.push(run(id));
      await sleep(40);
      const before = store.stats().commits;
      // ns.server.restart({ downMs: 500 }), with a look at readers while it is down.
      await ns.server.kill();
      const during = Date.now();
      const read = await store.readEvents('r1', 0).catch((e: unknown) => e);
      expect(read).toMatchObject({ name: 'SwarmError', code: 'unavailable' });
      await sleep(500 - (Date.now() - during));
      await ns.server.start();
      back = Date.now();
      await Promise.all(done);
      // The outage fell in the middle of the run: commits were waiting while the server was down.
      expect(before).toBeGreaterThan(3);
      expect(resolvedAfter).toBeGreaterThan(swarms.length);
      expect(store.stats().commits).toBe(3 + 3 * 29);
      const { expectMessages } = await raw();
      for (const id of swarms) {
        expect(seqs(await store.readEvents(id, 0)), id).toEqual(oneToN(59));
        expect(await store.readEvents(id, 0), id).toEqual(Array.from({ length: 59 }, (_, i) => event(id, i + 1)));
        // One message per commit, none twice.
        await expectMessages(id, 30);
        expect((await store.load(id))?.revision, id).toBe(30);
      }
      // The other process's index (a KV watch) followed across the restart.
      await until('the other store lists the last revisions', async () => (await other.list()).every((s) => s.revision === 30));
    }, 30_000);
  });

  describe('runtime', () => {
    const readPage = tool({
      name: 'read_page',
      description: 'Reads one page',
      parameters: z.object({ page: z.number() }),
      execute: ({ page }) => `page ${page}`,
    });
    const PAGES = 30;
    const reader = defineSwarm({ id: 'reader', instructions: 'Read the pages.', tools: [readPage], maxTurns: PAGES + 5 });
    const respond = (req: ModelRequest): ModelResponse => {
      const n = req.messages.filter((m) => m.role === 'tool').length;
      return n < PAGES ? { toolCalls: [{ id: `p${n}`, name: 'read_page', arguments: JSON.stringify({ page: n }) }] } : { text: `Read ${n} pages.` };
    };

    function runtime(options: Parameters<typeof createRuntime>[0]): Runtime {
      const rt = createRuntime(options);
      ns.onCleanup(() => rt.close());
      return rt;
    }

    /** The model of each runtime: the same one (each model call's event names it). */
    const MODEL_NAME = 'reader-model';

    /** Events without what differs between two runs of the same conversation: their times. */
    const timeless = (events: readonly SwarmEvent[]) =>
      JSON.parse(JSON.stringify(events, (k, v: unknown) => (k === 'timestamp' || k === 'durationMs' ? undefined : v))) as unknown[];

    it('a swarm interrupted on one runtime is finished by another on another connection, exactly as an uninterrupted run; replay there yields the stored events', async () => {
      const whole = runtime({ swarms: [reader], model: scriptedModel(async (req) => respond(req), MODEL_NAME), store: await open({ prefix: `${ns.prefix}u` }) });
      const wholeClient = whole.forSwarm(reader, 'doc');
      await wholeClient.run('Read.');
      const expected = { result: await wholeClient.wait(), events: timeless(await collect(wholeClient.events())) };

      let onHeld!: () => void;
      const held = new Promise<void>((r) => (onHeld = r));
      const first = scriptedModel(async (req) => {
        if (req.messages.filter((m) => m.role === 'tool').length === 17) {
          onHeld();
          await new Promise<never>((_, reject) => req.signal.addEventListener('abort', () => reject(req.signal.reason), { once: true }));
        }
        return respond(req);
      }, MODEL_NAME);
      // Which message lists each commit writes: the config's is written once, by the first runtime.
      const listsWritten: string[][] = [];
      const counted = (store: SwarmStore): SwarmStore =>
        Object.assign(Object.create(store) as SwarmStore, {
          commit: (c: Commit) => {
            listsWritten.push((c.messages ?? []).map((w) => w.list));
            return store.commit(c);
          },
        });
      const a = runtime({ swarms: [reader], model: first, store: counted(await open()) });
      await a.forSwarm(reader, 'doc').run('Read.');
      await held;
      await a.close();
      expect(listsWritten.filter((lists) => lists.includes(CONFIG_LIST))).toHaveLength(1);
      const written = listsWritten.length;

      const storeB = await open();
      expect(((await storeB.load('doc'))!.snapshot as { context: { config: { instructions: string } } }).context.config.instructions).toBe(reader.instructions);
      const b = runtime({ swarms: [reader], model: scriptedModel(async (req) => respond(req), MODEL_NAME), store: counted(storeB) });
      await b.start();
      const client = b.forSwarm(reader, 'doc');
      const result = await client.wait();
      expect(result).toMatchObject({ status: 'completed', result: `Read ${PAGES} pages.` });
      const events = await collect(client.events());
      expect(seqs(events)).toEqual(oneToN(events.length));
      expect(events.filter((e) => e.kind === 'status-update' && (e.metadata as { type?: string }).type === 'tool-call').length).toBe(PAGES);
      expect({ result, events: timeless(events) }).toEqual(expected);
      // The restored swarm went on referencing the stored config: not written again.
      expect(listsWritten.length).toBeGreaterThan(written);
      expect(listsWritten.slice(written).filter((lists) => lists.includes(CONFIG_LIST))).toEqual([]);

      const storeC = await open();
      expect(await storeC.readEvents('doc', 0)).toEqual(events);
      const c = runtime({
        swarms: [reader],
        model: scriptedModel(async () => {
          throw new Error('replay must not call the model');
        }, 'none'),
        store: storeC,
      });
      expect(await collect(c.replay('doc'))).toEqual(events);
    }, 30_000);
  });

  describe('its connection', () => {
    it('a process whose connection is closed without closing the store still exits: the bucket watch ends with the connection', async () => {
      const code = `
        const { connect } = await import('@nats-io/transport-node');
        const { jetstreamStore } = await import('./src/store/jetstream/store.ts');
        const nc = await connect({ servers: ${JSON.stringify(ns.server.url)} });
        const store = jetstreamStore({ connection: nc, prefix: ${JSON.stringify(`${ns.prefix}x`)} });
        await store.list();
        await nc.drain();
        console.log('drained');`;
      const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', code], { cwd: REPO_ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
      let out = '';
      child.stdout.on('data', (d: Buffer) => (out += d.toString()));
      const exited = new Promise<number | null>((resolve) => child.once('close', resolve));
      // Before, the watch retried every 500 ms for ever and the process never ended.
      const ended = await Promise.race([exited, sleep(10_000).then(() => 'still running' as const)]);
      if (ended === 'still running') child.kill('SIGKILL');
      expect(out.trim()).toBe('drained');
      expect(ended).toBe(0);
    }, 20_000);
  });
});
