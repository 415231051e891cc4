/**
 * `defineTeam`: a team of persistent workers as data — its id, its workers by type (each with
 * the swarm definition that does one task, fresh per task) and its limits — and what the tasks a
 * team works on look like. Checked
 * once here, so a mistake (no workers, a duplicate type, more workers than `maxWorkers`) is an
 * error when the team is defined, not halfway through a run.
 *
 * @module
 */
import type { SwarmDefinition } from './swarm.js';
import { TeamError } from '../errors.js';
import { checkLimit, resolveTeamLimits, type TeamLimits } from './team-limits.js';
import { type Budget, checkBudget } from './budget.js';

/**
 * Where a task is. `pending`: waiting to be claimed (possibly waiting on dependencies);
 * `in_progress`: claimed by its owner; `completed`: done, with a result; `failed`: given up for
 * good (a non-retryable failure, or abandoned by a human); `escalated`: failed `maxAttempts`
 * times and waiting for a human (retry or abandon), never retried on its own.
 */
export type TaskStatus = 'pending' | 'in_progress' | 'completed' | 'failed' | 'escalated';

/** What a task is about, for matching it to a worker's specialty (`type`) and for people. */
export interface TaskMetadata {
  /** The kind of work (matched against a worker's specialty, e.g. `frontend`). */
  readonly type?: string;
  /** How big the task is, in whatever scale the team uses. */
  readonly complexity?: string | number;
  readonly [key: string]: unknown;
}

/** One task of a board. All fields are JSON; times are epoch milliseconds. */
export interface Task {
  readonly id: string;
  readonly subject: string;
  readonly description: string;
  readonly metadata: TaskMetadata;
  /** Ids of the tasks that must be completed before this one can be claimed. */
  readonly dependencies: readonly string[];
  readonly status: TaskStatus;
  /** The worker holding the task while it is `in_progress`. */
  readonly owner?: string;
  /** Attempts started (claims), so each attempt has its own idempotency key. */
  readonly attempts: number;
  /** Attempts that failed; at `maxAttempts` the task escalates. Releases do not count. */
  readonly failures: number;
  /** The error of the last failed attempt. */
  readonly lastError?: string;
  /** What the owner reported on completion. */
  readonly result?: unknown;
  readonly createdAt: number;
  readonly updatedAt: number;
  /** When the current (or last) attempt was claimed. */
  readonly claimedAt?: number;
}

/** What a caller gives to create a task; the board fills in the rest. */
export interface TaskSpec {
  /** Letters, digits, `.`, `_`, `-` (no `:`, so an attempt key splits unambiguously); generated when absent. */
  readonly id?: string;
  readonly subject: string;
  readonly description?: string;
  readonly metadata?: TaskMetadata;
  readonly dependencies?: readonly string[];
}

/** One kind of worker of a team: `count` workers of one `type`, each running `swarm` per task. */
export interface TeamWorkerDefinition {
  /** The kind of work (`frontend`, `api`, ...): tasks whose `metadata.type` equals it go to these workers. */
  readonly type: string;
  /** What these workers are good at, told to each task's swarm (default: the type). */
  readonly specialty?: string;
  /**
   * The swarm that does one task, a fresh one per attempt: a definition (registered by
   * `createRuntime({ teams })`) or the id of one the runtime knows. With `nats` (or a
   * `transport`) the id may be one only other runtimes host (worker processes); an id nobody
   * hosts cannot be told apart from one whose hosts are not up yet, so it is not refused here:
   * it shows up as attempts failing with "No runtime hosts …" (the task escalating after
   * `maxAttempts`).
   */
  readonly swarm: SwarmDefinition<any, any> | string;
  /** How many workers of this type (default 1). */
  readonly count?: number;
  /**
   * The task swarm's input for a task (default: a text with the specialty, subject and
   * description, for swarms whose input is a string).
   */
  readonly input?: (task: Task, worker: { readonly workerId: string; readonly type: string; readonly specialty: string }) => unknown;
}

/** What {@link defineTeam} takes. */
export interface TeamDefinitionInput {
  readonly id: string;
  readonly description?: string;
  readonly workers: readonly TeamWorkerDefinition[];
  readonly limits?: Partial<TeamLimits>;
  /**
   * What all of one team's task swarms may spend together (see docs/budgets.md): each worker's
   * swarm draws from it (and from its own budget, if its definition has one). A task swarm
   * refused by it pauses, which fails its attempt, as any pause of a task swarm does.
   */
  readonly budget?: Budget;
  /** How the leader answers a worker's `help_request` (see {@link HelpRequestHandler}); absent: every question goes to the user. */
  readonly onHelpRequest?: HelpRequestHandler;
}

