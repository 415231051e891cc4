/**
 * One round of the agent loop as plain data: the calls a model response asked for, which of
 * them are still running, and their results once they arrive. Shared by the swarm and agent
 * machines; every function here is pure.
 *
 * A round lives in the machines' context, so its shape is part of every persisted snapshot
 * (see `SWARM_MACHINE_VERSION` in `swarm.ts`).
 *
 * @module
 */
import type { CallResult } from './contracts.js';
import { errorText } from './error-text.js';
import type { PauseReason } from './events.js';
import type { ChatMessage, ModelResponse } from './messages.js';
import type { Customization, PlannedCall } from './plan.js';

/** A regular tool call, run by a `runTool` child. */
export interface ToolRoundCall {
  kind: 'tool';
  id: string;
  name: string;
  /** The spawned actor running it. */
  childId: string;
  /** Raw JSON arguments, as the tool actor receives them. */
  arguments: string;
  result?: CallResult;
}

/** A handoff to an agent of the swarm, run by an `agent` child (the agent machine). */
export interface AgentRoundCall {
  kind: 'agent';
  id: string;
  name: string;
  childId: string;
  agentId: string;
  request: string;
  result?: CallResult;
}

/** A handoff to an agent served over A2A, run by a `remoteAgent` child. */
export interface RemoteRoundCall {
  kind: 'remote';
  id: string;
  name: string;
  childId: string;
  agentId: string;
  /** Where the remote agent's card is. */
  url: string;
  request: string;
  result?: CallResult;
}

/** A handoff to a child swarm, run by a `childSwarm` child. */
export interface SwarmRoundCall {
  kind: 'swarm';
  id: string;
  name: string;
  childId: string;
  definitionId: string;
  /** The child swarm's id, derived from the parent's snapshot (see {@link openRound}). */
  childSwarmId: string;
  input: unknown;
  customization?: Customization;
  result?: CallResult;
}

/** The model asked for a human: no child runs it; the human's answer becomes its result. */
export interface PauseRoundCall {
  kind: 'pause';
  id: string;
  name: string;
  pauseReason: PauseReason;
  result?: CallResult;
}

/** A call rejected before running: its result is the error text the model reads. */
export interface InvalidRoundCall {
  kind: 'invalid';
  id: string;
  name: string;
  result: CallResult;
}

/** A call of the current round, discriminated by `kind`. */
export type RoundCall = ToolRoundCall | AgentRoundCall | RemoteRoundCall | SwarmRoundCall | PauseRoundCall | InvalidRoundCall;

/** A call that a spawned child actor runs (`childId` names it). */
export type SpawnedCall = ToolRoundCall | AgentRoundCall | RemoteRoundCall | SwarmRoundCall;

/** The round in flight: the turn that produced it and its calls in the model's order. */
export interface Round {
  turn: number;
  calls: RoundCall[];
}

/** Whether a call (planned or of a round) is a handoff: to an agent, a remote agent or a child swarm. */
export function isHandoff<C extends { kind: string }>(call: C): call is Extract<C, { kind: 'agent' | 'remote' | 'swarm' }> {
  return call.kind === 'agent' || call.kind === 'remote' || call.kind === 'swarm';
}

/**
 * Child actor id for the call at `index` of the round produced at `turn`.
 * Turn-scoped so that a model reusing call ids across rounds never collides.
 */
export function childIdFor(kind: SpawnedCall['kind'], turn: number, index: number): string {
  return `${kind}:${turn}:${index}`;
}

/**
 * Builds the round for planned calls. Invalid calls get their error result at once; pause
 * calls wait for the human's answer.
 */
export function openRound(turn: number, planned: readonly PlannedCall[], swarmId = ''): Round {
  const calls = planned.map((call, index): RoundCall => {
    const { id, name } = call;
    switch (call.kind) {
      case 'tool':
        return { id, name, kind: 'tool', childId: childIdFor('tool', turn, index), arguments: call.arguments };
      case 'agent':
        return { id, name, kind: 'agent', childId: childIdFor('agent', turn, index), agentId: call.agentId, request: call.request };
      case 'remote':
        return {
          id,
          name,
          kind: 'remote',
          childId: childIdFor('remote', turn, index),
          agentId: call.agentId,
          url: call.url,
          request: call.request,
        };
      case 'swarm':
        return {
          id,
          name,
          kind: 'swarm',
          childId: childIdFor('swarm', turn, index),
          definitionId: call.definitionId,
          // Derived from the parent's snapshot, so a restored parent finds the same child.
          childSwarmId: `${swarmId}:t${turn}:${index}`,
          input: call.input,
          ...(call.customization ? { customization: call.customization } : {}),
        };
      case 'pause':
        return { id, name, kind: 'pause', pauseReason: call.reason };
      case 'invalid':
        return { id, name, kind: 'invalid', result: { ok: false, content: call.error } };
    }
  });
  return { turn, calls };
}

