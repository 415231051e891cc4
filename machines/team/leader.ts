/**
 * The team leader machine: runs one batch of a team's board with its workers. It assigns
 * claimable tasks to idle workers (matched by type), takes the workers' facts, respawns silent
 * workers (releasing their task), pauses for a human when a task's failures reach the board's `maxAttempts`,
 * reports a board that can no longer progress, and shuts the workers down gracefully at the end.
 *
 * States: `init` → `active` (`active.running` ⇄ `active.paused`) → `draining` (shutdown
 * requested from every worker, each approved as it answers) → `completed` or `stalled`;
 * `STOP` ends any state in `stopped`; a worker silent more than `maxRespawns` times ends the
 * team in `failed`. `stalled` is final on purpose: a board whose remaining tasks are all
 * blocked cannot progress by waiting, so the run ends and reports them (`reportStall`, the
 * output) instead of waiting forever; a human can start another run after fixing the board.
 *
 * Pure and JSON: the board lives in `@xstate/store` (`src/team/board.ts`); the leader only
 * holds the summary it is told (`BOARD_CHANGED`) and decides with guards. Every side effect
 * (spawn, assign, release, pause, shutdown, ...) is a named action whose params say what to
 * do (`TeamLeaderEffects`); the defaults do nothing and the runtime provides them with
 * `teamLeaderMachine.provide({ actions })`. Time comes from the events' `at`.
 *
 * @module
 */
import { assign, enqueueActions, setup } from 'xstate';
import type { BoardSummary, ClaimableTask, EscalationDecision, TeamLeaderEvent } from './events.js';

/**
 * The version stamped on persisted leader snapshots; bump it whenever states, the context or
 * the effects change.
 */
export const TEAM_LEADER_MACHINE_VERSION = 2;

/** Default of `maxRespawns`: a worker respawned this many times and silent again fails the team. */
export const DEFAULT_MAX_RESPAWNS = 3;

/** One worker of the team as its definition gives it. */
export interface TeamWorkerSpec {
  workerId: string;
  type: string;
  specialty: string;
}

/** What the runtime passes to start a leader. */
export interface TeamLeaderInput {
  teamId: string;
  /** At least one worker; the runtime enforces `maxWorkers`. */
  workers: TeamWorkerSpec[];
  limits?: { maxRespawns?: number };
}

/** Where the leader believes a worker is. */
export type LeaderWorkerStatus = 'starting' | 'idle' | 'working' | 'shuttingDown' | 'shutdown';

/** A worker as the leader tracks it, with its per-worker metrics. */
export interface LeaderWorker extends TeamWorkerSpec {
  status: LeaderWorkerStatus;
  taskId: string | null;
  attemptKey: string | null;
  /** `at` of its last (re)spawn and of its last heartbeat: what the watchdog measures from. */
  spawnedAt: number | null;
  lastBeat: number | null;
  completed: number;
  failed: number;
  totalDurationMs: number;
  respawns: number;
}

/** A task whose failures reached the board's `maxAttempts`, waiting for a human's decision. */
export interface Escalation {
  taskId: string;
  workerId: string;
  attemptKey: string;
  error: string;
  failures: number;
  at: number;
}

/** Tasks assigned together in one assignment step; closed when the last of them settles. */
export interface OpenBatch {
  startedAt: number;
  taskIds: string[];
}

/** The counters behind the team's metrics (see `teamMetrics` for the derived figures). */
export interface LeaderCounters {
  startedAt: number | null;
  endedAt: number | null;
  batches: number;
  closedBatches: number;
  batchMsTotal: number;
  /** Worker spawns, respawns included. */
  spawns: number;
  respawns: number;
  /** Inbox messages exchanged: worker facts received, shutdown requests and approvals sent. */
  messages: number;
}

/** How a team run ended; part of the machine's output. */
export type TeamOutcome =
  | { status: 'completed' }
  | { status: 'stalled'; blocked: string[]; remaining: number }
  | { status: 'stopped'; reason: string }
  | { status: 'failed'; reason: string };

