/**
 * `TeamClient`: the handle on one team of a runtime (`runtime.forTeam(def, teamId)`): run tasks,
 * wait for the run, read its board, inbox, metrics and events, pause, resume and stop it. A
 * client sees its own team only: its inbox view reads as members of that team, so a worker id
 * of another team is refused (`not-a-member`).
 *
 * @module
 */
import type { BlockedTask, BoardCounts, BoardSnapshot, Task, TaskSpec } from './board-types.js';
import type { TeamEvent } from './events.js';
import type { TeamHost } from './host.js';
import type { TeamRunMetrics, TeamRunSummary, TeamStatus } from './host-types.js';
import type { InboxMessage, InboxRead, InboxStats } from './inbox.js';

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
  /** The leader and the workers, in join order. */
  members(): readonly string[];
  /** The messages to `member` (a member of this team) after `since`. */
  read(member: string, options?: { since?: number }): InboxRead;
  /** Every retained message of the team, in order. */
  messages(): readonly InboxMessage[];
  stats(): InboxStats;
}

/** The handle on one team. */
export class TeamClient {
  constructor(private readonly host: TeamHost) {}

  /** The team instance id. */
  get teamId(): string {
    return this.host.teamId;
  }

  /** The team definition's id. */
  get definitionId(): string {
    return this.host.definition.id;
  }

  /** Where the team is now. */
  get status(): TeamStatus {
    return this.host.status;
  }

  /**
   * Adds tasks (with their dependencies) to the board and runs them: a new run when none is
   * under way, else the running one takes them. All or nothing: throws a `TeamError` (invalid
   * task, duplicate id, unknown dependency, cycle, `maxTasksPerBoard`, `maxTeams`).
   */
  async run(tasks: readonly TaskSpec[]): Promise<Task[]> {
    await this.host.ready;
    return this.host.run(tasks);
  }

  /**
   * Resolves when the run is paused for a human (`paused`, with the escalation) or ended
   * (`completed`, `stalled`, `failed`, `stopped`), with the board counts and the metrics.
   */
  async wait(): Promise<TeamRunSummary> {
    await this.host.ready;
    return this.host.wait();
  }

  /**
   * Resolves once the team's stored state is restored (after a restart); `board()`, `inbox()`
   * and `metrics()` read it from then on (every async method waits for it itself).
   */
  ready(): Promise<void> {
    return this.host.ready;
  }

  /** The board now. */
  board(): TeamBoardView {
    const board = this.host.board;
    return { tasks: board.tasks(), counts: board.counts(), blocked: board.blocked(), snapshot: board.snapshot() };
  }

  /** The team's inbox, read as members of this team. */
  inbox(): TeamInboxView {
    const { inbox, teamId } = this.host;
    return {
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
    return this.host.metrics();
  }

  /**
   * The team's events after `since` (default 0: from the first), then live ones while a run is
   * under way; ends when the run ends or `signal` aborts.
   */
  async *events(options: { since?: number; signal?: AbortSignal } = {}): AsyncGenerator<TeamEvent> {
    await this.host.ready;
    yield* this.host.log.read(options.since ?? 0, options.signal);
  }

  /** Pauses the run for a human: nothing new is assigned; running tasks finish. */
  async pause(message?: string): Promise<void> {
    await this.host.ready;
    this.host.pause(message);
  }

  /**
   * Continues a paused run. After an escalation, `decision` says what becomes of the task:
   * `retry` (default: a fresh round of attempts) or `skip` (failed for good; its dependents
   * stay blocked and the run ends `stalled` if nothing else can run).
   */
  async resume(options: { message?: string; decision?: 'retry' | 'skip' } | string = {}): Promise<void> {
    await this.host.ready;
    this.host.resume(typeof options === 'string' ? { message: options } : options);
  }

  /** Stops the run: workers stop, their tasks go back to the board. */
  async stop(reason = 'stopped by client'): Promise<void> {
    await this.host.ready;
    this.host.stop(reason);
  }
}
