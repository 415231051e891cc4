/**
 * Restoring a large team (issue 28: the event loop is never blocked long by board work): the
 * SQLite store reads a large record's rows in steps, giving the record a read at once gives (and
 * the same problems), its `summary` reads no rows, and a team adopted after a crash is read once
 * and replayed in steps, the event loop running throughout.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { createRuntime, defineSwarm, defineTeam, memoryStore, scriptedModel, sqliteStore, type SwarmStore, type TeamFact } from '../../src/index.js';
import type { SwarmEvent } from '../../machines/events.js';
import type { Commit, SwarmRecord } from '../../src/store/types.js';
import { createBoard } from '../../src/team/board.js';
import { readTeamSnapshot, readTeamSnapshotInSteps, rowsRef } from '../../src/team/host-journal.js';
import { replayRows, TEAM_ROWS_LIST, TeamRows } from '../../src/team/host-rows.js';
import { createInbox } from '../../src/team/inbox.js';
import { turnsDuring } from '../support/macrotasks.js';

const dir = mkdtempSync(join(tmpdir(), 'xswarm-restore-scale-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const worker = defineSwarm({ id: 'restore-worker', instructions: 'Do the task.' });
const team = defineTeam({ id: 'restore', workers: [{ type: 'any', swarm: worker, count: 2 }], limits: { maxTasksPerBoard: 50_000 } });
const model = scriptedModel(() => ({ text: 'done' }));
const tasks = (n: number) => Array.from({ length: n }, (_, i) => ({ id: `t${i + 1}`, subject: `task ${i + 1}` }));

/**
 * How long the event loop was blocked at most while `work` ran: the longest gap between two runs
 * of a 1 ms interval (`wallMs`), and the longest such gap counting only the time this process
 * ran (`heldMs`: the gap, or the CPU time the process used meanwhile when that is less). On a
 * loaded machine a gap may be the process waiting for a core, not the event loop blocked (a
 * 90 ms gap measured with 25 ms of CPU): `heldMs` leaves that out, and a block of the event
 * loop's own (CPU-bound work) counts whole. (monitorEventLoopDelay misses a block that begins in
 * the tick it is enabled in.)
 */
async function longestBlock<T>(work: () => Promise<T>): Promise<{ value: T; wallMs: number; heldMs: number }> {
  let last = performance.now();
  let lastCpu = process.cpuUsage();
  let wallMs = 0;
  let heldMs = 0;
  const look = () => {
    const now = performance.now();
    const cpu = process.cpuUsage(lastCpu);
    wallMs = Math.max(wallMs, now - last);
    heldMs = Math.max(heldMs, Math.min(now - last, (cpu.user + cpu.system) / 1000));
    last = now;
    lastCpu = process.cpuUsage();
  };
  const probe = setInterval(look, 1);
  try {
    const value = await work();
    look();
    return { value, wallMs, heldMs };
  } finally {
    clearInterval(probe);
  }
}

/**
 * Writes a team-shaped record of `size` tasks to `stores` (the same commits to each): the board
 * created in commits of 1,000 tasks' rows, then `changes` commits of one task changed each.
 */
async function writeBoard(stores: SwarmStore[], teamId: string, size: number, changes: number): Promise<void> {
  const board = createBoard({ id: teamId, limits: { maxTasksPerBoard: size } });
  const inbox = createInbox({ teamId, members: ['leader', 'w'] });
  const rows = new TeamRows(board, inbox, { list: TEAM_ROWS_LIST, stored: 0 });
  let revision = 0;
  const commit = async () => {
    const batch = rows.take();
    revision++;
    const record: SwarmRecord = {
      swarmId: teamId,
      definitionId: `xswarm.team.${teamId}`,
      definitionVersion: 1,
      machineVersion: 1,
      status: 'running',
      revision,
      snapshot: {
        format: 2,
        status: 'running',
        board: { ...board.head(), tasks: board.size },
        inbox: { format: 1, ...inbox.head(), messages: 0, keptFrom: inbox.keptFrom },
        ...rowsRef(batch.ref),
      },
      result: { status: 'running', currentTurn: 0, maxTurns: 0 },
      lastSeq: revision,
      updatedAt: Date.now(),
    };
    // An event per commit, as a team's commits have: each commit's rows are a step row of their own.
    const events = [{ seq: revision, swarmId: teamId, type: 'xswarm.team', metadata: {} } as unknown as SwarmEvent];
    const c: Commit = { swarmId: teamId, events, record, messages: batch.writes, lease: { owner: 'o', until: Date.now() + 60_000 } };
    for (const store of stores) await store.commit(structuredClone(c));
  };
  for (let i = 0; i < size; i += 1_000) {
    board.create(tasks(size).slice(i, i + 1_000));
    await commit();
  }
  for (let i = 0; i < changes; i++) {
    const claim = board.claimNext('w')!;
    board.complete(claim.task.id, 'w');
    inbox.write({ teamId, id: 'w' }, 'leader', 'idle_notification', { workerId: 'w' });
    await commit();
  }
}

