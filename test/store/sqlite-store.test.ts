/**
 * The SQLite store on its own: atomic commits, revision compare-and-set, owner leases, reading
 * events, listing, pruning, and what it does with rows it cannot read.
 */
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { LeaseLostError, RevisionConflictError, type SwarmStatus, sqliteStore } from '../../src/index.js';
import { sqliteFilePerTest } from '../support/sqlite-file.js';
import { event, expectNotHeldByFilter, record, step } from '../support/store-fixtures.js';

const file = sqliteFilePerTest('xswarm-sqlite-');
const { open } = file;

/** A raw connection to the same file, for what the store API cannot do (tampering, peeking). */
function raw() {
  const db = new Database(file.path);
  file.track({ close: async () => void db.close() });
  return db;
}

/** `r` as `load` answers it while `owner` holds the swarm (the file is shared: it says who does). */
const heldBy = <T extends object>(r: T, owner = 'A') => ({ ...r, lease: { owner, until: expect.any(Number) } });

describe('commit', () => {
  it('writes the events and the record together, in one transaction', async () => {
    const store = open();
    await store.commit(step('s1', 1, 1, 3));
    expect(store.writes).toBe(1);
    expect(await store.readEvents('s1', 0)).toEqual([event('s1', 1), event('s1', 2), event('s1', 3)]);
    const loaded = await store.load('s1');
    expect(loaded).toEqual(heldBy(record('s1', 1, 3)));
    expect(loaded?.problem).toBeUndefined();
    await store.commit(step('s1', 2, 4, 5));
    expect(store.writes).toBe(2);
    expect((await store.load('s1'))?.revision).toBe(2);
    expect((await store.readEvents('s1', 0)).map((e) => e.seq)).toEqual([1, 2, 3, 4, 5]);
  });

  it('a commit refused with RevisionConflictError leaves neither its events nor its record', async () => {
    const store = open();
    await store.commit(step('s1', 1, 1, 2));
    // Skips revision 2: refused. Its events (3, 4) must not be stored either.
    await expect(store.commit(step('s1', 3, 3, 4))).rejects.toThrow(RevisionConflictError);
    expect(store.writes).toBe(1);
    expect((await store.readEvents('s1', 0)).map((e) => e.seq)).toEqual([1, 2]);
    expect(await store.load('s1')).toEqual(heldBy(record('s1', 1, 2)));
    // A fresh connection sees the same: nothing was half-written.
    const db = raw();
    expect(db.prepare('SELECT count(*) AS n FROM events').get()).toEqual({ n: 2 });
    expect(db.prepare('SELECT revision, last_seq FROM swarms').get()).toEqual({ revision: 1, last_seq: 2 });
  });

  it('an append to a message list onto a row already stored is refused, and the step rolls back whole', async () => {
    const store = open();
    const list = (n: number) => Array.from({ length: n }, (_, i) => ({ role: 'user', content: `m${i}` }));
    await store.commit({ ...step('s1', 1, 1, 1), messages: [{ list: '', from: 0, items: list(2) }] });
    // An append (from > 0) is written without deleting first; should the writer be wrong about
    // what is stored, the row already at index 1 is not overwritten: the whole step fails.
    await expect(store.commit({ ...step('s1', 2, 2, 2), messages: [{ list: '', from: 1, items: [{ role: 'user', content: 'other' }] }] })).rejects.toThrow();
    const db = raw();
    expect(db.prepare(`SELECT messages FROM steps WHERE messages IS NOT NULL`).all()).toEqual([{ messages: JSON.stringify([{ list: '', from: 0, items: list(2) }]) }]);
    expect(db.prepare(`SELECT list_lengths FROM swarms`).get()).toEqual({ list_lengths: '{"":2}' });
    expect(db.prepare('SELECT revision, last_seq FROM swarms').get()).toEqual({ revision: 1, last_seq: 1 });
    expect((await store.readEvents('s1', 0)).map((e) => e.seq)).toEqual([1]);
    // A rewrite from 0 replaces the list.
    await store.commit({ ...step('s1', 2, 2, 2), messages: [{ list: '', from: 0, items: list(1) }] });
    expect(db.prepare(`SELECT list_lengths FROM swarms`).get()).toEqual({ list_lengths: '{"":1}' });
  });

  it('events-only commits (streamed chunks) append without touching the record', async () => {
    const store = open();
    await store.commit(step('s1', 1, 1, 1));
    await store.commit({ swarmId: 's1', events: [event('s1', 2), event('s1', 3)] });
    expect((await store.readEvents('s1', 0)).map((e) => e.seq)).toEqual([1, 2, 3]);
    expect(await store.load('s1')).toEqual(heldBy(record('s1', 1, 1)));
  });
});

