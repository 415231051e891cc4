/**
 * `SwarmResult`: what `getResult()` answers, derived from a machine snapshot.
 *
 * @module
 */
import type { PauseReason } from '../../machines/events.js';
import type { GuardrailRejection } from '../../machines/guardrail.js';
import type { PendingApproval } from '../../machines/approvals.js';
import type { SwarmContext } from '../../machines/swarm.js';
import { runningCalls } from '../../machines/round.js';
import type { SwarmRoundCall } from '../../machines/calls/swarm.js';
import type { AgentRoundCall } from '../../machines/calls/agent.js';

/**
 * The state of a swarm as its client sees it. `running` covers the machine's `running` and
 * `awaitingHandoff` states; `currentAgent` names the agent a handoff is waiting on.
 */
export type SwarmResult<R = unknown> =
  | {
      status: 'running';
      currentTurn: number;
      maxTurns: number;
      currentAgent?: string;
      currentChildSwarm?: string;
      /** Every call of the current round still running, in the model's order (when any). */
      inFlight?: InFlightCall[];
      /**
       * Approvals its child swarms wait for (at any depth), each naming the child (`swarmId`):
       * they surface here, and `approve` / `reject` on this swarm's client answers them.
       */
      pendingApprovals?: PendingApproval[];
      /**
       * Child swarms it waits on (at any depth) that are paused, and why: a limit or budget that
       * tripped, a question, approvals. Each is answered on its own client (`forSwarm(def, swarmId)`);
       * approvals also on this one.
       */
      pausedChildren?: PausedChild[];
      /** The definition version (`planner@1`) it waits for, when no runtime here has it (see docs/deploys.md). */
      waitingFor?: string;
      /** Why it waits, naming the definition and version. */
      waitingReason?: string;
    }
  | {
      status: 'paused';
      reason: PauseReason;
      currentTurn: number;
      maxTurns: number;
      /** The definition version (`planner@1`) it waits for, when no runtime here has it (see docs/deploys.md). */
      waitingFor?: string;
      /** Why it waits, naming the definition and version. */
      waitingReason?: string;
    }
  | { status: 'completed'; result: R }
  /** `rejected`: a guardrail rejected the swarm; it names the guardrail and its step (A2A state `rejected`). */
  | { status: 'failed'; reason: string; rejected?: GuardrailRejection }
  | { status: 'stopped'; reason: string };

/** A paused child swarm as its running ancestor's result lists it. */
export interface PausedChild {
  swarmId: string;
  reason: PauseReason;
}

/**
 * A call of the current round that has not finished: a tool, an agent, a child swarm or a
 * remote agent.
 */
export interface InFlightCall {
  callId: string;
  kind: 'tool' | 'agent' | 'swarm' | 'remote';
  /** The tool name, agent id, child swarm definition id or remote agent name. */
  target: string;
  childSwarmId?: string;
}

/** The unfinished top-level states: a swarm in one of them is restored and driven on. */
export const UNFINISHED_STATUSES = ['running', 'awaitingHandoff', 'paused'] as const;

/** Every top-level state of the swarm machine, unfinished ones first. */
export const SWARM_STATUSES = [...UNFINISHED_STATUSES, 'completed', 'failed', 'stopped'] as const;

/** The machine's top-level states. */
export type SwarmStatus = (typeof SWARM_STATUSES)[number];

/** Top-level state of a machine state value. */
export function topState(value: unknown): SwarmStatus {
  return (typeof value === 'string' ? value : Object.keys(value as object)[0]) as SwarmStatus;
}

/** Whether a status is final. */
export function isFinal(status: SwarmStatus): boolean {
  return status === 'completed' || status === 'failed' || status === 'stopped';
}

/** Derives the client-facing result from a snapshot's state value and context. */
export function resultOf(value: unknown, context: SwarmContext): SwarmResult {
  const status = topState(value);
  const base = { currentTurn: context.turn, maxTurns: context.config.maxTurns };
  switch (status) {
    case 'running':
    case 'awaitingHandoff': {
      const running = runningCalls(context.round);
      const agent = running.find((c): c is AgentRoundCall => c.kind === 'agent')?.agentId;
      const child = running.find((c): c is SwarmRoundCall => c.kind === 'swarm')?.childSwarmId;
      const inFlight = running.map(
        (c): InFlightCall => ({
          callId: c.id,
          kind: c.kind,
          target: c.kind === 'tool' ? c.name : c.kind === 'swarm' ? c.definitionId : c.agentId,
          ...(c.kind === 'swarm' ? { childSwarmId: c.childSwarmId } : {}),
        }),
      );
      return {
        status: 'running',
        ...base,
        ...(agent ? { currentAgent: agent } : {}),
        ...(child ? { currentChildSwarm: child } : {}),
        ...(inFlight.length > 0 ? { inFlight } : {}),
      };
    }
    case 'paused':
      return { status: 'paused', reason: context.pause!.reason, ...base };
    default: {
      const outcome = context.outcome;
      if (!outcome) return { status: 'failed', reason: 'Swarm ended without an outcome.' };
      return outcome.status === 'completed' ? { status: 'completed', result: outcome.result } : outcome;
    }
  }
}