describe('a large record read in steps (SQLite)', () => {
  it('loads the record a read at once gives, letting the event loop run; summary reads no rows; problems are the same', async () => {
    const file = join(dir, 'steps.db');
    const sqlite = sqliteStore(file, { synchronous: 'NORMAL' });
    const memory = memoryStore();
    try {
      await writeBoard([sqlite, memory], 'big', 30_000, 50);
      const { value: loaded, turns } = await turnsDuring(() => sqlite.load('big'));
      // ~100 rows of commits, 30,000 tasks: read and parsed over several macrotasks.
      expect(turns).toBeGreaterThan(1);
      const expected = (await memory.load('big'))!;
      expect(loaded!.snapshot).toEqual(expected.snapshot);
      expect(readTeamSnapshot('big', loaded!.snapshot).state.board.tasks).toHaveLength(30_000);
      // The same replay in steps as at once (30,000 rows take about one step of 5 ms).
      expect(await readTeamSnapshotInSteps('big', loaded!.snapshot)).toEqual(readTeamSnapshot('big', loaded!.snapshot));
      const { snapshot: _s, ...withoutSnapshot } = loaded!;
      expect(await sqlite.summary!('big')).toEqual(withoutSnapshot);
      expect(await sqlite.summary!('nobody')).toBeUndefined();
      // A finished swarm's summary: as load has it too.
      await sqlite.commit({
        swarmId: 'small',
        events: [],
        record: {
          ...expected,
          swarmId: 'small',
          revision: 1,
          updatedAt: 1,
          snapshot: { done: true },
          status: 'completed',
          result: { status: 'completed', result: 'ok' },
        },
      });
      const { snapshot: _t, ...small } = (await sqlite.load('small'))!;
      expect(await sqlite.summary!('small')).toEqual(small);
      // Listed by status with a limit: the running team (more recent) is a candidate for 'failed'
      // that the query cannot judge; found running, it is left out and the listing read again.
      expect((await sqlite.list({ status: ['failed', 'completed'], limit: 1 })).map((s) => s.swarmId)).toEqual(['small']);
      expect((await sqlite.list({ status: ['running', 'failed'], limit: 1 })).map((s) => s.swarmId)).toEqual(['big']);
      expect(await sqlite.list({ status: ['failed'], limit: 1 })).toEqual([]);
      expect((await sqlite.list({ status: ['running'] }))[0]).toEqual(withoutSnapshot);
    } finally {
      await sqlite.close();
    }

    const db = new Database(file);
    const keys = db.prepare(`SELECT key FROM steps WHERE messages IS NOT NULL ORDER BY key`).all() as { key: number }[];
    // A row in the middle of the chain that is not JSON, then one that lost its writes: load and summary name the same problem.
    for (const damage of [`'[{"list":"/team","from":5,"items":[not json'`, 'NULL']) {
      db.prepare(`UPDATE steps SET messages = ${damage} WHERE key = ?`).run(keys[10]!.key);
      const store = sqliteStore(file);
      try {
        const loaded = (await store.load('big'))!;
        expect(loaded.status).toBe('failed');
        expect(loaded.problem).toMatch(damage === 'NULL' ? /the messages stored with event \d+ are missing/ : /the messages stored with event \d+ are not JSON/);
        const { snapshot: _s, ...withoutSnapshot } = loaded;
        expect(await store.summary!('big')).toEqual(withoutSnapshot);
        // A listing checks the writes as JSON only (a missing row is load's and summary's to find).
        const [listed] = await store.list({ definitionId: 'xswarm.team.big' });
        if (damage !== 'NULL') {
          expect(listed).toMatchObject({ status: 'failed', problem: loaded.problem });
          // A team's rows are checked after the query: the listing's status filter and limit count what is shown.
          expect((await store.list({ status: ['failed'], limit: 1 })).map((s) => s.swarmId)).toEqual(['big']);
          expect(await store.list({ status: ['running'] })).toEqual([]);
        }
      } finally {
        await store.close();
      }
    }
    // An unreadable snapshot: named by both, the swarm failed.
    db.prepare(`UPDATE swarms SET snapshot = '{not json' WHERE swarm_id = 'big'`).run();
    db.close();
    const store = sqliteStore(file);
    try {
      const { snapshot: _s, ...loaded } = (await store.load('big'))!;
      expect(loaded).toMatchObject({ status: 'failed', problem: expect.stringMatching(/^stored snapshot is corrupt/) });
      expect(await store.summary!('big')).toEqual(loaded);
    } finally {
      await store.close();
    }
  }, 60_000);

  it('replays rows out of creation order as at once: each place in order, its last row winning', () => {
    const task = (id: string) => ({
      id,
      subject: id,
      description: '',
      metadata: {},
      dependencies: [],
      status: 'pending' as const,
      attempts: 0,
      failures: 0,
      createdAt: 1,
      updatedAt: 1,
    });
    const message = (seq: number) => ({ seq }) as never;
    const rows = [
      { task: task('c'), n: 2 },
      { message: message(3) },
      { task: task('a'), n: 0 },
      { message: message(1) },
      { task: task('b'), n: 1 },
      { task: { ...task('a'), status: 'completed' }, n: 0 },
    ];
    const replayed = replayRows(rows, 0, 3);
    expect(replayed.tasks.map((t) => [t.id, t.status])).toEqual([
      ['a', 'completed'],
      ['b', 'pending'],
      ['c', 'pending'],
    ]);
    expect(replayed.messages.map((m) => m.seq)).toEqual([1, 3]);
    expect(() => replayRows([...rows, { neither: true }], 0)).toThrow('row 6 of the team');
  });
});