describe('revision compare-and-set', () => {
  it('a stale revision is a RevisionConflictError naming expected and found revisions', async () => {
    const store = open();
    await store.commit(step('s1', 1, 1, 1));
    await store.commit(step('s1', 2, 2, 2));
    let error: unknown;
    try {
      await store.commit({ swarmId: 's1', events: [], record: record('s1', 2, 2, { status: 'paused' }), lease: { owner: 'A', until: Date.now() + 1000 } });
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(RevisionConflictError);
    expect(error).toMatchObject({ swarmId: 's1', expected: 1, actual: 2 });
    expect((error as Error).message).toBe('Swarm "s1" was written by someone else (expected revision 1, found 2)');
    expect((await store.load('s1'))?.status).toBe('running');
  });

  it('revision 1 twice (two writers creating the same swarm) is a conflict; the first one stays', async () => {
    const store = open();
    await store.commit(step('s1', 1, 0, -1, 'A', { definitionId: 'first' }));
    await expect(store.commit(step('s1', 1, 0, -1, 'B', { definitionId: 'second' }))).rejects.toThrow(RevisionConflictError);
    expect((await store.load('s1'))?.definitionId).toBe('first');
  });

  it('two connections (two processes) creating the same swarm with its first events: the second is refused, nothing of it is stored', async () => {
    // Known runtime bug "event insert before revision check": the events are inserted before the
    // record's compare-and-set, so a competing writer whose events collide with stored ones gets
    // a raw SqliteError (UNIQUE constraint failed: events.swarm_id, events.seq) instead of a
    // RevisionConflictError / LeaseLostError. The write is still rolled back (checked below).
    const a = open();
    const b = open();
    await a.commit(step('s1', 1, 1, 3, 'A', { definitionId: 'first' }));
    let error: unknown;
    try {
      await b.commit(step('s1', 1, 1, 3, 'B', { definitionId: 'second' }));
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(Error);
    expect((await a.load('s1'))?.definitionId).toBe('first');
    expect(await a.readEvents('s1', 0)).toEqual([event('s1', 1), event('s1', 2), event('s1', 3)]);
  });

  it('a colliding writer gets RevisionConflictError, not a SqliteError', async () => {
    const a = open();
    const b = open();
    await a.commit(step('s1', 1, 1, 3, 'A'));
    await expect(b.commit(step('s1', 1, 1, 3, 'B'))).rejects.toThrow(RevisionConflictError);
    // After a takeover, the old owner's next step collides on seq too: it should learn it lost the lease.
    expect(await b.claim('s1', { owner: 'B', until: Date.now() + 60_000 }, Date.now() + 120_000)).toBe(true);
    await b.commit(step('s1', 2, 4, 5, 'B'));
    await expect(a.commit(step('s1', 2, 4, 6, 'A'))).rejects.toThrow(LeaseLostError);
  });
});

describe('leases', () => {
  it('claim is refused while another owner’s lease is live and granted once it expired', async () => {
    const store = open();
    const until = Date.now() + 10_000;
    await store.commit({ ...step('s1', 1, 1, 1, 'A'), lease: { owner: 'A', until } });
    expect(await store.claim('s1', { owner: 'B', until: until + 10_000 }, until - 1)).toBe(false);
    // The owner itself may always re-claim.
    expect(await store.claim('s1', { owner: 'A', until }, until - 1)).toBe(true);
    expect(await store.claim('s1', { owner: 'B', until: until + 10_000 }, until)).toBe(true);
    const db = raw();
    expect(db.prepare('SELECT owner, lease_until FROM swarms').get()).toEqual({ owner: 'B', lease_until: until + 10_000 });
    // Now A is the one refused.
    expect(await store.claim('s1', { owner: 'A', until: until + 20_000 }, until + 1)).toBe(false);
  });

  it('load says who holds a swarm, as the listing does, and nobody once the lease is released', async () => {
    const store = open();
    const until = Date.now() + 10_000;
    await store.commit({ ...step('s1', 1, 1, 1, 'A'), lease: { owner: 'A', until, host: 'box-1', pid: 42 } });
    const held = { owner: 'A', until, host: 'box-1', pid: 42 };
    expect((await store.load('s1'))?.lease).toEqual(held);
    expect((await store.list())[0]?.lease).toEqual(held);
    await store.release('A', ['s1']);
    expect(await store.load('s1')).not.toHaveProperty('lease');
  });

  it('a commit by a writer that is not the owner is a LeaseLostError and writes nothing', async () => {
    const store = open();
    await store.commit(step('s1', 1, 1, 1, 'A'));
    expect(await store.claim('s1', { owner: 'B', until: Date.now() + 60_000 }, Date.now() + 120_000)).toBe(true);
    let error: unknown;
    try {
      await store.commit(step('s1', 2, 2, 3, 'A'));
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(LeaseLostError);
    expect(error).toMatchObject({ swarmId: 's1', holder: 'B' });
    expect((await store.readEvents('s1', 0)).map((e) => e.seq)).toEqual([1]);
    expect((await store.load('s1'))?.revision).toBe(1);
    // The new owner continues from the same revision.
    await store.commit(step('s1', 2, 2, 3, 'B'));
    expect((await store.load('s1'))?.revision).toBe(2);
  });

  it('release lets another owner claim at once; renew extends only the owner’s own leases', async () => {
    const store = open();
    await store.commit(step('s1', 1, 1, 1, 'A'));
    await store.commit(step('s2', 1, 1, 1, 'B'));
    const db = raw();
    const until = (id: string) => (db.prepare('SELECT lease_until AS u FROM swarms WHERE swarm_id = ?').get(id) as { u: number }).u;
    const before = until('s2');
    await store.renew('A', ['s1', 's2'], Date.now() + 600_000);
    expect(until('s1')).toBeGreaterThan(Date.now() + 500_000);
    expect(until('s2')).toBe(before);
    expect(await store.claim('s1', { owner: 'C', until: Date.now() + 1000 }, Date.now())).toBe(false);
    await store.release('A', ['s1']);
    expect(await store.claim('s1', { owner: 'C', until: Date.now() + 1000 }, Date.now())).toBe(true);
  });

  it('a listing can leave out the swarms an owner holds (what an adoption scan need not read)', async () => {
    await expectNotHeldByFilter(open());
  });

  it('finished swarms cannot be claimed', async () => {
    const store = open();
    await store.commit(step('s1', 1, 1, 2, 'A', { status: 'completed' }));
    await store.release('A', ['s1']);
    expect(await store.claim('s1', { owner: 'B', until: Date.now() + 1000 }, Date.now())).toBe(false);
    expect(await store.claim('nope', { owner: 'B', until: Date.now() + 1000 }, Date.now())).toBe(false);
  });
});

describe('reading', () => {
  it('readEvents(since) returns the events after `since`, in order, per swarm', async () => {
    const store = open();
    await store.commit(step('s1', 1, 1, 3));
    await store.commit(step('s2', 1, 1, 2));
    await store.commit(step('s1', 2, 4, 6));
    expect((await store.readEvents('s1', 0)).map((e) => e.seq)).toEqual([1, 2, 3, 4, 5, 6]);
    expect((await store.readEvents('s1', 4)).map((e) => e.seq)).toEqual([5, 6]);
    expect(await store.readEvents('s1', 6)).toEqual([]);
    expect(await store.readEvents('s2', 1)).toEqual([event('s2', 2)]);
    expect(await store.readEvents('unknown', 0)).toEqual([]);
    expect(await store.load('unknown')).toBeUndefined();
  });

  it('list by status returns running, awaiting and paused swarms as summaries (no snapshot)', async () => {
    const store = open();
    const statuses: SwarmStatus[] = ['running', 'awaitingHandoff', 'paused', 'completed', 'failed', 'stopped'];
    for (const status of statuses) await store.commit(step(status, 1, 1, 1, 'A', { status }));
    const listed = await store.list({ status: ['running', 'awaitingHandoff', 'paused'] });
    expect(listed.map((r) => r.swarmId).sort()).toEqual(['awaitingHandoff', 'paused', 'running']);
    const { snapshot: _snapshot, ...summary } = record('paused', 1, 1, { status: 'paused' });
    expect(listed.find((r) => r.swarmId === 'paused')).toMatchObject(summary);
    expect(listed.find((r) => r.swarmId === 'paused')).not.toHaveProperty('snapshot');
  });

  it('data written by one connection is read by another (a restarted process)', async () => {
    const first = open();
    await first.commit(step('s1', 1, 1, 2));
    await first.close();
    const second = open();
    expect(await second.load('s1')).toEqual(heldBy(record('s1', 1, 2)));
    expect((await second.readEvents('s1', 0)).map((e) => e.seq)).toEqual([1, 2]);
  });
});

describe('prune', () => {
  it('deletes only finished records older than the cutoff, with their events', async () => {
    const store = open();
    const at = (t: number) => ({ updatedAt: t });
    await store.commit(step('old-done', 1, 1, 3, 'A', { status: 'completed', ...at(1000) }));
    await store.commit(step('old-failed', 1, 1, 2, 'A', { status: 'failed', ...at(1500) }));
    await store.commit(step('old-running', 1, 1, 2, 'A', { status: 'running', ...at(1000) }));
    await store.commit(step('old-paused', 1, 1, 2, 'A', { status: 'paused', ...at(1000) }));
    await store.commit(step('new-done', 1, 1, 2, 'A', { status: 'stopped', ...at(3000) }));
    await store.commit(step('edge-done', 1, 1, 2, 'A', { status: 'completed', ...at(2000) }));

    expect(await store.prune(2000)).toBe(2);

    expect(await store.load('old-done')).toBeUndefined();
    expect(await store.readEvents('old-done', 0)).toEqual([]);
    expect(await store.load('old-failed')).toBeUndefined();
    expect(await store.readEvents('old-failed', 0)).toEqual([]);
    for (const kept of ['old-running', 'old-paused', 'new-done', 'edge-done']) {
      expect(await store.load(kept), kept).toBeDefined();
      expect((await store.readEvents(kept, 0)).length, kept).toBe(2);
    }
    const db = raw();
    expect(db.prepare('SELECT count(*) AS n FROM events').get()).toEqual({ n: 8 });
    expect(await store.prune(2000)).toBe(0);
  });
});

describe('layout', () => {
  it('a commit is one steps row; reading pages splits rows at since and limit exactly', async () => {
    const store = open();
    await store.commit(step('s1', 1, 1, 3));
    await store.commit(step('s1', 2, 4, 5));
    await store.commit({ swarmId: 's1', events: [6, 7, 8, 9].map((seq) => event('s1', seq)) });
    await store.commit(step('s2', 1, 1, 4));
    expect(raw().prepare('SELECT count(*) AS n FROM steps').get()).toEqual({ n: 4 });
    const seqs = async (since: number, limit?: number) => (await store.readEvents('s1', since, limit)).map((e) => e.seq);
    expect(await seqs(0)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9]);
    expect(await seqs(1, 1)).toEqual([2]);
    expect(await seqs(2, 3)).toEqual([3, 4, 5]);
    expect(await seqs(4, 4)).toEqual([5, 6, 7, 8]);
    expect(await seqs(7)).toEqual([8, 9]);
    expect(await seqs(9)).toEqual([]);
    expect(await seqs(0, 0)).toEqual([]);
    // Paging through in twos yields the whole stream once.
    const paged: number[] = [];
    for (let page = await seqs(0, 2); page.length > 0; page = await seqs(paged.at(-1)!, 2)) paged.push(...page);
    expect(paged).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9]);
    // The events view shows one row per event, as stored.
    const viewed = raw().prepare(`SELECT seq, body FROM events WHERE swarm_id = 's1' ORDER BY seq`).all() as { seq: number; body: string }[];
    expect(viewed.map((r) => r.seq)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9]);
    expect(viewed.map((r) => JSON.parse(r.body))).toEqual(await store.readEvents('s1', 0));
  });

  it('an events-only commit overlapping stored events, or for a swarm with no record, is refused', async () => {
    const store = open();
    await store.commit(step('s1', 1, 1, 3));
    await expect(store.commit({ swarmId: 's1', events: [event('s1', 3), event('s1', 4)] })).rejects.toThrow(RevisionConflictError);
    await expect(store.commit({ swarmId: 'nobody', events: [event('nobody', 1)] })).rejects.toThrow(RevisionConflictError);
    expect((await store.readEvents('s1', 0)).map((e) => e.seq)).toEqual([1, 2, 3]);
  });

  it('a version 1 file (a row per event and per message) is migrated on open: records, events, messages and listings read as before', async () => {
    const v1 = new Database(file.path);
    v1.exec(`
      CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
      INSERT INTO meta VALUES ('schema', '1');
      CREATE TABLE swarms (swarm_id TEXT PRIMARY KEY, definition_id TEXT NOT NULL, definition_version INTEGER NOT NULL, machine_version INTEGER NOT NULL,
        status TEXT NOT NULL, revision INTEGER NOT NULL, snapshot TEXT NOT NULL, result TEXT NOT NULL, last_seq INTEGER NOT NULL, updated_at INTEGER NOT NULL,
        owner TEXT, lease_until INTEGER NOT NULL DEFAULT 0);
      CREATE INDEX swarms_finished ON swarms(updated_at) WHERE status IN ('completed','failed','stopped');
      CREATE TABLE events (swarm_id TEXT NOT NULL, seq INTEGER NOT NULL, body TEXT NOT NULL, PRIMARY KEY (swarm_id, seq)) WITHOUT ROWID;
      CREATE TABLE messages (swarm_id TEXT NOT NULL, list TEXT NOT NULL, idx INTEGER NOT NULL, body TEXT NOT NULL, PRIMARY KEY (swarm_id, list, idx)) WITHOUT ROWID;
    `);
    const messages = [
      { role: 'system', content: 'be brief' },
      { role: 'user', content: 'hi' },
      { role: 'assistant', content: 'hello' },
    ];
    const running = record('run', 3, 4, { snapshot: { status: 'active', value: 'thinking', context: { messages: { xswarm$messages: '', length: 3 } }, children: {} } });
    const done = record('done', 1, 2, { status: 'completed' });
    const insert = v1.prepare(`INSERT INTO swarms VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`);
    for (const r of [running, done]) {
      insert.run(
        r.swarmId,
        r.definitionId,
        r.definitionVersion,
        r.machineVersion,
        r.status,
        r.revision,
        JSON.stringify(r.snapshot),
        JSON.stringify(r.result),
        r.lastSeq,
        r.updatedAt,
        'A',
        0,
      );
      for (let seq = 1; seq <= r.lastSeq; seq++) v1.prepare(`INSERT INTO events VALUES (?, ?, ?)`).run(r.swarmId, seq, JSON.stringify(event(r.swarmId, seq)));
    }
    v1.prepare(`UPDATE events SET body = 'garbage' WHERE swarm_id = 'done' AND seq = 2`).run();
    messages.forEach((m, idx) => v1.prepare(`INSERT INTO messages VALUES ('run', '', ?, ?)`).run(idx, JSON.stringify(m)));
    v1.close();

    const store = open();
    expect(raw().prepare(`SELECT value FROM meta WHERE key = 'schema'`).get()).toEqual({ value: '3' });
    expect(await store.load('run')).toEqual(heldBy({ ...running, snapshot: { ...(running.snapshot as object), context: { messages } } }));
    expect(await store.readEvents('run', 0)).toEqual([1, 2, 3, 4].map((seq) => event('run', seq)));
    // A row that could not be read before cannot be read now, at the same seq.
    await expect(store.readEvents('done', 0)).rejects.toMatchObject({ name: 'SwarmError', code: 'corrupt', swarmId: 'done', seq: 2 });
    expect((await store.list()).map((r) => [r.swarmId, r.status])).toEqual([
      ['run', 'running'],
      ['done', 'completed'],
    ]);
    // The migrated swarm goes on: its next step appends to its list and its events.
    await store.commit({ ...step('run', 4, 5, 5), messages: [{ list: '', from: 3, items: [{ role: 'user', content: 'more' }] }] });
    const next = (await store.load('run'))!.snapshot;
    expect(next).toEqual(record('run', 4, 5).snapshot);
    expect((await store.readEvents('run', 3)).map((e) => e.seq)).toEqual([4, 5]);
    // Opening the migrated file again changes nothing.
    await store.close();
    expect(await open().load('done')).toEqual(heldBy(done));
  });

  it('a version 2 file (the same tables, configs held in snapshots) has its version raised on open and reads as before', async () => {
    const first = open();
    const inline = record('s1', 1, 1, {
      snapshot: { status: 'active', value: 'thinking', context: { config: { instructions: 'be brief' }, messages: [] }, children: {} },
    });
    await first.commit({ swarmId: 's1', events: [event('s1', 1)], record: inline });
    await first.close();
    const v2 = new Database(file.path);
    v2.prepare(`UPDATE meta SET value = '2' WHERE key = 'schema'`).run();
    v2.close();
    const store = open();
    expect(raw().prepare(`SELECT value FROM meta WHERE key = 'schema'`).get()).toEqual({ value: '3' });
    // A config stored inline, as version 2 wrote it, loads as it was.
    expect(await store.load('s1')).toEqual(inline);
  });
});

