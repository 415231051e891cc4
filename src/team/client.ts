/**
 * `TeamClient`: the handle on one team of a runtime (`runtime.forTeam(def, teamId)`): run tasks,
 * wait for the run, read its board, inbox, metrics and events, pause, resume and stop it. A
 * client sees its own team only: its inbox view reads as members of that team, so a worker id
 * of another team is refused (`not-a-member`).
 *
 * @module
 */
import type { BlockedTask, BoardCounts, BoardSnapshot } from './board-types.js';
import type { Task, TaskSpec } from '../define/team.js';
import type { TeamEvent } from './events.js';
import type { TaskUpdate, TeamHost } from './host.js';
import type { TeamRunMetrics, TeamRunSummary, TeamStatus } from './host-types.js';
import type { InboxMessage, InboxRead, InboxStats } from './inbox.js';
import type { UsageTotals } from '../usage/report.js';
import type { HelpRequest } from './host-desk.js';
import { TeamError } from '../errors.js';

/** The board of a team as its client reads it (a copy: changing it changes nothing). */
export interface TeamBoardView {
  readonly tasks: readonly Task[];
  readonly counts: BoardCounts;
  readonly blocked: readonly BlockedTask[];
  /** The board as JSON, as it is persisted. */
  readonly snapshot: BoardSnapshot;
}

/** The inbox of a team as its client reads it. */
export interface TeamInboxView {
  /** The leader's member id (the first member): the one the workers report to. */
  readonly leader: string;
  /** The leader and the workers, in join order. */
  members(): readonly string[];
  /** The messages to `member` (a member of this team) after `since`. */
  read(member: string, options?: { since?: number }): InboxRead;
  /** Every retained message of the team, in order. */
  messages(): readonly InboxMessage[];
  stats(): InboxStats;
}

/** Where a team is now: {@link TeamRunSummary} with `running` among the statuses. */
export interface TeamSummary extends Omit<TeamRunSummary, 'status'> {
  status: TeamStatus;
}

/**
 * Where a client finds its team's host in the runtime. A team that never ran has no host kept
 * for it: reading it costs nothing that stays, so a flood of reads of unknown team ids leaves
 * nothing behind; running it is what keeps one.
 */
export interface TeamSlot {
  readonly teamId: string;
  readonly definitionId: string;
  /** The kept host, or a blank one kept nowhere (a team this runtime has not seen run). */
  view(): TeamHost;
  /**
   * The kept host, brought up to date with the store when it may be behind it (it only reads
   * the team, or its run is over), or the host of a team the store holds (kept from now on);
   * undefined when the store holds nothing of the team either.
   */
  find(): Promise<TeamHost | undefined>;
  /**
   * Runs `act` on the team's host (made and kept if there is none), brought up to date first; a
   * host made for it that is left idle (`act` threw) is not kept.
   */
  use<T>(act: (host: TeamHost) => T | Promise<T>): Promise<T>;
  /** Deletes the finished team's records (see {@link TeamClient.delete}); returns how many were deleted. */
  remove(): Promise<number>;
}

/** The handle on one team. */
export class TeamClient {
  constructor(private readonly slot: TeamSlot) {}

  /** The team instance id. */
  get teamId(): string {
    return this.slot.teamId;
  }

  /** The team definition's id. */
  get definitionId(): string {
    return this.slot.definitionId;
  }

  /** Where the team is now. */
  get status(): TeamStatus {
    return this.slot.view().status;
  }

  /**
   * Adds tasks (with their dependencies) to the board and runs them: a new run when none is
   * under way, else the running one takes them. All or nothing: throws a `TeamError` (no task,
   * invalid task, duplicate id, unknown dependency, cycle, `maxTasksPerBoard`, `maxTeams`).
   */
  run(tasks: readonly TaskSpec[]): Promise<Task[]> {
    return this.slot.use((host) => host.runInSlices(tasks));
  }

  /**
   * Resolves when the run is paused for a human (`paused`, with the escalation) or ended
   * (`completed`, `stalled`, `failed`, `stopped`), with the board counts and the metrics. A run
   * another runtime drives is followed in the store until it pauses or ends there.
   */
  async wait(): Promise<TeamRunSummary> {
    return ((await this.slot.find()) ?? this.slot.view()).wait();
  }

  /**
   * Resolves once the team's stored state is read (after a restart, or what another runtime
   * wrote since); `board()`, `inbox()`, `summary()` and `metrics()` read it from then on (every
   * async method reads it itself).
   */
  async ready(): Promise<void> {
    await this.slot.find();
  }

  /**
   * Where the team is now, without waiting (`wait()` waits for a pause or the end): status,
   * board counts, blocked tasks, the escalation and reason of a pause or an end, metrics.
   */
  summary(): TeamSummary {
    // What the store holds by now is read for the next call (a run another runtime drives).
    this.slot.find().catch(() => undefined);
    const host = this.slot.view();
    return { ...host.summary(), status: host.status };
  }

  /** The board now. */
  board(): TeamBoardView {
    const board = this.slot.view().board;
    return { tasks: board.tasks(), counts: board.counts(), blocked: board.blocked(), snapshot: board.snapshot() };
  }

