/**
 * Team mode in the runtime: `defineTeam`, `createRuntime({ teams })`, `runtime.forTeam`. Workers
 * run each task as a swarm of their definition on a scripted model; the board, the inbox, the
 * events and the metrics are read through the team client.
 */
import Database from 'better-sqlite3';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import {
  createRuntime,
  defineSwarm,
  defineTeam,
  memoryStore,
  scriptedModel,
  sqliteStore,
  TeamError,
  type ModelRequest,
  type Runtime,
  type TeamEvent,
  type TeamFact,
} from '../../src/index.js';
import { collect } from '../support/script.js';
import { tempDirs } from '../support/temp-dirs.js';
import { until } from '../support/wait.js';
import { sleep } from '../support/sleep.js';
import { readTeamSnapshot } from '../../src/team/host-journal.js';

const tempDir = tempDirs();

let runtime: Runtime | undefined;
afterEach(async () => {
  await runtime?.close();
  runtime = undefined;
});

const api = defineSwarm({ id: 'api-worker', instructions: 'You build APIs.' });
const frontend = defineSwarm({ id: 'frontend-worker', instructions: 'You build pages.' });
const database = defineSwarm({ id: 'db-worker', instructions: 'You build schemas.' });

/** The task id a task swarm works on (its input says `Task: <id> …`). */
const taskOf = (req: ModelRequest) => /Task: (\S+)/.exec(String(req.messages.find((m) => m.role === 'user')?.content))?.[1] ?? '?';

interface Trace {
  log: string[];
  running: number;
  peak: number;
}

/**
 * A model that answers each task after `delayMs`, logging `start:<task>` and `end:<task>`;
 * `behave` may throw (a failed attempt) or hang until aborted (a stalled worker).
 */
function teamModel(delayMs = 15, behave: (task: string, attempt: number) => 'ok' | 'fail' | 'hang' = () => 'ok') {
  const trace: Trace = { log: [], running: 0, peak: 0 };
  const attempts = new Map<string, number>();
  const model = scriptedModel(async (req) => {
    const task = taskOf(req);
    const attempt = (attempts.get(task) ?? 0) + 1;
    attempts.set(task, attempt);
    trace.log.push(`start:${task}`);
    trace.running++;
    trace.peak = Math.max(trace.peak, trace.running);
    try {
      const mode = behave(task, attempt);
      await sleep(mode === 'hang' ? 60_000 : delayMs, req.signal);
      if (mode === 'fail') throw new Error(`${task} broke (attempt ${attempt})`);
      trace.log.push(`end:${task}`);
      return { text: `built ${task}` };
    } finally {
      trace.running--;
    }
  });
  return { model, trace };
}

const facts = (events: readonly TeamEvent[]) => events.map((e) => e.metadata);
const ofType = <T extends TeamFact['type']>(events: readonly TeamEvent[], type: T) => facts(events).filter((f): f is Extract<TeamFact, { type: T }> => f.type === type);

const board = [
  { id: 'schema', subject: 'schema', metadata: { type: 'api', complexity: 2 } },
  { id: 'endpoints', subject: 'endpoints', metadata: { type: 'api', complexity: 3 }, dependencies: ['schema'] },
  { id: 'login-page', subject: 'login-page', metadata: { type: 'frontend', complexity: 2 }, dependencies: ['schema'] },
  { id: 'dashboard', subject: 'dashboard', metadata: { type: 'frontend', complexity: 3 }, dependencies: ['endpoints', 'login-page'] },
];