/** Why the team is paused. */
export type TeamPause = { reason: 'escalation' } | { reason: 'human'; message?: string };

/** The leader machine's context: everything needed to continue after a restore. */
export interface TeamLeaderContext {
  teamId: string;
  limits: { maxRespawns: number };
  workers: LeaderWorker[];
  board: BoardSummary;
  /**
   * The leader changed the board (completed, failed, released, retried or skipped a task) and
   * was not told the board since: `board` may be out of date, so the run is not declared
   * completed or stalled until the next `BOARD_CHANGED`.
   */
  boardStale: boolean;
  /**
   * Attempts started per task: the attempt number in each attempt key, for tasks whose summary
   * does not carry the board's number ({@link ClaimableTask.attempt}); empty otherwise.
   */
  attempts: Record<string, number>;
  /** Escalations waiting for a human, the one being asked about first. */
  escalations: Escalation[];
  pause: TeamPause | null;
  openBatches: OpenBatch[];
  counters: LeaderCounters;
  /** The latest `at` seen. */
  now: number;
  outcome: TeamOutcome | null;
}

/** Per-worker figures of `TeamMetrics`. */
export interface WorkerMetrics {
  workerId: string;
  completed: number;
  failed: number;
  avgDurationMs: number;
  respawns: number;
}

/** The seed's `SwarmMetrics` as far as one run knows them (speedup is measured by the runtime). */
export interface TeamMetrics {
  startedAt: number | null;
  endedAt: number | null;
  batches: number;
  averageBatchMs: number;
  spawns: number;
  respawns: number;
  messages: number;
  workers: WorkerMetrics[];
}

/** The leader's output. */
export interface TeamLeaderOutput {
  outcome: TeamOutcome;
  metrics: TeamMetrics;
}

/** Params of each effect the runtime provides, by action name. */
export interface TeamLeaderEffects {
  spawnWorker: TeamWorkerSpec;
  respawnWorker: TeamWorkerSpec & { respawns: number };
  /** Claim `taskId` on the board for the worker and send it `ASSIGN` with `attemptKey`. */
  assignTask: { workerId: string; taskId: string; attemptKey: string };
  releaseTask: { workerId: string; taskId: string; attemptKey: string; reason: string };
  completeTask: { workerId: string; taskId: string; attemptKey: string; result: unknown };
  /** `escalated`: the task reached the board's `maxAttempts` and must not be claimable again until a human decides. */
  failTask: { workerId: string; taskId: string; attemptKey: string; error: string; failures: number; escalated: boolean };
  pauseTeam: { reason: 'escalation'; escalation: Escalation } | { reason: 'human'; message?: string };
  resumeTeam: { message?: string };
  retryTask: { taskId: string; message?: string };
  skipTask: { taskId: string; message?: string };
  relayHelp: { workerId: string; message: string; taskId?: string };
  reportStall: { blocked: string[]; remaining: number };
  requestShutdown: { workerId: string };
  approveShutdown: { workerId: string };
  stopWorkers: { reason: string };
}

/** A placeholder effect: does nothing until the runtime provides it. */
function effect<K extends keyof TeamLeaderEffects>(): (_args: unknown, _params: TeamLeaderEffects[K]) => void {
  return () => {};
}

/** The time of an event, never before the latest one seen. */
function clock(context: TeamLeaderContext, event: { type: string }): number {
  const at = (event as { at?: unknown }).at;
  return typeof at === 'number' ? Math.max(context.now, at) : context.now;
}

const workerOf = (context: TeamLeaderContext, workerId: string) => context.workers.find((w) => w.workerId === workerId);
const withWorker = (context: TeamLeaderContext, workerId: string, change: (w: LeaderWorker) => Partial<LeaderWorker>): LeaderWorker[] =>
  context.workers.map((w) => (w.workerId === workerId ? { ...w, ...change(w) } : w));