/** A worker's question as the leader's {@link HelpRequestHandler} receives it. */
export interface HelpRequestInfo {
  /** The request's id (what `teamClient.answer(id, …)` names). */
  readonly id: string;
  readonly teamId: string;
  readonly workerId: string;
  readonly question: string;
  /** The task the worker is on (absent if it is no longer on the board). */
  readonly task?: Task;
}

/**
 * The leader's answer to a worker's question: a text answers it; `undefined` (or a throw)
 * escalates it to the user, who answers with `teamClient.answer(id, text)`. Called once per
 * request (again after a restart if the process stopped before it answered).
 */
export type HelpRequestHandler = (request: HelpRequestInfo) => string | undefined | Promise<string | undefined>;

/** A checked team definition: limits resolved, worker counts filled in. */
export interface TeamDefinition {
  readonly kind: 'team';
  readonly id: string;
  readonly description: string;
  readonly workers: readonly (TeamWorkerDefinition & { readonly count: number; readonly specialty: string })[];
  readonly limits: TeamLimits;
  /** What all of one team's task swarms may spend together (see {@link TeamDefinitionInput.budget}). */
  readonly budget?: Budget;
  /** How the leader answers a worker's `help_request` (see {@link TeamDefinitionInput.onHelpRequest}). */
  readonly onHelpRequest?: HelpRequestHandler;
}

const ID = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;

/**
 * Defines a team. Throws a {@link TeamError}: `invalid-task` for a bad id or worker entry,
 * `invalid-limit` for bad limits, `limit` when the workers outnumber `maxWorkers`.
 */
export function defineTeam(input: TeamDefinitionInput): TeamDefinition {
  if (typeof input?.id !== 'string' || !ID.test(input.id)) {
    throw new TeamError(`a team id is 1 to 64 letters, digits, ".", "_" or "-", not ${JSON.stringify(input?.id)}`, 'invalid-task');
  }
  const limits = resolveTeamLimits(input.limits);
  if (!Array.isArray(input.workers) || input.workers.length === 0) throw new TeamError(`team ${input.id} needs at least one worker`, 'invalid-task');
  const types = new Set<string>();
  const workers = input.workers.map((w, i) => {
    if (typeof w?.type !== 'string' || !ID.test(w.type))
      throw new TeamError(`team ${input.id}: worker ${i + 1} needs a type (letters, digits, ".", "_", "-")`, 'invalid-task');
    if (types.has(w.type)) throw new TeamError(`team ${input.id}: worker type ${w.type} is listed twice (use count)`, 'invalid-task');
    types.add(w.type);
    const swarmId = typeof w.swarm === 'string' ? w.swarm : w.swarm?.id;
    if (typeof swarmId !== 'string' || swarmId.length === 0) throw new TeamError(`team ${input.id}: worker ${w.type} needs a swarm definition`, 'invalid-task');
    const count = w.count ?? 1;
    if (!Number.isSafeInteger(count) || count < 1) throw new TeamError(`team ${input.id}: worker ${w.type} count must be a positive integer`, 'invalid-task');
    return Object.freeze({ ...w, count, specialty: w.specialty ?? w.type });
  });
  checkLimit(
    limits,
    'maxWorkers',
    0,
    workers.reduce((n, w) => n + w.count, 0),
  );
  const budget = checkBudget(input.budget, `Team "${input.id}"`);
  return Object.freeze({
    kind: 'team' as const,
    id: input.id,
    description: input.description ?? '',
    workers: Object.freeze(workers),
    limits,
    ...(budget !== undefined ? { budget } : {}),
    ...(typeof input.onHelpRequest === 'function' ? { onHelpRequest: input.onHelpRequest } : {}),
  });
}

/** The swarm definition id a worker runs. */
export function workerSwarmId(worker: TeamWorkerDefinition): string {
  return typeof worker.swarm === 'string' ? worker.swarm : worker.swarm.id;
}

/**
 * The swarm definitions a list of teams brings along (those given as objects), for
 * `createRuntime` to register beside its own `swarms`; one already listed is not added twice.
 */
export function teamSwarms(teams: readonly TeamDefinition[], listed: readonly SwarmDefinition<any, any>[] = []): SwarmDefinition<any, any>[] {
  const out = [...listed];
  for (const team of teams) {
    for (const w of team.workers) {
      if (typeof w.swarm !== 'string' && !out.some((s) => s === w.swarm || s.id === (w.swarm as SwarmDefinition).id)) out.push(w.swarm);
    }
  }
  return out;
}
