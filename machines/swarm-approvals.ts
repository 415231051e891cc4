/**
 * The swarm machine's part of tool approval gates (`approvals.ts` holds the data): the guards,
 * the actions and the transitions of a pause for approvals. The swarm pauses as soon as a
 * response plans gated calls (its other calls run meanwhile: they need nobody's word, and a
 * slow handoff should not hold the question back), or when one of its agents asks
 * (`child.approvals`); each `APPROVE` / `REJECT` settles one pending approval (with `always`,
 * every pending one of its tool); the last one ends the pause as a resume of a round would.
 *
 * @module
 */
import { type ApprovalCommand, type ApprovalRequest, answerRound, approvalReason, type PendingApproval, pendingOf, settledBy, withApproved } from './approvals.js';
import { isHandoff, type PlannedCall, spawnOf } from './calls/index.js';
import type { Spawn } from './calls/kind.js';
import type { ToolRoundCall } from './calls/tool.js';
import { statusUpdate } from './event-builders.js';
import type { PauseReason, SwarmEventBody } from './events.js';
import { type Round, runningCalls, toolKey } from './round.js';
import type { SwarmCommand, SwarmContext } from './swarm.js';

type Args = { context: SwarmContext; event: SwarmCommand };

const isAnswer = (event: { type: string }): event is ApprovalCommand => event.type === 'APPROVE' || event.type === 'REJECT';

/** The pending approvals of the swarm's approval pause ([] when it is not paused for approvals). */
function pendingNow(context: SwarmContext): PendingApproval[] {
  return context.pause?.from === 'approval' ? (context.pause.reason.pendingApprovals ?? []) : [];
}

/** What `event` settles of the current approval pause ([] for an unknown or stale id: nothing changes). */
function settled(context: SwarmContext, event: { type: string }): PendingApproval[] {
  return isAnswer(event) ? settledBy(pendingNow(context), event) : [];
}

function answersLast(context: SwarmContext, event: { type: string }): boolean {
  const done = settled(context, event);
  return done.length > 0 && done.length === pendingNow(context).length;
}

/** Guards of approval pauses, spread into the swarm machine's `setup({ guards })`. */
export const approvalGuards = {
  wantsApproval: ({ event }: Args) => {
    const calls = (event as unknown as { output: { calls: PlannedCall[] } }).output.calls;
    for (const c of calls) if (c.kind === 'gated') return true;
    return false;
  },
  pausedForApproval: ({ context }: Args) => context.pause?.from === 'approval',
  answersApproval: ({ context, event }: Args) => settled(context, event).length > 0,
  answersLastApproval: ({ context, event }: Args) => answersLast(context, event),
  answersLastApprovalInHandoff: ({ context, event }: Args) => answersLast(context, event) && runningCalls(context.round).some(isHandoff),
};

/** The pause asking for `pending`: a new one named `approval:t<turn>:<n>`, or the current one with more. */
function pauseFor(context: SwarmContext, pending: PendingApproval[]): { pause: SwarmContext['pause']; pauses?: number } {
  const current = context.pause?.from === 'approval' ? context.pause.reason.pauseId : undefined;
  if (current !== undefined) return { pause: { reason: { ...approvalReason(pending), pauseId: current }, from: 'approval' } };
  const pauses = (context.pauses ?? 0) + 1;
  return { pause: { reason: { ...approvalReason(pending), pauseId: `approval:t${context.turn}:${pauses}` }, from: 'approval' }, pauses };
}

/**
 * The events of a pause for approvals: as the swarm machine's other pauses emit them, and the
 * status message also carries the pending approvals as an A2A data part (`{ pauseId,
 * pendingApprovals }`), so an A2A client reads the structured request from the message.
 */
function pausedEvents(reason: PauseReason): SwarmEventBody[] {
  const paused = statusUpdate('input-required', { type: 'paused', reason }, reason.message);
  if (paused.kind === 'status-update' && paused.status.message) {
    paused.status.message.parts.push({ kind: 'data', data: { pauseId: reason.pauseId, pendingApprovals: reason.pendingApprovals ?? [] } });
  }
  return [paused, { kind: 'internal:checkpoint', step: 'pause' }];
}

