/**
 * The shapes of the task board: tasks, what a caller gives to create one, the facts a change
 * yields and the JSON snapshot a board is persisted as (with its runtime schema, so a snapshot
 * read back from a store is checked before a board is rebuilt from it).
 *
 * @module
 */
import { z } from 'zod';
import { TeamError } from '../errors.js';
import type { TeamLimits } from '../define/team-limits.js';
import type { Task, TaskMetadata, TaskSpec } from '../define/team.js';

/** A successful claim: the task now owned by the claimer and the attempt it started. */
export interface Claim {
  readonly task: Task;
  /** The attempt number (1 for the first claim of the task). */
  readonly attempt: number;
  /**
   * `${boardId}:${taskId}:${attempt}`: unique per attempt, so side effects of an attempt
   * (a worker swarm id, a committed result) are not repeated when the attempt is replayed.
   */
  readonly key: string;
}

/** A task that cannot run because a task it depends on (directly or not) failed or escalated. */
export interface BlockedTask {
  readonly taskId: string;
  /** The failed or escalated tasks upstream, in board order. */
  readonly blockedBy: readonly string[];
}

/** How many tasks are where; `claimable` and `blocked` are subsets of `pending`. */
export interface BoardCounts {
  readonly total: number;
  readonly pending: number;
  readonly in_progress: number;
  readonly completed: number;
  readonly failed: number;
  readonly escalated: number;
  readonly claimable: number;
  readonly blocked: number;
}

interface FactBase {
  readonly boardId: string;
  readonly taskId: string;
  /** The board version the change produced (facts of one change share it). */
  readonly version: number;
  readonly at: number;
}

/**
 * What happened on a board, one per task and change, for the team's event stream. A failure
 * that reaches `maxAttempts` yields `task-failed` then `task-escalated`.
 */
export type BoardFact =
  | (FactBase & { readonly type: 'task-created'; readonly subject: string; readonly metadata: TaskMetadata; readonly dependencies: readonly string[] })
  | (FactBase & { readonly type: 'task-claimed'; readonly owner: string; readonly attempt: number; readonly key: string })
  | (FactBase & { readonly type: 'task-completed'; readonly owner: string; readonly attempt: number; readonly result?: unknown })
  | (FactBase & {
      readonly type: 'task-failed';
      readonly owner: string;
      readonly attempt: number;
      readonly error: string;
      readonly failures: number;
      readonly retry: boolean;
    })
  | (FactBase & { readonly type: 'task-released'; readonly owner: string; readonly attempt: number; readonly reason: string })
  | (FactBase & { readonly type: 'task-escalated'; readonly failures: number; readonly lastError: string })
  | (FactBase & { readonly type: 'task-retried' })
  | (FactBase & { readonly type: 'task-abandoned'; readonly reason: string });

/** The state of a board as JSON: what is persisted and what {@link restoreBoard} takes back. */
export interface BoardSnapshot {
  readonly format: 1;
  readonly boardId: string;
  readonly limits: TeamLimits;
  /** Changes applied so far; grows by one per change. */
  readonly version: number;
  /** The counter for generated task ids. */
  readonly nextId: number;
  /** In creation order, which is also the order tasks are offered to claimers. */
  readonly tasks: readonly Task[];
}

/** Task ids: no `:` (attempt keys), no whitespace, not empty, bounded. */
export const TASK_ID = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/;

const metadataSchema = z.looseObject({
  type: z.string().min(1).optional(),
  complexity: z.union([z.string(), z.number()]).optional(),
});

const taskSpecSchema = z.strictObject({
  id: z.string().regex(TASK_ID, 'letters, digits, ".", "_" or "-", at most 128').optional(),
  subject: z.string().trim().min(1, 'a task needs a subject'),
  description: z.string().optional(),
  metadata: metadataSchema.optional(),
  dependencies: z.array(z.string()).optional(),
});