const live = (w: LeaderWorker) => w.status !== 'shutdown';

/** The worker of an event that names one (undefined for an unknown id). */
function eventWorker(context: TeamLeaderContext, event: TeamLeaderEvent): LeaderWorker | undefined {
  return 'workerId' in event ? workerOf(context, event.workerId) : undefined;
}

/** Whether a task fact is about the attempt its worker holds (late facts of released attempts are not). */
function isCurrentAttempt(context: TeamLeaderContext, event: TeamLeaderEvent): boolean {
  if (event.type !== 'TASK_COMPLETED' && event.type !== 'TASK_FAILED' && event.type !== 'TASK_RELEASED') return false;
  const w = workerOf(context, event.workerId);
  return w !== undefined && w.taskId === event.taskId && w.attemptKey === event.attemptKey;
}

/**
 * Which idle worker gets which claimable task now. A task with a `type` goes to an idle worker
 * of that type, and waits for one while the team has such a worker; a task without a type, or
 * of a type no worker has, goes to any idle worker. Tasks and workers are taken in order, so
 * the plan is deterministic.
 */
export function planAssignments(context: TeamLeaderContext): { task: ClaimableTask; worker: LeaderWorker }[] {
  const held = new Set(context.workers.flatMap((w) => (w.taskId ? [w.taskId] : [])));
  const types = new Set(context.workers.filter(live).map((w) => w.type));
  const idle = context.workers.filter((w) => w.status === 'idle');
  const plan: { task: ClaimableTask; worker: LeaderWorker }[] = [];
  for (const task of context.board.claimable) {
    if (held.has(task.taskId)) continue;
    // A task assigned to a live worker waits for that worker; otherwise the type decides.
    const pinned = task.workerId !== undefined && context.workers.some((w) => w.workerId === task.workerId && live(w));
    const fits = (w: LeaderWorker) => (pinned ? w.workerId === task.workerId : task.type === undefined || !types.has(task.type) || w.type === task.type);
    const i = idle.findIndex(fits);
    if (i < 0) continue;
    plan.push({ task, worker: idle[i]! });
    idle.splice(i, 1);
  }
  return plan;
}

/**
 * Workers silent for longer than `timeoutMs` at `now` (no heartbeat since their last spawn):
 * what the runtime's watchdog reports with `WORKER_SILENT`. Workers shut down or never
 * spawned are not watched.
 */
export function silentWorkers(context: TeamLeaderContext, now: number, timeoutMs: number): string[] {
  return context.workers.flatMap((w) => {
    const since = w.lastBeat ?? w.spawnedAt;
    return live(w) && since !== null && now - since > timeoutMs ? [w.workerId] : [];
  });
}

/** The team's metrics from a leader context (or snapshot context). */
export function teamMetrics(context: TeamLeaderContext): TeamMetrics {
  const c = context.counters;
  return {
    startedAt: c.startedAt,
    endedAt: c.endedAt,
    batches: c.batches,
    averageBatchMs: c.closedBatches === 0 ? 0 : c.batchMsTotal / c.closedBatches,
    spawns: c.spawns,
    respawns: c.respawns,
    messages: c.messages,
    workers: context.workers.map((w) => ({
      workerId: w.workerId,
      completed: w.completed,
      failed: w.failed,
      avgDurationMs: w.completed + w.failed === 0 ? 0 : w.totalDurationMs / (w.completed + w.failed),
      respawns: w.respawns,
    })),
  };
}

/** The task `taskId` settled (completed, failed or released) at `at`: its batch closes when it was the last. */
function settleBatch(context: TeamLeaderContext, taskId: string, at: number): Pick<TeamLeaderContext, 'openBatches' | 'counters'> {
  let counters = context.counters;
  const openBatches = context.openBatches.flatMap((b) => {
    if (!b.taskIds.includes(taskId)) return [b];
    const taskIds = b.taskIds.filter((t) => t !== taskId);
    if (taskIds.length > 0) return [{ ...b, taskIds }];
    counters = { ...counters, closedBatches: counters.closedBatches + 1, batchMsTotal: counters.batchMsTotal + (at - b.startedAt) };
    return [];
  });
  return { openBatches, counters };
}

