/**
 * The SQLite store's writer thread: grouped commits are written by a worker thread holding its
 * own connection, while the store's thread writes only a turn's first commit (when no group is
 * being written) and its other writes (claim, renew, release, prune) once the group is done.
 * Refusals cross the thread as data and come back as the same error classes.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, readlinkSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { type Commit, LeaseLostError, RevisionConflictError, sqliteStore } from '../../src/index.js';
import { MAX_BATCH, newStoreStats, threadWriter, writerThread } from '../../src/store/sqlite/group.js';
import { writerReady } from '../../src/store/sqlite/store.js';
import { prepareWrites, serializeCommit } from '../../src/store/sqlite/writes.js';

import { sqliteFilePerTest } from '../support/sqlite-file.js';
import { event, step } from '../support/store-fixtures.js';
import { REPO_ROOT } from '../support/repo-root.js';
import { until } from '../support/wait.js';

const file = sqliteFilePerTest('xswarm-writer-');
const { open } = file;

/**
 * Resolves once `store`'s writer thread is up (starting it): until then its groups are written
 * on the store's own connection, and these tests are about the thread's.
 */
const threadUp = (store: ReturnType<typeof sqliteStore>) => until('the writer thread to be up', () => writerReady(store), { timeout: 15_000 });

/** The end of the current event-loop turn: the store has posted what queued in it as one batch. */
const endOfTurn = () => new Promise((resolve) => setImmediate(resolve));

/** The swarms stored in the file at `path`, read on a connection of its own. */
function storedSwarms(path: string): string[] {
  const db = new Database(path, { readonly: true });
  try {
    return db.prepare(`SELECT swarm_id FROM swarms ORDER BY swarm_id`).pluck().all() as string[];
  } finally {
    db.close();
  }
}

/** How many descriptors this process holds open on `path` or its -wal/-shm files (Linux; undefined elsewhere). */
function openHandles(path: string): number | undefined {
  if (process.platform !== 'linux') return undefined;
  return readdirSync('/proc/self/fd').filter((fd) => {
    try {
      return readlinkSync(`/proc/self/fd/${fd}`).startsWith(path);
    } catch {
      return false;
    }
  }).length;
}

