/**
 * Group commit with more than one batch out to the writer: what is posted when, which commits a
 * second batch may hold (never a swarm's commit while an earlier one of the same swarm is out),
 * and when the store's other writes and `close()` run. The writer here is held in the test's
 * hand (each batch answered when the test says), so every interleaving is chosen, not raced;
 * the last tests post two batches to a real writer thread.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import { describe, expect, it } from 'vitest';
import { type BatchWriter, groupCommit, MAX_BATCH, MAX_IN_FLIGHT, newStoreStats, threadWriter, writerThread } from '../../src/store/sqlite/group.js';
import { type BatchFailures, type SerializedCommit, serializeCommit, type Writes } from '../../src/store/sqlite/writes.js';
import { sqliteFilePerTest } from '../support/sqlite-file.js';
import { step } from '../support/store-fixtures.js';

const file = sqliteFilePerTest('xswarm-pipeline-');

/** The end of the current event-loop turn: what queued in it has been posted. */
const endOfTurn = () => new Promise((resolve) => setImmediate(resolve));

/** A batch posted to the held writer, answered when the test calls `answer` or `fail`. */
interface Posted {
  /** `swarmId@revision` of each commit, in order. */
  ids: string[];
  answer(failures?: BatchFailures): void;
  fail(error: Error): void;
}

/**
 * A group commit over a writer the test answers by hand, and a log of what reached either
 * connection, in order. With `ready`, the writer says through it whether it is up (a thread
 * still starting is not), and groups written on the store's connection meanwhile are logged
 * and written by `writeBatch` (all written, by default).
 */
function held(starting: { ready?: () => boolean; writeBatch?: (batch: readonly SerializedCommit[]) => BatchFailures } = {}) {
  const log: string[] = [];
  const posted: Posted[] = [];
  const name = (c: SerializedCommit) => `${c.swarmId}@${c.record?.revision}`;
  const inline: Writes = {
    writeImmediate(c) {
      log.push(`inline ${name(c)}`);
      return 0;
    },
    writeBatch(batch) {
      if (!starting.ready) throw new Error('groups go to the writer');
      log.push(`inline batch ${batch.map(name).join(',')}`);
      return starting.writeBatch ? starting.writeBatch(batch) : batch.map(() => undefined);
    },
  };
  const writer: BatchWriter = {
    write(batch) {
      const ids = batch.map(name);
      log.push(`post ${ids.join(',')}`);
      return new Promise((resolve, reject) => posted.push({ ids, answer: (failures = batch.map(() => undefined)) => resolve(failures), fail: reject }));
    },
    async close() {
      log.push('writer closed');
    },
    ...(starting.ready ? { ready: starting.ready } : {}),
  };
  const group = groupCommit(inline, writer, newStoreStats());
  /** Commits `c` and logs its outcome when it settles. */
  const commit = (swarmId: string, revision: number) => {
    const settled = group.commit(step(swarmId, revision, revision, revision)).then(
      () => void log.push(`ack ${swarmId}@${revision}`),
      (e: Error) => void log.push(`refused ${swarmId}@${revision}: ${e.message}`),
    );
    return settled;
  };
  /**
   * Brings the group to two batches out: a turn's inline lead, then `a@1, b@1` posted at the
   * end of that turn and `c@1` at the end of the next. Returns the four commits' outcomes.
   */
  const twoOut = async () => {
    const all = [commit('lead', 1), commit('a', 1), commit('b', 1)];
    await endOfTurn();
    all.push(commit('c', 1));
    await endOfTurn();
    expect(posted.map((p) => p.ids)).toEqual([['a@1', 'b@1'], ['c@1']]);
    return all;
  };
  /**
   * Brings the group to x@1 out (posted with w@1) and y@1 out in the next batch, with x@2
   * queued behind x@1 meanwhile. Returns the outcomes of the first batch, of x@2 and of y@1.
   */
  const xOutWithNextQueued = async () => {
    const lead = commit('lead', 1);
    const first = [commit('x', 1), commit('w', 1)];
    await endOfTurn(); // batch 1: x@1, w@1
    const next = commit('x', 2); // x@1 is out: x@2 must not be written beside it
    const beside = commit('y', 1);
    await endOfTurn();
    await lead;
    expect(posted.map((p) => p.ids)).toEqual([['x@1', 'w@1'], ['y@1']]);
    return { first, next, beside };
  };
  return { group, log, posted, commit, twoOut, xOutWithNextQueued };
}

