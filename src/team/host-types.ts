/**
 * What a team host needs from its runtime (starting, waiting on and stopping the task swarms,
 * and the runtime's swarm events for heartbeats), and what a team run reports.
 *
 * @module
 */
import type { SwarmEvent } from '../../machines/events.js';
import type { Escalation, TeamMetrics } from '../../machines/team-leader.js';
import type { SwarmResult } from '../result.js';
import type { BlockedTask, BoardCounts } from './board-types.js';

/** The runtime as a team host uses it. */
export interface TeamRuntimePort {
  startSwarm(definitionId: string, swarmId: string, input: unknown): Promise<void>;
  wait(swarmId: string): Promise<SwarmResult>;
  stop(swarmId: string, reason: string): Promise<void>;
  /** Whether a swarm with this id was ever started (then a re-run attaches to it). */
  exists(swarmId: string): Promise<boolean>;
  /** Every swarm event of the runtime (task swarms' progress is their workers' heartbeat). */
  subscribe(listener: (event: SwarmEvent) => void): () => void;
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
  metrics: TeamRunMetrics;
}
