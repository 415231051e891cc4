/**
 * Model-based tests of the team machines (machines/team/worker.ts, machines/team/leader.ts),
 * generated with `xstate/graph`, plus focused tests of the behaviours issue 12 names.
 *
 * Each machine has an abstract model (test/support/team-models.ts): a reducer over a small
 * world whose states hold what the real machine must show. `TestModel` walks the model; the
 * shortest paths to every model transition run against the REAL machine (the worker with a
 * controllable `runTask`, the leader with recording effects), compared at every step on state,
 * context, emitted facts or requested effects, open task attempts and output. Finally every
 * state and transition of each real machine must have been taken by some path.
 */
import { describe, expect, it } from 'vitest';
import { createActor, type SnapshotFrom } from 'xstate';
import { TestModel } from 'xstate/graph';
import type { TeamLeaderEvent } from '../../machines/team/events.js';
import {
  planAssignments,
  silentWorkers,
  TEAM_LEADER_MACHINE_VERSION,
  type TeamLeaderContext,
  type TeamLeaderEffects,
  teamLeaderMachine,
  type TeamOutcome,
} from '../../machines/team/leader.js';
import { type TaskRunInput, type TaskRunOutput, TEAM_WORKER_MACHINE_VERSION, teamWorkerMachine } from '../../machines/team/worker.js';
import { Controllable, Coverage, describeModelPaths, flush, machineGraph, same } from '../support/mbt-harness.js';
import {
  attemptKeyOf,
  durationOf,
  effectSig,
  errorOf,
  initialLeaderModel,
  initialWorkerModel,
  LEADER_LIMITS,
  LEADER_MODEL_EVENTS,
  LEADER_WORKERS,
  leaderEventFor,
  leaderEvents,
  type LeaderModel,
  type LeaderModelEvent,
  leaderModel,
  leaderProject,
  leaderStep,
  resultOf,
  TEAM,
  taskOf,
  WORKER,
  WORKER_MODEL_EVENTS,
  WORKER_STOP,
  workerEvents,
  workerFactSig,
  workerFinal,
  type WorkerModel,
  type WorkerModelEvent,
  workerModel,
  workerProject,
  workerStep,
} from '../support/team-models.js';

/** A state value as a dotted path (`{ active: 'running' }` → `active.running`). */
function dotted(value: unknown): string {
  if (typeof value === 'string') return value;
  const [key, child] = Object.entries(value as Record<string, unknown>)[0]!;
  return `${key}.${dotted(child)}`;
}

// ---------------------------------------------------------------------------------------------
// Worker: model-based.

const tasks = new Controllable<TaskRunInput, TaskRunOutput>();
const liveWorker = teamWorkerMachine.provide({ actors: { runTask: tasks.logic } });
const workerCoverage = new Coverage('teamWorker');
const workerGraph = machineGraph(teamWorkerMachine);

const workerTestModel = new TestModel(workerModel, {
  events: (s: SnapshotFrom<typeof workerModel>) => workerEvents(s.context),
  // Vertices are model transitions, so the shortest paths take every transition of the model.
  serializeState: (s, e, prev) => (e && prev ? `${workerProject(s.context)} <-${e.type}- ${workerProject(prev.context)}` : workerProject(s.context)),
});
const workerPaths = workerTestModel.getShortestPaths();