const taskSchema = z.strictObject({
  id: z.string().regex(TASK_ID),
  subject: z.string().min(1),
  description: z.string(),
  metadata: metadataSchema,
  dependencies: z.array(z.string()),
  status: z.enum(['pending', 'in_progress', 'completed', 'failed', 'escalated']),
  owner: z.string().min(1).optional(),
  attempts: z.number().int().nonnegative(),
  failures: z.number().int().nonnegative(),
  lastError: z.string().optional(),
  result: z.unknown().optional(),
  createdAt: z.number(),
  updatedAt: z.number(),
  claimedAt: z.number().optional(),
});

const positive = z.number().int().positive();
const snapshotSchema = z.strictObject({
  format: z.literal(1),
  boardId: z.string().min(1),
  limits: z.strictObject({
    maxWorkers: positive,
    maxTeams: positive,
    maxTasksPerBoard: positive,
    workerTimeoutMs: positive,
    inboxRetentionMs: positive,
    maxAttempts: positive,
  }),
  version: z.number().int().nonnegative(),
  nextId: z.number().int().positive(),
  tasks: z.array(taskSchema),
});

/** A task spec checked for shape; throws a {@link TeamError} `invalid-task` naming the field. */
export function parseTaskSpec(spec: unknown, index: number): TaskSpec {
  const parsed = taskSpecSchema.safeParse(spec);
  if (!parsed.success) throw new TeamError(`task ${index + 1} of the batch is invalid: ${issues(parsed.error)}`, 'invalid-task');
  return parsed.data as TaskSpec;
}

/** The snapshot's head: its tasks are checked one by one (see {@link parseBoardSnapshotSteps}). */
const headSchema = snapshotSchema.extend({ tasks: z.array(z.unknown()) });

/**
 * A snapshot checked for shape and for the rules a board keeps (unique ids, known
 * dependencies, an owner exactly on `in_progress` tasks); throws a {@link TeamError}
 * `invalid-snapshot`.
 */
export function parseBoardSnapshot(value: unknown): BoardSnapshot {
  const steps = parseBoardSnapshotSteps(value, () => false);
  for (;;) {
    const step = steps.next();
    if (step.done) return step.value;
  }
}

/**
 * {@link parseBoardSnapshot} in steps: the generator yields whenever `pace` (called once per
 * task and check) says so, so that a caller can let the event loop run between two (a board of
 * 100,000 tasks restored), and returns the snapshot.
 */
export function* parseBoardSnapshotSteps(value: unknown, pace: () => boolean): Generator<void, BoardSnapshot, void> {
  const head = headSchema.safeParse(value);
  if (!head.success) throw new TeamError(`not a board snapshot: ${issues(head.error)}`, 'invalid-snapshot');
  const tasks: Task[] = [];
  for (const [i, value] of head.data.tasks.entries()) {
    const parsed = taskSchema.safeParse(value);
    if (!parsed.success) throw new TeamError(`not a board snapshot: ${issues(parsed.error, `tasks.${i}.`)}`, 'invalid-snapshot');
    tasks.push(parsed.data as Task);
    if (pace()) yield;
  }
  const snapshot = { ...head.data, tasks } as BoardSnapshot;
  const seen = new Set<string>();
  for (const task of snapshot.tasks) {
    if (seen.has(task.id)) throw new TeamError(`board snapshot holds task ${task.id} twice`, 'invalid-snapshot');
    // A batch may list a dependency after its dependent, so dependencies are checked below,
    // against the whole board.
    seen.add(task.id);
    if ((task.status === 'in_progress') !== (task.owner !== undefined)) {
      throw new TeamError(`board snapshot: task ${task.id} is ${task.status} ${task.owner ? 'with' : 'without'} an owner`, 'invalid-snapshot');
    }
    if (pace()) yield;
  }
  for (const task of snapshot.tasks) {
    const unknown = task.dependencies.find((dependency) => !seen.has(dependency));
    if (unknown !== undefined) throw new TeamError(`board snapshot: task ${task.id} depends on unknown task ${unknown}`, 'invalid-snapshot');
    if (pace()) yield;
  }
  return snapshot;
}

function issues(error: z.ZodError, prefix = ''): string {
  return error.issues.map((issue) => `${prefix}${issue.path.length ? issue.path.join('.') : '(root)'}: ${issue.message}`).join('; ');
}