describe('group commit while the writer is starting', () => {
  it('a group is written on the store’s connection at once rather than wait for the writer; once it is up, groups are posted to it', async () => {
    let up = false;
    let asked = 0;
    const { log, posted, commit } = held({ ready: () => (asked++, up) });
    const all = [commit('lead', 1), commit('a', 1), commit('b', 1)];
    await endOfTurn();
    // Written, and acknowledged, in the turn that queued it: no wait for the thread to start.
    expect(log).toEqual(['inline lead@1', 'ack lead@1', 'inline batch a@1,b@1', 'ack a@1', 'ack b@1']);
    expect(asked).toBeGreaterThan(0);
    expect(posted).toEqual([]);
    up = true;
    all.push(commit('c', 1), commit('a', 2), commit('b', 2));
    await endOfTurn();
    expect(posted.map((p) => p.ids)).toEqual([['a@2', 'b@2']]);
    posted[0]!.answer();
    await Promise.all(all);
    expect(log.slice(5)).toEqual(['inline c@1', 'ack c@1', 'post a@2,b@2', 'ack a@2', 'ack b@2']);
  });

  it('meanwhile, a queue longer than a batch is written one batch a turn (timers and I/O run between two), not all in one go', async () => {
    const { log, commit } = held({ ready: () => false });
    const all = [commit('lead', 1), ...Array.from({ length: MAX_BATCH + 10 }, (_, i) => commit(`s${i}`, 1))];
    const batches = () => log.filter((l) => l.startsWith('inline batch')).map((l) => l.split(',').length);
    await endOfTurn();
    expect(batches()).toEqual([MAX_BATCH]);
    await endOfTurn();
    expect(batches()).toEqual([MAX_BATCH, 10]);
    await Promise.all(all);
  });

  it('a refusal or a failed transaction written meanwhile fails as it would from the thread: alone, or the whole group', async () => {
    let outcome: 'refuse b' | 'busy' = 'refuse b';
    const busy = Object.assign(new Error('database is locked'), { code: 'SQLITE_BUSY' });
    const { log, commit } = held({
      ready: () => false,
      writeBatch: (batch) => {
        if (outcome === 'busy') throw busy;
        return batch.map((c) => (c.swarmId === 'b' ? new Error('refused b') : undefined));
      },
    });
    const first = [commit('lead', 1), commit('a', 1), commit('b', 1)];
    await endOfTurn();
    await Promise.all(first);
    expect(log).toEqual(['inline lead@1', 'ack lead@1', 'inline batch a@1,b@1', 'ack a@1', 'refused b@1: refused b']);
    outcome = 'busy';
    const second = [commit('lead', 2), commit('c', 1), commit('d', 1)];
    await endOfTurn();
    await Promise.all(second);
    expect(log.slice(5)).toEqual(['inline lead@2', 'ack lead@2', 'inline batch c@1,d@1', 'refused c@1: database is locked', 'refused d@1: database is locked']);
  });

  it('while a batch is out to the writer, a group waits for it even when the writer says it is not up (a thread replacing one that died): the store’s connection would wait on its lock', async () => {
    let up = true;
    const { log, posted, commit } = held({ ready: () => up });
    const all = [commit('lead', 1), commit('a', 1), commit('b', 1)];
    await endOfTurn();
    up = false;
    all.push(commit('c', 1));
    await endOfTurn();
    expect(posted.map((p) => p.ids)).toEqual([['a@1', 'b@1'], ['c@1']]);
    for (const p of posted) p.answer();
    await Promise.all(all);
    expect(log.filter((l) => l.startsWith('inline batch'))).toEqual([]);
  });
});