function startWorkerRun() {
  tasks.reset();
  const actor = createActor(liveWorker, { input: WORKER, inspect: workerCoverage.observe });
  const batches: string[] = [];
  const errors: unknown[] = [];
  actor.on('team.worker.facts', (e) => {
    same([e.teamId, e.workerId], [WORKER.teamId, WORKER.workerId]);
    batches.push(e.facts.map(workerFactSig).join('+'));
  });
  actor.subscribe({ error: (err) => errors.push(err) });
  actor.start();
  let model: WorkerModel = initialWorkerModel();

  async function exec(event: WorkerModelEvent): Promise<void> {
    const before = model;
    switch (event.type) {
      case 'READY':
      case 'SHUTDOWN_REQUEST':
      case 'SHUTDOWN_APPROVED':
        actor.send({ type: event.type });
        break;
      case 'SHUTDOWN_RELEASE':
        actor.send({ type: 'SHUTDOWN_REQUEST', release: true });
        break;
      case 'ASSIGN':
        actor.send({ type: 'ASSIGN', task: taskOf(before.assigned + 1), attemptKey: attemptKeyOf(before.assigned + 1) });
        break;
      case 'TASK_DONE':
      case 'TASK_ERROR': {
        const n = before.held!;
        const call = tasks.one();
        same(call.input, {
          teamId: WORKER.teamId,
          workerId: WORKER.workerId,
          type: WORKER.type,
          specialty: WORKER.specialty,
          task: taskOf(n),
          attemptKey: attemptKeyOf(n),
        });
        if (event.type === 'TASK_DONE') call.resolve({ result: resultOf(n), durationMs: durationOf(n) });
        else call.reject(errorOf(n));
        break;
      }
      case 'HEARTBEAT':
        actor.send({ type: 'HEARTBEAT', at: (before.beats + 1) * 1000 });
        break;
      case 'STOP':
        actor.send({ type: 'STOP', reason: WORKER_STOP });
        break;
      default:
        event.type satisfies never;
    }
    model = workerStep(before, event);
    await flush();
  }

  function check(expected: SnapshotFrom<typeof workerModel>): void {
    same(workerProject(model), workerProject(expected.context));
    const s = actor.getSnapshot();
    const c = s.context;
    const final = workerFinal(model.value);
    same(
      {
        errors,
        status: s.status,
        value: dotted(s.value),
        task: c.currentTask?.task.taskId ?? null,
        completed: c.completed,
        failed: c.failed,
        totalDurationMs: c.totalDurationMs,
        lastBeat: c.lastBeat,
        batches,
        openTasks: tasks.open().length,
        output: s.output ?? null,
      },
      {
        errors: [],
        status: final ? 'done' : 'active',
        value: model.value,
        task: model.held === null ? null : `t${model.held}`,
        completed: model.completed,
        failed: model.failed,
        totalDurationMs: model.totalMs,
        lastBeat: model.beats === 0 ? null : model.beats * 1000,
        batches: model.batches,
        // One attempt runs exactly while the worker is working; leaving early aborts it.
        openTasks: model.value.startsWith('working') ? 1 : 0,
        output: final
          ? {
              status: model.value,
              ...(model.stopReason ? { reason: model.stopReason } : {}),
              completed: model.completed,
              failed: model.failed,
              totalDurationMs: model.totalMs,
              respawns: 0,
            }
          : null,
      },
    );
    if (final) same(tasks.allClosed(), true);
  }

  return { exec, check };
}

describe('team worker machine, model-based (xstate/graph)', () => {
  it('the model yields paths', () => {
    expect(workerPaths.length).toBeGreaterThan(50);
  });
  describeModelPaths({
    suites: [[`shortest paths to every model transition (${workerPaths.length})`, workerPaths]],
    eventTypes: WORKER_MODEL_EVENTS,
    startRun: startWorkerRun,
    describePath: (steps) =>
      steps
        .slice(1)
        .map((s) => s.event.type)
        .join(' → ') || '(start)',
    coverage: workerCoverage,
    graph: workerGraph,
    knownState: 'teamWorker.working.finishing',
  });
});

// ---------------------------------------------------------------------------------------------
// Leader: model-based.

let effectLog: string[] = [];
const record =
  <K extends keyof TeamLeaderEffects>(name: K) =>
  (_: unknown, params: TeamLeaderEffects[K]): void => {
    effectLog.push(effectSig[name](params));
  };
