/**
 * The task board of a team (seed 004): tasks with dependencies that workers claim, complete,
 * fail or release. Every operation validates against the current state and then applies one
 * change, so a refused operation changes nothing and an accepted one changes the state in one
 * step; claims are therefore atomic (the first claimer wins, the second is refused or offered
 * another task). A change costs the same on a board of any size (the state is indexed, see
 * `board-store.ts`): a claim, a completion and its dependents, the counts; only the queries
 * that list the whole board (`tasks`, `claimable`, `snapshot`) are O(n). The state is JSON ({@link TaskBoard.snapshot}) and a board rebuilt
 * from it ({@link restoreBoard}) behaves exactly like the original; each change yields facts
 * ({@link TaskBoard.onFact}) for the team's event stream.
 *
 * @module
 */
import { findBlockedFrom, findCycle, findCycleSteps } from './board-graph.js';
import { attemptKey, BoardState, bucketOf, failureOutcome, UNTYPED, type BoardContext } from './board-store.js';
import {
  parseBoardSnapshot,
  parseBoardSnapshotSteps,
  parseTaskSpec,
  type BlockedTask,
  type BoardCounts,
  type BoardFact,
  type BoardSnapshot,
  type Claim,
} from './board-types.js';
import type { Task, TaskSpec } from '../define/team.js';
import { TeamError } from '../errors.js';
import { checkLimit, resolveTeamLimits, type TeamLimits } from '../define/team-limits.js';

export { attemptKey } from './board-store.js';
export type { BlockedTask, BoardCounts, BoardFact, BoardSnapshot, Claim } from './board-types.js';
export type { Task, TaskMetadata, TaskSpec, TaskStatus } from '../define/team.js';

/** How to create a board. */
export interface BoardOptions {
  /** The board's id (usually the team's); the first part of every attempt key. */
  readonly id: string;
  /** Limits over the defaults; the board uses `maxTasksPerBoard` and `maxAttempts`. */
  readonly limits?: Partial<TeamLimits>;
  /** Where the board's timestamps come from (epoch ms); `Date.now` unless given. */
  readonly clock?: () => number;
}

/** How to rebuild a board from a snapshot. */
export interface RestoreBoardOptions {
  /** Limits that replace the snapshot's (a team redefined with other limits). */
  readonly limits?: Partial<TeamLimits>;
  readonly clock?: () => number;
}

/** Which tasks a claimer takes: those of one of `types` (a worker's specialty). */
export interface ClaimFilter {
  /**
   * Task types the claimer does; a task whose metadata has no type matches any claimer.
   * Absent: any task.
   */
  readonly types?: readonly string[];
}

/** The most tasks a creation in slices adds per macrotask, one commit (see {@link TaskBoard.createInSlices}). */
export const CREATE_SLICE = 1_000;

/** Tasks a timed slice adds per change, between two looks at the clock (see {@link TaskBoard.createInSlices}). */
const ADD_CHUNK = 100;

/**
 * The time one step of a creation in slices may take before the event loop runs (checking the
 * batch, staging its release, listing the tasks it returns; adding a slice takes half of it, its
 * commit about as much again): far below the 50 ms the event loop may be blocked, so that a
 * loaded machine's slower steps and a garbage collection landing on one still fit.
 */
export const SLICE_MS = 5;