/** The child running the agent handoff whose scope is `scope` (its tool calls' key prefix). */
function agentChild(context: SwarmContext, scope: string): string | undefined {
  const round = context.round;
  if (!round) return undefined;
  for (const c of round.calls) if (c.kind === 'agent' && toolKey(context.swarmId, round.turn, c.id) === scope) return c.childId;
  return undefined;
}

/** What one step of an approval pause does: the context update, children to spawn, answers passed on, events. */
export interface ApprovalStep {
  update: Partial<SwarmContext>;
  spawns: { id: string; src: Spawn['src']; input: unknown }[];
  sends: { to: string; event: ApprovalCommand }[];
  events: SwarmEventBody[];
}

/**
 * The step an event makes of an approval pause (undefined: none): a response's round opened with
 * gated calls (its other calls spawned already) pauses; an agent's `child.approvals` joins the
 * pause or starts one; an answer settles what it names — the orchestrator's calls run (approved)
 * or get the reason (rejected), an agent's are passed on to the agent — and the pause lists what
 * is left.
 */
export function approvalStep(context: SwarmContext, event: { type: string }): ApprovalStep | undefined {
  if (event.type === 'child.approvals') {
    const asked = (event as ApprovalRequest).approvals;
    return asked.length === 0 ? undefined : pauseStep(context, [...pendingNow(context), ...asked]);
  }
  if (isAnswer(event)) return answerStep(context, event);
  return pauseStep(context, pendingOf(context.round, context.definitionId));
}

function pauseStep(context: SwarmContext, pending: PendingApproval[]): ApprovalStep {
  const update = pauseFor(context, pending);
  return { update, spawns: [], sends: [], events: pausedEvents(update.pause!.reason) };
}

function answerStep(context: SwarmContext, event: ApprovalCommand): ApprovalStep | undefined {
  const done = settled(context, event);
  if (done.length === 0) return undefined;
  const step: ApprovalStep = { update: {}, spawns: [], sends: [], events: [] };
  let round: Round | null = context.round;
  const approved: ToolRoundCall[] = [];
  for (const p of done) {
    const answer: ApprovalCommand = { ...event, approvalId: p.approvalId };
    if (p.scope !== undefined) {
      const child = agentChild(context, p.scope);
      if (child) step.sends.push({ to: child, event: answer });
    } else if (round) {
      const next = answerRound(round, answer.type === 'APPROVE' ? { ...answer, always: false } : answer);
      round = next.round;
      approved.push(...next.approved);
    }
  }
  const left = pendingNow(context).filter((p) => !done.includes(p));
  step.update = { round, pause: left.length > 0 ? pauseFor(context, left).pause : null };
  if (event.type === 'APPROVE' && event.always) step.update.approvedTools = withApproved(context.approvedTools, done[0]!.tool);
  for (const call of approved) {
    const { src, input } = spawnOf(call, {
      swarmId: context.swarmId,
      definitionId: context.definitionId,
      speaker: context.definitionId,
      key: toolKey(context.swarmId, round!.turn, call.id),
    });
    step.spawns.push({ id: call.childId, src, input });
  }
  const fact =
    event.type === 'APPROVE'
      ? {
          type: 'approval' as const,
          approvalId: event.approvalId,
          decision: 'approved' as const,
          ...(event.always ? { always: true } : {}),
          ...(event.at !== undefined ? { at: event.at } : {}),
        }
      : { type: 'approval' as const, approvalId: event.approvalId, decision: 'rejected' as const, reason: event.reason };
  step.events = [statusUpdate(left.length > 0 ? 'input-required' : 'working', fact), { kind: 'internal:checkpoint', step: 'approval' }];
  return step;
}

/**
 * How the paused swarm takes an answer: the last pending one ends the pause (back to its
 * handoffs, or to its round, which decides at once when nothing runs); another one is recorded;
 * an unknown or stale id changes nothing.
 */
export const answeredApproval = [
  { guard: 'answersLastApprovalInHandoff' as const, target: 'awaitingHandoff', actions: 'approvalStep' as const },
  { guard: 'answersLastApproval' as const, target: 'running.acting', actions: 'approvalStep' as const },
  { guard: 'answersApproval' as const, actions: 'approvalStep' as const },
];