/** The leader with every effect recording its signature. */
const recordingLeader = teamLeaderMachine.provide({
  actions: {
    spawnWorker: record('spawnWorker'),
    respawnWorker: record('respawnWorker'),
    assignTask: record('assignTask'),
    releaseTask: record('releaseTask'),
    completeTask: record('completeTask'),
    failTask: record('failTask'),
    pauseTeam: record('pauseTeam'),
    resumeTeam: record('resumeTeam'),
    retryTask: record('retryTask'),
    skipTask: record('skipTask'),
    relayHelp: record('relayHelp'),
    reportStall: record('reportStall'),
    requestShutdown: record('requestShutdown'),
    approveShutdown: record('approveShutdown'),
    stopWorkers: record('stopWorkers'),
  },
});
const leaderCoverage = new Coverage('teamLeader');
const leaderGraph = machineGraph(teamLeaderMachine);
const LEADER_INPUT = { teamId: TEAM, workers: LEADER_WORKERS, limits: LEADER_LIMITS };

const leaderTestModel = new TestModel(leaderModel, {
  events: (s: SnapshotFrom<typeof leaderModel>) => leaderEvents(s.context),
  serializeState: (s, e, prev) => (e && prev ? `${leaderProject(s.context)} <-${e.type}- ${leaderProject(prev.context)}` : leaderProject(s.context)),
});
const leaderPaths = leaderTestModel.getShortestPaths();

const outcomeSig = (o: TeamOutcome | null): string | null => {
  if (!o) return null;
  switch (o.status) {
    case 'completed':
      return 'completed';
    case 'stalled':
      return `stalled:${o.blocked.join(',')}:${o.remaining}`;
    default:
      return `${o.status}:${o.reason}`;
  }
};

function leaderView(c: TeamLeaderContext) {
  return {
    board: c.board,
    stale: c.boardStale,
    workers: c.workers.map((w) => [w.workerId, w.status, w.taskId, w.attemptKey, w.completed, w.failed, w.totalDurationMs, w.respawns, w.lastBeat]),
    attempts: c.attempts,
    escalations: c.escalations.map((e) => e.taskId),
    pause: c.pause?.reason ?? null,
    counters: [
      c.counters.batches,
      c.counters.closedBatches,
      c.counters.batchMsTotal,
      c.counters.spawns,
      c.counters.respawns,
      c.counters.messages,
      c.counters.startedAt,
      c.counters.endedAt,
    ],
    outcome: outcomeSig(c.outcome),
  };
}

function modelView(m: LeaderModel) {
  return {
    board: m.view,
    stale: m.stale,
    workers: m.workers.map((w) => [w.workerId, w.status, w.taskId, w.attemptKey, w.completed, w.failed, w.totalMs, w.respawns, w.lastBeat]),
    attempts: m.attempts,
    escalations: m.escalations,
    pause: m.pause,
    counters: [
      m.counters.batches,
      m.counters.closed,
      m.counters.batchMs,
      m.counters.spawns,
      m.counters.respawns,
      m.counters.messages,
      m.counters.startedAt,
      m.counters.endedAt,
    ],
    outcome: m.outcome,
  };
}

function startLeaderRun() {
  effectLog = [];
  const actor = createActor(recordingLeader, { input: LEADER_INPUT, inspect: leaderCoverage.observe });
  const errors: unknown[] = [];
  actor.subscribe({ error: (err) => errors.push(err) });
  actor.start();
  let model: LeaderModel = initialLeaderModel;

  function exec(event: LeaderModelEvent): void {
    actor.send(leaderEventFor(model, event));
    model = leaderStep(model, event);
  }

  function check(expected: SnapshotFrom<typeof leaderModel>): void {
    same(leaderProject(model), leaderProject(expected.context));
    const s = actor.getSnapshot();
    const final = ['completed', 'stalled', 'stopped', 'failed'].includes(model.value);
    same(
      { errors, status: s.status, value: dotted(s.value), ...leaderView(s.context), effects: effectLog, output: s.output ? outcomeSig(s.output.outcome) : null },
      { errors: [], status: final ? 'done' : 'active', value: model.value, ...modelView(model), effects: model.effects, output: final ? model.outcome : null },
    );
  }

  return { exec, check };
}

