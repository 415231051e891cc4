/**
 * Group commit in the SQLite store: commits that arrive in the same event-loop turn are written
 * together as one transaction (one fsync for many swarms), each still checked on its own, and
 * none acknowledged before the transaction holding it is durable.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { SwarmEvent } from '../../machines/events.js';
import { scriptedModel } from '../../src/models/scripted.js';
import { createRuntime } from '../../src/runtime/index.js';
import { type SqliteStoreStats, sqliteStore, writerReady } from '../../src/store/sqlite/store.js';
import { type Commit, LeaseLostError, RevisionConflictError, type SwarmRecord } from '../../src/store/types.js';
import { exited, firstLine, killAll, startFixture } from '../support/crash-process.js';
import { memoryEffects, W1_RESULT, w1Definitions, w1Respond } from '../support/crash-w1.js';
import { until } from '../support/wait.js';
import { sleep } from '../support/sleep.js';

const dirs: string[] = [];
function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'xswarm-group-'));
  dirs.push(dir);
  return dir;
}

afterAll(async () => {
  await killAll();
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

function event(swarmId: string, seq: number): SwarmEvent {
  return { kind: 'internal:tool-start', agent: 'a', toolName: 't', callId: `c${seq}`, arguments: '{}', timestamp: 1, seq, swarmId } as SwarmEvent;
}

function record(swarmId: string, revision: number, lastSeq: number, snapshot: unknown = { status: 'active', context: { turn: revision } }): SwarmRecord {
  return {
    swarmId,
    definitionId: 'planner',
    definitionVersion: 1,
    machineVersion: 1,
    status: 'running',
    revision,
    snapshot,
    result: { status: 'running', currentTurn: revision, maxTurns: 10 },
    lastSeq,
    updatedAt: 1_700_000_000_000 + revision,
  };
}

/** A step of `swarmId`: events `from..to` and its record at `revision`, written by `owner`. */
function step(swarmId: string, revision: number, from: number, to: number, owner = 'A', snapshot?: unknown): Commit {
  const events: SwarmEvent[] = [];
  for (let s = from; s <= to; s++) events.push(event(swarmId, s));
  return { swarmId, events, record: record(swarmId, revision, to, snapshot), lease: { owner, until: Date.now() + 60_000 } };
}

/** The seqs of a swarm's stored events are 1..n without gap. */
function contiguous(events: SwarmEvent[]): boolean {
  return events.every((e, i) => e.seq === i + 1);
}

