/**
 * What a fork of a recorded swarm means, read from the source's journal alone: where the fork
 * point is (`atSeq`, `atTurn`), the source's events renamed for the new swarm, the calls with
 * side effects recorded after the point ({@link ForkedCall}), and the refusals the journal
 * decides (see {@link ForkError}). The replay to the point is `fork.ts`'s.
 *
 * @module
 */
import { isSpawned } from '../../machines/calls/index.js';
import type { ForkedCall, SwarmEvent } from '../../machines/events.js';
import { type Round, toolKey } from '../../machines/round.js';
import { isChunk } from '../events/chunks.js';
import type { PersistedMachineSnapshot } from './persisted.js';
import type { AwaitedCall } from './replay.js';

/**
 * Where a fork starts: exactly one of `atSeq` and `atTurn`.
 *
 * - `atSeq: N` — the fork's first N events are the source's events 1..N, and it goes on live
 *   right after event N. N must end a step (the source's machine waited there for a model, a
 *   tool or a human): a seq inside a step is refused, naming the step's last seq.
 * - `atTurn: N` — just before the orchestrator's model call of turn N (turn 1 is its first):
 *   turns 1..N-1 are replayed from the journal (the agents' steps they handed off to included),
 *   and turn N's model call is the first call made live.
 */
export type ForkPoint = { atSeq: number; atTurn?: undefined } | { atTurn: number; atSeq?: undefined };

/** Options of `runtime.fork`: the fork point, plus the new swarm's id and instructions. */
export type ForkOptions = ForkPoint & {
  /** The new swarm's id (a valid swarm id not in use); default: a new UUID. */
  newId?: string;
  /**
   * The orchestrator's instructions from the fork on (its system message and its config): the
   * replayed prefix keeps what was recorded, the live calls after the fork read these.
   */
  instructions?: string;
};

/** What `runtime.forkPlan` answers, and `runtime.fork` returns with the id it started. */
export interface ForkPlan {
  /** The swarm forked from. */
  sourceId: string;
  /** The new swarm's id (for a plan without `newId`, the one a fork would generate is not known yet: a placeholder). */
  swarmId: string;
  /** The fork point as a seq of the source: the fork holds the source's events 1..seq. */
  seq: number;
  /** The orchestrator's turns completed before the fork point (its next model call is turn + 1). */
  turn: number;
  /**
   * The calls with side effects the source recorded after the fork point, in the order it made
   * them: the new branch may make them again (under its own idempotency keys, so a tool that
   * deduplicates by key runs them again).
   */
  sideEffects: ForkedCall[];
}

/** Why a fork was refused (see {@link ForkError}). */
export type ForkRefusal =
  | 'invalid-point'
  | 'unknown-seq'
  | 'unknown-turn'
  | 'no-journal'
  | 'no-snapshot'
  | 'ended'
  | 'inside-step'
  | 'parallel-join'
  | 'child-in-flight'
  | 'diverged';

/**
 * A fork the runtime cannot make exactly, with the reason: a point that is not a seq or turn of
 * the source, a point inside a step or in the middle of a parallel join, a child swarm or remote
 * agent still running there, a source with no journal, or a journal that no longer replays.
 */
export class ForkError extends Error {
  override readonly name = 'ForkError';
  constructor(
    /** The swarm that was to be forked. */
    readonly sourceId: string,
    /** Why, for programs (an HTTP 409 body, a CLI exit). */
    readonly reason: ForkRefusal,
    detail: string,
  ) {
    super(`Cannot fork swarm "${sourceId}": ${detail}`);
  }
}

/** Whether an event is an orchestrator's model call (its step's own, or the summary made for it). */
function orchestratorCall(e: SwarmEvent, definitionId: string): e is Extract<SwarmEvent, { kind: 'internal:llm-call' }> {
  return e.kind === 'internal:llm-call' && e.scope === '' && e.agent === definitionId;
}

/**
 * The fork point as a count of the source's events (the fork's prefix), checked against the
 * journal: a seq it holds, a turn whose model call it recorded.
 */
