/**
 * The `@xstate/store` behind a task board: the single source of truth of its tasks. Its
 * transitions only apply changes the board has already validated (so a refused operation
 * changes nothing), bump the version and emit one `fact` per task changed. Time comes in the
 * events (`at`), never from a clock, so replaying the same events gives the same state.
 *
 * @module
 */
import { createStore } from '@xstate/store';
import { z } from 'zod';
import type { BoardFact } from './board-types.js';
import type { Task } from '../define/team.js';
import type { TeamLimits } from '../define/team-limits.js';

/** The store's context: a board snapshot without its format tag. */
export interface BoardContext {
  readonly boardId: string;
  readonly limits: TeamLimits;
  readonly version: number;
  readonly nextId: number;
  readonly tasks: readonly Task[];
}

/** The key of one attempt of a task (see {@link Claim.key}). */
export function attemptKey(boardId: string, taskId: string, attempt: number): string {
  return `${boardId}:${taskId}:${attempt}`;
}

/**
 * What failing a task's current attempt does: its failure count with this one, and whether
 * that reaches `maxAttempts` (the task escalates to a human). The one rule of escalation: the
 * board applies it, and the team's leader decides on the same figures (`TaskBoard.failureOutcome`).
 */
export function failureOutcome(task: Pick<Task, 'failures'>, limits: Pick<TeamLimits, 'maxAttempts'>, retry = true): { failures: number; escalates: boolean } {
  const failures = task.failures + 1;
  return { failures, escalates: retry && failures >= limits.maxAttempts };
}

/** A store holding `context`, with the board's transitions. */
export function createBoardStore(context: BoardContext) {
  return createStore({
    schemas: { emitted: { fact: z.object({ fact: z.custom<BoardFact>() }) } },
    context,
    on: {
      created: (ctx, event: { tasks: readonly Task[]; nextId: number; at: number }, enq) => {
        const next = { ...ctx, version: ctx.version + 1, nextId: event.nextId, tasks: [...ctx.tasks, ...event.tasks] };
        for (const task of event.tasks) {
          const { subject, metadata, dependencies } = task;
          enq.emit.fact({ fact: { type: 'task-created', ...base(next, task.id, event.at), subject, metadata, dependencies } });
        }
        return next;
      },
      claimed: (ctx, event: { taskId: string; owner: string; at: number }, enq) => {
        const task = find(ctx, event.taskId);
        if (task?.status !== 'pending' || task.owner !== undefined) return ctx;
        const attempt = task.attempts + 1;
        const next = replace(ctx, { ...task, status: 'in_progress', owner: event.owner, attempts: attempt, claimedAt: event.at, updatedAt: event.at });
        const key = attemptKey(ctx.boardId, task.id, attempt);
        enq.emit.fact({ fact: { type: 'task-claimed', ...base(next, task.id, event.at), owner: event.owner, attempt, key } });
        return next;
      },
      completed: (ctx, event: { taskId: string; result: unknown; at: number }, enq) => {
        const task = find(ctx, event.taskId);
        if (task?.status !== 'in_progress' || task.owner === undefined) return ctx;
        const { owner, ...rest } = task;
        const done: Task =
          event.result === undefined
            ? { ...rest, status: 'completed', updatedAt: event.at }
            : { ...rest, status: 'completed', result: event.result, updatedAt: event.at };
        const next = replace(ctx, done);
        const fact = { type: 'task-completed' as const, ...base(next, task.id, event.at), owner, attempt: task.attempts };
        enq.emit.fact({ fact: event.result === undefined ? fact : { ...fact, result: event.result } });
        return next;
      },
      failed: (ctx, event: { taskId: string; error: string; retry: boolean; at: number }, enq) => {
        const task = find(ctx, event.taskId);
        if (task?.status !== 'in_progress' || task.owner === undefined) return ctx;
        const { owner, ...rest } = task;
        const { failures, escalates: escalate } = failureOutcome(task, ctx.limits, event.retry);
        const status = !event.retry ? 'failed' : escalate ? 'escalated' : 'pending';
        const next = replace(ctx, { ...rest, status, failures, lastError: event.error, updatedAt: event.at });
        const retry = status === 'pending';
        enq.emit.fact({ fact: { type: 'task-failed', ...base(next, task.id, event.at), owner, attempt: task.attempts, error: event.error, failures, retry } });
        if (escalate) enq.emit.fact({ fact: { type: 'task-escalated', ...base(next, task.id, event.at), failures, lastError: event.error } });
        return next;
      },
      released: (ctx, event: { taskId: string; reason: string; at: number }, enq) => {
        const task = find(ctx, event.taskId);
        if (task?.status !== 'in_progress' || task.owner === undefined) return ctx;
        const { owner, ...rest } = task;
        const next = replace(ctx, { ...rest, status: 'pending', updatedAt: event.at });
        enq.emit.fact({ fact: { type: 'task-released', ...base(next, task.id, event.at), owner, attempt: task.attempts, reason: event.reason } });
        return next;
      },
      retried: (ctx, event: { taskId: string; at: number }, enq) => {
        const task = find(ctx, event.taskId);
        if (task?.status !== 'escalated' && task?.status !== 'failed') return ctx;
        // A fresh round of attempts; `attempts` keeps counting so attempt keys stay unique.
        const next = replace(ctx, { ...task, status: 'pending', failures: 0, updatedAt: event.at });
        enq.emit.fact({ fact: { type: 'task-retried', ...base(next, task.id, event.at) } });
        return next;
      },
      abandoned: (ctx, event: { taskId: string; reason: string; at: number }, enq) => {
        const task = find(ctx, event.taskId);
        if (task?.status !== 'escalated') return ctx;
        const next = replace(ctx, { ...task, status: 'failed', updatedAt: event.at });
        enq.emit.fact({ fact: { type: 'task-abandoned', ...base(next, task.id, event.at), reason: event.reason } });
        return next;
      },
    },
  });
}

/** The store of a board. */
export type BoardStore = ReturnType<typeof createBoardStore>;

function base(ctx: BoardContext, taskId: string, at: number) {
  return { boardId: ctx.boardId, taskId, version: ctx.version, at };
}

function find(ctx: BoardContext, taskId: string): Task | undefined {
  return ctx.tasks.find((task) => task.id === taskId);
}

/** The context with `task` in place of the task of the same id, one version on. */
function replace(ctx: BoardContext, task: Task): BoardContext {
  return { ...ctx, version: ctx.version + 1, tasks: ctx.tasks.map((old) => (old.id === task.id ? task : old)) };
}