describe('team runtime', () => {
  it('runs a board with dependencies in dependency order with two worker types', async () => {
    const { model, trace } = teamModel(20);
    const team = defineTeam({
      id: 'builders',
      workers: [
        { type: 'api', swarm: api },
        { type: 'frontend', swarm: frontend, specialty: 'React pages' },
      ],
    });
    runtime = createRuntime({ model, teams: [team] });
    const client = runtime.forTeam(team);
    await client.run(board);
    const summary = await client.wait();

    expect(summary.status).toBe('completed');
    expect(summary.counts).toMatchObject({ total: 4, completed: 4, pending: 0, failed: 0 });
    // Each task starts only after its dependencies ended.
    const at = (entry: string) => trace.log.indexOf(entry);
    for (const task of board) for (const dep of task.dependencies ?? []) expect(at(`start:${task.id}`)).toBeGreaterThan(at(`end:${dep}`));
    // endpoints (api) and login-page (frontend) ran at the same time.
    expect(trace.peak).toBe(2);

    const events = await collect(client.events());
    const claimed = ofType(events, 'team-task-claimed');
    expect(claimed.map((c) => [c.taskId, c.workerId])).toEqual(
      expect.arrayContaining([
        ['schema', 'api-1'],
        ['endpoints', 'api-1'],
        ['login-page', 'frontend-1'],
        ['dashboard', 'frontend-1'],
      ]),
    );
    // A fresh swarm per task, named by the attempt key.
    const swarms = (await runtime.list()).filter((s) => !s.definitionId.startsWith('xswarm.team.'));
    expect(swarms.map((s) => s.swarmId).sort()).toEqual(['builders:dashboard:1', 'builders:endpoints:1', 'builders:login-page:1', 'builders:schema:1']);
    expect(client.board().tasks.find((t) => t.id === 'dashboard')?.result).toBe('built dashboard');

    const metrics = client.metrics();
    expect(metrics.spawns).toBe(2);
    expect(metrics.respawns).toBe(0);
    expect(metrics.batches).toBeGreaterThanOrEqual(3);
    expect(metrics.averageBatchMs).toBeGreaterThan(0);
    expect(metrics.messages).toBeGreaterThan(0);
    expect(metrics.durationMs).toBeGreaterThanOrEqual(60);
    expect(metrics.workers.map((w) => [w.workerId, w.completed, w.failed])).toEqual([
      ['api-1', 2, 0],
      ['frontend-1', 2, 0],
    ]);
    expect(metrics.workers.every((w) => w.avgDurationMs > 0)).toBe(true);
    expect(metrics.startedAt).not.toBeNull();
    expect(metrics.endedAt).toBeGreaterThanOrEqual(metrics.startedAt!);
    // The inbox holds what the workers told the leader and the shutdown handshake.
    expect(client.inbox().stats().byType).toMatchObject({ task_completed: 4, shutdown_request: 2, shutdown_approved: 2 });
    expect(
      client
        .inbox()
        .read('leader')
        .messages.filter((m) => m.type === 'task_completed')
        .map((m) => m.payload.taskId)
        .sort(),
    ).toEqual(['dashboard', 'endpoints', 'login-page', 'schema']);
  });

  it('measures the speedup against the same board with one worker', async () => {
    const wide = Array.from({ length: 6 }, (_, i) => ({ id: `t${i}`, subject: `t${i}` }));
    const durations: number[] = [];
    for (const count of [1, 3]) {
      const { model } = teamModel(40);
      const team = defineTeam({ id: `wide-${count}`, workers: [{ type: 'any', swarm: api, count }] });
      runtime = createRuntime({ model, teams: [team] });
      const client = runtime.forTeam(team);
      await client.run(wide);
      expect((await client.wait()).status).toBe('completed');
      // A worker given its next task on completion keeps it: one claim per task.
      expect(client.board().tasks.map((t) => t.attempts)).toEqual(wide.map(() => 1));
      durations.push(client.metrics().durationMs);
      await runtime.close();
      runtime = undefined;
    }
    expect(durations[0]! / durations[1]!).toBeGreaterThan(1.5);
  });

  it('pauses the team when a task fails 3 times; resume retries it, or skips it and the run stalls', async () => {
    const { model } = teamModel(5, (task, attempt) => (task === 'schema' && attempt <= 3 ? 'fail' : 'ok'));
    const team = defineTeam({
      id: 'flaky',
      workers: [
        { type: 'api', swarm: api },
        { type: 'frontend', swarm: frontend },
      ],
    });
    runtime = createRuntime({ model, teams: [team] });
    const client = runtime.forTeam(team);
    await client.run(board);
    const paused = await client.wait();
    expect(paused.status).toBe('paused');
    expect(paused.escalation).toMatchObject({ taskId: 'schema', failures: 3 });
    expect(paused.escalation?.error).toContain('schema broke (attempt 3)');
    expect(paused.counts.escalated).toBe(1);
    expect(paused.blocked.map((b) => b.taskId).sort()).toEqual(['dashboard', 'endpoints', 'login-page']);

    await client.resume({ decision: 'retry', message: 'the database is back' });
    const done = await client.wait();
    expect(done.status).toBe('completed');
    expect(client.board().tasks.find((t) => t.id === 'schema')).toMatchObject({ status: 'completed', attempts: 4 });
    const ids = (await runtime.list()).map((s) => s.swarmId);
    expect(ids.filter((id) => id.startsWith('flaky:schema:')).sort()).toEqual(['flaky:schema:1', 'flaky:schema:2', 'flaky:schema:3', 'flaky:schema:4']);
    const events = await collect(client.events());
    expect(ofType(events, 'team-escalation')).toHaveLength(1);
    expect(ofType(events, 'team-task-escalated')).toHaveLength(1);
    expect(ofType(events, 'team-task-failed')).toHaveLength(3);
    expect(facts(events).map((f) => f.type)).toContain('team-resumed');
    expect(client.metrics().workers.find((w) => w.workerId === 'api-1')).toMatchObject({ completed: 2, failed: 3 });

    // Skipping instead: the dependents stay blocked and the run ends stalled, not waiting forever.
    const { model: broken } = teamModel(5, (task) => (task === 'schema' ? 'fail' : 'ok'));
    await runtime.close();
    runtime = createRuntime({ model: broken, teams: [team] });
    const again = runtime.forTeam(team);
    await again.run(board);
    expect((await again.wait()).status).toBe('paused');
    await again.resume({ decision: 'skip' });
    const stalled = await again.wait();
    expect(stalled.status).toBe('stalled');
    expect(stalled.counts).toMatchObject({ failed: 1, completed: 0 });
    expect(stalled.blocked.map((b) => b.taskId).sort()).toEqual(['dashboard', 'endpoints', 'login-page']);
  });

  it('respawns a worker silent past workerTimeout and finishes its task with a fresh attempt', async () => {
    const { model } = teamModel(5, (task, attempt) => (task === 'slow' && attempt === 1 ? 'hang' : 'ok'));
    const team = defineTeam({ id: 'stalls', workers: [{ type: 'any', swarm: api }], limits: { workerTimeoutMs: 150 } });
    runtime = createRuntime({ model, teams: [team] });
    const client = runtime.forTeam(team);
    await client.run([
      { id: 'slow', subject: 'slow' },
      { id: 'after', subject: 'after', dependencies: ['slow'] },
    ]);
    const summary = await client.wait();
    expect(summary.status).toBe('completed');
    const events = await collect(client.events());
    expect(ofType(events, 'team-worker-respawned')).toEqual([{ type: 'team-worker-respawned', workerId: 'any-1', workerType: 'any', respawns: 1 }]);
    expect(ofType(events, 'team-task-released')).toMatchObject([{ taskId: 'slow', attempt: 1, reason: 'worker silent' }]);
    expect(client.metrics()).toMatchObject({ spawns: 2, respawns: 1 });
    // The stalled attempt's swarm was stopped; the second attempt did the work.
    const first = await runtime.forSwarm(api, 'stalls:slow:1').getResult();
    expect(first.status).toBe('stopped');
    expect(await runtime.forSwarm(api, 'stalls:slow:2').getResult()).toEqual({ status: 'completed', result: 'built slow' });
  });

  it('refuses what exceeds a limit, with a TeamError naming it', async () => {
    expect(() => defineTeam({ id: 'big', workers: [{ type: 'a', swarm: api, count: 11 }] })).toThrow(/maxWorkers is 10/);
    expect(() => defineTeam({ id: 'big', workers: [{ type: 'a', swarm: api, count: 3 }], limits: { maxWorkers: 2 } })).toThrowError(
      expect.objectContaining({ code: 'limit' }),
    );
    expect(() => defineTeam({ id: 'x', workers: [{ type: 'a', swarm: api }], limits: { maxWorkrs: 2 } as never })).toThrowError(
      expect.objectContaining({ code: 'invalid-limit' }),
    );

    const { model } = teamModel(30);
    const small = defineTeam({ id: 'small', workers: [{ type: 'a', swarm: api }], limits: { maxTasksPerBoard: 2, maxTeams: 1 } });
    const other = defineTeam({ id: 'other', workers: [{ type: 'a', swarm: api }], limits: { maxTeams: 1 } });
    runtime = createRuntime({ model, teams: [small, other] });
    const client = runtime.forTeam(small);
    await expect(client.run([{ subject: 'a' }, { subject: 'b' }, { subject: 'c' }])).rejects.toMatchObject({
      code: 'limit',
      message: expect.stringContaining('maxTasksPerBoard'),
    });
    await expect(
      client.run([
        { id: 'a', subject: 'a', dependencies: ['b'] },
        { id: 'b', subject: 'b', dependencies: ['a'] },
      ]),
    ).rejects.toMatchObject({ code: 'cycle' });
    expect(client.board().counts.total).toBe(0);

    await client.run([{ id: 'one', subject: 'one' }]);
    // maxTeams 1: a second team may not run while the first does.
    await expect(runtime.forTeam('other').run([{ subject: 'x' }])).rejects.toMatchObject({ code: 'limit', message: expect.stringContaining('maxTeams is 1') });
    expect((await client.wait()).status).toBe('completed');
    await runtime.forTeam('other').run([{ id: 'x', subject: 'x' }]);
    expect((await runtime.forTeam('other').wait()).status).toBe('completed');

    expect(() => runtime!.forTeam('nope')).toThrowError(expect.objectContaining({ code: 'unknown-team' }));
    const stray = defineTeam({ id: 'stray', workers: [{ type: 'a', swarm: 'no-such-swarm' }] });
    expect(() => runtime!.forTeam(stray)).toThrowError(expect.objectContaining({ code: 'unknown-team' }));
  });

  it('refuses an empty run with a TeamError: the team stays idle and holds no maxTeams slot', async () => {
    const { model } = teamModel(5);
    const solo = defineTeam({ id: 'solo', workers: [{ type: 'a', swarm: api }], limits: { maxTeams: 1 } });
    runtime = createRuntime({ model, teams: [solo] });
    // maxTeams 1: one empty run held as running would refuse every run after it.
    for (let i = 1; i <= 3; i++) {
      const empty = runtime.forTeam(solo, `empty-${i}`);
      await expect(empty.run([])).rejects.toSatisfy(
        (e) => e instanceof TeamError && e.code === 'invalid-task' && e.message === `team empty-${i}: a run needs at least one task`,
      );
      expect(empty.status).toBe('idle');
      expect((await empty.wait()).status).toBe('idle');
    }
    const real = runtime.forTeam(solo, 'real');
    await real.run([{ id: 'x', subject: 'x' }]);
    // An empty addition to the run under way is refused too, changing nothing.
    await expect(real.run([])).rejects.toMatchObject({ code: 'invalid-task' });
    expect((await real.wait()).status).toBe('completed');
    expect(real.board().counts).toMatchObject({ total: 1, completed: 1 });
  });

  it('streams ordered, replayable events in A2A form', async () => {
    const { model } = teamModel(10);
    const team = defineTeam({
      id: 'stream',
      workers: [
        { type: 'api', swarm: api },
        { type: 'frontend', swarm: frontend },
      ],
    });
    runtime = createRuntime({ model, teams: [team] });
    const client = runtime.forTeam(team, 'stream-1');
    await client.run(board);
    const live = await collect(client.events());
    expect(live.map((e) => e.seq)).toEqual(live.map((_, i) => i + 1));
    expect(live.at(-1)).toMatchObject({ final: true, status: { state: 'completed' }, metadata: { type: 'team-ended', status: 'completed' } });
    expect(live.every((e) => e.kind === 'status-update' && e.taskId === 'stream-1' && e.contextId === 'stream-1' && e.swarmId === 'stream-1')).toBe(true);
    expect(live.every((e) => e.metadata.type.startsWith('team-') && !Number.isNaN(Date.parse(e.status.timestamp)))).toBe(true);
    const types = new Set(facts(live).map((f) => f.type));
    for (const type of [
      'team-started',
      'team-task-created',
      'team-task-claimed',
      'team-task-completed',
      'team-worker-spawned',
      'team-worker-idle',
      'team-worker-shutdown',
      'team-message-sent',
    ]) {
      expect(types).toContain(type);
    }
    // Each task's facts in their order: created, claimed, completed.
    for (const task of board) {
      expect(
        facts(live)
          .filter((f) => 'taskId' in f && f.taskId === task.id)
          .map((f) => f.type),
      ).toEqual(['team-task-created', 'team-task-claimed', 'team-task-completed']);
    }
    // Replay: the same events again, from the start or from any seq.
    expect(await collect(client.events())).toEqual(live);
    expect(await collect(runtime.forTeam(team, 'stream-1').events({ since: 10 }))).toEqual(live.slice(10));
  });

  it('persists the team as a store record of its own: state, events and lease', async () => {
    const { model } = teamModel(5);
    const store = memoryStore();
    const team = defineTeam({
      id: 'kept',
      workers: [
        { type: 'api', swarm: api },
        { type: 'frontend', swarm: frontend },
      ],
    });
    runtime = createRuntime({ model, store, teams: [team], owner: 'keeper' });
    const client = runtime.forTeam(team, 'kept-1');
    await client.run(board);
    expect((await client.wait()).status).toBe('completed');
    const events = await collect(client.events());
    await runtime.close();
    runtime = undefined;

    const record = await store.load('kept-1');
    expect(record).toMatchObject({ swarmId: 'kept-1', definitionId: 'xswarm.team.kept', status: 'completed', lastSeq: events.length });
    // The board and the inbox are rows of the record's list (format 2), read back as a state.
    expect((record!.snapshot as { format: number }).format).toBe(2);
    const snapshot = readTeamSnapshot('kept-1', record!.snapshot).state;
    expect(snapshot.status).toBe('completed');
    expect(snapshot.board.tasks.map((t) => t.status)).toEqual(['completed', 'completed', 'completed', 'completed']);
    expect(snapshot.inbox.teamId).toBe('kept-1');
    expect(await store.readEvents('kept-1', 0)).toEqual(events);

    // A new runtime on the same store reads the finished team back: board, events, metrics.
    runtime = createRuntime({ model, store, teams: [team] });
    const again = runtime.forTeam(team, 'kept-1');
    await again.ready();
    expect(again.board().counts.completed).toBe(4);
    expect(await collect(again.events())).toEqual(events);
    expect(again.metrics().workers.map((w) => w.completed)).toEqual([2, 2]);
    expect((await again.wait()).status).toBe('completed');
  });

  it("is not taken for a swarm by the runtime's adoption scan; runtime.list() lists its task swarms, not its record", async () => {
    const { model } = teamModel(60);
    const team = defineTeam({
      id: 'scanned',
      workers: [
        { type: 'api', swarm: api },
        { type: 'frontend', swarm: frontend },
      ],
    });
    // A short lease: the scan for swarms to adopt runs every 50 ms while the team works.
    runtime = createRuntime({ model, teams: [team], leaseMs: 100 });
    await runtime.start();
    const client = runtime.forTeam(team, 'scanned-1');
    await client.run(board);
    await sleep(150);
    // The store keeps the team as a running record of its own, which no scan took for a swarm.
    expect((await runtime.store.list()).find((s) => s.swarmId === 'scanned-1')).toMatchObject({ definitionId: 'xswarm.team.scanned', status: 'running' });
    expect((await client.wait()).status).toBe('completed');
    const listed = await runtime.list();
    expect(listed.map((s) => s.definitionId).sort()).toEqual(['api-worker', 'api-worker', 'frontend-worker', 'frontend-worker']);
    // A page is filled with swarms even when the team's record is among the newest rows.
    expect((await runtime.store.list({ limit: 4 })).some((s) => s.definitionId === 'xswarm.team.scanned')).toBe(true);
    expect(await runtime.list({ limit: 4 })).toEqual(listed);
    expect(await runtime.list({ definitionId: 'xswarm.team.scanned' })).toEqual([]);
  });

  it('keeps teams apart: a client reads its own board and inbox only', async () => {
    const { model } = teamModel(5);
    const web = defineTeam({ id: 'web', workers: [{ type: 'frontend', swarm: frontend }] });
    const data = defineTeam({ id: 'data', workers: [{ type: 'database', swarm: database }] });
    runtime = createRuntime({ model, teams: [web, data] });
    const a = runtime.forTeam(web);
    const b = runtime.forTeam(data);
    await a.run([{ id: 'page', subject: 'page' }]);
    await b.run([{ id: 'tables', subject: 'tables' }]);
    await Promise.all([a.wait(), b.wait()]);

    expect(a.board().tasks.map((t) => t.id)).toEqual(['page']);
    expect(b.board().tasks.map((t) => t.id)).toEqual(['tables']);
    expect(a.inbox().read('frontend-1').messages.length).toBeGreaterThan(0);
    let refused: unknown;
    try {
      b.inbox().read('frontend-1');
    } catch (error) {
      refused = error;
    }
    expect(refused).toBeInstanceOf(TeamError);
    expect(refused).toMatchObject({ code: 'not-a-member' });
    expect(
      b
        .inbox()
        .messages()
        .every((m) => m.teamId === 'data'),
    ).toBe(true);
    // A team id belongs to its definition: another definition cannot open it.
    expect(() => runtime!.forTeam(data, 'web')).toThrowError(expect.objectContaining({ code: 'team-in-use' }));
  });

  it('pause holds new assignments, resume continues, stop ends the run and releases the work', async () => {
    const { model } = teamModel(30);
    const team = defineTeam({ id: 'ctl', workers: [{ type: 'any', swarm: api }] });
    runtime = createRuntime({ model, teams: [team] });
    const client = runtime.forTeam(team);
    await client.run([
      { id: 'a', subject: 'a' },
      { id: 'b', subject: 'b' },
      { id: 'c', subject: 'c' },
    ]);
    await client.pause('coffee break');
    const paused = await client.wait();
    expect(paused).toMatchObject({ status: 'paused', reason: 'coffee break' });
    // The task under way finishes; nothing new is assigned meanwhile.
    await until('the task under way to finish', () => client.board().counts.in_progress === 0);
    await sleep(50);
    expect(client.board().counts).toMatchObject({ completed: 1, in_progress: 0, pending: 2 });
    await client.resume();
    await sleep(10);
    await client.stop('enough');
    const stopped = await client.wait();
    expect(stopped).toMatchObject({ status: 'stopped', reason: 'enough' });
    expect(stopped.counts.in_progress).toBe(0);
    expect(stopped.counts.completed).toBeLessThan(3);
    await expect(client.resume()).rejects.toMatchObject({ code: 'wrong-team-state' });
  });

  it('a runtime reading a team another drives follows it: wait() settles when that one finishes, then it runs the team', async () => {
    const path = join(tempDir('xswarm-team-reader-'), 'state.db');
    let open!: () => void;
    const gate = new Promise<void>((resolve) => (open = resolve));
    const model = scriptedModel(async () => {
      await gate;
      return { text: 'ok' };
    });
    const team = defineTeam({ id: 'shared', workers: [{ type: 'api', swarm: api }] });
    const store = sqliteStore(path);
    const driver = createRuntime({ model, teams: [team], store: sqliteStore(path), owner: 'driver', leaseMs: 400 });
    try {
      const driving = driver.forTeam(team, 'x');
      await driving.run([{ id: 't', subject: 't', metadata: { type: 'api' } }]);
      await until(
        'x stored as running',
        () => store.load('x'),
        (r) => r?.status === 'running',
      );
      // Not started: no adoption scan reads the team again here, only its own client.
      runtime = createRuntime({ model, teams: [team], store, owner: 'reader', leaseMs: 400 });
      const reading = runtime.forTeam(team, 'x');
      await reading.ready();
      expect(reading.status).toBe('running');
      await expect(reading.run([{ id: 'u', subject: 'u', metadata: { type: 'api' } }])).rejects.toMatchObject({ code: 'team-in-use' });
      const waited = reading.wait();
      open();
      expect((await driving.wait()).status).toBe('completed');
      expect(await waited).toMatchObject({ status: 'completed', counts: { completed: 1 } });

      // The driver is still up; its ended run is nobody's, so the reader runs the team now.
      const before = (await store.load('x'))!.revision;
      await reading.run([{ id: 'u', subject: 'u', metadata: { type: 'api' } }]);
      expect(await reading.wait()).toMatchObject({ status: 'completed', counts: { completed: 2 } });
      const after = await until(
        'x stored as completed',
        () => store.load('x'),
        (r) => r?.status === 'completed',
      );
      expect(after!.revision).toBeGreaterThan(before);
      expect(readTeamSnapshot('x', after!.snapshot).state.board.tasks.map((t) => t.id)).toEqual(['t', 'u']);
    } finally {
      open();
      await driver.close();
      await runtime?.close();
      runtime = undefined;
      await store.close();
    }
  });

  it('refuses to drive a team stored by another version of the leader machine; a finished one stays readable', async () => {
    const path = join(tempDir('xswarm-team-version-'), 'state.db');
    const team = defineTeam({ id: 'versioned', workers: [{ type: 'api', swarm: api }] });
    const firstStore = sqliteStore(path);
    // One team finished, one left running (its task hangs) when the first runtime closes.
    const first = createRuntime({ model: teamModel(5, (task) => (task === 'hangs' ? 'hang' : 'ok')).model, teams: [team], store: firstStore });
    const done = first.forTeam(team, 'done');
    await done.run([{ id: 't', subject: 't', metadata: { type: 'api' } }]);
    expect((await done.wait()).status).toBe('completed');
    await first.forTeam(team, 'open').run([{ id: 'hangs', subject: 'hangs', metadata: { type: 'api' } }]);
    await until(
      'open stored as running',
      () => firstStore.load('open'),
      (r) => r?.status === 'running',
    );
    await first.close();
    await firstStore.close();
    const db = new Database(path);
    db.prepare(`UPDATE swarms SET machine_version = 1 WHERE swarm_id IN ('done', 'open')`).run();
    db.close();
    const store = sqliteStore(path);
    runtime = createRuntime({ model: teamModel(5).model, teams: [team], store });
    try {
      await expect(runtime.forTeam(team, 'open').ready()).rejects.toMatchObject({
        code: 'invalid-snapshot',
        message: 'team "open" was stored by team leader machine version 1; this runtime runs version 2',
      });
      const finished = runtime.forTeam(team, 'done');
      await finished.ready();
      expect(finished.board().tasks.map((t) => [t.id, t.status])).toEqual([['t', 'completed']]);
    } finally {
      await runtime.close();
      runtime = undefined;
      await store.close();
    }
  });

  it('close() during an adoption pass claims nothing and starts nothing on the team it was loading', async () => {
    const path = join(tempDir('xswarm-team-close-'), 'state.db');
    const team = defineTeam({ id: 'left', workers: [{ type: 'api', swarm: api }] });
    const base = sqliteStore(path);
    // A runtime closes mid-run: the team stays unfinished in the store, its lease given up.
    const hanging = scriptedModel((req) => new Promise((_, reject) => req.signal.addEventListener('abort', () => reject(req.signal.reason), { once: true })));
    const leaver = createRuntime({ model: hanging, teams: [team], store: sqliteStore(path), owner: 'leaver', leaseMs: 300 });
    await leaver.forTeam(team, 'x').run([{ id: 't', subject: 't', metadata: { type: 'api' } }]);
    await until(
      'x stored as running',
      () => base.load('x'),
      (r) => r?.status === 'running',
    );
    await leaver.close();
    const before = (await base.load('x'))!;
    expect((await base.list()).find((r) => r.swarmId === 'x')?.lease).toBeUndefined();

    // The next runtime's adoption pass is held while it claims the team; close() comes meanwhile.
    let reached!: () => void;
    const claiming = new Promise<void>((resolve) => (reached = resolve));
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    const store: typeof base = {
      ...base,
      claim: async (...args) => {
        if (args[0] === 'x') {
          reached();
          await held;
        }
        return base.claim(...args);
      },
    };
    const late = createRuntime({ model: scriptedModel(() => ({ text: 'ok' })), teams: [team], store, owner: 'late', leaseMs: 300 });
    const started = late.start().catch(() => undefined);
    await claiming;
    const closed = late.close();
    // The claim lands once close() gave the runtime's leases up, or after 50 ms if close() waits
    // for the pass (then the leases it gives up include the one claimed meanwhile).
    await Promise.race([closed, sleep(50)]);
    release();
    await closed;
    await started;
    const after = (await base.load('x'))!;
    // The store's listing names a record's holder.
    expect((await base.list()).find((r) => r.swarmId === 'x')?.lease?.owner).not.toBe('late');
    expect({ revision: after.revision, lastSeq: after.lastSeq, status: after.status }).toEqual({ revision: before.revision, lastSeq: before.lastSeq, status: 'running' });
    await base.close();
  });
});
