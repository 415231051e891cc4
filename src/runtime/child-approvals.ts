/**
 * Approvals of child swarms surfacing on their ancestors: a running swarm's result lists what
 * the child swarms it waits on (at any depth, on any runtime) wait for, each approval naming
 * its swarm, so the root's client sees every approval its run needs (and answers it there: see
 * `Commands.approve`).
 *
 * @module
 */
import type { PendingApproval } from '../../machines/approvals.js';
import type { SwarmResult } from '../store/result.js';

/**
 * `result` with the approvals its running child swarms wait for (`resultOf` reads a child's,
 * itself with its own children's); the same object when no child swarm runs or none waits.
 */
export async function withChildApprovals(result: SwarmResult, resultOf: (swarmId: string) => Promise<SwarmResult>): Promise<SwarmResult> {
  if (result.status !== 'running') return result;
  const children = (result.inFlight ?? []).flatMap((c) => (c.kind === 'swarm' && c.childSwarmId ? [c.childSwarmId] : []));
  if (children.length === 0) return result;
  const pending: PendingApproval[] = [];
  for (const childId of children) {
    const child = await resultOf(childId).catch(() => undefined);
    if (child?.status === 'paused') pending.push(...(child.reason.pendingApprovals ?? []).map((p) => ({ ...p, swarmId: p.swarmId ?? childId })));
    else if (child?.status === 'running') pending.push(...(child.pendingApprovals ?? []));
  }
  return pending.length > 0 ? { ...result, pendingApprovals: pending } : result;
}