describe('group commit', () => {
  it('200 concurrent W1 swarms on SQLite FULL: far fewer transactions than commits, every swarm complete and gapless', async () => {
    const store = sqliteStore(join(tempDir(), 'state.db'), { synchronous: 'FULL' });
    const { planner, agents } = w1Definitions(memoryEffects());
    const model = scriptedModel(async (req) => {
      await sleep(2 + Math.floor(Math.random() * 4));
      return w1Respond(req);
    }, 'w1-latency');
    const runtime = createRuntime({ swarms: [planner], agents, model, store });
    try {
      const ids = Array.from({ length: 200 }, (_, i) => `g${i}`);
      const results = await Promise.all(
        ids.map(async (id) => {
          const client = runtime.forSwarm(planner, id);
          await client.run('Plan my Saturday');
          return client.wait();
        }),
      );
      for (const r of results) expect(r).toEqual({ status: 'completed', result: W1_RESULT });
      const { commits, transactions } = store.stats();
      expect(commits).toBeGreaterThanOrEqual(200 * 7);
      // Grouping happened: many commits per transaction on average.
      expect(transactions).toBeLessThan(commits / 4);
      for (const id of ids) {
        const events = await store.readEvents(id, 0);
        expect(contiguous(events), id).toBe(true);
        expect((await store.load(id))?.lastSeq, id).toBe(events.length);
      }
    } finally {
      await runtime.close();
      await store.close();
    }
  }, 60_000);

  it('a lone commit is written before commit() returns (no wait for the end of the turn)', async () => {
    const path = join(tempDir(), 'state.db');
    const store = sqliteStore(path);
    const other = sqliteStore(path);
    try {
      const written = store.commit(step('s1', 1, 1, 2));
      // Another connection (another process) already sees it, synchronously.
      expect((await other.load('s1'))?.revision).toBe(1);
      await written;
      // Time in transactions counts both paths: the lone commit's, written on this thread
      // (writeMs), and the group's, written by the writer thread (writerMs).
      const lone = store.stats().writeMs;
      expect(lone).toBeGreaterThan(0);
      expect(store.stats().writerMs).toBe(0);
      // Of which its COMMIT and its serialization: each a part, together not the whole (the statements).
      const { syncMs, serializeMs } = store.stats();
      expect(syncMs).toBeGreaterThan(0);
      expect(serializeMs).toBeGreaterThan(0);
      expect(syncMs + serializeMs).toBeLessThan(lone);
      // The group below goes to the writer thread once it is up (until then, it would be written here).
      await until('the writer thread to be up', () => writerReady(store), { timeout: 15_000 });
      await new Promise((resolve) => setImmediate(resolve));
      const first = store.commit(step('s2', 1, 1, 2));
      const afterFirst = store.stats().writeMs;
      expect(afterFirst).toBeGreaterThan(lone);
      const grouped = [store.commit(step('s3', 1, 1, 2)), store.commit(step('s4', 1, 1, 2))];
      expect(store.stats().writeMs).toBe(afterFirst);
      const serializedBefore = store.stats().serializeMs;
      // Queued: not written yet, so another connection does not see it.
      expect(await other.load('s3')).toBeUndefined();
      await Promise.all([first, ...grouped]);
      expect(store.stats()).toMatchObject({ writeMs: afterFirst, commits: 4, transactions: 3 });
      expect(store.stats().writerMs).toBeGreaterThan(0);
      // The grouped commits were serialized here before being posted; their COMMIT is the thread's.
      expect(store.stats().serializeMs).toBeGreaterThan(serializedBefore);
      expect((await other.load('s3'))?.revision).toBe(1);
    } finally {
      await store.close();
      await other.close();
    }
  });

  it('in one group, a commit whose revision or lease check fails is refused alone; the others land', async () => {
    const store = sqliteStore(join(tempDir(), 'state.db'));
    try {
      await store.commit(step('stale', 1, 1, 1));
      await store.commit(step('taken', 1, 1, 1, 'A'));
      expect(await store.claim('taken', { owner: 'B', until: Date.now() + 60_000 }, Date.now() + 120_000)).toBe(true);
      await new Promise((resolve) => setImmediate(resolve));
      const before = store.stats();

      // All issued in one turn: the first is written at once, the rest as one group.
      const outcomes = await Promise.allSettled([
        store.commit(step('first', 1, 1, 2)),
        store.commit(step('a', 1, 1, 3)),
        store.commit(step('stale', 1, 2, 2)), // revision 1 again: a conflict
        store.commit(step('b', 1, 1, 1)),
        store.commit(step('stale', 2, 3, 3)), // issued after the refused one: refused with it
        store.commit(step('taken', 2, 2, 2, 'A')), // B holds it now
        store.commit(step('c', 1, 1, 2, 'A', { big: 1n })), // a snapshot that cannot be stored
        store.commit(step('a', 2, 4, 4)),
      ]);
      expect(outcomes.map((o) => o.status)).toEqual(['fulfilled', 'fulfilled', 'rejected', 'fulfilled', 'rejected', 'rejected', 'rejected', 'fulfilled']);
      const reason = (i: number) => (outcomes[i] as PromiseRejectedResult).reason;
      expect(reason(2)).toBeInstanceOf(RevisionConflictError);
      expect(reason(4)).toBe(reason(2));
      expect(reason(5)).toBeInstanceOf(LeaseLostError);
      expect(reason(6)).toBeInstanceOf(TypeError);

      const after = store.stats();
      expect(after.transactions - before.transactions).toBe(2);
      expect(after.commits - before.commits).toBe(4);
      expect((await store.load('a'))?.revision).toBe(2);
      expect((await store.readEvents('a', 0)).map((e) => e.seq)).toEqual([1, 2, 3, 4]);
      expect((await store.load('b'))?.revision).toBe(1);
      expect((await store.load('stale'))?.revision).toBe(1);
      expect((await store.readEvents('stale', 0)).map((e) => e.seq)).toEqual([1]);
      expect((await store.readEvents('taken', 0)).map((e) => e.seq)).toEqual([1]);
      expect(await store.load('c')).toBeUndefined();
      expect(await store.readEvents('c', 0)).toEqual([]);
    } finally {
      await store.close();
    }
  });

  it('close() writes the commits still queued before closing the file', async () => {
    const path = join(tempDir(), 'state.db');
    const store = sqliteStore(path);
    const first = store.commit(step('x', 1, 1, 1));
    const queued = store.commit(step('y', 1, 1, 1));
    await store.close();
    await expect(Promise.all([first, queued])).resolves.toBeDefined();
    const reopened = sqliteStore(path);
    try {
      expect((await reopened.load('y'))?.revision).toBe(1);
    } finally {
      await reopened.close();
    }
  });
});