export function forkSeq(sourceId: string, definitionId: string, recorded: readonly SwarmEvent[], point: ForkPoint): { seq: number; startsTurn?: number } {
  const { atSeq, atTurn } = point as { atSeq?: unknown; atTurn?: unknown };
  if ((atSeq === undefined) === (atTurn === undefined)) throw new ForkError(sourceId, 'invalid-point', 'give exactly one of atSeq and atTurn');
  const last = recorded.at(-1)?.seq ?? 0;
  if (last === 0) throw new ForkError(sourceId, 'no-journal', 'it has no recorded events');
  if (atSeq !== undefined) {
    if (typeof atSeq !== 'number' || !Number.isInteger(atSeq) || atSeq < 1)
      throw new ForkError(sourceId, 'invalid-point', `atSeq must be a whole number from 1 (got ${String(atSeq)})`);
    if (atSeq > last) throw new ForkError(sourceId, 'unknown-seq', `it has no event ${atSeq} (its last is ${last})`);
    return { seq: atSeq };
  }
  if (typeof atTurn !== 'number' || !Number.isInteger(atTurn) || atTurn < 1)
    throw new ForkError(sourceId, 'invalid-point', `atTurn must be a whole number from 1 (got ${String(atTurn)})`);
  let cut = recorded.findIndex((e) => orchestratorCall(e, definitionId) && e.turn === atTurn);
  if (cut < 0) {
    const turns = recorded.filter((e) => orchestratorCall(e, definitionId) && !e.summary).length;
    if (atTurn !== turns + 1) throw new ForkError(sourceId, 'unknown-turn', `it recorded no model call of turn ${atTurn} (it recorded ${turns} turn(s))`);
    // The turn whose model call failed, or is in flight: just before the failure, if any. The
    // replay checks that the machine was making that call there.
    cut = recorded.length;
    const end = recorded[cut - 1]!;
    if (end.kind === 'status-update' && end.metadata.type === 'completed') {
      throw new ForkError(sourceId, 'unknown-turn', `it completed in turn ${turns}: there is no turn ${atTurn}`);
    }
    if (end.kind === 'status-update' && end.final) cut--;
    // A stop records its checkpoint just before its final update.
    const stop = recorded[cut - 1];
    if (stop?.kind === 'internal:checkpoint' && stop.step === 'stop') cut--;
    while (cut > 0 && isChunk(recorded[cut - 1]!)) cut--;
    return { seq: cut, startsTurn: atTurn };
  }
  // The streamed chunks of that call came before it: they are the call's, not the prefix's.
  while (cut > 0 && isChunk(recorded[cut - 1]!)) cut--;
  return { seq: cut };
}

/**
 * Refuses `atTurn` for a turn the source never recorded a model call of, unless the machine at
 * the fork point was making that turn's model call (it failed, or is still in flight).
 */
export function checkStartsTurn(sourceId: string, snapshot: PersistedMachineSnapshot, turn: number | undefined): void {
  if (turn === undefined) return;
  const model = snapshot.children.model?.snapshot as { input?: { turn?: unknown } } | undefined;
  if (model?.input?.turn === turn) return;
  throw new ForkError(sourceId, 'unknown-turn', `it never started turn ${turn}: it ${snapshot.value === 'paused' ? 'was paused' : 'had stopped'} before its model call`);
}

/** How many orchestrator turns the first `seq` events completed. */
export function turnsBefore(definitionId: string, recorded: readonly SwarmEvent[], seq: number): number {
  let turn = 0;
  for (const e of recorded.slice(0, seq)) if (orchestratorCall(e, definitionId) && !e.summary) turn = Math.max(turn, e.turn);
  return turn;
}

/** Names in events that hold a swarm's id, or one derived from it (keys, scopes, child ids). */
const ID_FIELDS = new Set(['swarmId', 'taskId', 'id', 'contextId', 'messageId', 'key', 'childSwarmId', 'scope']);

/**
 * `value` with the swarm id `from` renamed `to` wherever a field of {@link ID_FIELDS} holds it
 * or an id derived from it (`from:…`, `from#…`): the source's events as the fork's machine
 * makes them, whose idempotency keys, agent scopes and child swarm ids derive from its own id.
 * Contents (messages, tool results) are left as recorded.
 */
export function renamed<T>(value: T, from: string, to: string): T {
  const rename = (v: unknown, field: string | undefined): unknown => {
    if (typeof v === 'string') {
      if (field === undefined || !ID_FIELDS.has(field)) return v;
      if (v === from) return to;
      return v.startsWith(`${from}:`) || v.startsWith(`${from}#`) ? to + v.slice(from.length) : v;
    }
    if (Array.isArray(v)) return v.map((x) => rename(x, undefined));
    if (v && typeof v === 'object') {
      const out: Record<string, unknown> = {};
      for (const [k, x] of Object.entries(v)) out[k] = rename(x, k);
      return out;
    }
    return v;
  };
  return rename(value, undefined) as T;
}

/**
 * The calls with side effects recorded after the first `seq` events (or before and still
 * without a result there): each tool call (`internal:tool-start`) and each child swarm started
 * (`swarm-handoff`), with the seq of its result when it has one, its key in the source and the
 * key the same call has in the fork `newId`.
 */
