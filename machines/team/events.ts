/**
 * What the team machines (`team-worker.ts`, `team-leader.ts`) exchange with the runtime: the
 * task a worker runs, the facts a worker reports, the board summary the leader decides on, and
 * the events each machine accepts. Everything here is JSON, so snapshots and facts persist and
 * travel (NATS) as they are.
 *
 * Time is never read inside the machines: every event that needs it carries `at` (epoch ms,
 * stamped by the runtime), which keeps both machines deterministic given their events.
 *
 * @module
 */

/** The part of a board task a worker needs to do it (the board itself lives in `src/team/`). */
export interface TeamTask {
  taskId: string;
  subject: string;
  description: string;
  /** Free-form task metadata from the board (`type`, `complexity`, ...). */
  metadata?: Record<string, unknown>;
}

/**
 * A fact a worker reports. The runtime turns each into an inbox message to the leader (the
 * seed's `task_completed`, `task_failed`, `idle_notification`) or a team event, and feeds the
 * matching leader event (`TeamLeaderEvent`).
 */
export type WorkerFact =
  | { type: 'idle_notification' }
  | { type: 'task_completed'; taskId: string; attemptKey: string; result: unknown; durationMs: number }
  | { type: 'task_failed'; taskId: string; attemptKey: string; error: string; durationMs: number }
  /** The worker gave a task back without finishing it (shutdown with release, stop, or busy). */
  | { type: 'task_released'; taskId: string; attemptKey: string; reason: string }
  /** A shutdown was requested and the worker holds no task any more: it waits for approval. */
  | { type: 'shutdown_ready' }
  | { type: 'worker_shutdown' }
  | { type: 'worker_stopped'; reason: string };

/** The worker machine's single emitted event type: the facts of one transition, in order. */
export interface WorkerFacts {
  type: 'team.worker.facts';
  teamId: string;
  workerId: string;
  facts: WorkerFact[];
}

/** Events the worker machine accepts (besides its `runTask` actor's done/error events). */
export type TeamWorkerEvent =
  /** The worker's process is initialized and can take tasks. */
  | { type: 'READY' }
  /** The leader claimed `task` for this worker; `attemptKey` is the idempotency key of the attempt. */
  | { type: 'ASSIGN'; task: TeamTask; attemptKey: string }
  | { type: 'HEARTBEAT'; at: number }
  /**
   * Graceful shutdown: a worker holding a task finishes it first, unless `release` asks it to
   * give the task back at once. Either way it then waits for `SHUTDOWN_APPROVED`.
   */
  | { type: 'SHUTDOWN_REQUEST'; release?: boolean }
  | { type: 'SHUTDOWN_APPROVED' }
  /** Hard stop: the running task is aborted and released. */
  | { type: 'STOP'; reason: string };

/** A claimable task as the leader sees it: id and the `type` its worker should have, if any. */
export interface ClaimableTask {
  taskId: string;
  type?: string;
  /** The attempt a claim of the task starts now (the board's count + 1); absent: the leader counts. */
  attempt?: number;
  /** The worker the task is assigned to (`updateTask(id, { assignTo })`): it waits for that worker while it is live. */
  workerId?: string;
}

/**
 * What the leader knows of the board, as the runtime tells it (`BOARD_CHANGED`). `remaining`
 * counts tasks not settled yet (pending, in progress, blocked); `blocked` names the tasks that
 * wait on a failed or unfinished dependency. `claimable` need not list every claimable task,
 * only those the team's workers could start now (in board order: for each worker type, as many
 * of its tasks as it has workers, and as many of the tasks any worker takes as there are
 * workers): the leader's plan is the same, and the summary (which the leader keeps in its
 * context, persisted at every change) stays the size of the team, not of the board. It is empty
 * only when no task is claimable. `blocked` may likewise name only the first blocked tasks (the
 * runtime names 100 at most, and reports a stall with all of them).
 */
export interface BoardSummary {
  claimable: ClaimableTask[];
  inProgress: number;
  blocked: string[];
  remaining: number;
}

/** How a human answers an escalation: run the task again, or give it up (its dependents stay blocked). */
export type EscalationDecision = 'retry' | 'skip';

/**
 * Events the leader machine accepts. Each carries `at` (epoch ms) stamped by the runtime; the
 * worker facts come from the workers' `WorkerFacts` (same `workerId`).
 */
export type TeamLeaderEvent =
  /** `run(tasks)`: the board as it is when the run starts. */
  | { type: 'START'; at: number; board: BoardSummary }
  | { type: 'BOARD_CHANGED'; at: number; board: BoardSummary }
  /** A worker is ready for a task (initialized, or done with its last one). */
  | { type: 'WORKER_IDLE'; at: number; workerId: string }
  | { type: 'TASK_COMPLETED'; at: number; workerId: string; taskId: string; attemptKey: string; result: unknown; durationMs: number }
  /**
   * `failures` and `escalates` are the board's (`TaskBoard.failureOutcome`): the board is the one
   * counter of a task's failures, and the leader decides on its figures.
   */
  | { type: 'TASK_FAILED'; at: number; workerId: string; taskId: string; attemptKey: string; error: string; durationMs: number; failures: number; escalates: boolean }
  | { type: 'TASK_RELEASED'; at: number; workerId: string; taskId: string; attemptKey: string; reason: string }
  | { type: 'HELP_REQUEST'; at: number; workerId: string; message: string; taskId?: string }
  | { type: 'HEARTBEAT'; at: number; workerId: string }
  /** The runtime's watchdog found no heartbeat within `workerTimeout` (see `silentWorkers`). */
  | { type: 'WORKER_SILENT'; at: number; workerId: string }
  | { type: 'WORKER_SHUTDOWN_READY'; at: number; workerId: string }
  /** A human pauses the team (the usual pause API). */
  | { type: 'PAUSE'; at: number; message?: string }
  /** A human answers: continues a paused team, deciding the escalated task's fate. */
  | { type: 'RESUME'; at: number; message?: string; decision?: EscalationDecision }
  | { type: 'STOP'; at: number; reason: string };
