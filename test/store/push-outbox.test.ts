/**
 * The push outbox of the memory and SQLite stores: subscriptions with cursors that only move
 * forward, done ones left out of `pending`, kept across a reopen of the SQLite file, and a file
 * written before the table existed opening as it was and gaining it.
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

describe('push outbox', () => {
  it('memory store', () => exercise(memoryStore().pushOutbox!));

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