describe('the writer thread', () => {
  it('while it starts, a store’s groups are written on the store’s connection, acknowledged in the turn that queued them; once it is up, they go to it', async () => {
    const store = open();
    const other = open();
    const acked: string[] = [];
    const commit = (id: string) => store.commit(step(id, 1, 1, 1)).then(() => void acked.push(id));
    const first = [commit('lead'), commit('a'), commit('b')];
    expect(writerReady(store)).toBe(false); // not started yet: this starts it
    await endOfTurn();
    // The group's turn has ended, and no thread can have said it is up within it.
    expect(acked).toEqual(['lead', 'a', 'b']);
    await Promise.all(first);
    expect(store.stats()).toMatchObject({ commits: 3, transactions: 2, writerMs: 0 });
    expect((await other.load('b'))?.revision).toBe(1);
    await threadUp(store);
    await Promise.all([commit('c'), commit('d'), commit('e')]);
    expect(store.stats()).toMatchObject({ commits: 6, transactions: 4 });
    expect(store.stats().writerMs).toBeGreaterThan(0);
    expect(storedSwarms(file.path)).toEqual(['a', 'b', 'c', 'd', 'e', 'lead']);
  });

  it('writes a group in one transaction; a refused commit fails alone with its class and fields, and so do its swarm’s later commits', async () => {
    const store = open();
    await threadUp(store);
    await store.commit(step('stale', 1, 1, 1));
    await store.commit(step('taken', 1, 1, 1, 'A'));
    expect(await store.claim('taken', { owner: 'B', until: Date.now() + 60_000 }, Date.now() + 120_000)).toBe(true);
    await endOfTurn();
    const before = store.stats();
    const gap: Commit = { ...step('gap', 1, 1, 1), events: [event('gap', 1), event('gap', 3)] };

    const outcomes = await Promise.allSettled([
      store.commit(step('lead', 1, 1, 1)), // the turn's first: inline
      store.commit(step('a', 1, 1, 2)),
      store.commit(step('stale', 1, 2, 2)), // revision 1 again
      store.commit(step('a', 2, 3, 3)),
      store.commit(step('stale', 2, 3, 3)), // after the refused one: refused with it
      store.commit(step('taken', 2, 2, 2, 'A')), // B holds it
      store.commit(gap), // events 1 and 3 in one commit
      store.commit(step('b', 1, 1, 1)),
    ]);
    expect(outcomes.map((o) => o.status)).toEqual(['fulfilled', 'fulfilled', 'rejected', 'fulfilled', 'rejected', 'rejected', 'rejected', 'fulfilled']);
    const reason = (i: number) => (outcomes[i] as PromiseRejectedResult).reason as Error;

    const conflict = reason(2);
    expect(conflict).toBeInstanceOf(RevisionConflictError);
    expect(conflict).toMatchObject({ name: 'RevisionConflictError', swarmId: 'stale', expected: 0, actual: 1 });
    expect(conflict.message).toBe(new RevisionConflictError('stale', 0, 1).message);
    expect(reason(4)).toBe(conflict);
    const lost = reason(5);
    expect(lost).toBeInstanceOf(LeaseLostError);
    expect(lost).toMatchObject({ name: 'LeaseLostError', swarmId: 'taken', holder: 'B' });
    expect(lost.message).toBe(new LeaseLostError('taken', 'B').message);
    expect(reason(6)).toBeInstanceOf(Error);
    expect(reason(6).message).toBe('Swarm "gap": events 1–3 of one commit are not numbered in a row');

    // One inline transaction and one written by the writer thread, which this thread did not wait on.
    const after = store.stats();
    expect(after.transactions - before.transactions).toBe(2);
    expect(after.commits - before.commits).toBe(4);
    expect(after.writerMs).toBeGreaterThan(before.writerMs);
    expect((await store.readEvents('a', 0)).map((e) => e.seq)).toEqual([1, 2, 3]);
    expect((await store.load('a'))?.revision).toBe(2);
    expect((await store.load('b'))?.revision).toBe(1);
    expect((await store.load('stale'))?.revision).toBe(1);
    expect((await store.readEvents('taken', 0)).map((e) => e.seq)).toEqual([1]);
    expect(await store.load('gap')).toBeUndefined();
  });

  it(`a batch holds at most ${MAX_BATCH} commits; a refusal in one fails the same swarm's commits queued behind it`, async () => {
    const store = open();
    await threadUp(store);
    await store.commit(step('stale', 1, 1, 1));
    await endOfTurn();
    const before = store.stats();
    const lead = store.commit(step('lead', 1, 1, 1));
    const first = Array.from({ length: MAX_BATCH - 1 }, (_, i) => store.commit(step(`m${i}`, 1, 1, 1)));
    const refused = store.commit(step('stale', 1, 2, 2)); // the first batch's last: a conflict
    const next = Array.from({ length: 20 }, (_, i) => store.commit(step(`n${i}`, 1, 1, 1)));
    const behind = store.commit(step('stale', 2, 3, 3)); // in the next batch
    const outcomes = await Promise.allSettled([lead, ...first, ...next, refused, behind]);
    expect(outcomes.filter((o) => o.status === 'rejected')).toHaveLength(2);
    const reason = (p: PromiseSettledResult<void>) => (p as PromiseRejectedResult).reason as unknown;
    expect(reason(outcomes.at(-2)!)).toBeInstanceOf(RevisionConflictError);
    expect(reason(outcomes.at(-1)!)).toBe(reason(outcomes.at(-2)!));
    const after = store.stats();
    // The inline commit, then two batches.
    expect(after.transactions - before.transactions).toBe(3);
    expect(after.commits - before.commits).toBe(1 + (MAX_BATCH - 1) + 20);
    expect((await store.readEvents('stale', 0)).map((e) => e.seq)).toEqual([1]);
  });

  it('a commit that cannot be serialized fails at once, and so do its swarm’s later commits in the same group', async () => {
    const store = open();
    await threadUp(store);
    const lead = store.commit(step('lead', 1, 1, 1));
    const bad = store.commit(step('c', 1, 1, 1, 'A', { snapshot: { big: 1n } }));
    const later = store.commit(step('c', 2, 2, 2));
    const other = store.commit(step('d', 1, 1, 1));
    const outcomes = await Promise.allSettled([lead, bad, later, other]);
    expect(outcomes.map((o) => o.status)).toEqual(['fulfilled', 'rejected', 'rejected', 'fulfilled']);
    expect((outcomes[1] as PromiseRejectedResult).reason).toBeInstanceOf(TypeError);
    expect((outcomes[2] as PromiseRejectedResult).reason).toBe((outcomes[1] as PromiseRejectedResult).reason);
    expect(await store.load('c')).toBeUndefined();
    expect((await store.load('d'))?.revision).toBe(1);
  });

  it('a commit acknowledged by the writer thread is seen by reads on the store and by another connection', async () => {
    const store = open();
    await threadUp(store);
    const other = open();
    await store.commit(step('lead', 1, 1, 1));
    // Two queued commits: a group (a lone one would be written here, like a turn's first).
    await Promise.all([store.commit(step('g', 1, 1, 3)), store.commit(step('h', 1, 1, 1))]);
    expect(store.stats().writerMs).toBeGreaterThan(0);
    expect((await store.load('g'))?.revision).toBe(1);
    expect((await store.readEvents('g', 0)).map((e) => e.seq)).toEqual([1, 2, 3]);
    expect((await store.list()).map((s) => s.swarmId).sort()).toEqual(['g', 'h', 'lead']);
    expect((await other.load('g'))?.lastSeq).toBe(3);
  });

  it('while a group is being written, commits queue for the next group and claim/renew wait for it (no deadlock, no reordering)', async () => {
    const store = open();
    await threadUp(store);
    const other = open();
    await store.commit(step('lead', 1, 1, 1));
    const first = store.commit(step('x', 1, 1, 1, 'A'));
    const beside = store.commit(step('y', 1, 1, 1));
    await endOfTurn();
    // The group holding x is out; the first commit of this turn is not written inline.
    const writeMs = store.stats().writeMs;
    const next = store.commit(step('x', 2, 2, 2, 'A'));
    expect(store.stats().writeMs).toBe(writeMs);
    const order: string[] = [];
    void first.then(() => order.push('x1'));
    void next.then(() => order.push('x2'));
    // Issued after x's commits: they run once the group holding x's first commit is written,
    // and before the one holding x2, which was still queued when they were called.
    const until = Date.now() + 90_000;
    const claimed = store.claim('x', { owner: 'A', until }, Date.now()).then((ok) => (order.push('claim'), ok));
    const renewed = store.renew('A', ['x'], until + 1).then(() => order.push('renew'));
    expect(await claimed).toBe(true);
    await Promise.all([renewed, next, beside]);
    // Both ran once x's first group was acknowledged, before the group holding x's next commit.
    expect(order[0]).toBe('x1');
    expect(order.slice(1, 3).sort()).toEqual(['claim', 'renew']);
    expect(order).toContain('x2');
    const x = (await other.list()).find((s) => s.swarmId === 'x');
    expect(x?.revision).toBe(2);
    // The lease: renewed to until + 1 (the next commit's own lease only extends it, MAX()).
    expect(x?.lease?.until).toBe(until + 1);
  });

  it('close() waits for the group being written and writes what queued behind it', async () => {
    const store = sqliteStore(file.path);
    await threadUp(store);
    const lead = store.commit(step('lead', 1, 1, 1));
    const grouped = [store.commit(step('q1', 1, 1, 1)), store.commit(step('q2', 1, 1, 1))];
    await endOfTurn();
    const queued = store.commit(step('q3', 1, 1, 1));
    await store.close();
    await expect(Promise.all([lead, ...grouped, queued])).resolves.toBeDefined();
    expect(store.stats()).toMatchObject({ commits: 4, transactions: 3 });
    expect(store.stats().writerMs).toBeGreaterThan(0);
    await expect(store.commit(step('q4', 1, 1, 1))).rejects.toThrow(/not open/);
    const db = new Database(file.path, { readonly: true });
    try {
      expect(db.prepare(`SELECT swarm_id FROM swarms ORDER BY swarm_id`).pluck().all()).toEqual(['lead', 'q1', 'q2', 'q3']);
    } finally {
      db.close();
    }
  });

  it('a group whose transaction fails (the file locked past the busy timeout) fails whole, with SQLite’s code', async () => {
    const store = open({ busyTimeoutMs: 50 });
    await threadUp(store);
    await store.commit(step('lead', 1, 1, 1));
    await endOfTurn();
    const locker = new Database(file.path);
    locker.exec('BEGIN IMMEDIATE');
    try {
      const outcomes = await Promise.allSettled([store.commit(step('l1', 1, 1, 1)), store.commit(step('l2', 1, 1, 1)), store.commit(step('l3', 1, 1, 1))]);
      expect(outcomes.map((o) => o.status)).toEqual(['rejected', 'rejected', 'rejected']);
      const grouped = (outcomes[1] as PromiseRejectedResult).reason as Error & { code?: string };
      expect(grouped).toBeInstanceOf(Error);
      expect(grouped.code).toBe('SQLITE_BUSY');
      // Named like the inline commit's failure (the turn's first), not a bare Error.
      expect(grouped.name).toBe('SqliteError');
      expect(grouped.name).toBe(((outcomes[0] as PromiseRejectedResult).reason as Error).name);
      expect((outcomes[2] as PromiseRejectedResult).reason).toBe(grouped);
    } finally {
      locker.exec('ROLLBACK');
      locker.close();
    }
    // The lock is gone: the store writes again, through the same thread.
    await endOfTurn();
    await Promise.all([store.commit(step('l1', 1, 1, 1)), store.commit(step('l2', 1, 1, 1)), store.commit(step('l3', 1, 1, 1))]);
    expect((await store.load('l3'))?.revision).toBe(1);
  });

  it('refuses the commits issued once close() has started, as a closed store does, and starts no thread again', async () => {
    const store = sqliteStore(file.path);
    await Promise.all([store.commit(step('a', 1, 1, 1)), store.commit(step('b', 1, 1, 1)), store.commit(step('c', 1, 1, 1))]);
    await endOfTurn();
    const closed = store.close();
    const late = await Promise.allSettled([store.commit(step('x1', 1, 1, 1)), store.commit(step('x2', 1, 1, 1)), store.commit(step('x3', 1, 1, 1))]);
    await closed;
    expect(late.map((o) => o.status === 'rejected' && (o.reason as Error).message)).toEqual(Array(3).fill('The database connection is not open'));
    expect(store.stats()).toMatchObject({ commits: 3, transactions: 2 });
    expect(storedSwarms(file.path)).toEqual(['a', 'b', 'c']);
    expect(openHandles(file.path) ?? 0).toBe(0);
  });

  it('writes grouped commits to the file it opened, after a process.chdir', async () => {
    const cwd = process.cwd();
    const elsewhere = mkdtempSync(join(tmpdir(), 'xswarm-writer-cwd-'));
    try {
      process.chdir(file.dir);
      // A relative path, as the default .xswarm/state.db is.
      const store = sqliteStore('.xswarm/state.db');
      file.track(store);
      await store.commit(step('first', 1, 1, 1));
      await endOfTurn();
      process.chdir(elsewhere);
      // The thread starts now that the cwd is another directory, and writes the group.
      await threadUp(store);
      await Promise.all([store.commit(step('x', 1, 1, 1)), store.commit(step('y', 1, 1, 1)), store.commit(step('z', 1, 1, 1))]);
      expect(store.stats().transactions).toBe(3);
      expect(store.stats().writerMs).toBeGreaterThan(0);
      expect(storedSwarms(join(file.dir, '.xswarm/state.db'))).toEqual(['first', 'x', 'y', 'z']);
      expect(readdirSync(elsewhere)).toEqual([]);
    } finally {
      process.chdir(cwd);
      rmSync(elsewhere, { recursive: true, force: true });
    }
  });

  it('a grouped commit that cannot be stored (its snapshot serializes to nothing) fails alone, and the next group is written', async () => {
    const store = open();
    await threadUp(store);
    await store.commit(step('lead', 1, 1, 1));
    await endOfTurn();
    const outcomes = await Promise.allSettled([
      store.commit(step('a', 1, 1, 1)),
      store.commit(step('u', 1, 1, 1, 'A', { snapshot: undefined })),
      store.commit(step('b', 1, 1, 1)),
    ]);
    expect(outcomes.map((o) => o.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
    await endOfTurn();
    await expect(Promise.all([store.commit(step('c', 1, 1, 1)), store.commit(step('d', 1, 1, 1)), store.commit(step('e', 1, 1, 1))])).resolves.toBeDefined();
    expect(storedSwarms(file.path)).toEqual(['a', 'b', 'c', 'd', 'e', 'lead']);
    expect((outcomes[1] as PromiseRejectedResult).reason).toMatchObject({ name: 'SqliteError', message: expect.stringMatching(/NOT NULL/) });
  });

  it('after a writer thread fails a batch, the next batch is written by a fresh thread, which the failed one’s exit does not disturb', async () => {
    open(); // creates the schema
    const real = writerThread()!;
    let started = 0;
    const stats = newStoreStats();
    const writer = threadWriter(
      (workerData) => (started++ === 0 ? new Worker(new URL('../support/failing-writer.mjs', import.meta.url), { workerData }) : real(workerData)),
      file.path,
      {},
      stats,
    );
    file.track(writer);
    const batch = (...ids: string[]) => ids.map((id) => serializeCommit(step(id, 1, 1, 1)));
    await expect(writer.write(batch('a', 'b'))).rejects.toThrow('the writer thread failed mid-batch');
    // Posted at once: the failed thread is still exiting.
    await expect(writer.write(batch('c', 'd'))).resolves.toEqual([undefined, undefined]);
    await expect(writer.write(batch('e', 'f'))).resolves.toEqual([undefined, undefined]);
    expect(started).toBe(2);
    expect(storedSwarms(file.path)).toEqual(['c', 'd', 'e', 'f']);
  });

  it('a writer thread that cannot open the file fails its batch with SQLite’s message and code, and the next batch, posted at once, is written by a fresh thread', async () => {
    open(); // creates the schema
    // The first thread is given a file that is not a database: it fails on its first pragma.
    const garbage = join(file.dir, 'garbage.db');
    writeFileSync(garbage, 'not a database '.repeat(400));
    const real = writerThread()!;
    let started = 0;
    const stats = newStoreStats();
    const writer = threadWriter((workerData) => real(started++ === 0 ? { ...workerData, path: garbage } : workerData), file.path, {}, stats);
    file.track(writer);
    const batch = (...ids: string[]) => ids.map((id) => serializeCommit(step(id, 1, 1, 1)));
    let failed: unknown;
    // Posted from the rejection itself, before the failed thread has exited.
    const next = writer.write(batch('a', 'b')).catch((e: unknown) => {
      failed = e;
      return writer.write(batch('c', 'd'));
    });
    await expect(next).resolves.toEqual([undefined, undefined]);
    expect(failed).toBeInstanceOf(Error);
    expect(failed).toMatchObject({ name: 'SqliteError', code: 'SQLITE_NOTADB', message: 'file is not a database' });
    expect(started).toBe(2);
    expect(storedSwarms(file.path)).toEqual(['c', 'd']);
  });

  it('a commit whose COMMIT fails leaves nothing written and no transaction open; the next one is written', async () => {
    await open().close(); // creates the schema
    const db = new Database(file.path);
    file.track({ close: async () => void db.close() });
    // A deferred foreign key is checked at COMMIT: a swarm named "bad" inserts a row that breaks it.
    db.pragma('foreign_keys = ON');
    db.exec(`
      CREATE TABLE guard (id INTEGER PRIMARY KEY);
      CREATE TABLE guarded (ref INTEGER REFERENCES guard(id) DEFERRABLE INITIALLY DEFERRED);
      CREATE TRIGGER guard_bad AFTER INSERT ON swarms WHEN NEW.swarm_id = 'bad' BEGIN INSERT INTO guarded VALUES (42); END;`);
    const writes = prepareWrites(db);
    expect(() => writes.writeImmediate(serializeCommit(step('bad', 1, 1, 2)))).toThrow(expect.objectContaining({ code: 'SQLITE_CONSTRAINT_FOREIGNKEY' }));
    expect(db.inTransaction).toBe(false);
    expect(storedSwarms(file.path)).toEqual([]);
    expect(db.prepare(`SELECT count(*) AS n FROM steps`).get()).toEqual({ n: 0 });
    expect(writes.writeImmediate(serializeCommit(step('good', 1, 1, 2)))).toBeGreaterThan(0);
    expect(storedSwarms(file.path)).toEqual(['good']);
  });

  it('a writer thread that throws something other than an Error fails its batch with an Error that shows it, keeping its code', async () => {
    open(); // creates the schema
    const real = writerThread()!;
    let started = 0;
    // What an error of better-sqlite3 thrown in a thread arrives as: its own fields, no message.
    const throwing = `require('node:worker_threads').parentPort.on('message', () => { throw { code: 'SQLITE_ERROR' }; });`;
    const stats = newStoreStats();
    const writer = threadWriter((workerData) => (started++ === 0 ? new Worker(throwing, { eval: true, workerData }) : real(workerData)), file.path, {}, stats);
    file.track(writer);
    const batch = (...ids: string[]) => ids.map((id) => serializeCommit(step(id, 1, 1, 1)));
    const failed = await writer.write(batch('a')).catch((e: unknown) => e);
    expect(failed).toBeInstanceOf(Error);
    expect(failed).toMatchObject({ message: 'The SQLite writer thread failed: {"code":"SQLITE_ERROR"}', code: 'SQLITE_ERROR' });
    await expect(writer.write(batch('b'))).resolves.toEqual([undefined]);
    expect(storedSwarms(file.path)).toEqual(['b']);
  });

  it('a commit written at once returns the time of its COMMIT alone, not of its statements', async () => {
    await open().close(); // creates the schema
    const db = new Database(file.path);
    file.track({ close: async () => void db.close() });
    db.pragma('synchronous = NORMAL');
    // Statements made slow on purpose: every step row counts to 1,000,000 first.
    db.exec(`CREATE TRIGGER slow_step AFTER INSERT ON steps BEGIN
      SELECT count(*) FROM (WITH RECURSIVE n(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM n WHERE x < 1000000) SELECT x FROM n);
    END;`);
    const writes = prepareWrites(db);
    const start = performance.now();
    const commitMs = writes.writeImmediate(serializeCommit(step('s1', 1, 1, 2)));
    const wholeMs = performance.now() - start;
    expect(commitMs).toBeGreaterThan(0);
    expect(commitMs).toBeLessThan(wholeMs / 4);
  });

  it('does not keep the process alive: a process that never closes its store exits once its groups are written', async () => {
    const code = `
      const { sqliteStore, writerReady } = await import('./src/store/sqlite/store.ts');
      const store = sqliteStore(${JSON.stringify(file.path)});
      while (!writerReady(store)) await new Promise((resolve) => setTimeout(resolve, 10));
      const step = (id) => ({ swarmId: id, events: [], record: { swarmId: id, definitionId: 'p', definitionVersion: 1, machineVersion: 1, status: 'running', revision: 1, snapshot: {}, result: { status: 'running', currentTurn: 1, maxTurns: 1 }, lastSeq: 0, updatedAt: 1 } });
      await Promise.all([store.commit(step('p1')), store.commit(step('p2')), store.commit(step('p3'))]);
      console.log(JSON.stringify(store.stats()));`;
    const child = spawn(process.execPath, ['--expose-gc', '--import', 'tsx', '--input-type=module', '-e', code], { cwd: REPO_ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    const exit = await new Promise<number | null>((resolve) => child.once('close', resolve));
    expect(err).toBe('');
    expect(exit).toBe(0);
    const stats = JSON.parse(out) as { commits: number; transactions: number; writerMs: number };
    expect(stats).toMatchObject({ commits: 3, transactions: 2 });
    expect(stats.writerMs).toBeGreaterThan(0);
  }, 20_000);
});
