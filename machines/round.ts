/**
 * One round of the agent loop as plain data: the calls a model response asked for (each of a kind
 * in `calls/`), which of them are still running, and their results once they arrive. Shared by
 * the swarm and agent machines; every function here is pure.
 *
 * A round lives in the machines' context, so its shape is part of every persisted snapshot
 * (see `SWARM_MACHINE_VERSION` in `swarm.ts`).
 *
 * @module
 */
import { isUsageByModel } from './usage.js';
import { filesOf } from './file-parts.js';
import { isSpawned, openCall, type PlannedCall, type RoundCall, type SpawnedCall } from './calls/index.js';
import type { PauseRoundCall } from './calls/pause.js';
import type { CallResult } from './calls/kind.js';
import { errorText } from './error-text.js';
import type { ChatMessage, ModelResponse } from './messages.js';

/** The round in flight: the turn that produced it and its calls in the model's order. */
export interface Round {
  turn: number;
  calls: RoundCall[];
  /**
   * When the response that opened the round was taken (ms since the epoch), what its calls'
   * deadlines count from; persisted with the round, so a restart keeps the same deadlines.
   * Absent in rounds stored before timeouts existed (their calls then count from their restart).
   */
  openedAt?: number;
}

/** Builds the round for planned calls (each opened by its kind, see `calls/`). */
export function openRound(turn: number, planned: readonly PlannedCall[], swarmId = '', openedAt?: number): Round {
  const round: Round = { turn, calls: planned.map((call, index) => openCall(call, turn, index, swarmId)) };
  if (openedAt !== undefined) round.openedAt = openedAt;
  return round;
}

/** Whether a call still waits for its child actor (pause calls wait for a human, not a child). */
function isRunning(call: RoundCall): call is SpawnedCall {
  return call.result === undefined && isSpawned(call);
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
  // A tool's files live in its recorded event (and artifact), not in the snapshot.
  const { files: _files, ...kept } = result;
  return { ...round, calls: round.calls.map((c) => (c === call ? { ...c, result: kept } : c)) };
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
    const o = output as { ok: unknown; content: unknown; agentId?: unknown; usage?: unknown };
    const result: CallResult = { ok: o.ok === true, content: String(o.content) };
    if (typeof o.agentId === 'string') result.agentId = o.agentId;
    // A child's (or a peer's) usage by model, counted only if it is one.
    if (isUsageByModel(o.usage) && Object.keys(o.usage).length > 0) result.usage = o.usage;
    if ((o as { failsSwarm?: unknown }).failsSwarm === true) result.failsSwarm = true;
    const listed = (o as { files?: unknown }).files;
    const files = Array.isArray(listed) ? filesOf(listed) : undefined;
    if (files) result.files = files;
    return result;
  }
  return { ok: false, content: 'The call produced no result.' };
}