export function sideEffectsAfter(sourceId: string, newId: string, recorded: readonly SwarmEvent[], seq: number): ForkedCall[] {
  const out: ForkedCall[] = [];
  // The latest model call of each speaker: the turn and scope of the calls it planned.
  const planned = new Map<string, { turn: number; scope: string }>();
  for (let i = 0; i < recorded.length; i++) {
    const e = recorded[i]!;
    if (e.kind === 'internal:llm-call' && !e.summary) {
      for (const c of e.calls) planned.set(`${e.agent}|${c.id}`, { turn: e.turn, scope: e.scope });
      continue;
    }
    let call: Omit<ForkedCall, 'key' | 'newKey' | 'completedSeq'> | undefined;
    if (e.kind === 'internal:tool-start') {
      call = { kind: 'tool', name: e.toolName, callId: e.callId, agent: e.agent, arguments: e.arguments, seq: e.seq };
    } else if (e.kind === 'status-update' && e.metadata.type === 'swarm-handoff') {
      const f = e.metadata;
      call = { kind: 'swarm', name: f.to, callId: f.callId, agent: f.from, arguments: JSON.stringify(f.input ?? null), seq: e.seq };
    }
    if (!call) continue;
    const site = planned.get(`${call.agent}|${call.callId}`);
    const key = site ? toolKey(site.scope === '' ? sourceId : `${site.scope}:${call.agent}`, site.turn, call.callId) : '';
    const done = recorded.slice(i + 1).find((r) => completes(r, call.kind, call.callId, key));
    if (call.seq <= seq && done && done.seq <= seq) continue;
    out.push({ ...call, ...(done ? { completedSeq: done.seq } : {}), key, newKey: renamed({ key }, sourceId, newId).key });
  }
  return out;
}

/** Whether `e` records the result of the call with this id and key. */
function completes(e: SwarmEvent, kind: ForkedCall['kind'], callId: string, key: string): boolean {
  if (kind === 'tool') return e.kind === 'internal:tool-complete' && e.callId === callId && e.key === key;
  return e.kind === 'status-update' && e.metadata.type === 'handoff-result' && e.metadata.callId === callId;
}

/**
 * Refuses a fork point where the replayed machine waits on calls it cannot restore exactly: a
 * child swarm or remote agent still running (its own state is not forked), or a round whose
 * parallel calls are partly done (the middle of a parallel join) — the orchestrator's round or
 * an agent's, read from the machine's snapshot at the point.
 */
export function checkAwaited(sourceId: string, recorded: readonly SwarmEvent[], seq: number, awaiting: readonly AwaitedCall[], snapshot: PersistedMachineSnapshot): void {
  for (const a of awaiting) {
    if (a.kind !== 'swarm' && a.kind !== 'remote') continue;
    const started = recorded.find(
      (e) => e.seq <= seq && e.kind === 'status-update' && (e.metadata.type === 'swarm-handoff' || e.metadata.type === 'agent-handoff') && e.metadata.callId === a.callId,
    );
    throw new ForkError(
      sourceId,
      'child-in-flight',
      `at seq ${seq} its ${a.kind === 'swarm' ? 'child swarm' : 'remote agent'} call "${a.callId}" is still running (its own state is not forked): fork before seq ${started?.seq ?? seq} or after its result`,
    );
  }
  for (const { speaker, round } of roundsOf(snapshot)) {
    const spawned = round.calls.filter(isSpawned);
    const done = spawned.filter((c) => c.result !== undefined);
    const running = spawned.filter((c) => c.result === undefined);
    if (done.length === 0 || running.length === 0) continue;
    throw new ForkError(
      sourceId,
      'parallel-join',
      `seq ${seq} is in the middle of a parallel join: turn ${round.turn} of ${speaker} made ${spawned.length} calls in parallel; ${done.map((c) => `"${c.id}"`).join(', ')} had returned and ${running.map((c) => `"${c.id}"`).join(', ')} had not. Fork before that turn's model call or after its last result`,
    );
  }
}

/** The open rounds in a persisted swarm snapshot: the orchestrator's, and each running agent's (its child machines, at any depth). */
function* roundsOf(snapshot: PersistedMachineSnapshot): Generator<{ speaker: string; round: Round }> {
  const context = snapshot.context as { round?: Round | null; definitionId?: string; agentId?: string } | undefined;
  if (context?.round) yield { speaker: context.agentId ?? context.definitionId ?? '', round: context.round };
  for (const child of Object.values(snapshot.children)) {
    const s = child.snapshot as Partial<PersistedMachineSnapshot> | undefined;
    if (s && typeof s === 'object' && s.children && 'context' in s) yield* roundsOf(s as PersistedMachineSnapshot);
  }
}
