/**
 * How `xswarm run` answers a pause for approvals from its human: one line per pending call —
 * `y`/`yes` approves it, `a`/`always` approves its tool for the rest of the run, anything else
 * rejects it with that text as the reason the model reads.
 *
 * @module
 */
import type { SwarmClient } from '../client/client.js';
import type { SwarmResult } from '../store/result.js';
import type { PendingApproval } from '../../machines/approvals.js';

/** The approval a paused result waits for first, if it is a pause for approvals. */
export function nextApproval(state: SwarmResult): PendingApproval | undefined {
  return state.status === 'paused' ? state.reason.pendingApprovals?.[0] : undefined;
}

/** The question asked for one pending approval. */
export function approvalQuestion(approval: PendingApproval): string {
  return `approve ${approval.tool}(${approval.arguments}) for ${approval.agent}? y = yes, a = always (this tool, for the rest of the run), or the reason to reject it`;
}

/** Answers `approval` with the human's line (see the module comment). */
export async function answerApproval(client: SwarmClient, approval: PendingApproval, line: string): Promise<void> {
  const word = line.trim().toLowerCase();
  if (word === 'y' || word === 'yes') return client.approve(approval.approvalId);
  if (word === 'a' || word === 'always') return client.approve(approval.approvalId, { always: true });
  return client.reject(approval.approvalId, line.trim() || 'Rejected from the command line');
}

/** The commands that answer `approval` later, for the hint of a swarm left paused. */
export function approvalHint(command: string, swarmId: string, approval: PendingApproval, rest: string): string {
  return `  ${command} approve ${swarmId} ${approval.approvalId} [--always]${rest}\n  ${command} reject ${swarmId} ${approval.approvalId} '<reason>'${rest}\n`;
}
