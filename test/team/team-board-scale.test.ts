/**
 * Boards that scale (issue 28): the board's indexes agree with a plain recomputation over the
 * tasks after any sequence of changes; a team's commit writes what changed (bytes per
 * completion do not grow with the board); a large board restores from its rows after a crash
 * mid-run, and a team record written whole (format 1, by earlier versions) still restores.
 * Creating a large board (`run(tasks)`) is checked, added and written in slices: it never
 * blocks the event loop long, resolves once durable, is not taken for a stall while written,
 * and a crash between two slices restores the board without any of it.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { findBlocked } from '../../src/team/board-graph.js';
import { createRuntime, defineSwarm, defineTeam, scriptedModel, sqliteStore, type SwarmStore, type TeamFact } from '../../src/index.js';
import { CREATE_SLICE, createBoard, restoreBoard, restoreBoardInSteps, type Task, type TaskBoard } from '../../src/team/board.js';
import { BoardState } from '../../src/team/board-store.js';
import { readTeamSnapshot, rowsRef } from '../../src/team/host-journal.js';
import { COPY_CHUNK, replayRows, type RowsBatch, TEAM_ROWS_LIST, TeamRows } from '../../src/team/host-rows.js';
import { createInbox } from '../../src/team/inbox.js';
import type { Commit } from '../../src/store/types.js';
import { turnsDuring } from '../support/macrotasks.js';

const dir = mkdtempSync(join(tmpdir(), 'xswarm-board-scale-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const worker = defineSwarm({ id: 'scale-worker', instructions: 'Do the task.' });
const team = defineTeam({ id: 'scale', workers: [{ type: 'any', swarm: worker, count: 2 }], limits: { maxTasksPerBoard: 50_000 } });
const model = scriptedModel(() => ({ text: 'done' }));
const tasks = (n: number) => Array.from({ length: n }, (_, i) => ({ id: `t${i + 1}`, subject: `task ${i + 1}` }));

/** A store over `base` that records the team's commits and can be cut (every write refused, as by a crash). */
function watched(base: SwarmStore, teamId: string) {
  const commits: Commit[] = [];
  let cut = false;
  const store: SwarmStore = {
    ...base,
    commit: (c: Commit) => {
      if (cut) throw new Error('the process is gone');
      const done = base.commit(c);
      if (c.swarmId === teamId) commits.push(c);
      return done;
    },
    renew: async (...args) => (cut ? undefined : base.renew(...args)),
    release: async (...args) => (cut ? undefined : base.release(...args)),
  };
  return { store, commits, cut: () => (cut = true) };
}

/** Resolves once `n` tasks of the team completed (counting from its first event). */
async function completions(events: AsyncIterable<{ metadata: TeamFact }>, n: number): Promise<string[]> {
  const done: string[] = [];
  for await (const event of events) {
    if (event.metadata.type === 'team-task-completed') done.push(event.metadata.taskId);
    if (done.length >= n) break;
  }
  return done;
}

