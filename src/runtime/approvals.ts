/**
 * The checks of an approval's answer (`client.approve` / `client.reject`), before it reaches a
 * swarm: fail closed. An id the swarm's current approval pause does not list — unknown, answered
 * already, from another swarm, another pause or an earlier run — is refused with a clear error
 * and nothing is recorded.
 *
 * @module
 */
import type { ApprovalCommand } from '../../machines/approvals.js';
import { SwarmError } from '../errors.js';
import type { SwarmHost } from './host.js';

export type { ApproveOptions } from '../client/client.js';

/** The text that marks an id the swarm does not list (the runtime then asks its child swarms). */
const NOT_PENDING = 'is not pending on swarm';

/** Whether `error` says an approval id is not pending there (see {@link approvalCommand}). */
export function isNotPending(error: unknown): boolean {
  return error instanceof SwarmError && error.message.includes(NOT_PENDING);
}

/** Refuses what is not an approval id at all (before anything is looked up). */
export function checkApprovalId(approvalId: unknown): string {
  if (typeof approvalId !== 'string' || approvalId.trim() === '') {
    throw new SwarmError(`An approval id is a non-empty string, got ${JSON.stringify(approvalId) ?? String(approvalId)}`, 'invalid-input');
  }
  return approvalId;
}

/** Refuses a rejection without a reason: the model reads it as the call's result. */
export function checkRejectReason(reason: unknown): string {
  if (typeof reason !== 'string' || reason.trim() === '') {
    throw new SwarmError("reject needs a reason (the model reads it as the call's result), got none", 'invalid-input');
  }
  return reason;
}

/** Whether the swarm's current pause lists `approvalId`. */
export function isPendingOn(host: SwarmHost, approvalId: string): boolean {
  const pause = host.context().pause;
  return pause?.from === 'approval' && (pause.reason.pendingApprovals ?? []).some((p) => p.approvalId === approvalId);
}

/**
 * `command` when the swarm waits for it right now, else a SwarmError (`wrong-state`) saying so:
 * built again right before the command is sent, so what it checked still holds.
 */
export function approvalCommand(host: SwarmHost, command: ApprovalCommand): ApprovalCommand {
  const swarmId = host.swarmId;
  if (host.status() !== 'paused' || host.context().pause?.from !== 'approval') {
    throw new SwarmError(
      `Approval "${command.approvalId}" ${NOT_PENDING} "${swarmId}": it waits for no approval (it is ${host.status()}); nothing changed`,
      'wrong-state',
    );
  }
  if (!isPendingOn(host, command.approvalId)) {
    throw new SwarmError(
      `Approval "${command.approvalId}" ${NOT_PENDING} "${swarmId}" (unknown, answered already, or from another swarm, pause or run); nothing changed`,
      'wrong-state',
    );
  }
  return command;
}
