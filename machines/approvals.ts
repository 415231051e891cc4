/**
 * Tool approval gates, as plain data and pure functions shared by the swarm and agent machines:
 * which calls of a round wait for a human (`calls/gated.ts`), the pause that lists them, and what
 * an answer (`APPROVE` / `REJECT`) does to a round. The approval ids themselves are made in the
 * actors (`actors/judge.ts`) with a random nonce: a machine never invents one, so a replay reads
 * the recorded ids and nobody can guess a pending one.
 *
 * @module
 */
import type { CallResult } from './calls/kind.js';
import { approvedCall, type GatedRoundCall } from './calls/gated.js';
import type { ToolRoundCall } from './calls/tool.js';
import type { PauseReason } from './events.js';
import type { Round } from './round.js';

/** One call waiting for a human's approval, as a pause lists it. */
export type PendingApproval = {
  /** What `approve` / `reject` name: unguessable, made when the call was planned. */
  approvalId: string;
  /** The tool the call would run. */
  tool: string;
  /** Its arguments, as the model gave them (JSON). */
  arguments: string;
  /** The model's call id. */
  callId: string;
  /** Who made the call: the swarm's definition id for its orchestrator, else the agent's id. */
  agent: string;
  /** For an agent's call: the scope of its handoff (where the answer is passed on to). */
  scope?: string;
  /**
   * The child swarm whose pause lists it, when it surfaces on an ancestor's result (absent in
   * the pause of the swarm that asks).
   */
  swarmId?: string;
};

/** A client's answer to one approval, as the `approval` fact records it. */
export type ApprovalAnswer = {
  approvalId: string;
  decision: 'approved' | 'rejected';
  /** Approved for the rest of the run: later calls of the same tool need no approval. */
  always?: boolean;
  /** Why it was rejected: what the model reads as the call's (error) result. */
  reason?: string;
  /** When it was approved (ms since the epoch): an approved call's deadline counts from it. */
  at?: number;
};

/** Commands that answer an approval (see `SwarmCommand`); agents accept them too. */
export type ApprovalCommand = { type: 'APPROVE'; approvalId: string; always?: boolean; at?: number } | { type: 'REJECT'; approvalId: string; reason: string };

/** What an agent tells its swarm when a response of its asks for gated calls. */
export interface ApprovalRequest {
  type: 'child.approvals';
  approvals: PendingApproval[];
}

/** The round's gated calls still waiting for an answer. */
export function waitingCalls(round: Round | null): GatedRoundCall[] {
  return round ? round.calls.filter((c): c is GatedRoundCall => c.kind === 'gated' && c.result === undefined) : [];
}

/** Whether any call of the round waits for an approval. */
export function awaitsApproval(round: Round | null): boolean {
  if (!round) return false;
  for (const c of round.calls) if (c.kind === 'gated' && c.result === undefined) return true;
  return false;
}

/** The round's waiting calls as a pause lists them (`speaker` made them; `scope` for an agent's). */
export function pendingOf(round: Round | null, speaker: string, scope?: string): PendingApproval[] {
  return waitingCalls(round).map((c) => ({
    approvalId: c.approvalId,
    tool: c.name,
    arguments: c.arguments,
    callId: c.id,
    agent: speaker,
    ...(scope ? { scope } : {}),
  }));
}

/** The pause that asks for `pending` (its id is named by the machine). */
export function approvalReason(pending: readonly PendingApproval[]): PauseReason {
  const calls = pending.map((p) => `${p.tool}(${p.arguments.length > 120 ? `${p.arguments.slice(0, 120)}…` : p.arguments})`).join(', ');
  return {
    type: 'APPROVAL_NEEDED',
    message: `Approval needed before ${pending.length === 1 ? 'this call runs' : 'these calls run'}: ${calls}. Approve or reject each (client.approve / client.reject).`,
    ...(pending[0] ? { pendingApprovalId: pending[0].approvalId } : {}),
    pendingApprovals: [...pending],
  };
}

/**
 * The approvals an answer settles among `pending`: the one it names, and with `always` every
 * other of its tool (whoever made the call: the orchestrator or an agent).
 */
export function settledBy(pending: readonly PendingApproval[], command: ApprovalCommand): PendingApproval[] {
  const named = pending.find((p) => p.approvalId === command.approvalId);
  if (!named) return [];
  if (command.type === 'APPROVE' && command.always) return pending.filter((p) => p.tool === named.tool);
  return [named];
}

/** What an answer does to a round: the round after it, and the calls it approved (to run now). */
export function answerRound(round: Round, command: ApprovalCommand): { round: Round; approved: ToolRoundCall[] } {
  const named = round.calls.find((c): c is GatedRoundCall => c.kind === 'gated' && c.result === undefined && c.approvalId === command.approvalId);
  if (!named) return { round, approved: [] };
  if (command.type === 'REJECT') {
    const result: CallResult = { ok: false, content: `The call was rejected by a human: ${command.reason}` };
    return { round: { ...round, calls: round.calls.map((c) => (c === named ? { ...c, result } : c)) }, approved: [] };
  }
  const approved: ToolRoundCall[] = [];
  const calls = round.calls.map((c) => {
    const settles = c === named || (command.always === true && c.kind === 'gated' && c.result === undefined && c.name === named.name);
    if (!settles || c.kind !== 'gated') return c;
    const call = approvedCall(c, command.at);
    approved.push(call);
    return call;
  });
  return { round: { ...round, calls }, approved };
}

/** `tools` with `tool` added (sticky approvals of a run), unchanged when it is there. */
export function withApproved(tools: readonly string[] | undefined, tool: string): string[] {
  return tools?.includes(tool) ? [...tools] : [...(tools ?? []), tool];
}