describe('board indexes', () => {
  it('agree with a recomputation over the tasks after random changes (claims, completions, failures, releases, retries)', () => {
    let seed = 7;
    const random = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
    const board = createBoard({ id: 'b', limits: { maxAttempts: 2, maxTasksPerBoard: 1_000 } });
    const types = ['api', 'ui', undefined];
    const created: string[] = [];
    const check = (b: TaskBoard) => {
      const all = b.tasks();
      const byId = new Map(all.map((t) => [t.id, t]));
      const ready = (t: Task) => t.status === 'pending' && t.dependencies.every((d) => byId.get(d)!.status === 'completed');
      const expected = all.filter(ready);
      expect(b.claimable().map((t) => t.id)).toEqual(expected.map((t) => t.id));
      expect(b.firstClaimable(3).map((t) => t.id)).toEqual(expected.slice(0, 3).map((t) => t.id));
      const api = expected.filter((t) => t.metadata.type === undefined || t.metadata.type === 'api');
      expect(b.firstClaimable(2, { types: ['api'] }).map((t) => t.id)).toEqual(api.slice(0, 2).map((t) => t.id));
      const counts = { total: all.length, pending: 0, in_progress: 0, completed: 0, failed: 0, escalated: 0 };
      for (const t of all) counts[t.status]++;
      expect(b.counts()).toMatchObject({ ...counts, claimable: expected.length });
      expect(b.isSettled()).toBe(counts.in_progress === 0 && expected.length === 0);
      // Found downstream of the dead tasks: the same list as a pass over the whole board.
      expect(b.blocked()).toEqual(findBlocked(all, byId));
    };
    for (let step = 0; step < 600; step++) {
      const r = random();
      if (r < 0.2 || created.length === 0) {
        const id = `t${created.length + 1}`;
        const dependencies = created.filter(() => random() < 0.05);
        const type = types[Math.floor(random() * types.length)];
        board.create({ id, subject: id, dependencies, ...(type ? { metadata: { type } } : {}) });
        created.push(id);
      } else if (r < 0.55) {
        board.claimNext(`w${Math.floor(random() * 3)}`, random() < 0.5 ? {} : { types: ['ui'] });
      } else {
        const held = board.inProgress();
        const task = held[Math.floor(random() * held.length)];
        if (task) {
          const what = random();
          if (what < 0.6) board.complete(task.id, task.owner!);
          else if (what < 0.8) board.fail(task.id, task.owner!, { error: 'no' });
          else board.release(task.id, task.owner!);
        } else {
          const dead = board.tasks().find((t) => t.status === 'escalated' || t.status === 'failed');
          if (dead) board.retry(dead.id);
        }
      }
      check(board);
    }
    // The team's leader is told a few claimable tasks per worker type, never the whole board:
    // 2 api workers get the first 2 api tasks, and the first 2 of those any worker takes (ui: no worker has it).
    const big = createBoard({ id: 'big', limits: { maxTasksPerBoard: 20_000 } });
    big.create(Array.from({ length: 10_000 }, (_, i) => ({ id: `x${i}`, subject: 's', metadata: { type: i % 2 ? 'api' : 'ui' } })));
    expect(big.claimableFor(new Map([['api', 2]])).map((t) => t.id)).toEqual(['x0', 'x1', 'x2', 'x3']);
  });
});