/**
 * The context after a worker reported the outcome of its current attempt (completed, failed or
 * released): the task's batch settles, the report counts as a message, the board is stale until
 * it is told again, and the worker no longer holds the task (`worker` adds what else changes).
 */
function afterOutcome(
  context: TeamLeaderContext,
  event: { workerId: string; taskId: string },
  at: number,
  worker: (w: LeaderWorker) => Partial<LeaderWorker>,
): Partial<TeamLeaderContext> {
  const settled = settleBatch(context, event.taskId, at);
  return {
    now: at,
    ...settled,
    boardStale: true,
    counters: { ...settled.counters, messages: settled.counters.messages + 1 },
    workers: withWorker(context, event.workerId, (w) => ({ taskId: null, attemptKey: null, ...worker(w) })),
  };
}

const message = (context: TeamLeaderContext, n = 1): LeaderCounters => ({ ...context.counters, messages: context.counters.messages + n });

/** The leader machine. The runtime provides the effects (`TeamLeaderEffects`). */
export const teamLeaderMachine = setup({
  types: {} as {
    context: TeamLeaderContext;
    input: TeamLeaderInput;
    output: TeamLeaderOutput;
    events: TeamLeaderEvent;
  },
  guards: {
    allSettled: ({ context }) => !context.boardStale && context.board.remaining === 0 && !context.workers.some((w) => w.status === 'working'),
    // Nothing is running and nothing can start: every remaining task waits on something that
    // will not happen by waiting (a failed or skipped dependency).
    stuck: ({ context }) =>
      !context.boardStale &&
      context.board.remaining > 0 &&
      context.board.inProgress === 0 &&
      !context.workers.some((w) => w.status === 'working') &&
      (context.board.claimable.length === 0 || !context.workers.some(live)),
    canAssign: ({ context }) => planAssignments(context).length > 0,
    currentAttempt: ({ context, event }) => isCurrentAttempt(context, event),
    escalates: ({ context, event }) => isCurrentAttempt(context, event) && event.type === 'TASK_FAILED' && event.escalates,
    liveWorker: ({ context, event }) => {
      const w = eventWorker(context, event);
      return w !== undefined && live(w);
    },
    knownWorker: ({ context, event }) => eventWorker(context, event) !== undefined,
    respawnsExhausted: ({ context, event }) => {
      const w = eventWorker(context, event);
      return w !== undefined && live(w) && w.respawns >= context.limits.maxRespawns;
    },
    shuttingDownWorker: ({ context, event }) => eventWorker(context, event)?.status === 'shuttingDown',
    // The escalation being answered is not the last one waiting.
    escalationsRemain: ({ context }) => context.escalations.length - (context.pause?.reason === 'escalation' ? 1 : 0) > 0,
    drained: ({ context }) => !context.workers.some(live),
    drainedCompleted: ({ context }) => !context.workers.some(live) && context.outcome?.status === 'completed',
  },
  actions: {
    spawnWorker: effect<'spawnWorker'>(),
    respawnWorker: effect<'respawnWorker'>(),
    assignTask: effect<'assignTask'>(),
    releaseTask: effect<'releaseTask'>(),
    completeTask: effect<'completeTask'>(),
    failTask: effect<'failTask'>(),
    pauseTeam: effect<'pauseTeam'>(),
    resumeTeam: effect<'resumeTeam'>(),
    retryTask: effect<'retryTask'>(),
    skipTask: effect<'skipTask'>(),
    relayHelp: effect<'relayHelp'>(),
    reportStall: effect<'reportStall'>(),
    requestShutdown: effect<'requestShutdown'>(),
    approveShutdown: effect<'approveShutdown'>(),
    stopWorkers: effect<'stopWorkers'>(),

    start: enqueueActions(({ context, event, enqueue }) => {
      if (event.type !== 'START') return;
      const at = clock(context, event);
      for (const w of context.workers) enqueue({ type: 'spawnWorker', params: { workerId: w.workerId, type: w.type, specialty: w.specialty } });
      enqueue.assign({
        now: at,
        board: event.board,
        boardStale: false,
        workers: context.workers.map((w) => ({ ...w, status: 'starting' as const, spawnedAt: at })),
        counters: { ...context.counters, startedAt: at, spawns: context.counters.spawns + context.workers.length },
      });
    }),
    takeBoard: assign(({ context, event }) => (event.type === 'BOARD_CHANGED' ? { now: clock(context, event), board: event.board, boardStale: false } : {})),
    assignTasks: enqueueActions(({ context, enqueue }) => {
      const plan = planAssignments(context);
      const attempts = plan.every((p) => p.task.attempt !== undefined) ? context.attempts : { ...context.attempts };
      let workers = context.workers;
      for (const { task, worker } of plan) {
        // The board numbers attempts (its summary says which one a claim starts): the leader then
        // keeps no count per task, so its context, persisted at every change, stays as small on a
        // board of 100,000 tasks as on one of 10. Counted here only for a summary that does not say.
        const attempt = task.attempt ?? (attempts[task.taskId] ?? 0) + 1;
        if (task.attempt === undefined) attempts[task.taskId] = attempt;
        const attemptKey = `${context.teamId}:${task.taskId}:${attempt}`;
        enqueue({ type: 'assignTask', params: { workerId: worker.workerId, taskId: task.taskId, attemptKey } });
        workers = workers.map((w) => (w.workerId === worker.workerId ? { ...w, status: 'working' as const, taskId: task.taskId, attemptKey } : w));
      }
      const assigned = new Set(plan.map((p) => p.task.taskId));
      enqueue.assign({
        attempts,
        workers,
        // The board will say so itself (BOARD_CHANGED); until then the claims are assumed made.
        board: {
          ...context.board,
          claimable: context.board.claimable.filter((t) => !assigned.has(t.taskId)),
          inProgress: context.board.inProgress + plan.length,
        },
        openBatches: [...context.openBatches, { startedAt: context.now, taskIds: [...assigned] }],
        counters: { ...context.counters, batches: context.counters.batches + 1 },
      });
    }),
    workerIdle: enqueueActions(({ context, event, enqueue }) => {
      if (event.type !== 'WORKER_IDLE') return;
      const w = workerOf(context, event.workerId);
      const at = clock(context, event);
      let settled = { openBatches: context.openBatches, counters: context.counters };
      // Idle while the leader thinks it works: the fact about its task was lost, so the claim
      // goes back to the board rather than being held forever.
      if (w?.taskId && w.attemptKey) {
        enqueue({ type: 'releaseTask', params: { workerId: w.workerId, taskId: w.taskId, attemptKey: w.attemptKey, reason: 'worker idle without reporting its task' } });
        settled = settleBatch(context, w.taskId, at);
      }
      enqueue.assign({
        now: at,
        ...settled,
        boardStale: context.boardStale || Boolean(w?.taskId),
        counters: { ...settled.counters, messages: settled.counters.messages + 1 },
        workers: withWorker(context, event.workerId, (x) => (x.status === 'shuttingDown' ? {} : { status: 'idle', taskId: null, attemptKey: null })),
      });
    }),
    countMessage: assign(({ context, event }) => ({ now: clock(context, event), counters: message(context) })),
    recordCompletion: enqueueActions(({ context, event, enqueue }) => {
      if (event.type !== 'TASK_COMPLETED') return;
      const at = clock(context, event);
      enqueue({ type: 'completeTask', params: { workerId: event.workerId, taskId: event.taskId, attemptKey: event.attemptKey, result: event.result } });
      enqueue.assign(afterOutcome(context, event, at, (w) => ({ status: 'idle', completed: w.completed + 1, totalDurationMs: w.totalDurationMs + event.durationMs })));
    }),
    recordFailure: enqueueActions(({ context, event, enqueue }) => {
      if (event.type !== 'TASK_FAILED') return;
      const at = clock(context, event);
      const { failures, escalates: escalated } = event;
      enqueue({
        type: 'failTask',
        params: { workerId: event.workerId, taskId: event.taskId, attemptKey: event.attemptKey, error: event.error, failures, escalated },
      });
      const escalation: Escalation = { taskId: event.taskId, workerId: event.workerId, attemptKey: event.attemptKey, error: event.error, failures, at };
      enqueue.assign({
        ...afterOutcome(context, event, at, (w) => ({ status: 'idle', failed: w.failed + 1, totalDurationMs: w.totalDurationMs + event.durationMs })),
        escalations: escalated ? [...context.escalations, escalation] : context.escalations,
      });
    }),
    recordRelease: enqueueActions(({ context, event, enqueue }) => {
      if (event.type !== 'TASK_RELEASED') return;
      const at = clock(context, event);
      enqueue({ type: 'releaseTask', params: { workerId: event.workerId, taskId: event.taskId, attemptKey: event.attemptKey, reason: event.reason } });
      // What the worker does next it says itself (idle_notification or shutdown_ready).
      enqueue.assign(afterOutcome(context, event, at, (w) => ({ status: w.status === 'working' ? 'idle' : w.status })));
    }),
    takeHelp: enqueueActions(({ context, event, enqueue }) => {
      if (event.type !== 'HELP_REQUEST') return;
      enqueue({
        type: 'relayHelp',
        params: { workerId: event.workerId, message: event.message, ...(event.taskId !== undefined ? { taskId: event.taskId } : {}) },
      });
      enqueue.assign({ now: clock(context, event), counters: message(context) });
    }),
    beat: assign(({ context, event }) =>
      event.type === 'HEARTBEAT' ? { now: clock(context, event), workers: withWorker(context, event.workerId, () => ({ lastBeat: event.at })) } : {},
    ),
    // A silent worker: its task goes back to the board, and a fresh worker takes its place.
    respawn: enqueueActions(({ context, event, enqueue }) => {
      const w = eventWorker(context, event);
      if (!w || event.type !== 'WORKER_SILENT') return;
      const at = clock(context, event);
      let settled = { openBatches: context.openBatches, counters: context.counters };
      if (w.taskId && w.attemptKey) {
        enqueue({ type: 'releaseTask', params: { workerId: w.workerId, taskId: w.taskId, attemptKey: w.attemptKey, reason: 'worker silent' } });
        settled = settleBatch(context, w.taskId, at);
      }
      const respawns = w.respawns + 1;
      enqueue({ type: 'respawnWorker', params: { workerId: w.workerId, type: w.type, specialty: w.specialty, respawns } });
      enqueue.assign({
        now: at,
        ...settled,
        boardStale: context.boardStale || w.taskId !== null,
        counters: { ...settled.counters, spawns: settled.counters.spawns + 1, respawns: settled.counters.respawns + 1 },
        workers: withWorker(context, w.workerId, () => ({ status: 'starting', taskId: null, attemptKey: null, respawns, spawnedAt: at, lastBeat: null })),
      });
    }),
    // A worker gone while the team shuts down (silent, or past its respawns): not replaced.
    retire: enqueueActions(({ context, event, enqueue }) => {
      const w = eventWorker(context, event);
      if (!w) return;
      const at = clock(context, event);
      let settled = { openBatches: context.openBatches, counters: context.counters };
      if (w.taskId && w.attemptKey) {
        enqueue({ type: 'releaseTask', params: { workerId: w.workerId, taskId: w.taskId, attemptKey: w.attemptKey, reason: 'worker silent' } });
        settled = settleBatch(context, w.taskId, at);
      }
      enqueue.assign({
        now: at,
        ...settled,
        boardStale: context.boardStale || w.taskId !== null,
        workers: withWorker(context, w.workerId, () => ({ status: 'shutdown', taskId: null, attemptKey: null })),
      });
    }),
    failTeam: enqueueActions(({ context, event, enqueue }) => {
      const w = eventWorker(context, event);
      const reason = `worker ${w?.workerId ?? '?'} went silent again after ${w?.respawns ?? 0} respawns`;
      enqueue({ type: 'stopWorkers', params: { reason } });
      enqueue.assign({ outcome: { status: 'failed', reason } });
    }),
    pauseForHuman: enqueueActions(({ context, event, enqueue }) => {
      if (event.type !== 'PAUSE') return;
      const pause: TeamPause = event.message !== undefined ? { reason: 'human', message: event.message } : { reason: 'human' };
      enqueue({ type: 'pauseTeam', params: pause });
      enqueue.assign({ now: clock(context, event), pause });
    }),
    // Runs after the failure was recorded (or the previous escalation answered): asks about the first waiting one.
    pauseForEscalation: enqueueActions(({ context, enqueue }) => {
      const escalation = context.escalations[0];
      if (!escalation) return;
      enqueue({ type: 'pauseTeam', params: { reason: 'escalation', escalation } });
      enqueue.assign({ pause: { reason: 'escalation' } });
    }),
    resume: enqueueActions(({ context, event, enqueue }) => {
      if (event.type !== 'RESUME') return;
      const msg = event.message !== undefined ? { message: event.message } : {};
      const answered = context.pause?.reason === 'escalation' ? context.escalations[0] : undefined;
      if (answered) {
        const decision: EscalationDecision = event.decision ?? 'retry';
        if (decision === 'retry') {
          // The board gives a retried task a fresh round of `maxAttempts`.
          enqueue({ type: 'retryTask', params: { taskId: answered.taskId, ...msg } });
        } else {
          enqueue({ type: 'skipTask', params: { taskId: answered.taskId, ...msg } });
        }
      }
      enqueue({ type: 'resumeTeam', params: msg });
      enqueue.assign({
        now: clock(context, event),
        pause: null,
        boardStale: context.boardStale || answered !== undefined,
        escalations: answered ? context.escalations.slice(1) : context.escalations,
      });
    }),
    endCompleted: assign({ outcome: { status: 'completed' } }),
    endStalled: enqueueActions(({ context, enqueue }) => {
      const report = { blocked: context.board.blocked, remaining: context.board.remaining };
      enqueue({ type: 'reportStall', params: report });
      enqueue.assign({ outcome: { status: 'stalled', ...report } });
    }),
    requestShutdowns: enqueueActions(({ context, enqueue }) => {
      const leaving = context.workers.filter(live);
      for (const w of leaving) enqueue({ type: 'requestShutdown', params: { workerId: w.workerId } });
      enqueue.assign({
        workers: context.workers.map((w) => (live(w) ? { ...w, status: 'shuttingDown' as const } : w)),
        counters: message(context, leaving.length),
      });
    }),
    approve: enqueueActions(({ context, event, enqueue }) => {
      if (event.type !== 'WORKER_SHUTDOWN_READY') return;
      enqueue({ type: 'approveShutdown', params: { workerId: event.workerId } });
      enqueue.assign({
        now: clock(context, event),
        // The worker's answer and the approval.
        counters: message(context, 2),
        workers: withWorker(context, event.workerId, () => ({ status: 'shutdown' })),
      });
    }),
    stop: enqueueActions(({ context, event, enqueue }) => {
      const reason = event.type === 'STOP' ? event.reason : 'stopped';
      enqueue({ type: 'stopWorkers', params: { reason } });
      enqueue.assign({ now: clock(context, event), outcome: { status: 'stopped', reason } });
    }),
    finish: assign(({ context }) => ({ counters: { ...context.counters, endedAt: context.now } })),
  },
}).createMachine({
  id: 'teamLeader',
  context: ({ input }) => ({
    teamId: input.teamId,
    limits: { maxRespawns: input.limits?.maxRespawns ?? DEFAULT_MAX_RESPAWNS },
    workers: input.workers.map((w) => ({
      workerId: w.workerId,
      type: w.type,
      specialty: w.specialty,
      status: 'starting' as const,
      taskId: null,
      attemptKey: null,
      spawnedAt: null,
      lastBeat: null,
      completed: 0,
      failed: 0,
      totalDurationMs: 0,
      respawns: 0,
    })),
    board: { claimable: [], inProgress: 0, blocked: [], remaining: 0 },
    boardStale: false,
    attempts: {},
    escalations: [],
    pause: null,
    openBatches: [],
    counters: { startedAt: null, endedAt: null, batches: 0, closedBatches: 0, batchMsTotal: 0, spawns: 0, respawns: 0, messages: 0 },
    now: 0,
    outcome: null,
  }),
  on: {
    HEARTBEAT: { guard: 'knownWorker', actions: 'beat' },
    STOP: { target: '.stopped', actions: 'stop' },
  },
  initial: 'init',
  states: {
    init: {
      on: { START: { target: 'active', actions: 'start' } },
    },
    active: {
      on: {
        BOARD_CHANGED: { actions: 'takeBoard' },
        WORKER_IDLE: [{ guard: 'liveWorker', actions: 'workerIdle' }, { actions: 'countMessage' }],
        TASK_COMPLETED: [{ guard: 'currentAttempt', actions: 'recordCompletion' }, { actions: 'countMessage' }],
        TASK_FAILED: [{ guard: 'currentAttempt', actions: 'recordFailure' }, { actions: 'countMessage' }],
        TASK_RELEASED: [{ guard: 'currentAttempt', actions: 'recordRelease' }, { actions: 'countMessage' }],
        HELP_REQUEST: { actions: 'takeHelp' },
        WORKER_SILENT: [
          { guard: 'respawnsExhausted', target: 'failed', actions: ['retire', 'failTeam'] },
          { guard: 'liveWorker', actions: 'respawn' },
        ],
      },
      initial: 'running',
      states: {
        running: {
          always: [
            { guard: 'allSettled', target: '#teamLeader.draining', actions: 'endCompleted' },
            { guard: 'stuck', target: '#teamLeader.draining', actions: 'endStalled' },
            { guard: 'canAssign', actions: 'assignTasks' },
          ],
          on: {
            TASK_FAILED: { guard: 'escalates', target: 'paused', actions: ['recordFailure', 'pauseForEscalation'] },
            PAUSE: { target: 'paused', actions: 'pauseForHuman' },
          },
        },
        // No assignments while paused; workers finish what they hold and their facts are taken.
        paused: {
          on: {
            RESUME: [
              { guard: 'escalationsRemain', target: 'paused', actions: ['resume', 'pauseForEscalation'] },
              { target: 'running', actions: 'resume' },
            ],
          },
        },
      },
    },
    // Every task is settled (or blocked for good) and no worker holds one: only the shutdown
    // handshake and silences matter now; other facts change nothing.
    draining: {
      entry: 'requestShutdowns',
      always: [
        { guard: 'drainedCompleted', target: 'completed' },
        { guard: 'drained', target: 'stalled' },
      ],
      on: {
        WORKER_SHUTDOWN_READY: { guard: 'shuttingDownWorker', actions: 'approve' },
        WORKER_SILENT: { guard: 'liveWorker', actions: 'retire' },
      },
    },
    completed: { type: 'final', entry: 'finish' },
    stalled: { type: 'final', entry: 'finish' },
    stopped: { type: 'final', entry: 'finish' },
    failed: { type: 'final', entry: 'finish' },
  },
  output: ({ context }) => ({
    outcome: context.outcome ?? { status: 'failed', reason: 'Team ended without an outcome.' },
    metrics: teamMetrics(context),
  }),
});
