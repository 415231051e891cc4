/**
 * Dispatched tasks: their checks, their state transitions (with timestamps) and the waiting on
 * their dependencies. The registry (`./registry.ts`) owns the tasks and does the sending.
 *
 * @module
 */
import { TeamError } from '../errors.js';
import type { DependencyKind, DispatchSpec, RegistryTask, RegistryTaskState } from './types.js';
import type { Outcome } from './retry.js';

const KINDS: readonly DependencyKind[] = ['blocking', 'parallel', 'optional'];

/** Whether a task has ended. */
export function isTerminal(state: RegistryTaskState): boolean {
  return state === 'completed' || state === 'failed' || state === 'canceled';
}

/**
 * Checks a dispatch before anything is recorded: a unique id, a skill or an agent, and
 * dependencies on tasks that exist (so no cycle can form: a task can only depend on earlier
 * ones). Throws a `TeamError` naming the problem.
 */
export function checkDispatch(spec: DispatchSpec, id: string, known: (taskId: string) => boolean): void {
  if (known(id)) throw new TeamError(`A task with id "${id}" already exists`, 'duplicate-task');
  if (!spec.skill?.trim() && !spec.agent?.trim()) throw new TeamError(`Task "${id}" names neither a skill nor an agent`, 'invalid-task');
  if (typeof spec.message !== 'string') throw new TeamError(`Task "${id}" has no message`, 'invalid-task');
  for (const dep of spec.dependsOn ?? []) {
    if (!KINDS.includes(dep.kind)) throw new TeamError(`Task "${id}": dependency kind "${String(dep.kind)}" is not one of ${KINDS.join(', ')}`, 'invalid-task');
    if (dep.taskId === id) throw new TeamError(`Task "${id}" depends on itself`, 'invalid-task');
    if (!known(dep.taskId)) throw new TeamError(`Task "${id}" depends on unknown task "${dep.taskId}"`, 'unknown-task');
  }
}

/** A new task, `submitted` at `now`. */
export function newTask(spec: DispatchSpec, id: string, now: number): RegistryTask {
  return {
    id,
    ...(spec.skill ? { skill: spec.skill } : {}),
    ...(spec.agent ? { requestedAgent: spec.agent } : {}),
    message: spec.message,
    dependsOn: (spec.dependsOn ?? []).map((d) => ({ taskId: d.taskId, kind: d.kind })),
    state: 'submitted',
    submittedAt: now,
    history: [{ state: 'submitted', at: now }],
  };
}

/**
 * Moves `task` to `working` on `agentId`; when `previous` names a broken agent it left, first
 * back to `submitted` with the reason (see `./retry.ts`).
 */
export function startTask(task: RegistryTask, agentId: string, now: number, previous?: { agentId: string; error: string }): void {
  if (previous) task.history.push({ state: 'submitted', at: now, error: `${previous.agentId}: ${previous.error}` });
  task.state = 'working';
  task.agentId = agentId;
  task.startedAt ??= now;
  task.history.push({ state: 'working', at: now, agentId });
}

/** Moves `task` to `input-required` with the agent's question. */
export function askTask(task: RegistryTask, question: string, now: number): void {
  task.state = 'input-required';
  task.question = question;
  task.history.push({ state: 'input-required', at: now, ...(task.agentId ? { agentId: task.agentId } : {}) });
}

/** Moves an `input-required` task back to `working`: its question was answered. */
export function answeredTask(task: RegistryTask, now: number): void {
  task.state = 'working';
  delete task.question;
  task.history.push({ state: 'working', at: now, ...(task.agentId ? { agentId: task.agentId } : {}) });
}

/** Ends `task`: completed with the agent's answer, or failed with the reason. */
export function endTask(task: RegistryTask, outcome: Outcome, now: number): void {
  const state = outcome.ok ? 'completed' : 'failed';
  delete task.question;
  task.state = state;
  if (outcome.ok) task.result = outcome.result;
  else task.error = outcome.error;
  task.endedAt = now;
  task.history.push({ state, at: now });
}

/** Ends `task` as `canceled` for `reason` (kept as its `error`), on the agent it was on. */
export function cancelTask(task: RegistryTask, reason: string, now: number): void {
  delete task.question;
  task.state = 'canceled';
  task.error = reason;
  task.endedAt = now;
  task.history.push({ state: 'canceled', at: now, ...(task.agentId ? { agentId: task.agentId } : {}) });
}

/**
 * Waits for `task`'s dependencies as their kinds say; resolves with the reason it must fail
 * (a blocking dependency failed), or undefined when it may run. `settled(id)` resolves with a
 * task once it has ended.
 */
export async function awaitDependencies(task: RegistryTask, settled: (taskId: string) => Promise<RegistryTask>): Promise<string | undefined> {
  const waited = task.dependsOn.filter((d) => d.kind !== 'parallel');
  const ended = await Promise.all(waited.map(async (d) => ({ dep: d, task: await settled(d.taskId) })));
  const failed = ended.find((e) => e.dep.kind === 'blocking' && e.task.state !== 'completed');
  if (!failed) return undefined;
  const how = failed.task.state === 'canceled' ? 'was canceled' : 'failed';
  return `Blocking dependency "${failed.dep.taskId}" ${how}${failed.task.error ? `: ${failed.task.error}` : ''}`;
}