describe('team rows', () => {
  /** A store's lists, written as the store applies a batch's writes; `replay` reads what the batch's record names. */
  function lists() {
    const stored = new Map<string, unknown[]>();
    const apply = (batch: RowsBatch) => {
      for (const w of batch.writes) {
        const rows = stored.get(w.list) ?? [];
        if (w.from > 0) expect(w.from).toBe(rows.length);
        const next = w.from === 0 ? [...w.items] : [...rows, ...w.items];
        if (next.length > 0) stored.set(w.list, next);
        else stored.delete(w.list);
      }
      const { current, previous } = batch.ref;
      expect(stored.get(current.xswarm$messages)?.length ?? 0).toBe(current.length);
      if (previous) expect(stored.get(previous.xswarm$messages)?.length ?? 0).toBe(previous.length);
      return batch;
    };
    const replay = (batch: RowsBatch, keptFrom: number) => {
      const { current, previous } = batch.ref;
      const rows = [...(previous ? stored.get(previous.xswarm$messages)! : []), ...(stored.get(current.xswarm$messages) ?? [])];
      return replayRows(rows, keptFrom);
    };
    return { stored, apply, replay };
  }

  it('append what changed, compact into the other list chunk by chunk, and replay to the state at every commit', () => {
    const board = createBoard({ id: 'r', limits: { maxTasksPerBoard: 10_000 } });
    const inbox = createInbox({ teamId: 'r', members: ['leader', 'w'] });
    const rows = new TeamRows(board, inbox, { list: TEAM_ROWS_LIST, stored: 0 });
    const { stored, apply, replay } = lists();
    board.create(tasks(5_000));
    // A new team's first batch: every task, appended to the empty list.
    expect(apply(rows.take()).writes).toEqual([expect.objectContaining({ list: TEAM_ROWS_LIST, from: 0 })]);
    let compacting = 0;
    let compactions = 0;
    for (let i = 0; i < 12_000; i++) {
      const claim = board.claimNext('w')!;
      board.release(claim.task.id, 'w');
      board.release(board.claimNext('w')!.task.id, 'w');
      if (i % 7 === 0) inbox.write({ teamId: 'r', id: 'w' }, 'leader', 'idle_notification', { workerId: 'w' });
      const batch = apply(rows.take());
      // No commit writes the whole board: one row per task changed, and a chunk while compacting.
      for (const w of batch.writes) expect(w.items.length).toBeLessThanOrEqual(COPY_CHUNK + 2);
      if (batch.ref.previous) compacting++;
      else if (compacting > 0) {
        compactions++;
        // The previous list went with the commit that copied the last chunk.
        expect(stored.size).toBe(1);
        compacting = 0;
      }
      // At any commit (a crash may follow any), the rows replay to the state.
      if (batch.ref.previous || i % 500 === 0) {
        const replayed = replay(batch, inbox.keptFrom);
        expect(replayed.tasks).toEqual(board.tasks());
        expect(replayed.messages).toEqual(inbox.messages());
      }
    }
    expect(compactions).toBeGreaterThanOrEqual(1);
    expect([...stored.values()].reduce((n, r) => n + r.length, 0)).toBeLessThanOrEqual(2 * (5_000 + inbox.stats().retained) + 1_024 + COPY_CHUNK + 2);
    // Restored mid-compaction (both lists named): the copy starts again, and the rows still replay.
    const last = apply(rows.take());
    const resumed = new TeamRows(board, inbox, {
      list: last.ref.list,
      stored: last.ref.current.length,
      ...(last.ref.previous ? { previous: { list: last.ref.previous.xswarm$messages, stored: last.ref.previous.length } } : {}),
    });
    rows.close();
    board.claimNext('w');
    expect(replay(apply(resumed.take()), inbox.keptFrom).tasks).toEqual(board.tasks());
    // A failed write: the next batch rewrites the list whole (the store may or may not hold the last one).
    board.claimNext('w');
    apply(resumed.take()).failed();
    const whole = apply(resumed.take());
    expect(whole.writes[0]).toMatchObject({ from: 0 });
    expect(whole.writes[0]!.items).toHaveLength(5_000 + inbox.stats().retained);
    expect(replay(whole, inbox.keptFrom).tasks).toEqual(board.tasks());
  });
});

describe('team rows in SQLite', () => {
  it('a record naming both lists mid-compaction loads with the rows of both, and the next commits append to them', async () => {
    const board = createBoard({ id: 'c', limits: { maxTasksPerBoard: 10_000 } });
    const inbox = createInbox({ teamId: 'c', members: ['leader', 'w'] });
    const rows = new TeamRows(board, inbox, { list: TEAM_ROWS_LIST, stored: 0 });
    const store = sqliteStore(join(dir, 'compaction.db'), { synchronous: 'NORMAL' });
    let revision = 0;
    const commit = async () => {
      const batch = rows.take();
      const snapshot = {
        format: 2,
        status: 'running',
        board: { ...board.head(), tasks: board.size },
        inbox: { format: 1, ...inbox.head(), messages: 0, keptFrom: inbox.keptFrom },
        ...rowsRef(batch.ref),
      };
      revision++;
      const result = { status: 'running' as const, currentTurn: 0, maxTurns: 0 };
      const record = {
        swarmId: 'c',
        definitionId: 'xswarm.team.c',
        definitionVersion: 1,
        machineVersion: 1,
        status: 'running' as const,
        revision,
        snapshot,
        result,
        lastSeq: 0,
        updatedAt: Date.now(),
      };
      await store.commit({ swarmId: 'c', events: [], record, messages: batch.writes, lease: { owner: 'o', until: Date.now() + 60_000 } });
      return batch;
    };
    try {
      board.create(tasks(5_000));
      await commit();
      let batch: RowsBatch;
      // 200 tasks changed per commit, so the list outgrows the state in a few dozen commits.
      const churn = () => {
        const claims = Array.from({ length: 200 }, () => board.claimNext('w')!);
        for (const claim of claims) board.release(claim.task.id, 'w');
      };
      do {
        churn();
        batch = await commit();
      } while (!batch.ref.previous);
      const loaded = readTeamSnapshot('c', (await store.load('c'))!.snapshot);
      expect(loaded.place).toEqual({ list: batch.ref.list, stored: batch.ref.current.length, previous: { list: TEAM_ROWS_LIST, stored: batch.ref.previous.length } });
      expect(loaded.state.board.tasks).toEqual(board.tasks());
      // Once the copy is done, the previous list is gone and the rows still load.
      do {
        churn();
        batch = await commit();
      } while (batch.ref.previous);
      const after = readTeamSnapshot('c', (await store.load('c'))!.snapshot);
      expect(after.place).toEqual({ list: batch.ref.list, stored: batch.ref.current.length });
      expect(after.state.board.tasks).toEqual(board.tasks());
    } finally {
      await store.close();
    }
  });
});

