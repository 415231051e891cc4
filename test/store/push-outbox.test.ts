/**
 * The push outbox of the memory and SQLite stores: subscriptions with cursors that only move
 * forward, done ones left out of `pending`, kept across a reopen of the SQLite file, and a file
 * written before the table existed opening as it was and gaining it; delivery leases held by one
 * owner at a time until they expire, and a table written before the lease columns gaining them.
 */
import { describe, expect, it } from 'vitest';
import { memoryStore } from '../../src/index.js';
import type { PushOutbox, PushSubscription } from '../../src/store/push-outbox.js';
import { sqliteFilePerTest } from '../support/sqlite-file.js';
import Database from 'better-sqlite3';
import { peek } from '../support/sqlite-raw.js';

const file = sqliteFilePerTest('xswarm-push-outbox-');

function sub(taskId: string, configId: string, extra: Partial<PushSubscription> = {}): PushSubscription {
  return { taskId, configId, definitionId: 'echo', url: `https://hooks.example/${configId}`, wireVersion: '1.0', cursor: 1, done: false, ...extra };
}

function exercise(outbox: PushOutbox): void {
  outbox.save(sub('t1', 'a', { authentication: { scheme: 'Bearer', credentials: 's' } }));
  outbox.save(sub('t1', 'b', { token: 'tok', wireVersion: '0.3' }));
  outbox.save(sub('t2', 'a'));
  expect(outbox.list('t1').map((s) => s.configId)).toEqual(['a', 'b']);
  expect(outbox.get('t1', 'a')).toEqual(sub('t1', 'a', { authentication: { scheme: 'Bearer', credentials: 's' } }));
  expect(outbox.get('t1', 'b')).toMatchObject({ token: 'tok', wireVersion: '0.3' });
  outbox.advance('t1', 'a', 7, false);
  outbox.advance('t1', 'a', 5, false);
  expect(outbox.get('t1', 'a')?.cursor).toBe(7);
  // Replaced under the same id: the new URL, the old place.
  outbox.save(sub('t1', 'a', { url: 'https://hooks.example/new', cursor: 1 }));
  expect(outbox.get('t1', 'a')).toMatchObject({ url: 'https://hooks.example/new', cursor: 7 });
  outbox.advance('t2', 'a', 9, true);
  expect(outbox.pending().map((s) => `${s.taskId}/${s.configId}`)).toEqual(['t1/a', 't1/b']);
  expect(outbox.delete('t1', 'b')).toBe(true);
  expect(outbox.delete('t1', 'b')).toBe(false);
  expect(outbox.get('t1', 'b')).toBeUndefined();
}

/** One owner at a time; renewed by its owner; taken over once expired; released; none for a config that is gone. */
async function leases(outbox: PushOutbox, other: PushOutbox = outbox): Promise<void> {
  outbox.save(sub('l', 'x'));
  const soon = Date.now() + 10_000;
  expect(await outbox.lease!('l', 'x', 'one', soon)).toBe(true);
  expect(await other.lease!('l', 'x', 'two', soon)).toBe(false);
  expect(await outbox.lease!('l', 'x', 'one', soon + 1000)).toBe(true);
  // Saved again (a config replaced): the lease stays.
  outbox.save(sub('l', 'x', { url: 'https://hooks.example/y' }));
  expect(await other.lease!('l', 'x', 'two', soon)).toBe(false);
  // Released: free for another at once.
  outbox.release!('l', 'x', 'one');
  expect(await other.lease!('l', 'x', 'two', Date.now() + 30)).toBe(true);
  expect(await outbox.lease!('l', 'x', 'one', soon)).toBe(false);
  // Expired: taken over.
  await new Promise((resolve) => setTimeout(resolve, 60));
  expect(await outbox.lease!('l', 'x', 'one', soon)).toBe(true);
  // Another's release does not free it.
  other.release!('l', 'x', 'two');
  expect(await other.lease!('l', 'x', 'two', soon)).toBe(false);
  expect(await outbox.lease!('l', 'nope', 'one', soon)).toBe(false);
}

describe('push outbox', () => {
  it('memory store', () => exercise(memoryStore().pushOutbox!));

  it('memory store: leases', () => leases(memoryStore().pushOutbox!));

  it('SQLite store: leases, across two stores on one file', async () => {
    await leases(file.open().pushOutbox!, file.open().pushOutbox!);
  });

  it('a table written before the lease columns existed reads as it was and gains them', async () => {
    const raw = new Database(file.path);
    // The table as the code before leases created it, with a row it wrote.
    raw.exec(`CREATE TABLE push_outbox (
      task_id TEXT NOT NULL, config_id TEXT NOT NULL, definition_id TEXT NOT NULL, config TEXT NOT NULL,
      wire_version TEXT NOT NULL, cursor INTEGER NOT NULL, done INTEGER NOT NULL, created INTEGER NOT NULL,
      PRIMARY KEY (task_id, config_id))`);
    raw
      .prepare('INSERT INTO push_outbox VALUES (?, ?, ?, ?, ?, ?, ?, ?)')
      .run('t', 'old', 'echo', JSON.stringify({ url: 'https://hooks.example/old', token: 'tok' }), '0.3', 4, 0, 1);
    raw.close();
    const store = file.open();
    expect(store.pushOutbox!.pending()).toEqual([sub('t', 'old', { url: 'https://hooks.example/old', token: 'tok', wireVersion: '0.3', cursor: 4 })]);
    expect(store.pushOutbox!.lease!('t', 'old', 'one', Date.now() + 10_000)).toBe(true);
    expect(file.open().pushOutbox!.lease!('t', 'old', 'two', Date.now() + 10_000)).toBe(false);
    expect(peek(file.path, `SELECT name FROM pragma_table_info('push_outbox') WHERE name LIKE 'lease%'`)).toEqual([{ name: 'lease_owner' }, { name: 'lease_until' }]);
  });

  it('SQLite store: kept across a reopen of the file', async () => {
    const store = file.open();
    exercise(store.pushOutbox!);
    await store.close();
    const again = file.open();
    expect(again.pushOutbox!.pending().map((s) => [s.taskId, s.configId, s.cursor, s.url])).toEqual([['t1', 'a', 7, 'https://hooks.example/new']]);
    expect(again.pushOutbox!.get('t2', 'a')).toMatchObject({ cursor: 9, done: true });
  });

  it('a file written before the table existed opens and gains it', async () => {
    const first = file.open();
    await first.close();
    const raw = new Database(file.path);
    raw.exec('DROP TABLE push_outbox');
    raw.close();
    expect(peek(file.path, `SELECT name FROM sqlite_master WHERE name = 'push_outbox'`)).toEqual([]);
    const store = file.open();
    store.pushOutbox!.save(sub('t', 'c'));
    expect(store.pushOutbox!.pending()).toHaveLength(1);
  });
});