/** One macrotask later: timers and I/O run meanwhile. */
function nextTurn(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

/**
 * Tells a creation's checks when to let the event loop run: called once per item, true after
 * `count` items or (checked every 64 items) once {@link SLICE_MS} has passed since the step
 * began; the next call after a true begins a new step.
 */
function pacer(count: number, timed: boolean): () => boolean {
  let n = 0;
  let due = Number.NaN;
  return () => {
    if (n === 0) due = performance.now() + SLICE_MS;
    if (++n >= count || (timed && (n & 63) === 0 && performance.now() >= due)) {
      n = 0;
      return true;
    }
    return false;
  };
}

/**
 * Runs `step(from, to)` over `[0, n)` in chunks, letting the event loop run whenever
 * {@link SLICE_MS} has passed since it last did.
 */
async function inSteps(n: number, step: (from: number, to: number) => void): Promise<void> {
  const CHUNK = 512;
  let due = performance.now() + SLICE_MS;
  for (let i = 0; i < n; i += CHUNK) {
    step(i, Math.min(n, i + CHUNK));
    if (performance.now() >= due && i + CHUNK < n) {
      await nextTurn();
      due = performance.now() + SLICE_MS;
    }
  }
}

/** A new, empty board. Throws a {@link TeamError} for an empty id or invalid limits. */
export function createBoard(options: BoardOptions): TaskBoard {
  if (typeof options.id !== 'string' || options.id.length === 0) throw new TeamError('a board needs a non-empty id', 'invalid-task');
  const limits = resolveTeamLimits(options.limits);
  return new TaskBoard({ boardId: options.id, limits, version: 0, nextId: 1, tasks: [] }, options.clock ?? Date.now);
}

/**
 * The board a snapshot was taken of, with the same tasks, version and id counter, so it
 * behaves as the original would have (the same next claim, the same attempt keys). Throws a
 * {@link TeamError} `invalid-snapshot` for anything that is not a board snapshot.
 */
export function restoreBoard(snapshot: unknown, options: RestoreBoardOptions = {}): TaskBoard {
  const parsed = parseBoardSnapshot(snapshot);
  const cycle = findCycle(new Map(parsed.tasks.filter((task) => task.dependencies.length > 0).map((task) => [task.id, task.dependencies])));
  if (cycle) throw new TeamError(`board snapshot holds a dependency cycle: ${cycle.join(' → ')}`, 'invalid-snapshot');
  const limits = options.limits ? resolveTeamLimits({ ...parsed.limits, ...options.limits }) : parsed.limits;
  const { format: _format, ...context } = parsed;
  return new TaskBoard({ ...context, limits }, options.clock ?? Date.now);
}

/**
 * {@link restoreBoard} without blocking the event loop for the whole board: the snapshot is
 * checked, searched for cycles and indexed in steps of {@link SLICE_MS}, the event loop running
 * between two (a team of 100,000 tasks adopted after a restart). The same board, the same errors.
 */
export async function restoreBoardInSteps(snapshot: unknown, options: RestoreBoardOptions = {}): Promise<TaskBoard> {
  const pace = pacer(Number.POSITIVE_INFINITY, true);
  const parsed = await inTurns(parseBoardSnapshotSteps(snapshot, pace));
  const dependent = new Map<string, readonly string[]>();
  for (const task of parsed.tasks) if (task.dependencies.length > 0) dependent.set(task.id, task.dependencies);
  const cycle = dependent.size === 0 ? undefined : await inTurns(findCycleSteps(dependent, CREATE_SLICE));
  if (cycle) throw new TeamError(`board snapshot holds a dependency cycle: ${cycle.join(' → ')}`, 'invalid-snapshot');
  const limits = options.limits ? resolveTeamLimits({ ...parsed.limits, ...options.limits }) : parsed.limits;
  const { format: _format, ...context } = parsed;
  const state = await inTurns(BoardState.build({ ...context, limits }, pace));
  return new TaskBoard(state, options.clock ?? Date.now);
}

/** Runs `steps` to its end, one macrotask per step. */
async function inTurns<T>(steps: Generator<void, T, void>): Promise<T> {
  for (;;) {
    const step = steps.next();
    if (step.done) return step.value;
    await nextTurn();
  }
}

/** A team's task board. Create one with {@link createBoard} or {@link restoreBoard}. */
export class TaskBoard {
  readonly #state: BoardState;
  readonly #clock: () => number;
  /** A creation in slices is under way (see {@link createInSlices}): {@link create} waits for none. */
  #slicing = false;
  /** The creations in slices, one after the other. */
  #queue: Promise<void> = Promise.resolve();
  /** The blocked tasks as of `#state.blockedEpoch` (see there), when computed. */
  #blocked: { epoch: number; list: BlockedTask[] } | undefined;

  /** @internal Use {@link createBoard} or {@link restoreBoard}. */
  constructor(context: BoardContext | BoardState, clock: () => number) {
    this.#state = context instanceof BoardState ? context : new BoardState(context);
    this.#clock = clock;
  }

  /** The board's id. */
  get id(): string {
    return this.#state.boardId;
  }

  /** The limits the board enforces. */
  get limits(): TeamLimits {
    return this.#state.limits;
  }

  /** Changes applied so far (one per accepted operation). */
  get version(): number {
    return this.#state.version;
  }

  /** The counter for generated task ids (what a snapshot stores as `nextId`). */
  get nextId(): number {
    return this.#state.nextId;
  }

  /** How many tasks the board holds. */
  get size(): number {
    return this.#state.tasks.size;
  }

  /** The task with this id, if any. */
  task(id: string): Task | undefined {
    return this.#state.tasks.get(id);
  }

  /** The task's place in creation order (0 for the first task), if it is on the board. */
  position(id: string): number | undefined {
    return this.#state.order.get(id);
  }

  /** All tasks, in creation order (a new array: O(n)). */
  tasks(): readonly Task[] {
    return [...this.#state.tasks.values()];
  }

  /**
   * Adds one task or a batch. All or nothing: an invalid spec (`invalid-task`), a duplicate id
   * (`duplicate-task`), an unknown dependency (`unknown-dependency`), a dependency cycle
   * (`cycle`, the message naming it: `a → b → c → a`) or more tasks than `maxTasksPerBoard`
   * (`limit`) refuses the whole batch. Tasks of a batch may depend on each other in any order.
   */
  create(specs: TaskSpec | readonly TaskSpec[]): Task[] {
    if (this.#slicing) throw new TeamError(`board ${this.id} is writing a creation in slices; create once it is written`, 'wrong-state');
    const list = Array.isArray(specs) ? (specs as readonly TaskSpec[]) : [specs as TaskSpec];
    const steps = this.#prepare(list, () => false, Number.POSITIVE_INFINITY);
    let step = steps.next();
    while (!step.done) step = steps.next();
    const { tasks, nextId, at } = step.value;
    if (tasks.length > 0) this.#state.created(tasks, nextId, at);
    return tasks.map((task) => this.task(task.id)!);
  }

  /**
   * {@link create} for a batch of any size without blocking the event loop: the batch is
   * checked (with the same errors, nothing changed) and then added in slices of `slice` tasks
   * (default: at most {@link CREATE_SLICE}, fewer when adding them takes longer than half of
   * {@link SLICE_MS}), the event loop running between two (`between`, default one macrotask; a
   * team host writes each slice there). A batch of more than one slice is held while it is
   * added: its tasks are on the board but nobody can claim them until the last slice is in
   * ({@link creating} says from which creation index), and the board then offers them as one
   * more change. Creations are taken one at a time; {@link create} is refused meanwhile. When
   * `between` throws, the creation stops there and its tasks added so far stay held (a team
   * host's store refused a write: the host is closed).
   */
  async createInSlices(specs: readonly TaskSpec[], options: { readonly slice?: number; readonly between?: () => Promise<void> } = {}): Promise<Task[]> {
    const previous = this.#queue;
    let done!: () => void;
    this.#queue = new Promise<void>((resolve) => (done = resolve));
    await previous;
    this.#slicing = true;
    try {
      const slice = Math.max(1, options.slice ?? CREATE_SLICE);
      // Without a slice given, each step also ends once it took SLICE_MS (a loaded machine's
      // steps hold fewer tasks); with one, every slice holds exactly that many.
      const timed = options.slice === undefined;
      const between = options.between ?? nextTurn;
      const steps = this.#prepare(specs, pacer(slice, timed), slice);
      let step = steps.next();
      while (!step.done) {
        await nextTurn();
        step = steps.next();
      }
      const { tasks, nextId, at } = step.value;
      const state = this.#state;
      // Held when it may take more than one slice (timed: more than one chunk may fill one).
      if (tasks.length > (timed ? ADD_CHUNK : slice)) state.hold();
      for (let i = 0; i < tasks.length; ) {
        // A slice: at most `slice` tasks, added ADD_CHUNK at a time (one change each) until the
        // adding took SLICE_MS / 2: its commit (rows and events serialized) costs about as much again.
        const end = Math.min(tasks.length, i + slice);
        const due = performance.now() + SLICE_MS / 2;
        do {
          const to = timed ? Math.min(end, i + ADD_CHUNK) : end;
          state.created(tasks.slice(i, to), nextId, at);
          i = to;
        } while (i < end && performance.now() < due);
        await between();
      }
      if (state.holding) {
        // Staged in steps (nothing changes, nothing is written), then released as one change.
        await inSteps(tasks.length, (from, to) => state.stage(tasks, from, to));
        state.release(tasks);
        await between();
      }
      const current: Task[] = new Array<Task>(tasks.length);
      await inSteps(tasks.length, (from, to) => {
        for (let i = from; i < to; i++) current[i] = this.task(tasks[i]!.id)!;
      });
      return current;
    } finally {
      this.#slicing = false;
      done();
    }
  }

  /**
   * While a creation is added in slices and held (see {@link createInSlices}): the creation
   * index of its first task and the id counter before it; what a crash would drop.
   */
  get creating(): { readonly from: number; readonly nextId: number } | undefined {
    return this.#state.holding;
  }

  /**
   * Checks a batch and makes its tasks (see {@link create}), yielding whenever `pace` says so
   * (and cycle-search nodes) so a caller can let the event loop run; changes nothing.
   */
  *#prepare(list: readonly TaskSpec[], pace: () => boolean, slice: number): Generator<void, { tasks: Task[]; nextId: number; at: number }, void> {
    const state = this.#state;
    const existing = state.tasks;
    checkLimit(state.limits, 'maxTasksPerBoard', existing.size, list.length);
    const parsed: TaskSpec[] = [];
    for (const [i, spec] of list.entries()) {
      parsed.push(parseTaskSpec(spec, i));
      if (pace()) yield;
    }
    let nextId = state.nextId;
    const named = new Set<string>();
    for (const spec of parsed) {
      if (spec.id !== undefined) named.add(spec.id);
      if (pace()) yield;
    }
    const taken = (id: string) => existing.has(id) || named.has(id);
    const batch = new Map<string, TaskSpec>();
    for (const spec of parsed) {
      let id = spec.id;
      if (id === undefined) {
        // Generated ids skip those in use, so a caller's `task-3` is never shadowed.
        do id = `task-${nextId++}`;
        while (taken(id) || batch.has(id));
      } else if (existing.has(id) || batch.has(id)) {
        throw new TeamError(`task ${id} already exists on board ${state.boardId}`, 'duplicate-task');
      }
      batch.set(id, spec);
      if (pace()) yield;
    }
    // Only tasks with dependencies can be on a cycle: a batch of independent tasks needs no search.
    const dependent = new Map<string, readonly string[]>();
    for (const [id, spec] of batch) {
      const dependencies = spec.dependencies ?? [];
      for (const dependency of dependencies) {
        if (!existing.has(dependency) && !batch.has(dependency)) {
          throw new TeamError(`task ${id} depends on unknown task ${dependency}`, 'unknown-dependency');
        }
      }
      if (dependencies.length > 0) dependent.set(id, dependencies);
      if (pace()) yield;
    }
    const cycle = dependent.size === 0 ? undefined : yield* findCycleSteps(dependent, slice);
    if (cycle) throw new TeamError(`dependency cycle: ${cycle.join(' → ')}`, 'cycle');
    const at = this.#clock();
    const tasks: Task[] = [];
    for (const [id, spec] of batch) {
      tasks.push({
        id,
        subject: spec.subject,
        description: spec.description ?? '',
        // (Most tasks of a large batch have neither: no copy, no Set, no message made for them.)
        metadata: spec.metadata === undefined ? {} : json(spec.metadata, `metadata of task ${id}`),
        dependencies: spec.dependencies === undefined || spec.dependencies.length === 0 ? [] : [...new Set(spec.dependencies)],
        status: 'pending',
        attempts: 0,
        failures: 0,
        createdAt: at,
        updatedAt: at,
      });
      if (pace()) yield;
    }
    return { tasks, nextId, at };
  }

  /**
   * Claims one task for `worker`: only a pending, unowned task whose dependencies are all
   * completed. Throws `unknown-task`, or `not-claimable` saying why (owned, done, waiting on or
   * blocked by which dependencies).
   */
  claim(worker: string, taskId: string): Claim {
    checkWorker(worker);
    const task = this.#require(taskId);
    const problem = this.#unclaimable(task);
    if (problem) throw new TeamError(`task ${taskId} cannot be claimed: ${problem}`, 'not-claimable');
    return this.#claim(worker, task);
  }

  /**
   * Claims the first claimable task (in creation order) that matches `filter`, or returns
   * undefined when there is none; never throws for lack of work. O(log n).
   */
  claimNext(worker: string, filter: ClaimFilter = {}): Claim | undefined {
    checkWorker(worker);
    const task = this.firstClaimable(1, filter)[0];
    return task ? this.#claim(worker, task) : undefined;
  }

  /**
   * Marks a task completed with its `result` (kept as JSON). Only its owner, only while in
   * progress, and (when `attempt` is given) only for the current attempt: a late completion of
   * a released attempt is refused (`stale-attempt`) so the work is not counted twice.
   */
  complete(taskId: string, worker: string, options: { readonly result?: unknown; readonly attempt?: number } = {}): Task {
    this.#requireOwned(taskId, worker, options.attempt);
    const result = options.result === undefined ? undefined : json(options.result, `the result of task ${taskId}`);
    this.#state.completed(taskId, result, this.#clock());
    return this.task(taskId)!;
  }

  /**
   * Records a failed attempt (owner only). The task goes back to pending for another attempt,
   * or escalates once it has failed `maxAttempts` times (never retried on its own). With
   * `retry: false` (an error no retry can fix) it fails for good at once.
   */
  fail(taskId: string, worker: string, options: { readonly error: string; readonly attempt?: number; readonly retry?: boolean }): Task {
    this.#requireOwned(taskId, worker, options.attempt);
    if (typeof options.error !== 'string') throw new TeamError(`failing task ${taskId} needs an error message`, 'invalid-task');
    this.#state.failed(taskId, options.error, options.retry ?? true, this.#clock());
    return this.task(taskId)!;
  }

  /**
   * What failing the current attempt of `taskId` would do now: the failure count it would
   * reach and whether the task would escalate. The leader decides escalation on these figures,
   * so the board stays the one counter of failures.
   */
  failureOutcome(taskId: string): { failures: number; escalates: boolean } {
    return failureOutcome(this.#require(taskId), this.#state.limits);
  }

  /**
   * Gives a task back (the owner gave up, or was silent past `workerTimeoutMs`): pending again,
   * unowned, and the attempt is not counted as a failure.
   */
  release(taskId: string, worker: string, options: { readonly reason?: string; readonly attempt?: number } = {}): Task {
    this.#requireOwned(taskId, worker, options.attempt);
    this.#state.released(taskId, options.reason ?? 'released', this.#clock());
    return this.task(taskId)!;
  }

  /** Releases every task `worker` holds (a worker that stalled or crashed), in board order. */
  releaseAll(worker: string, reason = 'worker released'): Task[] {
    const held = this.inProgress().filter((task) => task.owner === worker);
    return held.map((task) => this.release(task.id, worker, { reason }));
  }

  /** The tasks in progress, in board order (few: O(workers)). */
  inProgress(): Task[] {
    const state = this.#state;
    return [...state.inProgress].sort((a, b) => state.order.get(a)! - state.order.get(b)!).map((id) => state.tasks.get(id)!);
  }

  /** A human's decision: an escalated or failed task gets a fresh round of `maxAttempts`. */
  retry(taskId: string): Task {
    const task = this.#require(taskId);
    if (task.status !== 'escalated' && task.status !== 'failed') {
      throw new TeamError(`task ${taskId} is ${task.status}; only an escalated or failed task can be retried`, 'wrong-state');
    }
    this.#state.retried(taskId, this.#clock());
    return this.task(taskId)!;
  }

  /** A human's decision: an escalated task fails for good (its dependents stay blocked). */
  abandon(taskId: string, reason = 'abandoned'): Task {
    const task = this.#require(taskId);
    if (task.status !== 'escalated') throw new TeamError(`task ${taskId} is ${task.status}; only an escalated task can be abandoned`, 'wrong-state');
    this.#state.abandoned(taskId, reason, this.#clock());
    return this.task(taskId)!;
  }

  /**
   * Gives up a pending task before it runs (`teamClient.updateTask(id, { cancel: true })`): it
   * is failed for good and its dependents are blocked. A task in progress, or settled, is
   * refused (`wrong-state`); an escalated one is {@link abandon}ed.
   */
  cancel(taskId: string, reason = 'canceled'): Task {
    const task = this.#require(taskId);
    if (task.status === 'escalated') return this.abandon(taskId, reason);
    if (task.status !== 'pending') throw new TeamError(`task ${taskId} is ${task.status}; only a pending or escalated task can be canceled`, 'wrong-state');
    this.#state.canceled(taskId, reason, this.#clock());
    return this.task(taskId)!;
  }

  /**
   * Makes a pending task wait on more tasks of the board as well (blockers it has already are
   * left out). Refused: a task not pending (`wrong-state`), an unknown blocker (`unknown-task`),
   * the task itself or a blocker that waits on it, directly or not (`cycle`).
   */
  addBlockers(taskId: string, blockers: readonly string[]): Task {
    const task = this.#require(taskId);
    if (task.status !== 'pending') throw new TeamError(`task ${taskId} is ${task.status}; blockers are added to a pending task only`, 'wrong-state');
    const added = [...new Set(blockers)].filter((id) => !task.dependencies.includes(id));
    for (const id of added) this.#require(id);
    // A blocker that (transitively) waits on the task would make a cycle.
    const seen = new Set<string>();
    const stack = [...added];
    while (stack.length > 0) {
      const id = stack.pop()!;
      if (id === taskId) throw new TeamError(`blocking task ${taskId} on ${added.join(', ')} would make a cycle`, 'cycle');
      if (seen.has(id)) continue;
      seen.add(id);
      stack.push(...(this.task(id)?.dependencies ?? []));
    }
    if (added.length > 0) this.#state.blockersAdded(taskId, added, this.#clock());
    return this.task(taskId)!;
  }

  /** Tasks that could be claimed now (matching `filter`), in the order claimers get them. O(n): a listing. */
  claimable(filter: ClaimFilter = {}): Task[] {
    const state = this.#state;
    const fits = matcher(filter);
    const out: Task[] = [];
    for (const task of state.tasks.values()) if (state.isReady(task) && fits(task)) out.push(task);
    return out;
  }

  /**
   * The first `limit` tasks of {@link claimable} (the same order), found without going through
   * the board: O(limit · log n) for few task types. What a claimer or the team's leader needs.
   */
  firstClaimable(limit: number, filter: ClaimFilter = {}): Task[] {
    const state = this.#state;
    if (limit <= 0 || state.readyCount === 0) return [];
    const buckets = filter.types === undefined ? [...state.ready.keys()] : [UNTYPED, ...new Set(filter.types)];
    const valid = (id: string) => state.isReady(state.tasks.get(id)!);
    const found: { order: number; id: string }[] = [];
    for (const bucket of buckets) found.push(...(state.ready.get(bucket)?.first(limit, valid) ?? []));
    found.sort((a, b) => a.order - b.order);
    return found.slice(0, limit).map(({ id }) => state.tasks.get(id)!);
  }

  /**
   * The claimable tasks a team whose workers are `workers` (how many of each type) could start
   * now, in board order: for each worker type, its first tasks (as many as it has workers), and
   * the first tasks any worker takes (untyped, or of a type no worker has; as many as there are
   * workers). Planning over these assigns what planning over all of {@link claimable} would
   * (see `BoardSummary` in machines/team/events.ts), in O(workers · log n). Empty only when no
   * task is claimable.
   */
  claimableFor(workers: ReadonlyMap<string, number>): Task[] {
    const state = this.#state;
    if (state.readyCount === 0) return [];
    let all = 0;
    for (const n of workers.values()) all += n;
    const valid = (id: string) => state.isReady(state.tasks.get(id)!);
    const found: { order: number; id: string }[] = [];
    for (const [bucket, heap] of state.ready) {
      const n = bucket !== UNTYPED && workers.has(bucket) ? workers.get(bucket)! : all;
      for (const entry of heap.first(Math.max(1, n), valid)) found.push(entry);
    }
    found.sort((a, b) => a.order - b.order);
    return found.map(({ id }) => state.tasks.get(id)!);
  }

  /**
   * Pending tasks that a failed or escalated task upstream keeps from ever running. Computed
   * once per change that can alter it (a task failing, escalating or retried, tasks created
   * while a task is dead), downstream of the dead tasks: O(1) while no task has failed, else
   * O(the tasks found and their dependents), not O(board).
   */
  blocked(): BlockedTask[] {
    const state = this.#state;
    if (state.dead === 0) return [];
    if (this.#blocked?.epoch !== state.blockedEpoch) {
      this.#blocked = { epoch: state.blockedEpoch, list: findBlockedFrom(state.deadIds, state.tasks, state.dependents, state.order) };
    }
    return this.#blocked.list;
  }

  /** How many tasks are where. O(1) while no task has failed (see {@link blocked}). */
  counts(): BoardCounts {
    const state = this.#state;
    return { total: state.tasks.size, ...state.byStatus, claimable: state.readyCount, blocked: this.blocked().length };
  }

  /** Every task completed (true for an empty board). */
  isDone(): boolean {
    return this.#state.byStatus.completed === this.#state.tasks.size;
  }

  /**
   * Nothing can move without a human: no task in progress and none claimable. Every task is
   * then completed, failed, escalated or blocked (dependencies cannot form a cycle).
   */
  isSettled(): boolean {
    return this.#state.inProgress.size === 0 && this.#state.readyCount === 0;
  }

  /** The board as JSON, for persistence; {@link restoreBoard} takes it back. O(n). */
  snapshot(): BoardSnapshot {
    return { ...this.head(), tasks: this.tasks() };
  }

  /** The board's snapshot without its tasks: id, limits, version and id counter. O(1). */
  head(): Omit<BoardSnapshot, 'tasks'> {
    const { boardId, limits, version, nextId } = this.#state;
    return { format: 1, boardId, limits, version, nextId };
  }

  /**
   * Calls `listener` with the new snapshot after every change; returns the unsubscribe. Each
   * call builds the whole snapshot (O(n)): to follow changes on a large board, use
   * {@link onTask} or {@link onChange}.
   */
  subscribe(listener: (snapshot: BoardSnapshot) => void): () => void {
    return this.#state.onChange(() => listener(this.snapshot()));
  }

  /** Calls `listener` after every change (once per change, after its facts); returns the unsubscribe. */
  onChange(listener: () => void): () => void {
    return this.#state.onChange(listener);
  }

  /** Calls `listener` with the new state of every task a change touched, in order; returns the unsubscribe. */
  onTask(listener: (task: Task) => void): () => void {
    return this.#state.onTask(listener);
  }

  /** Calls `listener` with every fact, in order, as changes happen; returns the unsubscribe. */
  onFact(listener: (fact: BoardFact) => void): () => void {
    return this.#state.onFact(listener);
  }

  #claim(worker: string, task: Task): Claim {
    this.#state.claimed(task.id, worker, this.#clock());
    const claimed = this.task(task.id)!;
    return { task: claimed, attempt: claimed.attempts, key: attemptKey(this.id, claimed.id, claimed.attempts) };
  }

  /** Why `task` cannot be claimed now, or undefined when it can. */
  #unclaimable(task: Task): string | undefined {
    if (task.status !== 'pending') return task.owner ? `it is ${task.status} (held by ${task.owner})` : `it is ${task.status}`;
    if (this.#state.isHeld(task.id)) return 'its creation is still being written';
    const byId = this.#state.tasks;
    const open = task.dependencies.filter((id) => byId.get(id)?.status !== 'completed');
    if (open.length === 0) return undefined;
    // (A dependency of a creation being added in slices may not be on the board yet.)
    const dead = open.filter((id) => ['failed', 'escalated'].includes(byId.get(id)?.status ?? 'pending'));
    if (dead.length > 0) return `blocked by ${dead.join(', ')} (${dead.map((id) => byId.get(id)!.status).join(', ')})`;
    const blockedBy = this.blocked().find((blocked) => blocked.taskId === task.id);
    if (blockedBy) return `blocked by ${blockedBy.blockedBy.join(', ')} upstream`;
    return `waiting on ${open.join(', ')}`;
  }

  #require(taskId: string): Task {
    const task = typeof taskId === 'string' ? this.task(taskId) : undefined;
    if (!task) throw new TeamError(`no task ${String(taskId)} on board ${this.id}`, 'unknown-task');
    return task;
  }

  #requireOwned(taskId: string, worker: string, attempt: number | undefined): Task {
    checkWorker(worker);
    const task = this.#require(taskId);
    if (task.status !== 'in_progress') throw new TeamError(`task ${taskId} is ${task.status}, not in progress`, 'wrong-state');
    if (task.owner !== worker) throw new TeamError(`task ${taskId} is held by ${task.owner}, not ${worker}`, 'not-owner');
    if (attempt !== undefined && attempt !== task.attempts) {
      throw new TeamError(`attempt ${attempt} of task ${taskId} is over; attempt ${task.attempts} is current`, 'stale-attempt');
    }
    return task;
  }
}

/** Whether a task matches a claim filter (a task without a type matches any claimer). */
function matcher(filter: ClaimFilter): (task: Task) => boolean {
  const types = filter.types;
  if (types === undefined) return () => true;
  return (task) => {
    const bucket = bucketOf(task);
    return bucket === UNTYPED || types.includes(bucket);
  };
}

function checkWorker(worker: string): void {
  if (typeof worker !== 'string' || worker.length === 0) throw new TeamError('a worker id must be a non-empty string', 'invalid-task');
}

/**
 * `value` as a JSON copy: what a snapshot will hold (so a restored board equals the original)
 * and detached from the caller, who may go on mutating their object.
 */
function json<T>(value: T, what: string): T {
  let text: string | undefined;
  try {
    text = JSON.stringify(value);
  } catch (error) {
    throw new TeamError(`${what} is not JSON: ${(error as Error).message}`, 'invalid-task');
  }
  if (text === undefined) throw new TeamError(`${what} is not JSON`, 'invalid-task');
  return JSON.parse(text) as T;
}