describe('team records that scale', () => {
  it('a task completion writes the same bytes on a board of 100 tasks and one of 10,000: what changed, not the board', async () => {
    const perCompletion: number[] = [];
    for (const size of [100, 10_000]) {
      const teamId = `bytes-${size}`;
      const base = sqliteStore(join(dir, `${teamId}.db`));
      const { store, commits } = watched(base, teamId);
      const runtime = createRuntime({ model, store, teams: [team] });
      try {
        const client = runtime.forTeam(team, teamId);
        await client.run(tasks(size));
        await completions(client.events(), 60);
        const from = commits.findIndex((c) => c.events.some((e) => (e as unknown as { metadata: TeamFact }).metadata.type === 'team-task-completed'));
        const measured = commits.slice(from, -1);
        // The creation wrote every task as rows, in slices of at most CREATE_SLICE; the commits after append what changed.
        expect(commits[0]!.messages).toEqual([expect.objectContaining({ list: TEAM_ROWS_LIST, from: 0 })]);
        const creation = commits.slice(0, from).flatMap((c) => c.messages ?? []);
        expect(new Set(creation.flatMap((w) => w.items.map((row) => (row as { task?: Task }).task?.id))).size).toBeGreaterThanOrEqual(size);
        for (const c of commits.slice(0, from)) expect(c.messages?.[0]?.items.length ?? 0).toBeLessThanOrEqual(CREATE_SLICE + 50);
        for (const c of measured) for (const w of c.messages ?? []) expect(w.from).toBeGreaterThan(0);
        const bytes = measured.reduce((sum, c) => sum + JSON.stringify(c).length, 0);
        const completed = measured.flatMap((c) => c.events).filter((e) => (e as unknown as { metadata: TeamFact }).metadata.type === 'team-task-completed').length;
        perCompletion.push(bytes / completed);
        await client.stop();
      } finally {
        await runtime.close();
        await base.close();
      }
    }
    const [small, large] = perCompletion as [number, number];
    // The same work per completion (a task's rows, its events, the leader's snapshot): a board
    // written whole would put ~100 times more on the large one.
    expect(large).toBeLessThan(small * 1.3);
    expect(large).toBeLessThan(20_000);
  }, 60_000);

  it('a 20,000-task board restores from its rows after a crash mid-run, and the run goes on from there', async () => {
    const teamId = 'crashed';
    const file = join(dir, 'crash.db');
    let base = sqliteStore(file);
    const first = watched(base, teamId);
    const runtime = createRuntime({ model, store: first.store, teams: [team], owner: 'crasher' });
    const client = runtime.forTeam(team, teamId);
    await client.run(tasks(20_000));
    const before = await completions(client.events(), 40);
    // The process dies: nothing it does from here reaches the store.
    first.cut();
    await runtime.close().catch(() => undefined);
    await base.close();

    base = sqliteStore(file);
    try {
      const stored = await base.load(teamId);
      expect((stored!.snapshot as { format: number }).format).toBe(2);
      const { state } = readTeamSnapshot(teamId, stored!.snapshot);
      expect(state.board.tasks).toHaveLength(20_000);
      const storedDone = state.board.tasks.filter((t) => t.status === 'completed').map((t) => t.id);
      expect(storedDone.length).toBeGreaterThanOrEqual(before.length - 4);
      expect(state.board.tasks.map((t) => t.id).slice(0, 3)).toEqual(['t1', 't2', 't3']);
      // The inbox came back too: the workers' reports to the leader.
      expect(state.inbox.messages.length).toBeGreaterThan(0);

      const again = createRuntime({ model, store: base, teams: [team], owner: 'crasher' });
      try {
        const resumed = again.forTeam(team, teamId);
        await resumed.ready();
        const board = resumed.board();
        expect(board.tasks).toHaveLength(20_000);
        const status = new Map(board.tasks.map((t) => [t.id, t.status]));
        for (const id of storedDone) expect(status.get(id)).toBe('completed');
        // The run goes on: more tasks complete, each once over the whole stream.
        await completions(resumed.events({ since: stored!.lastSeq }), 30);
        await resumed.stop();
        const all: string[] = [];
        for await (const event of resumed.events()) if (event.metadata.type === 'team-task-completed') all.push(event.metadata.taskId);
        expect(new Set(all).size).toBe(all.length);
        expect(all.length).toBeGreaterThanOrEqual(storedDone.length + 30);
      } finally {
        await again.close();
      }
    } finally {
      await base.close();
    }
  }, 60_000);

  it('a team record written whole (format 1, before rows) restores, continues, and is written as rows from then on', async () => {
    const teamId = 'old';
    // A team mid-run, its state as format 1 held it: the board and the inbox in the snapshot.
    const source = sqliteStore(join(dir, 'old-source.db'));
    const runtime = createRuntime({ model, store: source, teams: [team], owner: 'old-owner' });
    const client = runtime.forTeam(team, teamId);
    await client.run(tasks(200));
    await completions(client.events(), 20);
    await runtime.close();
    const record = (await source.load(teamId))!;
    const events = await source.readEvents(teamId, 0);
    await source.close();
    const { state } = readTeamSnapshot(teamId, record.snapshot);
    expect(state.format).toBe(1);

    const store = sqliteStore(join(dir, 'old.db'));
    try {
      const lease = { owner: 'old-owner', until: Date.now() + 60_000 };
      await store.commit({ swarmId: teamId, events, record: { ...record, revision: 1, snapshot: state, lastSeq: events.at(-1)!.seq }, lease });
      await store.release('old-owner', [teamId]);
      const again = createRuntime({ model, store, teams: [team], owner: 'new-owner' });
      try {
        const resumed = again.forTeam(team, teamId);
        await resumed.ready();
        expect(resumed.board().tasks).toHaveLength(200);
        expect(resumed.board().counts.completed).toBe(state.board.tasks.filter((t) => t.status === 'completed').length);
        expect((await resumed.wait()).status).toBe('completed');
        await again.close();
        const stored = (await store.load(teamId))!;
        expect((stored.snapshot as { format: number }).format).toBe(2);
        const read = readTeamSnapshot(teamId, stored.snapshot).state;
        expect(read.board.tasks.map((t) => t.status)).toEqual(Array.from({ length: 200 }, () => 'completed'));
        expect(read.inbox.messages.length).toBeGreaterThan(state.inbox.messages.length);
      } finally {
        await again.close();
      }
    } finally {
      await store.close();
    }
  }, 60_000);
});