/** Whether a call still waits for its child actor (pause calls wait for a human, not a child). */
function isRunning(call: RoundCall): call is SpawnedCall {
  return call.result === undefined && call.kind !== 'pause' && call.kind !== 'invalid';
}

/** Calls still waiting for a child actor, in the model's order. */
export function runningCalls(round: Round | null): SpawnedCall[] {
  return round ? round.calls.filter(isRunning) : [];
}

/** The running call that the child `childId` runs, if any. */
export function runningCall(round: Round | null, childId: string): SpawnedCall | undefined {
  // A loop, not runningCalls(): guards and actions ask this for every finished call.
  if (!round) return undefined;
  for (const c of round.calls) if (isRunning(c) && c.childId === childId) return c;
  return undefined;
}

/** Whether `childId` is the last running call of the round. */
export function isLastRunning(round: Round | null, childId: string): boolean {
  if (!round) return false;
  let last = false;
  for (const c of round.calls) {
    if (!isRunning(c)) continue;
    if (c.childId !== childId) return false;
    last = true;
  }
  return last;
}

/** The pause call of the round that still waits for a human, if any. */
export function pendingPause(round: Round | null): PauseRoundCall | undefined {
  return round?.calls.find((c): c is PauseRoundCall => c.kind === 'pause' && c.result === undefined);
}

/**
 * The round with `result` recorded for `call`, one of its calls (the machines find it with
 * {@link runningCall} before they record its result).
 */
export function recordResult(round: Round, call: RoundCall, result: CallResult): Round {
  return { ...round, calls: round.calls.map((c) => (c === call ? { ...c, result } : c)) };
}

/** The round with the human's answer recorded as the result of its pending pause call. */
export function answerPause(round: Round, content: string): Round {
  const call = pendingPause(round);
  return call ? recordResult(round, call, { ok: true, content }) : round;
}

/** Tool messages for every call of a finished round, in the model's call order. */
export function resultMessages(round: Round): ChatMessage[] {
  return round.calls.map((c) => ({
    role: 'tool' as const,
    toolCallId: c.id,
    content: c.result?.content ?? 'No result.',
  }));
}

/** The assistant message that records a model response (the one that opens a round) in a conversation. */
export function assistantMessage(response: ModelResponse): ChatMessage {
  const message: ChatMessage = { role: 'assistant', content: response.text ?? '' };
  if (response.toolCalls && response.toolCalls.length > 0) message.toolCalls = response.toolCalls;
  return message;
}

/**
 * The idempotency key of a call: stable across restarts because every part is in the
 * snapshot. `prefix` is the swarm id for the orchestrator's calls and the handoff scope plus
 * agent id for an agent's.
 */
export function toolKey(prefix: string, turn: number, callId: string): string {
  return `${prefix}:t${turn}:${callId}`;
}

/** A child actor's done or error event, as a machine receives it. */
export type ChildEvent = { type: string; actorId: string; output?: unknown; error?: unknown };

/**
 * The result of a finished child actor: its output, or its error as a failed result. The
 * same text for every machine, so a model reads failures one way.
 */
export function callResultOf(event: ChildEvent): CallResult {
  if (event.type.startsWith('xstate.error.actor.')) return { ok: false, content: `Call failed: ${errorText(event.error)}` };
  return toCallResult(event.output);
}

/** Normalizes what a finished child actor produced into a {@link CallResult}. */
function toCallResult(output: unknown): CallResult {
  if (output && typeof output === 'object' && 'ok' in output && 'content' in output) {
    const o = output as { ok: unknown; content: unknown; agentId?: unknown };
    const result: CallResult = { ok: o.ok === true, content: String(o.content) };
    if (typeof o.agentId === 'string') result.agentId = o.agentId;
    return result;
  }
  return { ok: false, content: 'The call produced no result.' };
}
