/**
 * The team worker machine: one persistent worker of a team. It is told it is ready, takes the
 * tasks its leader assigns one at a time, reports each outcome as a fact, and shuts down
 * gracefully (request → finish or release its task → approval) or is stopped.
 *
 * States: `init` → `idle` ⇄ `working` (`working.active`, or `working.finishing` once a shutdown
 * was requested) → `shuttingDown` (no task held, waiting for `SHUTDOWN_APPROVED`) → `shutdown`;
 * `STOP` ends any state in `stopped`. Heartbeats are recorded in every state: the worker has
 * no timers, the leader's watchdog decides who is silent.
 *
 * Pure: the work on a task (an LLM conversation with fresh context, a swarm of its own) is the
 * `runTask` actor slot, provided by the runtime with `teamWorkerMachine.provide({ actors })`;
 * declared by key so every snapshot persists. A restored snapshot re-runs an unfinished task
 * with the same `attemptKey`, which is what makes the re-run idempotent.
 *
 * @module
 */
import { assign, emit, fromPromise, setup, stateIn } from 'xstate';
import { errorText } from '../error-text.js';
import type { TeamTask, TeamWorkerEvent, WorkerFact, WorkerFacts } from './events.js';

/**
 * The version stamped on persisted worker snapshots; bump it whenever states, actor keys, the
 * context or the facts change.
 */
export const TEAM_WORKER_MACHINE_VERSION = 1;

/** What the runtime passes to start (or respawn) a worker. */
export interface TeamWorkerInput {
  workerId: string;
  teamId: string;
  /** The kind of worker (`frontend`, `api`, ...): tasks of this type go to it first. */
  type: string;
  /** What the worker is good at: given to its task swarm. */
  specialty: string;
  /** How many times this worker was respawned before (0 for a first spawn). */
  respawns?: number;
  /**
   * The counts of the worker this one replaces without a respawn (its attempt stopped by the
   * user, see `TeamHost.updateTask`): they go on from there. Absent: from 0.
   */
  carried?: { completed: number; failed: number; totalDurationMs: number };
}

/** Input of the `runTask` actor: one attempt of one task, by a worker of a given specialty. */
export interface TaskRunInput {
  teamId: string;
  workerId: string;
  type: string;
  specialty: string;
  task: TeamTask;
  /** Stable across restarts of the same attempt: the idempotency key of everything it does. */
  attemptKey: string;
}

/** Output of the `runTask` actor: the task's result and how long the attempt took. */
export interface TaskRunOutput {
  result: unknown;
  durationMs: number;
}

/**
 * Slot of a task attempt. Resolves with the result, or throws: the error's text becomes the
 * `task_failed` fact (a numeric `durationMs` property on the error, if any, its duration).
 */
const runTaskSlot = fromPromise<TaskRunOutput, TaskRunInput>(async () => {
  throw new Error('runTask is provided by the runtime');
});

/** The task a worker holds. */
export interface HeldTask {
  task: TeamTask;
  attemptKey: string;
}

/** The worker machine's context: everything needed to continue after a restore. */
export interface TeamWorkerContext {
  workerId: string;
  teamId: string;
  type: string;
  specialty: string;
  currentTask: HeldTask | null;
  completed: number;
  failed: number;
  /** Sum of the durations of every finished attempt (completed or failed). */
  totalDurationMs: number;
  respawns: number;
  /** `at` of the last heartbeat, or null before the first. */
  lastBeat: number | null;
  /** Why the worker was stopped, once it was. */
  stopReason: string | null;
}

/** How a worker ended; also the machine's output. */
export interface TeamWorkerOutput {
  status: 'shutdown' | 'stopped';
  reason?: string;
  completed: number;
  failed: number;
  totalDurationMs: number;
  respawns: number;
}

type TaskDone = { output: TaskRunOutput };
type TaskError = { error: unknown };

const durationOf = (error: unknown): number => {
  const d = (error as { durationMs?: unknown } | null)?.durationMs;
  return typeof d === 'number' && Number.isFinite(d) ? d : 0;
};

const facts = (context: TeamWorkerContext, list: WorkerFact[]): WorkerFacts => ({
  type: 'team.worker.facts',
  teamId: context.teamId,
  workerId: context.workerId,
  facts: list,
});

const released = (held: HeldTask, reason: string): WorkerFact => ({
  type: 'task_released',
  taskId: held.task.taskId,
  attemptKey: held.attemptKey,
  reason,
});