  /** The team's inbox, read as members of this team. */
  inbox(): TeamInboxView {
    const { inbox, teamId } = this.slot.view();
    return {
      // The host makes the leader the first member, before the workers.
      leader: inbox.members()[0]!,
      members: () => inbox.members(),
      read: (member, options = {}) => inbox.read({ teamId, id: member }, options),
      messages: () => {
        inbox.prune();
        return inbox.snapshot().messages;
      },
      stats: () => inbox.stats(),
    };
  }

  /** Seed 004's metrics of the current (or last) run, with `durationMs` for speedup figures. */
  metrics(): TeamRunMetrics {
    return this.slot.view().metrics();
  }

  /**
   * The tokens (and, with `createRuntime({ prices })`, the USD) of every task attempt of the
   * team so far: each attempt's swarm rolled up over its children, summed over the board, failed
   * and released attempts included. Reads each attempt's durable state.
   */
  async usage(): Promise<UsageTotals> {
    return ((await this.slot.find()) ?? this.slot.view()).usage();
  }

  /**
   * The team's events after `since` (default 0: from the first), then live ones while a run is
   * under way; ends when the run ends or `signal` aborts.
   */
  async *events(options: { since?: number; signal?: AbortSignal } = {}): AsyncGenerator<TeamEvent> {
    const host = (await this.slot.find()) ?? this.slot.view();
    yield* host.log.read(options.since ?? 0, options.signal);
  }

  /**
   * Writes `message` (text) from the user to the member `to` (`leader` or a worker id): a
   * `message` in its inbox, durable when this resolves. Returns the message's seq. Throws a
   * `TeamError` `not-a-member` for anyone else. See docs/team-inbox.md.
   */
  async write(to: string, message: string): Promise<number> {
    const seqs = await (await this.#host()).desk.post(to, message);
    return seqs[0]!;
  }

  /** Writes `message` from the user to every member (each gets it once); returns the seqs, in join order. */
  async broadcast(message: string): Promise<number[]> {
    return (await this.#host()).desk.post(undefined, message);
  }

  /**
   * The workers' help requests kept (open, escalated to the user, and the last answered ones),
   * oldest first. One `escalated` waits for {@link answer}.
   */
  async helpRequests(): Promise<readonly HelpRequest[]> {
    return ((await this.slot.find()) ?? this.slot.view()).desk.helpRequests();
  }

  /** Answers help request `requestId` as the user: the worker's `team_help_request` call returns `answer`. */
  async answer(requestId: string, answer: string): Promise<HelpRequest> {
    return (await this.#host()).desk.answer(requestId, answer, 'user');
  }

  /**
   * Deletes a finished team (completed, stalled, failed or stopped): its record (board, inbox,
   * events) and the records of its task swarms (every attempt and their child swarms), from the
   * store; the team reads as never run afterwards and its id can run again. A team running or
   * paused is refused (`wrong-team-state`: stop it first), as is one that never ran
   * (`unknown-team`). Resolves with how many records were deleted.
   */
  delete(): Promise<number> {
    return this.slot.remove();
  }

  /** The team's host, read from the store; a team never run has none (`unknown-team`). */
  async #host(): Promise<TeamHost> {
    const host = await this.slot.find();
    if (!host) throw new TeamError(`team ${this.teamId} has not run`, 'unknown-team');
    // Its messages and answers are written by the runtime that drives it.
    if (host.reading) throw new TeamError(`team ${this.teamId} is driven by another runtime: write to it there`, 'team-in-use');
    return host;
  }

  /**
   * Changes a task: `addBlockers` (task ids it waits on as well; a cycle is refused),
   * `assignTo` (a worker id: the task waits for that worker), `cancel` (failed for good, its
   * dependents blocked). A running task can be reassigned or canceled: its attempt is stopped
   * (durably, wherever it runs) and not counted as a failure; a reassigned task's next attempt
   * is the named worker's. Refused (`wrong-state`): blockers for a running task, any change to a
   * finished one (completed or failed), assigning an escalated one (it can be canceled).
   * Resolves with the task once the change is durable. See docs/team-inbox.md.
   */
  async updateTask(taskId: string, update: TaskUpdate): Promise<Task> {
    return (await this.#host()).updateTask(taskId, update);
  }

  /** Pauses the run for a human: nothing new is assigned; running tasks finish. */
  async pause(message?: string): Promise<void> {
    ((await this.slot.find()) ?? this.slot.view()).pause(message);
  }

  /**
   * Continues a paused run. After an escalation, `decision` says what becomes of the task:
   * `retry` (default: a fresh round of attempts) or `skip` (failed for good; its dependents
   * stay blocked and the run ends `stalled` if nothing else can run).
   */
  async resume(options: { message?: string; decision?: 'retry' | 'skip' } | string = {}): Promise<void> {
    ((await this.slot.find()) ?? this.slot.view()).resume(typeof options === 'string' ? { message: options } : options);
  }

  /** Stops the run: workers stop, their tasks go back to the board. */
  async stop(reason = 'stopped by client'): Promise<void> {
    ((await this.slot.find()) ?? this.slot.view()).stop(reason);
  }
}
