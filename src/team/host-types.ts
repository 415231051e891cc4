/**
 * What a team host needs from its runtime (starting, waiting on, following and stopping the task
 * swarms, and the runtime's swarm events for heartbeats), and what a team run reports.
 *
 * @module
 */
import type { InspectionEvent, Observer } from 'xstate';
import type { SwarmEvent } from '../../machines/events.js';
import type { Escalation, TeamMetrics } from '../../machines/team/leader.js';
import type { SwarmResult } from '../store/result.js';
import type { UsageTotals } from '../usage/report.js';
import type { BlockedTask, BoardCounts } from './board-types.js';
import type { BudgetAccountRef } from '../../machines/budget.js';

/** The runtime as a team host uses it. */
export interface TeamRuntimePort {
  /**
   * The runtime's inspection observer (`createRuntime({ inspect })`): the team's leader and
   * workers report to it. Absent: their actors are made without one.
   */
  readonly inspect?: Observer<InspectionEvent> | ((event: InspectionEvent) => void);
  /** Throws (a `RuntimeDrainingError`) when the runtime takes no new work: `what` names the refused work. */
  accepting?(what: string): void;
  startSwarm(definitionId: string, swarmId: string, input: unknown, options?: { budgetOuter?: BudgetAccountRef[] }): Promise<void>;
  /**
   * The swarm's result once it is paused or has ended; rejects when `signal` aborts (the attempt
   * was released, its worker respawned or the team stopped), leaving no watch or poll behind.
   */
  wait(swarmId: string, signal: AbortSignal): Promise<SwarmResult>;
  /**
   * Stops the swarm wherever it is held. Rejects when that cannot be done now (a SwarmError:
   * `not-live` when nobody holding or hosting it answered); the team host tries again.
   */
  stop(swarmId: string, reason: string): Promise<void>;
  /** The swarm's stored result, or undefined when it was never started (then a re-run starts it). */
  stored(swarmId: string): Promise<SwarmResult | undefined>;
  /** Every swarm event of the runtime (task swarms' progress is their workers' heartbeat). */
  subscribe(listener: (event: SwarmEvent) => void): () => void;
  /**
   * Follows an attempt's swarm until `signal` aborts. One hosted by another runtime (a worker
   * process, over NATS) emits no events here: its call is kept alive (sent again, under the same
   * swarm id, when its holder's heartbeats stop, so another worker process takes it over) and
   * `onProgress` hears each heartbeat and each stored change. A local swarm needs nothing (its
   * events are its progress): a no-op.
   */
  follow(definitionId: string, swarmId: string, input: unknown, onProgress: () => void, signal: AbortSignal): void;
  /**
   * The activity of a swarm driven by this runtime, with the child swarms it hands off to here:
   * how many events their hosts numbered so far, durable or not, and whether a commit of theirs
   * is in flight. Undefined when none of them is live here (a swarm hosted in another process:
   * its heartbeats are its progress, see `follow`). Read by the team's watchdog, so that a slow
   * store (its commits, hence its durable events, late) does not make a working worker silent.
   */
  activity(swarmId: string): SwarmActivity | undefined;
  /** The usage of these swarms (a team's task attempts), each rolled up over its children, summed and priced. */
  usage(swarmIds: readonly string[]): Promise<UsageTotals>;
  /**
   * Whether the store can be reached now: false while NATS is down (the JetStream store), when
   * no heartbeat or stored change of an attempt can reach the team, so nobody's silence shows.
   */
  reachable(): boolean;
}

/** What {@link TeamRuntimePort.activity} reports. */
export interface SwarmActivity {
  /** Events numbered so far by the swarm's host and its local children's. */
  events: number;
  /** A commit of one of them is in flight. */
  committing: boolean;
}

/** Where a team is: not run yet, running a batch, paused for a human, or how its last run ended. */
export type TeamStatus = 'idle' | 'running' | 'paused' | 'completed' | 'stalled' | 'failed' | 'stopped';

/** Seed 004's metrics of a run, with its wall-clock duration (for speedup versus one worker). */
export interface TeamRunMetrics extends TeamMetrics {
  /** From the run's start to its end (or to now, while it runs); 0 before the first run. */
  durationMs: number;
  /** Inbox deliveries by message type. */
  messagesByType: Readonly<Record<string, number>>;
}

/** What `wait()` resolves with: where the team is and its board and metrics then. */
export interface TeamRunSummary {
  status: Exclude<TeamStatus, 'running'>;
  teamId: string;
  counts: BoardCounts;
  /** Tasks that cannot run because a task upstream failed or escalated. */
  blocked: readonly BlockedTask[];
  /** While paused for an escalation: the task, its last error and the failing worker. */
  escalation?: Escalation;
  /** Why the run failed or was stopped, or why the team is paused. */
  reason?: string;
  /**
   * `'help'` while a run under way has help requests escalated to the user, unanswered (see
   * {@link openHelp}): those workers wait for `teamClient.answer`, the others keep working
   * (the team is not paused for it). Absent otherwise.
   */
  waitingFor?: 'help';
  /** With {@link waitingFor}: the escalated requests to answer, oldest first. */
  openHelp?: readonly OpenHelp[];
  metrics: TeamRunMetrics;
}

/** A help request escalated to the user, as a team's summary names it: what to answer. */
export interface OpenHelp {
  /** What `teamClient.answer(id, …)` (REST `POST …/help/:id`) takes. */
  id: string;
  workerId: string;
  taskId: string;
  question: string;
  /** When it was asked (epoch ms). */
  at: number;
}