/** The worker machine. The runtime provides `runTask`. */
export const teamWorkerMachine = setup({
  types: {} as {
    context: TeamWorkerContext;
    input: TeamWorkerInput;
    output: TeamWorkerOutput;
    events: TeamWorkerEvent;
    emitted: WorkerFacts;
  },
  actors: { runTask: runTaskSlot },
  guards: {
    releases: ({ event }) => event.type === 'SHUTDOWN_REQUEST' && event.release === true,
    finishing: stateIn({ working: 'finishing' }),
  },
  actions: {
    takeTask: assign(({ event }) => (event.type === 'ASSIGN' ? { currentTask: { task: event.task, attemptKey: event.attemptKey } } : {})),
    // An ASSIGN the worker cannot take (not ready, busy, shutting down) goes straight back, so
    // the leader releases the claim: a task is never dropped silently.
    bounceTask: emit(({ context, event }) =>
      facts(context, event.type === 'ASSIGN' ? [released({ task: event.task, attemptKey: event.attemptKey }, 'worker cannot take a task now')] : []),
    ),
    beat: assign(({ event }) => (event.type === 'HEARTBEAT' ? { lastBeat: event.at } : {})),
    // The task's outcome is reported first, then what the worker does next (the params).
    reportDone: emit(({ context, event }, params: { next: WorkerFact[] }) => {
      const held = context.currentTask!;
      const out = (event as unknown as TaskDone).output;
      return facts(context, [
        { type: 'task_completed', taskId: held.task.taskId, attemptKey: held.attemptKey, result: out.result, durationMs: out.durationMs },
        ...params.next,
      ]);
    }),
    recordDone: assign(({ context, event }) => ({
      currentTask: null,
      completed: context.completed + 1,
      totalDurationMs: context.totalDurationMs + (event as unknown as TaskDone).output.durationMs,
    })),
    reportFailure: emit(({ context, event }, params: { next: WorkerFact[] }) => {
      const held = context.currentTask!;
      const error = (event as unknown as TaskError).error;
      return facts(context, [
        { type: 'task_failed', taskId: held.task.taskId, attemptKey: held.attemptKey, error: errorText(error), durationMs: durationOf(error) },
        ...params.next,
      ]);
    }),
    recordFailure: assign(({ context, event }) => ({
      currentTask: null,
      failed: context.failed + 1,
      totalDurationMs: context.totalDurationMs + durationOf((event as unknown as TaskError).error),
    })),
    releaseForShutdown: emit(({ context }) =>
      facts(context, [...(context.currentTask ? [released(context.currentTask, 'worker shutting down')] : []), { type: 'shutdown_ready' }]),
    ),
    dropTask: assign({ currentTask: null }),
    markStopped: assign(({ event }) => ({ currentTask: null, stopReason: event.type === 'STOP' ? event.reason : 'stopped' })),
    announce: emit(({ context }, params: { fact: WorkerFact }) => facts(context, [params.fact])),
    stop: emit(({ context, event }) => {
      const reason = event.type === 'STOP' ? event.reason : 'stopped';
      return facts(context, [...(context.currentTask ? [released(context.currentTask, `worker stopped: ${reason}`)] : []), { type: 'worker_stopped', reason }]);
    }),
  },
}).createMachine({
  id: 'teamWorker',
  context: ({ input }) => ({
    workerId: input.workerId,
    teamId: input.teamId,
    type: input.type,
    specialty: input.specialty,
    currentTask: null,
    completed: input.carried?.completed ?? 0,
    failed: input.carried?.failed ?? 0,
    totalDurationMs: input.carried?.totalDurationMs ?? 0,
    respawns: input.respawns ?? 0,
    lastBeat: null,
    stopReason: null,
  }),
  on: {
    HEARTBEAT: { actions: 'beat' },
    ASSIGN: { actions: 'bounceTask' },
    STOP: { target: '.stopped', actions: ['stop', 'markStopped'] },
  },
  initial: 'init',
  states: {
    init: {
      on: {
        READY: { target: 'idle', actions: { type: 'announce', params: { fact: { type: 'idle_notification' } } } },
        SHUTDOWN_REQUEST: { target: 'shuttingDown', actions: 'releaseForShutdown' },
      },
    },
    idle: {
      on: {
        ASSIGN: { target: 'working', actions: 'takeTask' },
        SHUTDOWN_REQUEST: { target: 'shuttingDown', actions: 'releaseForShutdown' },
      },
    },
    working: {
      invoke: {
        id: 'task',
        src: 'runTask',
        input: ({ context }) => ({
          teamId: context.teamId,
          workerId: context.workerId,
          type: context.type,
          specialty: context.specialty,
          task: context.currentTask!.task,
          attemptKey: context.currentTask!.attemptKey,
        }),
        onDone: [
          {
            guard: 'finishing',
            target: 'shuttingDown',
            actions: [{ type: 'reportDone', params: { next: [{ type: 'shutdown_ready' }] } }, 'recordDone'],
          },
          { target: 'idle', actions: [{ type: 'reportDone', params: { next: [{ type: 'idle_notification' }] } }, 'recordDone'] },
        ],
        onError: [
          {
            guard: 'finishing',
            target: 'shuttingDown',
            actions: [{ type: 'reportFailure', params: { next: [{ type: 'shutdown_ready' }] } }, 'recordFailure'],
          },
          { target: 'idle', actions: [{ type: 'reportFailure', params: { next: [{ type: 'idle_notification' }] } }, 'recordFailure'] },
        ],
      },
      on: {
        // Leaving `working` stops the task actor (its signal aborts) before the fact is reported.
        SHUTDOWN_REQUEST: [{ guard: 'releases', target: 'shuttingDown', actions: ['releaseForShutdown', 'dropTask'] }, { target: '.finishing' }],
      },
      initial: 'active',
      states: {
        active: {},
        // A shutdown was requested: the task runs to its end, then the worker waits for approval.
        finishing: {},
      },
    },
    shuttingDown: {
      on: {
        SHUTDOWN_APPROVED: { target: 'shutdown', actions: { type: 'announce', params: { fact: { type: 'worker_shutdown' } } } },
      },
    },
    shutdown: { type: 'final' },
    stopped: { type: 'final' },
  },
  output: ({ context }) => ({
    status: context.stopReason === null ? 'shutdown' : 'stopped',
    ...(context.stopReason === null ? {} : { reason: context.stopReason }),
    completed: context.completed,
    failed: context.failed,
    totalDurationMs: context.totalDurationMs,
    respawns: context.respawns,
  }),
});
