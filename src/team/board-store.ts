/**
 * The state behind a task board, indexed so that a change costs the same on a board of any size:
 * tasks by id (in creation order), the dependents of each task and how many of its own
 * dependencies are not completed yet, the claimable ("ready") tasks in heaps by type, and the
 * counts by status. Its transitions only apply changes the board has already validated (so a
 * refused operation changes nothing), bump the version and report one fact per task changed.
 * Time comes in the calls (`at`), never from a clock, so replaying the same changes gives the
 * same state. A change replaces the task's object (tasks are never mutated), so a task handed
 * out stays as it was, and a writer can tell by identity whether a task changed since it wrote it.
 *
 * @module
 */
import type { BoardFact } from './board-types.js';
import type { Task } from '../define/team.js';
import type { TeamLimits } from '../define/team-limits.js';
import { ReadyHeap } from './board-ready.js';

/** What a board starts from: a board snapshot without its format tag. */
export interface BoardContext {
  readonly boardId: string;
  readonly limits: TeamLimits;
  readonly version: number;
  readonly nextId: number;
  /** In creation order; dependencies name tasks of the list. */
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

/** The bucket of ready tasks without a type (a type is a non-empty string). */
export const UNTYPED = '';

/** A task's bucket of ready tasks: its type, or {@link UNTYPED}. */
export function bucketOf(task: Task): string {
  const type = task.metadata.type;
  return typeof type === 'string' && type.length > 0 ? type : UNTYPED;
}

const DEAD = new Set<Task['status']>(['failed', 'escalated']);

/** The indexed, mutable state of one board (see the module doc). */
export class BoardState {
  readonly boardId: string;
  limits: TeamLimits;
  version: number;
  nextId: number;
  /** Every task by id, in creation order (a Map keeps the order of first insertion). */
  readonly tasks = new Map<string, Task>();
  /** Creation index of each task: the order claimers are offered tasks in. */
  readonly order = new Map<string, number>();
  /** The tasks that depend on each task. */
  readonly dependents = new Map<string, string[]>();
  /** How many of each task's dependencies are not completed (absent: none). */
  readonly open = new Map<string, number>();
  /** The ready tasks (pending, every dependency completed) by bucket (type). */
  readonly ready = new Map<string, ReadyHeap>();
  /** How many tasks are ready. */
  readyCount = 0;
  /** The tasks in progress (few: at most one per worker). */
  readonly inProgress = new Set<string>();
  /** Tasks by status. */
  readonly byStatus: Record<Task['status'], number> = { pending: 0, in_progress: 0, completed: 0, failed: 0, escalated: 0 };
  /**
   * Grows whenever the set of blocked tasks may have changed: a task failed or escalated, was
   * retried from there, or tasks were created. Completions, claims and releases never change it
   * (a task claimed had its dependencies completed, and completed tasks stay completed).
   */
  blockedEpoch = 0;
  /** The dead (failed or escalated) tasks: where the blocked tasks are found from (downstream). */
  readonly deadIds = new Set<string>();
  /**
   * While a creation is written in slices (`TaskBoard.createInSlices`): the creation index of its
   * first task and the id counter before it. Its tasks (indexes from `from` on) are on the board
   * but claimable by nobody until {@link release}, so that a creation a crash cut short is
   * dropped whole on restore, never half run.
   */
  holding: { from: number; nextId: number } | undefined;
  /**
   * While a held creation is made claimable in slices ({@link stage}, then {@link release}):
   * its tasks found ready so far, by bucket, in creation order, and the tasks any change touched
   * since the first slice (checked again at the release: a dependency completed, a task
   * canceled or blocked meanwhile).
   */
  #staged: { buckets: Map<string, { order: number[]; ids: string[] }>; touched: Set<string>; scanned: number } | undefined;
  readonly #facts: ((fact: BoardFact) => void)[] = [];
  readonly #changes: ((task: Task) => void)[] = [];
  readonly #ends: (() => void)[] = [];

  constructor(context: BoardContext) {
    this.boardId = context.boardId;
    this.limits = context.limits;
    this.version = context.version;
    this.nextId = context.nextId;
    this.#add(context.tasks);
  }

  /**
   * The state of `context` built in steps (a board of 100,000 tasks restored): yields whenever
   * `pace` (called once per task of each pass) says so, and returns the state.
   */
  static *build(context: BoardContext, pace: () => boolean): Generator<void, BoardState, void> {
    const state = new BoardState({ ...context, tasks: [] });
    yield* state.#addSteps(context.tasks, pace);
    return state;
  }

