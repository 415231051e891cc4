/**
 * Pauses of child swarms surfacing on their ancestors: a running swarm's result lists the child
 * swarms it waits on (at any depth, on any runtime) that are paused, with why
 * (`pausedChildren`: a limit, a budget, a question), and the approvals they wait for, each
 * naming its swarm (`pendingApprovals`), so the root's client sees what its run waits for (and
 * answers approvals there: see `Commands.approve`; a child's other pauses are answered on the
 * child's client, by its id).
 *
 * @module
 */
import type { PendingApproval } from '../../machines/approvals.js';
import type { PausedChild, SwarmResult } from '../store/result.js';

/**
 * `result` with its paused child swarms and the approvals they wait for (`resultOf` reads a
 * child's, itself with its own children's); the same object when no child swarm runs or none waits.
 */
export async function withChildPauses(result: SwarmResult, resultOf: (swarmId: string) => Promise<SwarmResult>): Promise<SwarmResult> {
  if (result.status !== 'running') return result;
  const children = (result.inFlight ?? []).flatMap((c) => (c.kind === 'swarm' && c.childSwarmId ? [c.childSwarmId] : []));
  if (children.length === 0) return result;
  const pending: PendingApproval[] = [];
  const paused: PausedChild[] = [];
  for (const childId of children) {
    const child = await resultOf(childId).catch(() => undefined);
    if (child?.status === 'paused') {
      paused.push({ swarmId: childId, reason: child.reason });
      pending.push(...(child.reason.pendingApprovals ?? []).map((p) => ({ ...p, swarmId: p.swarmId ?? childId })));
    } else if (child?.status === 'running') {
      paused.push(...(child.pausedChildren ?? []));
      pending.push(...(child.pendingApprovals ?? []));
    }
  }
  if (paused.length === 0) return result;
  return { ...result, pausedChildren: paused, ...(pending.length > 0 ? { pendingApprovals: pending } : {}) };
}
