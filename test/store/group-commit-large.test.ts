/**
 * Large commits and the writer thread (issue 28: a 100,000-task board's creation): a commit of
 * `LARGE_COMMIT` characters or more is posted to the writer thread even when it would be
 * written on the store's connection (a turn's first commit), so that its pages and SQLite's
 * checkpoint do not block this thread; a small one is written inline as before. While the
 * thread starts, a large commit waits for it; when it cannot come up, the store writes it. The
 * writer here is held in the test's hand, as in group-commit-pipeline.test.ts; the last tests
 * use a real thread and a real file.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { type BatchWriter, groupCommit, LARGE_COMMIT, newStoreStats, threadWriter, writerThread } from '../../src/store/sqlite/group.js';
import type { SerializedCommit, Writes } from '../../src/store/sqlite/writes.js';
import type { Commit } from '../../src/store/types.js';
import { sqliteFilePerTest } from '../support/sqlite-file.js';
import { event, step } from '../support/store-fixtures.js';

const file = sqliteFilePerTest('xswarm-large-commit-');

const endOfTurn = () => new Promise((resolve) => setImmediate(resolve));

/** A step of `swarmId` whose one event carries `chars` characters of text. */
function sized(swarmId: string, revision: number, chars: number): Commit {
  const c = step(swarmId, revision, revision, revision);
  return { ...c, events: [event(swarmId, revision, 'x'.repeat(chars))] };
}

/**
 * A group commit over a writer the test answers by hand; `up` says whether its thread is up,
 * and `whenUp` is what `whenReady` answers while it is not.
 */
function held(state: { up: boolean; whenUp?: Promise<boolean> }) {
  const log: string[] = [];
  const answers: (() => void)[] = [];
  const name = (c: SerializedCommit) => `${c.swarmId}@${c.record?.revision}`;
  const inline: Writes = {
    writeImmediate(c) {
      log.push(`inline ${name(c)}`);
      return 0;
    },
    writeBatch(batch) {
      log.push(`inline batch ${batch.map(name).join(',')}`);
      return batch.map(() => undefined);
    },
  };
  const writer: BatchWriter = {
    write(batch) {
      log.push(`post ${batch.map(name).join(',')}`);
      return new Promise((resolve) => answers.push(() => resolve(batch.map(() => undefined))));
    },
    ready: () => state.up,
    whenReady: () => (state.up ? Promise.resolve(true) : state.whenUp!),
    async close() {},
  };
  const group = groupCommit(inline, writer, newStoreStats());
  const commit = (c: Commit) =>
    group.commit(c).then(
      () => void log.push(`ack ${c.swarmId}@${c.record!.revision}`),
      (e: Error) => void log.push(`refused ${c.swarmId}@${c.record!.revision}: ${e.message}`),
    );
  return { log, answers, commit };
}

describe('a large commit', () => {
  it('is posted to the writer thread even as a turn’s first commit; a small one is written inline as before', async () => {
    const { log, answers, commit } = held({ up: true });
    const big = commit(sized('big', 1, LARGE_COMMIT));
    // Not written in the call: posted at the end of the turn, acknowledged once the thread answers.
    expect(log).toEqual([]);
    await endOfTurn();
    expect(log).toEqual(['post big@1']);
    answers[0]!();
    await big;
    expect(log).toEqual(['post big@1', 'ack big@1']);
    // Nothing out: a small first commit is written on the store's connection, in the call.
    const small = commit(sized('small', 1, 100));
    expect(log.at(-1)).toBe('inline small@1');
    await small;
    // A lone large commit queued behind it goes to the thread too.
    const next = commit(sized('big', 2, LARGE_COMMIT));
    await endOfTurn();
    expect(log.at(-1)).toBe('post big@2');
    answers[1]!();
    await next;
  });

  it('waits for a thread still starting, while small groups are written inline meanwhile; with no thread up, the store writes it', async () => {
    let up!: (ready: boolean) => void;
    const state = { up: false, whenUp: new Promise<boolean>((resolve) => (up = resolve)) };
    const { log, answers, commit } = held(state);
    const big = commit(sized('big', 1, LARGE_COMMIT));
    await endOfTurn();
    // Waiting for the thread: neither posted nor written here.
    expect(log).toEqual([]);
    state.up = true;
    up(true);
    await endOfTurn();
    expect(log).toEqual(['post big@1']);
    answers[0]!();
    await big;

    // A thread that could not come up (its connection would not open): written on the store's.
    const down = held({ up: false, whenUp: Promise.resolve(false) });
    await down.commit(sized('big', 1, LARGE_COMMIT));
    expect(down.log).toEqual(['inline batch big@1', 'ack big@1']);
  });
});

describe('the writer thread says whether it came up', () => {
  it('true once its connection is open, false when it cannot open the file (and a large commit is then written by the store)', async () => {
    file.open(); // creates the schema
    const good = threadWriter(writerThread()!, file.path, {}, newStoreStats());
    file.track(good);
    expect(good.ready!()).toBe(false);
    await expect(good.whenReady!()).resolves.toBe(true);
    expect(good.ready!()).toBe(true);
    const garbage = join(file.dir, 'garbage.db');
    writeFileSync(garbage, 'not a database '.repeat(400));
    const bad = threadWriter(writerThread()!, garbage, {}, newStoreStats());
    file.track(bad);
    await expect(bad.whenReady!()).resolves.toBe(false);
  });

  it('a store writes a large commit on its thread, and it loads back whole', async () => {
    const store = file.open();
    await store.commit(sized('warm', 1, 10));
    const stats = store.stats();
    const before = { writer: stats.writerMs, transactions: stats.transactions };
    await store.commit(sized('big', 1, 2 * LARGE_COMMIT));
    const after = store.stats();
    // Written by the thread (its time counted there), in a transaction of its own.
    expect(after.writerMs).toBeGreaterThan(before.writer);
    expect(after.transactions).toBe(before.transactions + 1);
    const events = await store.readEvents('big', 0);
    expect((events[0] as unknown as { metadata: { message: string } }).metadata.message).toHaveLength(2 * LARGE_COMMIT);
    expect(await store.load('big')).toMatchObject({ revision: 1, lastSeq: 1 });
  });
});
