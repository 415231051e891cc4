/**
 * The REST approval commands (`POST …/approve`, `POST …/reject`): the body's fields checked
 * (400 with what is wrong), then `client.approve` / `client.reject`. The runtime refuses an id
 * that is not pending (409, nothing changed).
 *
 * @module
 */
import type { SwarmClient } from '../client/client.js';
import { HttpError, optionalString } from '../http/http.js';

/** The body a REST approval command takes, for its 400 message; undefined for other commands. */
export function approvalShape(command: string): string | undefined {
  if (command === 'approve') return '{ approvalId, always? }';
  if (command === 'reject') return '{ approvalId, reason }';
  return undefined;
}

/** Answers one approval from a REST body: `{ approvalId, always? }` or `{ approvalId, reason }`. */
export async function answerApproval(client: Pick<SwarmClient, 'approve' | 'reject'>, command: 'approve' | 'reject', body: Record<string, unknown>): Promise<void> {
  const approvalId = optionalString(body, 'approvalId');
  if (!approvalId) throw new HttpError(400, `\`approvalId\` is required: ${approvalShape(command)}`);
  if (command === 'approve') {
    if (body.always !== undefined && typeof body.always !== 'boolean') throw new HttpError(400, '`always` must be a boolean');
    await client.approve(approvalId, body.always === true ? { always: true } : {});
    return;
  }
  const reason = optionalString(body, 'reason');
  if (!reason?.trim()) throw new HttpError(400, "`reason` is required: the model reads it as the call's result");
  await client.reject(approvalId, reason);
}