describe('group commit, batches in flight', () => {
  it(`posts up to ${MAX_IN_FLIGHT} batches before the first is answered; the commits queued behind them go when one is`, async () => {
    expect(MAX_IN_FLIGHT).toBe(2);
    const { log, posted, commit } = held();
    const lead = commit('lead', 1); // the turn's first: inline
    const first = [commit('a', 1), commit('b', 1)];
    await endOfTurn();
    const second = [commit('c', 1), commit('d', 1)];
    await endOfTurn();
    const third = [commit('e', 1)];
    await endOfTurn();
    await lead;
    // Two out, the third queued: none of them acknowledged.
    expect(log).toEqual(['inline lead@1', 'ack lead@1', 'post a@1,b@1', 'post c@1,d@1']);
    posted[1]!.answer(); // the writer answers in order, but the group must not rely on it
    await Promise.all(second);
    expect(log.slice(4).sort()).toEqual(['ack c@1', 'ack d@1', 'post e@1']);
    posted[0]!.answer();
    posted[2]!.answer();
    await Promise.all([...first, ...third]);
    expect(log.slice(7)).toEqual(['ack a@1', 'ack b@1', 'ack e@1']);
  });

  it('a queue longer than a batch goes as two batches at once', async () => {
    const { log, posted, commit } = held();
    const all = [commit('lead', 1), ...Array.from({ length: MAX_BATCH + 10 }, (_, i) => commit(`s${i}`, 1))];
    await endOfTurn();
    expect(posted.map((p) => p.ids.length)).toEqual([MAX_BATCH, 10]);
    expect(posted[1]!.ids[0]).toBe(`s${MAX_BATCH}@1`);
    for (const p of posted) p.answer();
    await Promise.all(all);
    expect(log.filter((l) => l.startsWith('ack'))).toHaveLength(MAX_BATCH + 11);
  });

  it('a swarm’s commit queued while its earlier one is out waits for that batch’s answer, and goes once it is written', async () => {
    const { log, posted, xOutWithNextQueued } = held();
    const { first, next, beside } = await xOutWithNextQueued();
    posted[1]!.answer();
    await beside;
    expect(posted).toHaveLength(2); // x@2 still waits for x@1
    posted[0]!.answer();
    await Promise.all(first);
    await endOfTurn();
    expect(posted.map((p) => p.ids)).toEqual([['x@1', 'w@1'], ['y@1'], ['x@2']]);
    posted[2]!.answer();
    await next;
    expect(log.filter((l) => l.startsWith('ack x'))).toEqual(['ack x@1', 'ack x@2']);
  });

  it('a swarm’s commit queued while its earlier one is out fails with it when that one is refused, and is never posted', async () => {
    const { log, posted, xOutWithNextQueued } = held();
    const { first, next, beside } = await xOutWithNextQueued();
    const refusal = new Error('revision conflict on x');
    posted[0]!.answer([refusal, undefined]);
    posted[1]!.answer();
    await Promise.all([...first, next, beside]);
    expect(log).toContain('ack w@1');
    expect(log).toContain('refused x@1: revision conflict on x');
    expect(log).toContain('refused x@2: revision conflict on x');
    expect(log).toContain('ack y@1');
    expect(posted.flatMap((p) => p.ids)).not.toContain('x@2');
  });

  it('a batch whose transaction fails fails its swarms’ queued commits, not those of the other batch out', async () => {
    const { log, posted, commit } = held();
    const lead = commit('lead', 1);
    const first = [commit('x', 1), commit('z', 1)];
    await endOfTurn();
    const second = [commit('y', 1)];
    await endOfTurn();
    await lead;
    // Both swarms have a commit out: their next ones wait.
    const behind = [commit('x', 2), commit('y', 2)];
    await endOfTurn();
    expect(posted.map((p) => p.ids)).toEqual([['x@1', 'z@1'], ['y@1']]);
    posted[0]!.fail(new Error('disk I/O error'));
    await Promise.all([...first, behind[0]]);
    expect(log).toEqual(expect.arrayContaining(['refused x@1: disk I/O error', 'refused z@1: disk I/O error', 'refused x@2: disk I/O error']));
    expect(posted).toHaveLength(2); // y@2 still waits for y@1
    posted[1]!.answer();
    await Promise.all(second);
    await endOfTurn();
    expect(posted.map((p) => p.ids)).toEqual([['x@1', 'z@1'], ['y@1'], ['y@2']]);
    posted[2]!.answer();
    await behind[1];
    expect(log).toEqual(expect.arrayContaining(['ack y@1', 'ack y@2']));
  });

  it('another write asked for while one batch is out waits for it, and no batch is posted meanwhile', async () => {
    const { group, log, posted, commit } = held();
    const all = [commit('lead', 1), commit('a', 1), commit('b', 1)];
    await endOfTurn();
    expect(posted).toHaveLength(1);
    const claimed = group.exclusive(() => log.push('claim'));
    all.push(commit('c', 1), commit('d', 1));
    await endOfTurn();
    // Room for a second batch, but the claim waits for the first: nothing is posted past it.
    expect(posted).toHaveLength(1);
    expect(log).not.toContain('claim');
    posted[0]!.answer();
    await claimed;
    expect(log[log.indexOf('claim') + 1]).toBe('post c@1,d@1');
    posted[1]!.answer();
    await Promise.all(all);
  });

  it('another write waits for every batch out, runs before the next batch is posted, and is not starved by steady commits', async () => {
    const { group, log, posted, commit, twoOut } = held();
    const all = await twoOut();
    const renewed = group.exclusive(() => log.push('renew'));
    // Swarms keep committing every turn while the renewal waits.
    for (let turn = 0; turn < 5; turn++) {
      all.push(commit(`d${turn}`, 1));
      await endOfTurn();
    }
    posted[0]!.answer();
    await endOfTurn();
    // One batch is still out: nothing new is posted past the waiting write, and it has not run.
    expect(posted).toHaveLength(2);
    expect(log).not.toContain('renew');
    posted[1]!.answer();
    await renewed;
    await endOfTurn();
    // The write ran once both batches were answered, and the next batch was posted right after it.
    const at = log.indexOf('renew');
    expect(log[at + 1]).toBe('post d0@1,d1@1,d2@1,d3@1,d4@1');
    posted[2]!.answer();
    await Promise.all(all);
  });

  it('close() waits for every batch out and writes what queued behind them before closing the writer', async () => {
    const { group, log, posted, commit, twoOut } = held();
    const all = await twoOut();
    all.push(commit('d', 1), commit('a', 2));
    const closed = group.close();
    await expect(group.commit(step('late', 1, 1, 1))).rejects.toThrow(/not open/);
    posted[0]!.answer();
    posted[1]!.answer();
    await endOfTurn();
    expect(posted.map((p) => p.ids)).toEqual([['a@1', 'b@1'], ['c@1'], ['d@1', 'a@2']]);
    expect(log).not.toContain('writer closed');
    posted[2]!.answer();
    await closed;
    await Promise.all(all);
    expect(log.at(-1)).toBe('writer closed');
    expect(log.filter((l) => l.startsWith('ack'))).toHaveLength(6);
  });
});

