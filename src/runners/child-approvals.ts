/**
 * A child swarm's approvals, as its parent's stream relays them: the child's pause for
 * approvals is relayed as an `input-required` status (the parent's task waits for a human too)
 * whose message carries the pending approvals, each naming the child, as an A2A data part; the
 * child's last answered approval is relayed as its resumption.
 *
 * @module
 */
import type { SwarmEvent, SwarmEventBody, SwarmFact } from '../../machines/events.js';

type Lifecycle = Pick<Extract<SwarmFact, { type: 'child-swarm' }>, 'lifecycle' | 'reason'>;

/** The lifecycle step a child's `approval` fact stands for: resumed once nothing is left to answer. */
export function approvalLifecycle(event: SwarmEvent): Lifecycle | undefined {
  return event.kind === 'status-update' && event.metadata.type === 'approval' && event.status.state === 'working' ? { lifecycle: 'resumed' } : undefined;
}

/** `relayed` (the parent's `child-swarm` status) as the child's pause for approvals asks it, else unchanged. */
export function withChildApprovals(relayed: SwarmEventBody, event: SwarmEvent, childSwarmId: string): SwarmEventBody {
  if (relayed.kind !== 'status-update' || event.kind !== 'status-update' || event.metadata.type !== 'paused') return relayed;
  const pending = event.metadata.reason.pendingApprovals;
  if (!pending?.length) return relayed;
  const approvals = pending.map((p) => ({ ...p, swarmId: p.swarmId ?? childSwarmId }));
  return {
    ...relayed,
    status: {
      state: 'input-required',
      message: {
        kind: 'message',
        role: 'agent',
        parts: [
          { kind: 'text', text: event.metadata.reason.message },
          { kind: 'data', data: { pendingApprovals: approvals } },
        ],
      },
    },
  };
}