describe('team leader machine, model-based (xstate/graph)', () => {
  it('the model yields paths', () => {
    expect(leaderPaths.length).toBeGreaterThan(100);
  });
  describeModelPaths({
    suites: [[`shortest paths to every model transition (${leaderPaths.length})`, leaderPaths]],
    eventTypes: LEADER_MODEL_EVENTS,
    startRun: startLeaderRun,
    describePath: (steps) =>
      steps
        .slice(1)
        .map((s) => s.event.type)
        .join(' → ') || '(start)',
    coverage: leaderCoverage,
    graph: leaderGraph,
    knownState: 'teamLeader.active.paused',
  });
});

// ---------------------------------------------------------------------------------------------
// Focused tests.

const board = (claimable: { taskId: string; type?: string }[], inProgress: number, blocked: string[], remaining: number) => ({
  claimable,
  inProgress,
  blocked,
  remaining,
});

/** A leader over the recording effects, with a `send` that stamps events with a clock. */
function leader(input: { teamId: string; workers: typeof LEADER_WORKERS; limits?: { maxRespawns?: number } }) {
  effectLog = [];
  const actor = createActor(recordingLeader, { input }).start();
  let now = 0;
  const send = (event: DistributiveOmit<TeamLeaderEvent, 'at'>, at = (now += 10)) => {
    now = at;
    actor.send({ ...event, at } as TeamLeaderEvent);
  };
  const effects = () => effectLog.splice(0);
  return { actor, send, effects, ctx: () => actor.getSnapshot().context, value: () => dotted(actor.getSnapshot().value) };
}
type DistributiveOmit<T, K extends PropertyKey> = T extends unknown ? Omit<T, K> : never;