  /** Calls `listener` with every fact; returns the unsubscribe. */
  onFact(listener: (fact: BoardFact) => void): () => void {
    this.#facts.push(listener);
    return () => remove(this.#facts, listener);
  }

  /** Calls `listener` with every task's new state, after each change; returns the unsubscribe. */
  onTask(listener: (task: Task) => void): () => void {
    this.#changes.push(listener);
    return () => remove(this.#changes, listener);
  }

  /** Calls `listener` once after each change, after its facts and tasks; returns the unsubscribe. */
  onChange(listener: () => void): () => void {
    this.#ends.push(listener);
    return () => remove(this.#ends, listener);
  }

  /** Whether `task` can be claimed now. */
  isReady(task: Task): boolean {
    return task.status === 'pending' && (this.open.get(task.id) ?? 0) === 0 && !this.isHeld(task.id);
  }

  /** Whether the task belongs to a creation still being written (see {@link holding}). */
  isHeld(taskId: string): boolean {
    return this.holding !== undefined && this.order.get(taskId)! >= this.holding.from;
  }

  /** Holds the tasks created from now on (see {@link holding}); no change of its own. */
  hold(): void {
    this.holding = { from: this.tasks.size, nextId: this.nextId };
  }

  /**
   * Prepares the release of `held[from, to)` (tasks of the held creation, see {@link release}):
   * finds which are ready, without offering them yet; no change. A release over 100,000 tasks
   * looks each up in the board's maps (~60 ms in one pass on a loaded machine): staged slice by
   * slice, between which the event loop runs, the release itself only appends to the heaps.
   * Slices are staged in order, from the first held task on.
   */
  stage(held: readonly Task[], from: number, to: number): void {
    if (!this.holding) return;
    const staged = (this.#staged ??= { buckets: new Map(), touched: new Set(), scanned: 0 });
    if (from !== staged.scanned) return;
    staged.scanned = to;
    const first = this.holding.from;
    for (let i = from; i < to; i++) {
      const task = this.tasks.get(held[i]!.id)!;
      if (task.status !== 'pending' || this.open.has(task.id)) continue;
      const bucket = bucketOf(task);
      let list = staged.buckets.get(bucket);
      if (!list) staged.buckets.set(bucket, (list = { order: [], ids: [] }));
      // Held tasks are the last created: their creation indexes follow the hold's first.
      list.order.push(first + i);
      list.ids.push(task.id);
    }
  }

  /**
   * Ends the hold of `held` (the tasks created since {@link hold}): those that are ready are
   * offered to claimers, as one change. O(held) with O(1) work each (their creation indexes are
   * the highest, so a heap push does not sift); what {@link stage} found is appended as it is,
   * and only the tasks staged or not are looked up (plus those a change touched meanwhile).
   */
  release(held: readonly Task[]): void {
    if (!this.holding) return;
    const { from } = this.holding;
    const staged = this.#staged;
    this.#staged = undefined;
    this.holding = undefined;
    this.version++;
    let done = 0;
    if (staged) {
      const { buckets, touched } = staged;
      for (const [bucket, { order, ids }] of buckets) {
        let heap = this.ready.get(bucket);
        if (!heap) this.ready.set(bucket, (heap = new ReadyHeap()));
        if (touched.size === 0) {
          // The held tasks' creation indexes are the highest of the board: appended, nothing sifts.
          heap.append(order, ids);
          this.readyCount += ids.length;
          continue;
        }
        for (let i = 0; i < ids.length; i++) {
          if (touched.has(ids[i]!)) continue;
          heap.push(order[i]!, ids[i]!);
          this.readyCount++;
        }
      }
      // The staged part is the creation's first tasks, in order: `done` of them.
      done = staged.scanned;
      for (const id of touched) {
        const at = this.order.get(id);
        if (at === undefined || at < from || at - from >= done) continue;
        const task = this.tasks.get(id)!;
        if (this.isReady(task)) this.#enter(task);
      }
    }
    for (let i = done; i < held.length; i++) {
      const task = this.tasks.get(held[i]!.id)!;
      if (this.isReady(task)) this.#enter(task);
    }
    this.#end();
  }

  /** The dead (failed or escalated) tasks: when none, no task is blocked. */
  get dead(): number {
    return this.byStatus.failed + this.byStatus.escalated;
  }

  created(tasks: readonly Task[], nextId: number, at: number): void {
    this.version++;
    this.nextId = nextId;
    this.#add(tasks);
    // New tasks may be blocked only by a dead task upstream.
    if (this.deadIds.size > 0) this.blockedEpoch++;
    for (const task of tasks) {
      const { subject, metadata, dependencies } = task;
      this.#fact({ type: 'task-created', ...this.#base(task.id, at), subject, metadata, dependencies });
    }
    for (const task of tasks) this.#changed(task);
    this.#end();
  }

  claimed(taskId: string, owner: string, at: number): void {
    const task = this.tasks.get(taskId);
    if (task?.status !== 'pending' || task.owner !== undefined) return;
    const attempt = task.attempts + 1;
    this.version++;
    const next = this.#replace(task, { ...task, status: 'in_progress', owner, attempts: attempt, claimedAt: at, updatedAt: at });
    this.#fact({ type: 'task-claimed', ...this.#base(task.id, at), owner, attempt, key: attemptKey(this.boardId, task.id, attempt) });
    this.#changed(next);
    this.#end();
  }

  completed(taskId: string, result: unknown, at: number): void {
    const task = this.tasks.get(taskId);
    if (task?.status !== 'in_progress' || task.owner === undefined) return;
    const { owner, ...rest } = task;
    this.version++;
    const done: Task = result === undefined ? { ...rest, status: 'completed', updatedAt: at } : { ...rest, status: 'completed', result, updatedAt: at };
    this.#replace(task, done);
    // Its dependents wait on one task less; those waiting on none now are ready.
    for (const id of this.dependents.get(taskId) ?? []) {
      this.#staged?.touched.add(id);
      const left = (this.open.get(id) ?? 1) - 1;
      if (left > 0) this.open.set(id, left);
      else this.open.delete(id);
      const dependent = this.tasks.get(id)!;
      if (left === 0 && this.isReady(dependent)) this.#enter(dependent);
    }
    const fact = { type: 'task-completed' as const, ...this.#base(taskId, at), owner, attempt: task.attempts };
    this.#fact(result === undefined ? fact : { ...fact, result });
    this.#changed(done);
    this.#end();
  }

  failed(taskId: string, error: string, retry: boolean, at: number): void {
    const task = this.tasks.get(taskId);
    if (task?.status !== 'in_progress' || task.owner === undefined) return;
    const { owner, ...rest } = task;
    const { failures, escalates } = failureOutcome(task, this.limits, retry);
    const status = !retry ? 'failed' : escalates ? 'escalated' : 'pending';
    this.version++;
    const next = this.#replace(task, { ...rest, status, failures, lastError: error, updatedAt: at });
    if (status !== 'pending') this.blockedEpoch++;
    this.#fact({ type: 'task-failed', ...this.#base(taskId, at), owner, attempt: task.attempts, error, failures, retry: status === 'pending' });
    if (escalates) this.#fact({ type: 'task-escalated', ...this.#base(taskId, at), failures, lastError: error });
    this.#changed(next);
    this.#end();
  }

  released(taskId: string, reason: string, at: number): void {
    const task = this.tasks.get(taskId);
    if (task?.status !== 'in_progress' || task.owner === undefined) return;
    const { owner, ...rest } = task;
    this.version++;
    const next = this.#replace(task, { ...rest, status: 'pending', updatedAt: at });
    this.#fact({ type: 'task-released', ...this.#base(taskId, at), owner, attempt: task.attempts, reason });
    this.#changed(next);
    this.#end();
  }

  retried(taskId: string, at: number): void {
    const task = this.tasks.get(taskId);
    if (task?.status !== 'escalated' && task?.status !== 'failed') return;
    this.version++;
    // A fresh round of attempts; `attempts` keeps counting so attempt keys stay unique.
    const next = this.#replace(task, { ...task, status: 'pending', failures: 0, updatedAt: at });
    this.blockedEpoch++;
    this.#fact({ type: 'task-retried', ...this.#base(taskId, at) });
    this.#changed(next);
    this.#end();
  }

  abandoned(taskId: string, reason: string, at: number): void {
    const task = this.tasks.get(taskId);
    if (task?.status !== 'escalated') return;
    this.version++;
    const next = this.#replace(task, { ...task, status: 'failed', updatedAt: at });
    this.#fact({ type: 'task-abandoned', ...this.#base(taskId, at), reason });
    this.#changed(next);
    this.#end();
  }

  /** A pending task given up before it ran (`TaskBoard.cancel`): failed for good, its dependents blocked. */
  canceled(taskId: string, reason: string, at: number): void {
    const task = this.tasks.get(taskId);
    if (task?.status !== 'pending') return;
    this.version++;
    const next = this.#replace(task, { ...task, status: 'failed', lastError: reason, updatedAt: at });
    this.blockedEpoch++;
    this.#fact({ type: 'task-abandoned', ...this.#base(taskId, at), reason });
    this.#changed(next);
    this.#end();
  }

  /** A pending task waits on more tasks (`TaskBoard.addBlockers`; checked there: known, new, no cycle). */
  blockersAdded(taskId: string, blockers: readonly string[], at: number): void {
    const task = this.tasks.get(taskId);
    if (task?.status !== 'pending') return;
    this.version++;
    const wasReady = this.isReady(task);
    // Replaced first (its readiness unchanged), then its open count raised: no longer ready if any blocker is open.
    const next = this.#replace(task, { ...task, dependencies: [...task.dependencies, ...blockers], updatedAt: at });
    let open = this.open.get(taskId) ?? 0;
    for (const id of blockers) {
      let list = this.dependents.get(id);
      if (!list) this.dependents.set(id, (list = []));
      list.push(taskId);
      if (this.tasks.get(id)?.status !== 'completed') open++;
    }
    if (open > 0) this.open.set(taskId, open);
    // The heap keeps its entry: it is dropped when found no longer ready (see ReadyHeap).
    if (wasReady && !this.isReady(next)) this.readyCount--;
    if (this.deadIds.size > 0) this.blockedEpoch++;
    this.#changed(next);
    this.#end();
  }

  /** Indexes `tasks` (new ones, in creation order; their dependencies are known tasks or among them). */
  #add(tasks: readonly Task[]): void {
    const steps = this.#addSteps(tasks, never);
    while (!steps.next().done);
  }

  /** {@link #add} in steps: yields whenever `pace` says so. */
  *#addSteps(tasks: readonly Task[], pace: () => boolean): Generator<void, void, void> {
    for (const task of tasks) {
      this.order.set(task.id, this.order.size);
      this.tasks.set(task.id, task);
      this.byStatus[task.status]++;
      if (task.status === 'in_progress') this.inProgress.add(task.id);
      if (DEAD.has(task.status)) this.deadIds.add(task.id);
      if (pace()) yield;
    }
    // Dependencies second: a batch may list a dependency after its dependent.
    for (const task of tasks) {
      let open = 0;
      for (const dependency of task.dependencies) {
        let list = this.dependents.get(dependency);
        if (!list) this.dependents.set(dependency, (list = []));
        list.push(task.id);
        if (this.tasks.get(dependency)?.status !== 'completed') open++;
      }
      // Kept for tasks still waiting only: most tasks of a large board wait on nothing.
      if (open > 0) this.open.set(task.id, open);
      if (this.isReady(task)) this.#enter(task);
      if (pace()) yield;
    }
  }

  /** `next` in place of `task` (same id), with the indexes kept. */
  #replace(task: Task, next: Task): Task {
    this.#staged?.touched.add(task.id);
    const wasReady = this.isReady(task);
    this.tasks.set(task.id, next);
    this.byStatus[task.status]--;
    this.byStatus[next.status]++;
    if (next.status === 'in_progress') this.inProgress.add(next.id);
    else this.inProgress.delete(next.id);
    if (DEAD.has(next.status)) this.deadIds.add(next.id);
    else this.deadIds.delete(next.id);
    const isReady = this.isReady(next);
    if (wasReady && !isReady) this.readyCount--;
    // The heap keeps its entry: it is dropped when found no longer ready (see ReadyHeap).
    else if (!wasReady && isReady) this.#enter(next);
    return next;
  }

  /** Offers a task that just became ready to claimers. */
  #enter(task: Task): void {
    this.readyCount++;
    const bucket = bucketOf(task);
    let heap = this.ready.get(bucket);
    if (!heap) this.ready.set(bucket, (heap = new ReadyHeap()));
    heap.push(this.order.get(task.id)!, task.id);
  }

  #base(taskId: string, at: number) {
    return { boardId: this.boardId, taskId, version: this.version, at };
  }

  #fact(fact: BoardFact): void {
    for (const listener of [...this.#facts]) listener(fact);
  }

  #end(): void {
    for (const listener of [...this.#ends]) listener();
  }

  #changed(task: Task): void {
    for (const listener of [...this.#changes]) listener(task);
  }
}

/** Whether `task` is dead (failed or escalated): its dependents are blocked. */
export function isDead(task: Task): boolean {
  return DEAD.has(task.status);
}

/** A pace that never asks for a pause (see {@link BoardState.build}). */
function never(): boolean {
  return false;
}

function remove<T>(list: T[], item: T): void {
  const i = list.indexOf(item);
  if (i >= 0) list.splice(i, 1);
}