describe('restoring a large team', () => {
  it('a 50,000-task team adopted after a crash on SQLite is read once, in steps: the event loop is never blocked long', async () => {
    const teamId = 'restore-50k';
    const file = join(dir, `${teamId}.db`);
    let base = sqliteStore(file, { synchronous: 'NORMAL' });
    let cut = false;
    const crashing: SwarmStore = {
      ...base,
      commit: (c: Commit) => {
        if (cut) throw new Error('the process is gone');
        return base.commit(c);
      },
      renew: async (...args) => (cut ? undefined : base.renew(...args)),
      release: async (...args) => (cut ? undefined : base.release(...args)),
    };
    const runtime = createRuntime({ model, store: crashing, teams: [team], owner: 'crasher' });
    const client = runtime.forTeam(team, teamId);
    await client.run(tasks(50_000));
    let done = 0;
    for await (const event of client.events()) if ((event.metadata as TeamFact).type === 'team-task-completed' && ++done >= 20) break;
    // The process dies: nothing it does from here reaches the store.
    cut = true;
    await runtime.close().catch(() => undefined);
    await base.close();

    base = sqliteStore(file, { synchronous: 'NORMAL' });
    const stored = readTeamSnapshot(teamId, (await base.load(teamId))!.snapshot).state;
    let loads = 0;
    const pages: number[] = [];
    const counted: SwarmStore = {
      ...base,
      load: (swarmId: string) => {
        if (swarmId === teamId) loads++;
        return base.load(swarmId);
      },
      readEvents: async (swarmId, since, limit) => {
        const page = await base.readEvents(swarmId, since, limit);
        if (swarmId === teamId) pages.push(page.length);
        return page;
      },
    };
    const again = createRuntime({ model, store: counted, teams: [team], owner: 'crasher' });
    try {
      const resumed = again.forTeam(team, teamId);
      // Adopted by the runtime's start (the store listed, the team read), then read by its client.
      const { wallMs, heldMs } = await longestBlock(async () => {
        await again.start();
        await resumed.ready();
      });
      // Measured on a loaded 2-core machine: 12–25 ms held (gaps of 20–90 ms), against 270 ms
      // held (gaps of 600 ms) before the record was read once and its rows read and replayed in
      // steps. A wide margin for a loaded CI machine.
      expect(heldMs, `longest gap ${wallMs.toFixed(0)} ms`).toBeLessThan(100);
      // Its record (and rows) were read once; its events in pages small enough to parse in a
      // few milliseconds each (5,000 at once, with a garbage collection in the same turn, held
      // the event loop over 50 ms in the bench's 100,000-task restore).
      expect(loads).toBe(1);
      expect(pages.length).toBeGreaterThan(10);
      expect(Math.max(...pages)).toBeLessThanOrEqual(1_000);
      const board = resumed.board();
      expect(board.tasks).toHaveLength(50_000);
      expect(board.tasks.map((t) => t.status)).toEqual(stored.board.tasks.map((t) => t.status));
      expect(board.counts.completed).toBeGreaterThanOrEqual(16);
      await resumed.stop();
    } finally {
      await again.close();
      await base.close();
    }
  }, 60_000);
});