describe('creating a large board', () => {
  it('a 50,000-task run never blocks the event loop long, commits in slices, and resolves once the whole board is durable', async () => {
    const teamId = 'create-50k';
    const base = sqliteStore(join(dir, `${teamId}.db`), { synchronous: 'NORMAL' });
    const { store, commits } = watched(base, teamId);
    const runtime = createRuntime({ model, store, teams: [team] });
    const loop = monitorEventLoopDelay({ resolution: 5 });
    try {
      const client = runtime.forTeam(team, teamId);
      await client.ready();
      loop.enable();
      const created = await client.run(tasks(50_000));
      loop.disable();
      expect(created).toHaveLength(50_000);
      // Durable when run resolves: the stored record holds every task, and no creation under way.
      const stored = await base.load(teamId);
      expect((stored!.snapshot as { creating?: unknown }).creating).toBeUndefined();
      expect(readTeamSnapshot(teamId, stored!.snapshot).state.board.tasks).toHaveLength(50_000);
      // No commit wrote the whole board: slices of at most CREATE_SLICE tasks.
      expect(commits.length).toBeGreaterThanOrEqual(25);
      for (const c of commits) for (const w of c.messages ?? []) expect(w.items.length).toBeLessThanOrEqual(CREATE_SLICE + 50);
      // The bench holds the 50 ms target (13–18 ms here, 21–36 ms before the creation's commits
      // went to the writer thread and its release was staged); a loaded test machine gets a
      // wide margin (one call was ~1 s when the creation was not sliced).
      expect(loop.max / 1e6).toBeLessThan(150);
      await client.stop();
    } finally {
      await runtime.close();
      await base.close();
    }
  }, 60_000);

  it('a batch added in slices to a run under way is work under way, not a stall, until it is written', async () => {
    const base = sqliteStore(join(dir, 'grow.db'));
    // Task a runs once the batch's first slice is written, and the second slice's commit waits
    // until a's swarm ended (and a while more): a completes while the batch is held, with
    // nothing else claimable and nothing running.
    let open: () => void = () => {};
    const gate = new Promise<void>((resolve) => (open = resolve));
    let ended: () => void = () => {};
    const aEnded = new Promise<void>((resolve) => (ended = resolve));
    const gated = scriptedModel(async () => {
      await gate;
      return { text: 'done' };
    });
    let slices = 0;
    const store: SwarmStore = {
      ...base,
      commit: async (c: Commit) => {
        if (c.swarmId !== 'grow' && c.record?.status === 'completed') ended();
        // A slice of the creation: a hundred tasks or more (fewer than CREATE_SLICE on a loaded machine).
        if (c.swarmId === 'grow' && c.messages?.some((w) => w.items.length >= 100) && ++slices === 2) {
          await aEnded;
          await new Promise((resolve) => setTimeout(resolve, 300));
        }
        const done = base.commit(c);
        if (slices === 1) open();
        return done;
      },
    };
    const runtime = createRuntime({ model: gated, store, teams: [team] });
    try {
      const client = runtime.forTeam(team, 'grow');
      await client.run([{ id: 'a', subject: 'a' }]);
      expect((await client.run(tasks(2_500))).length).toBe(2_500);
      // The run goes on with the batch: the same run, never ended as stalled (with nothing claimable but a held batch).
      const done: string[] = [];
      const ends: TeamFact[] = [];
      for await (const event of client.events()) {
        if (event.metadata.type === 'team-ended') ends.push(event.metadata);
        if (event.metadata.type === 'team-task-completed') done.push(event.metadata.taskId);
        if (done.length >= 6) break;
      }
      expect(ends).toEqual([]);
      expect(done[0]).toBe('a');
      expect(client.summary().counts.total).toBe(2_501);
      await client.stop();
    } finally {
      await runtime.close();
      await base.close();
    }
  }, 60_000);

  it('checks a large batch in slices with the same errors, changing nothing', async () => {
    const board = createBoard({ id: 'v', limits: { maxTasksPerBoard: 50_000 } });
    const many = tasks(10_000);
    await expect(board.createInSlices([...many, { id: 't5', subject: 'again' }])).rejects.toMatchObject({ code: 'duplicate-task' });
    await expect(board.createInSlices([...many, { id: 'x', subject: 'x', dependencies: ['nowhere'] }])).rejects.toMatchObject({ code: 'unknown-dependency' });
    const chain = many.map((t, i) => ({ ...t, dependencies: [`t${((i + 1) % many.length) + 1}`] }));
    await expect(board.createInSlices(chain)).rejects.toMatchObject({ code: 'cycle' });
    expect(board.size).toBe(0);
    // Held while added: nothing claimable until the last slice is in, then all of it at once.
    const seen: number[] = [];
    const created = await board.createInSlices(many, { slice: 3_000, between: async () => void seen.push(board.counts().claimable) });
    expect(created).toHaveLength(10_000);
    expect(seen).toEqual([0, 0, 0, 0, 10_000]);
    expect(board.creating).toBeUndefined();
    expect(board.claimNext('w')?.task.id).toBe('t1');
  });

  it('a held creation released in steps counts the changes made meanwhile: a dependency completed, a held task canceled or blocked', () => {
    const at = 1;
    const task = (id: string, dependencies: string[] = []): Task => ({
      id,
      subject: id,
      description: '',
      metadata: {},
      dependencies,
      status: 'pending',
      attempts: 0,
      failures: 0,
      createdAt: at,
      updatedAt: at,
    });
    const state = new BoardState({ boardId: 's', limits: createBoard({ id: 's' }).limits, version: 0, nextId: 1, tasks: [task('dep'), task('other')] });
    state.claimed('dep', 'w', at);
    state.hold();
    // h0..h5 wait on dep (running), the others on nothing.
    const held = Array.from({ length: 40 }, (_, i) => task(`h${i}`, i < 6 ? ['dep'] : []));
    state.created(held, 1, at);
    const expected = () =>
      [...state.tasks.values()].filter((t) => t.status === 'pending' && t.dependencies.every((d) => state.tasks.get(d)?.status === 'completed')).map((t) => t.id);
    const claimable = () =>
      [...state.ready.values()]
        .flatMap((heap) => heap.first(1_000, (id) => state.isReady(state.tasks.get(id)!)))
        .sort((a, b) => a.order - b.order)
        .map((e) => e.id);
    expect(claimable()).toEqual(['other']);
    // Half staged; then, before the rest is: dep completes (h0..h5 ready), h7 (staged ready) is
    // canceled, h8 (staged ready) waits on h30, h35 (not staged yet) is canceled.
    state.stage(held, 0, 20);
    state.completed('dep', undefined, at);
    state.canceled('h7', 'no', at);
    state.blockersAdded('h8', ['h30'], at);
    state.canceled('h35', 'no', at);
    // Still held: nothing of the creation is claimable.
    expect(claimable()).toEqual(['other']);
    state.stage(held, 20, 40);
    state.release(held);
    expect(state.holding).toBeUndefined();
    expect(claimable()).toEqual(expected());
    expect(claimable()).toEqual(['other', ...held.map((t) => t.id).filter((id) => !['h7', 'h8', 'h35'].includes(id))]);
    expect(state.readyCount).toBe(expected().length);
  });

  it('a board restored in steps is the board restoreBoard makes, with the same errors, and lets the event loop run meanwhile', async () => {
    const board = createBoard({ id: 'r', limits: { maxTasksPerBoard: 50_000 } });
    board.create(tasks(40_000).map((t, i) => (i % 10 === 1 ? { ...t, dependencies: [`t${i}`], metadata: { type: i % 20 === 1 ? 'api' : 'ui' } } : t)));
    // A dependency on a later task (a blocker added afterwards), and tasks done, running, failed.
    board.addBlockers('t5', ['t39999']);
    for (let i = 0; i < 30; i++) {
      const claim = board.claimNext('w')!;
      if (i % 3 === 0) board.complete(claim.task.id, 'w');
      else if (i % 3 === 1) board.fail(claim.task.id, 'w', { error: 'no', retry: false });
    }
    const snapshot = board.snapshot();
    // One clock for both boards: the claims below stamp the same times.
    const clock = () => 1_800_000_000_000;
    const { value: stepped, turns } = await turnsDuring(() => restoreBoardInSteps(snapshot, { clock }));
    expect(turns).toBeGreaterThan(1);
    const whole = restoreBoard(snapshot, { clock });
    expect(stepped.snapshot()).toEqual(whole.snapshot());
    expect(stepped.counts()).toEqual(whole.counts());
    expect(stepped.blocked()).toEqual(whole.blocked());
    expect(stepped.firstClaimable(5).map((t) => t.id)).toEqual(whole.firstClaimable(5).map((t) => t.id));
    expect(stepped.firstClaimable(5, { types: ['api'] }).map((t) => t.id)).toEqual(whole.firstClaimable(5, { types: ['api'] }).map((t) => t.id));
    expect(stepped.claimNext('w')).toEqual(whole.claimNext('w'));
    const cyclic = { ...snapshot, tasks: snapshot.tasks.map((t) => (t.id === 't1' ? { ...t, dependencies: ['t2'] } : t)) };
    await expect(restoreBoardInSteps(cyclic)).rejects.toMatchObject({ code: 'invalid-snapshot', message: expect.stringContaining('cycle') });
    await expect(restoreBoardInSteps({ ...snapshot, tasks: [...snapshot.tasks, snapshot.tasks[0]] })).rejects.toMatchObject({ code: 'invalid-snapshot' });
    await expect(restoreBoardInSteps({ ...snapshot, tasks: [{ ...snapshot.tasks[0], status: 'nope' }] })).rejects.toMatchObject({
      code: 'invalid-snapshot',
      message: expect.stringContaining('tasks.0.status'),
    });
  });

  it('a crash between two slices of a creation restores the board without any of it, and the run can be made again', async () => {
    const teamId = 'cut-creation';
    const file = join(dir, `${teamId}.db`);
    let base = sqliteStore(file);
    let teamCommits = 0;
    let failAfter = Number.POSITIVE_INFINITY;
    const store: SwarmStore = {
      ...base,
      commit: (c: Commit) => {
        if (c.swarmId === teamId && ++teamCommits > failAfter) throw new Error('the process is gone');
        return base.commit(c);
      },
    };
    const runtime = createRuntime({ model, store, teams: [team], owner: 'cut' });
    const client = runtime.forTeam(team, teamId);
    await client.run([{ id: 'first', subject: 'first' }]);
    await client.wait();
    // The next batch's third slice never reaches the store.
    failAfter = teamCommits + 2;
    await expect(client.run(tasks(10_000))).rejects.toThrow();
    await runtime.close().catch(() => undefined);
    await base.close();

    base = sqliteStore(file);
    try {
      const stored = await base.load(teamId);
      expect((stored!.snapshot as { creating?: unknown }).creating).toMatchObject({ from: 1 });
      const read = readTeamSnapshot(teamId, stored!.snapshot);
      expect(read.state.board.tasks.map((t) => t.id)).toEqual(['first']);
      expect(read.dropped).toMatchObject({ from: 1, tasks: expect.any(Number) });
      expect(read.dropped!.tasks).toBeGreaterThan(0);
      const again = createRuntime({ model, store: base, teams: [team], owner: 'cut' });
      try {
        const resumed = again.forTeam(team, teamId);
        await resumed.ready();
        expect(resumed.board().tasks.map((t) => t.id)).toEqual(['first']);
        // Its ids are free again. A smaller batch first: the dropped tasks' rows past it stay in
        // the list (nothing is written whole), and are not read back.
        await resumed.run(tasks(500));
        let reread = readTeamSnapshot(teamId, (await base.load(teamId))!.snapshot);
        expect(reread.dropped).toBeUndefined();
        expect(reread.state.board.tasks.map((t) => t.id)).toEqual(['first', ...tasks(500).map((t) => t.id)]);
        // Then the rest, added in slices to the run under way: the board holds each task once.
        await resumed.run(tasks(5_000).slice(500));
        const board = resumed.board();
        expect(board.tasks).toHaveLength(5_001);
        expect(new Set(board.tasks.map((t) => t.id)).size).toBe(5_001);
        reread = readTeamSnapshot(teamId, (await base.load(teamId))!.snapshot);
        expect(reread.state.board.tasks.map((t) => t.id)).toEqual(board.tasks.map((t) => t.id));
        await resumed.stop();
        const facts: TeamFact[] = [];
        for await (const event of resumed.events()) facts.push(event.metadata);
        expect(facts.filter((f) => f.type === 'team-creation-dropped')).toEqual([expect.objectContaining({ fromTask: 1 })]);
      } finally {
        await again.close();
      }
    } finally {
      await base.close();
    }
  }, 60_000);
});