describe('group commit under kill -9', () => {
  const FIXTURE = new URL('../fixtures/group-commit-crash.ts', import.meta.url).pathname;

  /** Acknowledged commits: per swarm, the highest revision and seq the process was told were durable. */
  function acked(file: string): Map<string, { revision: number; seq: number }> {
    const acks = new Map<string, { revision: number; seq: number }>();
    for (const line of readFileSync(file, 'utf8').split('\n')) {
      const m = /^(\S+) (\d+) (\d+)$/.exec(line);
      if (!m) continue;
      const prev = acks.get(m[1]!) ?? { revision: 0, seq: 0 };
      acks.set(m[1]!, { revision: Math.max(prev.revision, Number(m[2])), seq: Math.max(prev.seq, Number(m[3])) });
    }
    return acks;
  }

  /** The child's last logged store counters, if it logged any yet. */
  function lastStats(file: string): SqliteStoreStats | undefined {
    const line = existsSync(file)
      ? readFileSync(file, 'utf8')
          .split('\n')
          .findLast((l) => l.startsWith('stats ') && l.endsWith('}'))
      : undefined;
    return line ? (JSON.parse(line.slice('stats '.length)) as SqliteStoreStats) : undefined;
  }

  it('every commit acknowledged before the kill is in the database after it (three kills at random moments under load)', async () => {
    for (let round = 0; round < 3; round++) {
      const dir = tempDir();
      const db = join(dir, 'state.db');
      const ackFile = join(dir, 'acks.txt');
      const child = startFixture(FIXTURE, [db, ackFile]);
      await firstLine(child);
      // Once the writer thread writes groups (it starts with the first one), at a random moment.
      await until('the writer thread to write a group', () => (lastStats(ackFile)?.writerMs ?? 0) > 0, { timeout: 10_000 });
      await sleep(100 + Math.random() * 700);
      child.kill('SIGKILL');
      await exited(child);
      expect(child.signalCode).toBe('SIGKILL');

      const acks = acked(ackFile);
      // The kill came under load: many swarms had commits acknowledged.
      expect(acks.size).toBeGreaterThan(20);
      // Most of them grouped by the writer thread, not written inline.
      const stats = lastStats(ackFile)!;
      expect(stats.writerMs).toBeGreaterThan(0);
      expect(stats.transactions).toBeLessThan(stats.commits / 4);
      const store = sqliteStore(db);
      try {
        for (const [id, ack] of acks) {
          const record = await store.load(id);
          expect(record?.revision ?? 0, id).toBeGreaterThanOrEqual(ack.revision);
          const events = await store.readEvents(id, 0);
          expect(contiguous(events), id).toBe(true);
          expect(events.length, id).toBeGreaterThanOrEqual(ack.seq);
        }
      } finally {
        await store.close();
      }
    }
  }, 30_000);
});
