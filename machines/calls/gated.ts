/**
 * A tool call that needs a human's approval before it runs (`tool({ needsApproval })`): no actor
 * runs it while it waits. Approved, it becomes the tool call it stands for (same child id, so the
 * round's order holds) and runs; rejected, the human's reason is its result, an error the model
 * reads. Announced as a tool call is, so readers of the stream see it was asked for.
 *
 * @module
 */
import { type CallKind, type CallResult, childIdFor } from './kind.js';
import { type ToolRoundCall, toolCall } from './tool.js';

/** A tool call the judge found gated: the tool call plus the approval id it waits on. */
export interface PlannedGatedCall {
  id: string;
  name: string;
  kind: 'gated';
  arguments: string;
  timeoutMs?: number;
  /** The approval's id: made in the actor with a random nonce, so no client can guess it. */
  approvalId: string;
}

/** A gated call of a round, waiting for its approval (no `result`) or rejected (its reason). */
export interface GatedRoundCall {
  kind: 'gated';
  id: string;
  name: string;
  /** The child that runs it once approved. */
  childId: string;
  arguments: string;
  timeoutMs?: number;
  approvalId: string;
  result?: CallResult;
}

/** The gated call kind. */
export const gatedCall = {
  handoff: false,
  open: ({ id, name, arguments: args, timeoutMs, approvalId }, turn, index) => ({
    id,
    name,
    kind: 'gated',
    childId: childIdFor('tool', turn, index),
    arguments: args,
    ...(timeoutMs !== undefined ? { timeoutMs } : {}),
    approvalId,
  }),
  announce(speaker, call, events) {
    toolCall.announce(speaker, call as unknown as ToolRoundCall, events);
  },
} satisfies CallKind<PlannedGatedCall, GatedRoundCall>;

/**
 * The tool call an approved gated call becomes: it runs now, its deadline (`timeoutMs`) counted
 * from the approval (`at`), not from the response that asked for it.
 */
export function approvedCall(call: GatedRoundCall, at: number | undefined): ToolRoundCall {
  const approved: ToolRoundCall = { kind: 'tool', id: call.id, name: call.name, childId: call.childId, arguments: call.arguments };
  if (call.timeoutMs !== undefined) approved.timeoutMs = call.timeoutMs;
  if (at !== undefined) approved.startedAt = at;
  return approved;
}