describe('unreadable data', () => {
  it('a corrupt snapshot row of an unfinished swarm reads failed with the problem, in load and list alike, without throwing', async () => {
    const store = open();
    await store.commit(step('bad', 1, 1, 2));
    await store.commit(step('good', 1, 1, 2));
    const db = raw();
    db.prepare(`UPDATE swarms SET snapshot = 'not json' WHERE swarm_id = 'bad'`).run();
    const rowBefore = db.prepare(`SELECT * FROM swarms WHERE swarm_id = 'bad'`).get();

    const loaded = await store.load('bad');
    expect(loaded?.problem).toMatch(/^stored snapshot is corrupt \(.+\)$/);
    expect(loaded?.snapshot).toBeUndefined();
    expect(loaded?.result).toEqual({ status: 'failed', reason: `Cannot read swarm "bad": ${loaded?.problem}` });
    // Stored as running; it cannot run again, so it reads failed (the row says running still).
    expect(loaded).toMatchObject({ swarmId: 'bad', definitionId: 'planner', revision: 1, lastSeq: 2, status: 'failed' });

    expect((await store.list({ status: ['running'] })).map((r) => r.swarmId)).toEqual(['good']);
    const [listed] = await store.list({ status: ['failed'] });
    expect(listed).toMatchObject({ swarmId: 'bad', status: 'failed', problem: loaded?.problem, result: loaded?.result });
    expect((await store.load('good'))?.problem).toBeUndefined();
    // Reading did not repair or rewrite anything.
    expect(db.prepare(`SELECT * FROM swarms WHERE swarm_id = 'bad'`).get()).toEqual(rowBefore);
    expect((await store.readEvents('bad', 0)).length).toBe(2);
  });

  it('a corrupt result column is a problem too', async () => {
    const store = open();
    await store.commit(step('s1', 1, 1, 1));
    raw().prepare(`UPDATE swarms SET result = '{"status":' WHERE swarm_id = 's1'`).run();
    const loaded = await store.load('s1');
    expect(loaded?.problem).toMatch(/^stored result is corrupt/);
    expect(loaded?.result.status).toBe('failed');
  });

  it('a database written by another schema version is refused on open with a clear error', async () => {
    const first = open();
    await first.commit(step('s1', 1, 1, 1));
    await first.close();
    const db = new Database(file.path);
    db.prepare(`UPDATE meta SET value = '99' WHERE key = 'schema'`).run();
    db.close();
    expect(() => sqliteStore(file.path)).toThrow(`${file.path}: store schema version 99, this xswarm reads version 3`);
    // The file was not touched by the refused open.
    const check = new Database(file.path, { readonly: true });
    expect(check.prepare(`SELECT value FROM meta WHERE key = 'schema'`).get()).toEqual({ value: '99' });
    expect(check.prepare(`SELECT count(*) AS n FROM events`).get()).toEqual({ n: 1 });
    check.close();
  });

  it('opens in WAL mode (synchronous FULL or NORMAL) and creates missing directories', async () => {
    file.path = join(file.dir, 'nested', 'deeper', 'state.db');
    const full = open();
    await full.commit(step('s1', 1, 1, 1));
    const db = raw();
    expect(db.pragma('journal_mode', { simple: true })).toBe('wal');
    await full.close();
    const normal = open({ synchronous: 'NORMAL' });
    expect(await normal.load('s1')).toBeDefined();
  });
});