describe('the writer thread, two batches posted before either is answered', () => {
  it('writes them in order and answers each with its own outcomes', async () => {
    const store = file.open(); // creates the schema
    await store.commit(step('x', 1, 1, 1));
    const writer = threadWriter(writerThread()!, file.path, {}, newStoreStats());
    file.track(writer);
    const batch = (...commits: Parameters<typeof step>[]) => commits.map((args) => serializeCommit(step(...args)));
    // x@2 in the first batch, x@3 in the second: the second is written after the first.
    const one = writer.write(batch(['x', 2, 2, 2], ['a', 1, 1, 1]));
    const two = writer.write(batch(['x', 3, 3, 3], ['x', 2, 4, 4]));
    const [first, second] = await Promise.all([one, two]);
    expect(first).toEqual([undefined, undefined]);
    // x@3 lands on x@2; the stale x@2 behind it is refused, in the second batch's answer only.
    expect(second[0]).toBeUndefined();
    expect(second[1]).toMatchObject({ name: 'RevisionConflictError' });
    expect(await store.load('x')).toMatchObject({ revision: 3, lastSeq: 3 });
    expect(await store.load('a')).toMatchObject({ revision: 1 });
  });

  it('a thread that cannot open the file fails both with SQLite’s message; the next batch goes to a fresh thread', async () => {
    file.open(); // creates the schema
    const garbage = join(file.dir, 'garbage.db');
    writeFileSync(garbage, 'not a database '.repeat(400));
    const real = writerThread()!;
    let started = 0;
    const writer = threadWriter((workerData) => real(started++ === 0 ? { ...workerData, path: garbage } : workerData), file.path, {}, newStoreStats());
    file.track(writer);
    const batch = (id: string) => [serializeCommit(step(id, 1, 1, 1))];
    const outcomes = await Promise.allSettled([writer.write(batch('a')), writer.write(batch('b'))]);
    for (const o of outcomes) expect(o).toMatchObject({ status: 'rejected', reason: { code: 'SQLITE_NOTADB', message: 'file is not a database' } });
    await expect(writer.write(batch('c'))).resolves.toEqual([undefined]);
    expect(started).toBe(2);
  });

  it('a batch that cannot be posted fails alone; the thread answers the next one', async () => {
    file.open();
    const writer = threadWriter(writerThread()!, file.path, {}, newStoreStats());
    file.track(writer);
    const unclonable = [{ ...serializeCommit(step('a', 1, 1, 1)), swarmId: (() => 'a') as unknown as string }];
    await expect(writer.write(unclonable)).rejects.toMatchObject({ name: 'DataCloneError' });
    await expect(writer.write([serializeCommit(step('b', 1, 1, 1))])).resolves.toEqual([undefined]);
  });

  it('a thread that dies fails every batch it had not answered', async () => {
    file.open();
    let started = 0;
    const real = writerThread()!;
    const dying = new URL('../support/failing-writer.mjs', import.meta.url);
    const writer = threadWriter((workerData) => (started++ === 0 ? new Worker(dying, { workerData }) : real(workerData)), file.path, {}, newStoreStats());
    file.track(writer);
    const batch = (id: string) => [serializeCommit(step(id, 1, 1, 1))];
    const outcomes = await Promise.allSettled([writer.write(batch('a')), writer.write(batch('b'))]);
    expect(outcomes.map((o) => o.status)).toEqual(['rejected', 'rejected']);
    // Both with the thread's own error, not the later "exited" one.
    for (const o of outcomes) expect((o as PromiseRejectedResult).reason).toMatchObject({ message: 'the writer thread failed mid-batch' });
    await expect(writer.write(batch('c'))).resolves.toEqual([undefined]);
  });
});
