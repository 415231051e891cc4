/**
 * The dependency graph of a board: cycles (refused when tasks are created) and blocked tasks
 * (dependents of a failed or escalated task, found transitively). Pure functions over task
 * lists, so the board, a snapshot check and tests share them.
 *
 * @module
 */
import type { BlockedTask } from './board-types.js';
import type { Task } from '../define/team.js';

/**
 * The first dependency cycle among `nodes` (id → dependency ids), as the path that closes it
 * (`['a', 'b', 'c', 'a']`: a depends on b, b on c, c on a), or undefined. Dependencies outside
 * `nodes` are not followed: tasks already on a board cannot depend on new ones, so a cycle can
 * only run through the batch being created. Nodes and dependencies are visited in the given
 * order, so the cycle named for a given batch is always the same.
 */
export function findCycle(nodes: ReadonlyMap<string, readonly string[]>): string[] | undefined {
  const steps = findCycleSteps(nodes, Number.POSITIVE_INFINITY);
  for (;;) {
    const step = steps.next();
    if (step.done) return step.value;
  }
}

/**
 * {@link findCycle} in steps: the generator yields after every `budget` nodes it finished, so a
 * caller can let the event loop run between two (a creation of 100,000 tasks with dependencies),
 * and returns the cycle (or undefined).
 */
export function* findCycleSteps(nodes: ReadonlyMap<string, readonly string[]>, budget: number): Generator<void, string[] | undefined, void> {
  let spent = 0;
  const done = new Set<string>();
  const onPath = new Map<string, number>();
  const path: string[] = [];
  // Iterative depth-first search: a long dependency chain must not exhaust the call stack.
  for (const start of nodes.keys()) {
    if (done.has(start)) continue;
    const stack: { id: string; next: number }[] = [{ id: start, next: 0 }];
    onPath.set(start, 0);
    path.push(start);
    while (stack.length > 0) {
      const frame = stack[stack.length - 1]!;
      const dependencies = nodes.get(frame.id) ?? [];
      if (frame.next < dependencies.length) {
        const dependency = dependencies[frame.next++]!;
        if (!nodes.has(dependency) || done.has(dependency)) continue;
        const at = onPath.get(dependency);
        if (at !== undefined) return [...path.slice(at), dependency];
        onPath.set(dependency, path.length);
        path.push(dependency);
        stack.push({ id: dependency, next: 0 });
      } else {
        stack.pop();
        path.pop();
        onPath.delete(frame.id);
        done.add(frame.id);
        if (++spent >= budget) {
          spent = 0;
          yield;
        }
      }
    }
  }
  return undefined;
}

/**
 * The pending tasks that can never be claimed without a human: some task they depend on,
 * directly or through other tasks, failed or escalated. Each comes with those upstream tasks
 * (in board order), so a report says what to fix. In board order.
 */
export function findBlocked(tasks: readonly Task[], byId: ReadonlyMap<string, Task>): BlockedTask[] {
  const order = new Map(tasks.map((task, index) => [task.id, index]));
  const memo = new Map<string, ReadonlySet<string>>();
  const roots = (start: Task): ReadonlySet<string> => {
    // Post-order without recursion: a task's roots are known once its dependencies' are.
    const stack: Task[] = [start];
    while (stack.length > 0) {
      const task = stack[stack.length - 1]!;
      if (memo.has(task.id)) {
        stack.pop();
        continue;
      }
      if (task.status === 'failed' || task.status === 'escalated') {
        memo.set(task.id, new Set([task.id]));
        stack.pop();
        continue;
      }
      if (task.status === 'completed') {
        memo.set(task.id, new Set());
        stack.pop();
        continue;
      }
      const waiting = task.dependencies.map((id) => byId.get(id)).filter((dependency): dependency is Task => dependency !== undefined && !memo.has(dependency.id));
      if (waiting.length > 0) {
        stack.push(...waiting);
        continue;
      }
      const found = new Set<string>();
      for (const id of task.dependencies) for (const root of memo.get(id) ?? []) found.add(root);
      memo.set(task.id, found);
      stack.pop();
    }
    return memo.get(start.id)!;
  };
  const blocked: BlockedTask[] = [];
  for (const task of tasks) {
    if (task.status !== 'pending') continue;
    const upstream = roots(task);
    if (upstream.size === 0) continue;
    blocked.push({ taskId: task.id, blockedBy: [...upstream].sort((a, b) => order.get(a)! - order.get(b)!) });
  }
  return blocked;
}

/**
 * {@link findBlocked} found from the other end: downstream of each dead task (`dead`, failed or
 * escalated) through its pending dependents, so the cost is that of the tasks found (and their
 * dependents), not of the board. A pending task is blocked by the dead tasks it reaches through
 * pending tasks only: a dead task stops the walk (its own upstream is not its dependents'), and
 * a completed or running task blocks nothing (a running task's dependencies are all completed).
 * The same list as {@link findBlocked}: in board order, each with its dead tasks in board order.
 */
export function findBlockedFrom(
  dead: Iterable<string>,
  byId: ReadonlyMap<string, Task>,
  dependents: ReadonlyMap<string, readonly string[]>,
  order: ReadonlyMap<string, number>,
): BlockedTask[] {
  const roots = new Map<string, string[]>();
  for (const root of dead) {
    const seen = new Set<string>([root]);
    const queue = [root];
    for (let i = 0; i < queue.length; i++) {
      for (const id of dependents.get(queue[i]!) ?? []) {
        if (seen.has(id) || byId.get(id)?.status !== 'pending') continue;
        seen.add(id);
        queue.push(id);
        let list = roots.get(id);
        if (!list) roots.set(id, (list = []));
        list.push(root);
      }
    }
  }
  const byOrder = (a: string, b: string) => order.get(a)! - order.get(b)!;
  return [...roots.keys()].sort(byOrder).map((taskId) => ({ taskId, blockedBy: roots.get(taskId)!.sort(byOrder) }));
}