describe('team machines, focused', () => {
  it('heartbeat timeout: the silent worker’s task is released and the worker respawned', () => {
    const WORKER_TIMEOUT = 600_000;
    const { actor, send, effects, ctx, value } = leader({ teamId: TEAM, workers: LEADER_WORKERS });
    send({ type: 'START', board: board([{ taskId: 't1', type: 'fe' }], 0, [], 1) }, 0);
    send({ type: 'WORKER_IDLE', workerId: 'w1' }, 10);
    send({ type: 'WORKER_IDLE', workerId: 'w2' }, 20);
    expect(effects()).toEqual(['spawn:w1:fe:pages', 'spawn:w2:api:endpoints', 'assign:w1:t1:team:t1:1']);
    send({ type: 'HEARTBEAT', workerId: 'w1' }, 100);
    send({ type: 'HEARTBEAT', workerId: 'w2' }, 650_000);
    // The watchdog's question, answered from the context with the runtime's clock.
    expect(silentWorkers(ctx(), 600_100, WORKER_TIMEOUT)).toEqual([]);
    expect(silentWorkers(ctx(), 700_200, WORKER_TIMEOUT)).toEqual(['w1']);

    send({ type: 'WORKER_SILENT', workerId: 'w1' }, 700_200);
    expect(effects()).toEqual(['release:w1:t1:team:t1:1:worker silent', 'respawn:w1:1']);
    expect(ctx().workers[0]).toMatchObject({ status: 'starting', taskId: null, respawns: 1, spawnedAt: 700_200, lastBeat: null });
    expect(ctx().counters).toMatchObject({ spawns: 3, respawns: 1 });
    expect(value()).toBe('active.running');
    // Silence of the new worker is measured from its respawn.
    expect(silentWorkers(ctx(), 700_200 + WORKER_TIMEOUT, WORKER_TIMEOUT)).not.toContain('w1');
    expect(silentWorkers(ctx(), 700_201 + WORKER_TIMEOUT, WORKER_TIMEOUT)).toContain('w1');

    // The board takes the task back; the respawned worker gets it under a new attempt key.
    send({ type: 'BOARD_CHANGED', board: board([{ taskId: 't1', type: 'fe' }], 0, [], 1) });
    expect(effects()).toEqual([]);
    send({ type: 'WORKER_IDLE', workerId: 'w1' });
    expect(effects()).toEqual(['assign:w1:t1:team:t1:2']);
    // The old process's late report of attempt 1 is not taken for the task.
    send({ type: 'TASK_COMPLETED', workerId: 'w1', taskId: 't1', attemptKey: 'team:t1:1', result: 'late', durationMs: 5 });
    expect(effects()).toEqual([]);
    expect(ctx().workers[0]).toMatchObject({ status: 'working', attemptKey: 'team:t1:2', completed: 0 });
    actor.stop();

    // The respawned worker machine knows how often it was respawned.
    const respawned = createActor(liveWorker, { input: { ...WORKER, respawns: 1 } }).start();
    respawned.send({ type: 'STOP', reason: 'test over' });
    expect(respawned.getSnapshot().output).toEqual({ status: 'stopped', reason: 'test over', completed: 0, failed: 0, totalDurationMs: 0, respawns: 1 });
  });

  it("a task whose failures reach the board's limit pauses the team with the last error; RESUME retries it or skips it", () => {
    const { send, effects, ctx, value } = leader({ teamId: TEAM, workers: LEADER_WORKERS });
    send({ type: 'START', board: board([{ taskId: 't1', type: 'fe' }], 0, ['t2'], 2) });
    send({ type: 'WORKER_IDLE', workerId: 'w1' });
    send({ type: 'WORKER_IDLE', workerId: 'w2' });
    effects();
    // The board counts the failures (3 allowed here) and resets them when a human retries.
    const failAttempt = (attempt: number) => {
      const failures = ((attempt - 1) % 3) + 1;
      send({
        type: 'TASK_FAILED',
        workerId: 'w1',
        taskId: 't1',
        attemptKey: `team:t1:${attempt}`,
        error: `boom ${attempt}`,
        durationMs: 4,
        failures,
        escalates: failures === 3,
      });
    };
    for (const attempt of [1, 2]) {
      failAttempt(attempt);
      expect(effects()).toEqual([`fail:w1:t1:team:t1:${attempt}:boom ${attempt}:${attempt}:false`]);
      send({ type: 'BOARD_CHANGED', board: board([{ taskId: 't1', type: 'fe' }], 0, ['t2'], 2) });
      expect(effects()).toEqual([`assign:w1:t1:team:t1:${attempt + 1}`]);
    }
    failAttempt(3);
    expect(value()).toBe('active.paused');
    expect(effects()).toEqual(['fail:w1:t1:team:t1:3:boom 3:3:true', 'pause:escalation:t1:3:boom 3']);
    expect(ctx().escalations).toEqual([{ taskId: 't1', workerId: 'w1', attemptKey: 'team:t1:3', error: 'boom 3', failures: 3, at: ctx().now }]);
    // Paused: nothing is assigned even though the board offers work (t9, for the idle w2).
    send({ type: 'BOARD_CHANGED', board: board([{ taskId: 't9', type: 'api' }], 0, ['t2'], 3) });
    expect(effects()).toEqual([]);

    send({ type: 'RESUME', message: 'try once more', decision: 'retry' });
    expect(value()).toBe('active.running');
    expect(effects()).toEqual(['retry:t1:try once more', 'resume:try once more', 'assign:w2:t9:team:t9:1']);
    send({ type: 'BOARD_CHANGED', board: board([{ taskId: 't1', type: 'fe' }], 1, ['t2'], 3) });
    expect(effects()).toEqual(['assign:w1:t1:team:t1:4']);

    for (const attempt of [4, 5, 6]) {
      failAttempt(attempt);
      if (attempt < 6) send({ type: 'BOARD_CHANGED', board: board([{ taskId: 't1', type: 'fe' }], 1, ['t2'], 3) });
    }
    expect(value()).toBe('active.paused');
    expect(effects().at(-1)).toBe('pause:escalation:t1:3:boom 6');
    send({ type: 'RESUME', decision: 'skip' });
    expect(effects()).toEqual(['skip:t1:', 'resume:']);
    // Until the board answers, the leader does not judge it (its summary is out of date);
    // while w2 works, nothing is stalled either.
    expect(value()).toBe('active.running');
    send({ type: 'BOARD_CHANGED', board: board([], 1, ['t2'], 2) });
    expect(value()).toBe('active.running');
    send({ type: 'TASK_COMPLETED', workerId: 'w2', taskId: 't9', attemptKey: 'team:t9:1', result: 'ok', durationMs: 3 });
    send({ type: 'BOARD_CHANGED', board: board([], 0, ['t2'], 1) });
    expect(value()).toBe('draining');
    expect(effects()).toEqual(['complete:w2:t9:team:t9:1:"ok"', 'stall:t2:1', 'request:w1', 'request:w2']);
  });

  it('all workers idle with the remaining tasks blocked is reported and ends the run', () => {
    const { actor, send, effects, value } = leader({ teamId: TEAM, workers: LEADER_WORKERS });
    send({ type: 'START', board: board([{ taskId: 't1', type: 'fe' }], 0, ['t2'], 2) });
    send({ type: 'WORKER_IDLE', workerId: 'w1' });
    send({ type: 'WORKER_IDLE', workerId: 'w2' });
    send({ type: 'TASK_FAILED', workerId: 'w1', taskId: 't1', attemptKey: 'team:t1:1', error: 'gone', durationMs: 1, failures: 1, escalates: false });
    effects();
    // Right after its own change the leader waits for the board rather than guessing.
    expect(value()).toBe('active.running');
    send({ type: 'BOARD_CHANGED', board: board([], 0, ['t2', 't3'], 3) });
    expect(value()).toBe('draining');
    expect(effects()).toEqual(['stall:t2,t3:3', 'request:w1', 'request:w2']);
    send({ type: 'WORKER_SHUTDOWN_READY', workerId: 'w2' });
    send({ type: 'WORKER_SHUTDOWN_READY', workerId: 'w1' });
    expect(effects()).toEqual(['approve:w2', 'approve:w1']);
    expect(actor.getSnapshot().status).toBe('done');
    expect(actor.getSnapshot().output?.outcome).toEqual({ status: 'stalled', blocked: ['t2', 't3'], remaining: 3 });
  });

  it('graceful shutdown: request → the task finishes → approval → shutdown', async () => {
    tasks.reset();
    const worker = createActor(liveWorker, { input: WORKER }).start();
    const facts: string[] = [];
    worker.on('team.worker.facts', (e) => facts.push(e.facts.map(workerFactSig).join('+')));
    worker.send({ type: 'READY' });
    worker.send({ type: 'ASSIGN', task: taskOf(1), attemptKey: attemptKeyOf(1) });
    worker.send({ type: 'SHUTDOWN_REQUEST' });
    expect(dotted(worker.getSnapshot().value)).toBe('working.finishing');
    const call = tasks.one();
    expect(call.signal.aborted).toBe(false);
    call.resolve({ result: resultOf(1), durationMs: 12 });
    await flush();
    expect(worker.getSnapshot().value).toBe('shuttingDown');
    // Nothing new is taken while shutting down: an assignment goes straight back.
    worker.send({ type: 'ASSIGN', task: taskOf(2), attemptKey: attemptKeyOf(2) });
    worker.send({ type: 'SHUTDOWN_APPROVED' });
    expect(facts).toEqual([
      'idle',
      `done:t1:${attemptKeyOf(1)}:${JSON.stringify(resultOf(1))}:12+ready`,
      `released:t2:${attemptKeyOf(2)}:worker cannot take a task now`,
      'shutdown',
    ]);
    expect(worker.getSnapshot().output).toEqual({ status: 'shutdown', completed: 1, failed: 0, totalDurationMs: 12, respawns: 0 });

    // The leader's side: the board is done → shutdown requested → each answer approved → completed.
    const { actor, send, effects, ctx } = leader({ teamId: TEAM, workers: LEADER_WORKERS });
    send({ type: 'START', board: board([{ taskId: 't1', type: 'fe' }], 0, [], 1) }, 1000);
    send({ type: 'WORKER_IDLE', workerId: 'w1' }, 1010);
    send({ type: 'WORKER_IDLE', workerId: 'w2' }, 1020);
    send({ type: 'TASK_COMPLETED', workerId: 'w1', taskId: 't1', attemptKey: 'team:t1:1', result: 'ok', durationMs: 40 }, 1060);
    send({ type: 'BOARD_CHANGED', board: board([], 0, [], 0) }, 1070);
    expect(effects()).toEqual(['spawn:w1:fe:pages', 'spawn:w2:api:endpoints', 'assign:w1:t1:team:t1:1', 'complete:w1:t1:team:t1:1:"ok"', 'request:w1', 'request:w2']);
    send({ type: 'WORKER_SHUTDOWN_READY', workerId: 'w1' }, 1080);
    expect(actor.getSnapshot().status).toBe('active');
    send({ type: 'WORKER_SHUTDOWN_READY', workerId: 'w2' }, 1090);
    expect(effects()).toEqual(['approve:w1', 'approve:w2']);
    expect(actor.getSnapshot().value).toBe('completed');
    expect(actor.getSnapshot().output).toEqual({
      outcome: { status: 'completed' },
      metrics: {
        startedAt: 1000,
        endedAt: 1090,
        batches: 1,
        averageBatchMs: 50,
        spawns: 2,
        respawns: 0,
        // 2 idle notifications, 1 completion, 2 requests, 2 answers, 2 approvals.
        messages: 9,
        workers: [
          { workerId: 'w1', completed: 1, failed: 0, avgDurationMs: 40, respawns: 0 },
          { workerId: 'w2', completed: 0, failed: 0, avgDurationMs: 0, respawns: 0 },
        ],
      },
    });
    expect(ctx().workers.every((w) => w.status === 'shutdown')).toBe(true);
  });

  it('a shutdown with release gives the running task back at once (its attempt aborted)', async () => {
    tasks.reset();
    const worker = createActor(liveWorker, { input: WORKER }).start();
    const facts: string[] = [];
    worker.on('team.worker.facts', (e) => facts.push(e.facts.map(workerFactSig).join('+')));
    worker.send({ type: 'READY' });
    worker.send({ type: 'ASSIGN', task: taskOf(1), attemptKey: attemptKeyOf(1) });
    const call = tasks.one();
    worker.send({ type: 'SHUTDOWN_REQUEST', release: true });
    expect(call.signal.aborted).toBe(true);
    expect(worker.getSnapshot().value).toBe('shuttingDown');
    expect(facts.at(-1)).toBe(`released:t1:${attemptKeyOf(1)}:worker shutting down+ready`);
  });

  it('persisted snapshots restore to the same state and continue', async () => {
    expect([TEAM_WORKER_MACHINE_VERSION, TEAM_LEADER_MACHINE_VERSION]).toEqual([1, 2]);
    // A worker mid-task: restored, its attempt runs again under the same attempt key.
    tasks.reset();
    const worker = createActor(liveWorker, { input: WORKER }).start();
    worker.send({ type: 'READY' });
    worker.send({ type: 'HEARTBEAT', at: 5 });
    worker.send({ type: 'ASSIGN', task: taskOf(1), attemptKey: attemptKeyOf(1) });
    const saved = JSON.parse(JSON.stringify(worker.getPersistedSnapshot()));
    worker.stop();
    expect(tasks.calls[0]!.signal.aborted).toBe(true);
    const restored = createActor(liveWorker, { snapshot: saved, input: WORKER }).start();
    expect(restored.getSnapshot().value).toEqual({ working: 'active' });
    expect(restored.getSnapshot().context).toEqual(saved.context);
    const rerun = tasks.one();
    expect(rerun.input.attemptKey).toBe(attemptKeyOf(1));
    rerun.resolve({ result: resultOf(1), durationMs: 9 });
    await flush();
    expect(restored.getSnapshot().value).toBe('idle');
    expect(restored.getSnapshot().context).toMatchObject({ completed: 1, totalDurationMs: 9, lastBeat: 5, currentTask: null });

    // A leader paused on an escalation: restored paused, with the same context; RESUME goes on.
    const { actor, send, effects } = leader({ teamId: TEAM, workers: LEADER_WORKERS });
    send({ type: 'START', board: board([{ taskId: 't1', type: 'fe' }], 0, [], 1) });
    send({ type: 'WORKER_IDLE', workerId: 'w1' });
    // A board allowing one attempt: its first failure escalates.
    send({ type: 'TASK_FAILED', workerId: 'w1', taskId: 't1', attemptKey: 'team:t1:1', error: 'nope', durationMs: 2, failures: 1, escalates: true });
    const snapshot = JSON.parse(JSON.stringify(actor.getPersistedSnapshot()));
    actor.stop();
    effects();
    const again = createActor(recordingLeader, { snapshot, input: LEADER_INPUT }).start();
    expect(again.getSnapshot().value).toEqual({ active: 'paused' });
    expect(again.getSnapshot().context).toEqual(snapshot.context);
    // Entry actions are not replayed on restore: no effect is repeated.
    expect(effects()).toEqual([]);
    again.send({ type: 'RESUME', at: 500, decision: 'retry' });
    again.send({ type: 'BOARD_CHANGED', at: 510, board: board([{ taskId: 't1', type: 'fe' }], 0, [], 1) });
    expect(effects()).toEqual(['retry:t1:', 'resume:', 'assign:w1:t1:team:t1:2']);
  });

  it('assignments match task types to worker types, deterministically', () => {
    const { ctx, send } = leader({
      teamId: TEAM,
      workers: [
        { workerId: 'a', type: 'api', specialty: '' },
        { workerId: 'b', type: 'fe', specialty: '' },
        { workerId: 'c', type: 'api', specialty: '' },
      ],
    });
    send({ type: 'START', board: board([], 1, [], 9) });
    for (const id of ['a', 'b', 'c']) send({ type: 'WORKER_IDLE', workerId: id });
    const c: TeamLeaderContext = {
      ...ctx(),
      board: board([{ taskId: 'fe1', type: 'fe' }, { taskId: 'fe2', type: 'fe' }, { taskId: 'db1', type: 'db' }, { taskId: 'any' }], 0, [], 4),
    };
    // fe2 waits for the (busy) fe worker; db has no worker of its type, so anyone takes it.
    expect(planAssignments(c).map((p) => `${p.task.taskId}→${p.worker.workerId}`)).toEqual(['fe1→b', 'db1→a', 'any→c']);
  });

  it('the default runTask slot fails the attempt: the runtime must provide it', async () => {
    const worker = createActor(teamWorkerMachine, { input: WORKER }).start();
    const facts: string[] = [];
    worker.on('team.worker.facts', (e) => facts.push(e.facts.map(workerFactSig).join('+')));
    worker.send({ type: 'READY' });
    worker.send({ type: 'ASSIGN', task: taskOf(1), attemptKey: attemptKeyOf(1) });
    await flush();
    expect(facts.at(-1)).toBe(`failed:t1:${attemptKeyOf(1)}:runTask is provided by the runtime:0+idle`);
  });
});
