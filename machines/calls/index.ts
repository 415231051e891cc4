/**
 * The table of call kinds: each kind of call a model response can plan is a file of this folder
 * and one line in {@link CALL_KINDS}; each kind a child actor runs brings its slot, one line in
 * {@link CALL_SLOTS} (the agent machine is the `agent` slot itself, see `../swarm.ts`). A new
 * kind — an approval, a budget reservation — is a new file here, its line in these tables, and
 * its step in `actors/`.
 *
 * @module
 */
import type { SwarmEventBody } from '../events.js';
import { toolFilesEvent } from '../file-parts.js';
import { agentCall, type AgentRoundCall, type PlannedAgentCall } from './agent.js';
import { type GatedRoundCall, gatedCall, type PlannedGatedCall } from './gated.js';
import { type InvalidRoundCall, invalidCall, type PlannedInvalidCall } from './invalid.js';
import type { CallKind, CallResult, CallSite, Spawn } from './kind.js';
import { type PauseRoundCall, pauseCall, type PlannedPauseCall } from './pause.js';
import { type PlannedRemoteCall, remoteAgentSlot, remoteCall, type RemoteRoundCall } from './remote.js';
import { childSwarmSlot, type PlannedSwarmCall, swarmCall, type SwarmRoundCall } from './swarm.js';
import { type PlannedToolCall, runToolSlot, toolCall, type ToolRoundCall } from './tool.js';

/** Every kind of call, by the `kind` its planned and round calls carry. */
export const CALL_KINDS = {
  tool: toolCall,
  agent: agentCall,
  remote: remoteCall,
  swarm: swarmCall,
  pause: pauseCall,
  invalid: invalidCall,
  gated: gatedCall,
} as const;

/**
 * The slots of the calls run by child actors, as `setup({ actors })` declares them (the runtime
 * fills them with `machine.provide({ actors })`, see `actors/index.ts`). Declared by key, so
 * every snapshot stays persistable (inline actor logic is not).
 */
export const CALL_SLOTS = { runTool: runToolSlot, childSwarm: childSwarmSlot, remoteAgent: remoteAgentSlot } as const;

/**
 * A tool call after the runtime parsed and checked it against the definition.
 * `invalid` carries the error text that goes back to the model as the tool result.
 */
export type PlannedCall = PlannedToolCall | PlannedAgentCall | PlannedRemoteCall | PlannedSwarmCall | PlannedPauseCall | PlannedInvalidCall | PlannedGatedCall;

/** A call of the current round, discriminated by `kind`. */
export type RoundCall = ToolRoundCall | AgentRoundCall | RemoteRoundCall | SwarmRoundCall | PauseRoundCall | InvalidRoundCall | GatedRoundCall;

/** The kinds of call a child actor runs. */
type SpawnedKind = { [K in keyof typeof CALL_KINDS]: (typeof CALL_KINDS)[K] extends { run: object } ? K : never }[keyof typeof CALL_KINDS];

/** A call that a spawned child actor runs (`childId` names it). */
export type SpawnedCall = Extract<RoundCall, { kind: SpawnedKind }>;

/** The kinds run by child actors, for the hot paths that ask (a set lookup, not the table's). */
const SPAWNED: ReadonlySet<string> = new Set(Object.entries(CALL_KINDS).flatMap(([kind, k]) => ('run' in k ? [kind] : [])));
const HANDOFFS: ReadonlySet<string> = new Set(Object.entries(CALL_KINDS).flatMap(([kind, k]) => (k.handoff ? [kind] : [])));

/**
 * The kind of a call. TypeScript cannot correlate a union's member with the table's entry for
 * its `kind`, so the entry is typed loosely here and each caller passes the call as it is.
 */
function kindOf(call: { kind: keyof typeof CALL_KINDS }): CallKind<never, unknown> {
  return CALL_KINDS[call.kind] as CallKind<never, unknown>;
}

/** Whether a call (planned or of a round) is a handoff: the swarm awaits it in `awaitingHandoff`. */
export function isHandoff<C extends { kind: string }>(call: C): call is Extract<C, { kind: 'agent' | 'remote' | 'swarm' }> {
  return HANDOFFS.has(call.kind);
}

/** Whether a round's call is one a child actor runs. */
export function isSpawned(call: RoundCall): call is SpawnedCall {
  return SPAWNED.has(call.kind);
}

/** The round's call for `planned`, the `index`-th of the round opened at `turn` in swarm `swarmId`. */
export function openCall(planned: PlannedCall, turn: number, index: number, swarmId: string): RoundCall {
  return kindOf(planned).open(planned as never, turn, index, swarmId) as RoundCall;
}

/**
 * Events announcing the calls of a new round: a `tool-call` fact and `internal:tool-start` for
 * tools, an `agent-handoff` or `swarm-handoff` fact for handoffs, `internal:tool-complete` for
 * calls rejected before running. Pause calls announce nothing (the pause itself is the event).
 */
export function roundStartEvents(speaker: string, round: { calls: readonly RoundCall[] }): SwarmEventBody[] {
  const events: SwarmEventBody[] = [];
  for (const call of round.calls) kindOf(call).announce(speaker, call, events);
  return events;
}

/** The child actor that runs `call`, made at `site`. */
export function spawnOf(call: SpawnedCall, site: CallSite): Spawn {
  return kindOf(call).run!.spawn(call, site);
}

/** The event that reports a finished call: a `handoff-result` fact or `internal:tool-complete`. */
export function callDoneEvent(speaker: string, call: SpawnedCall, result: CallResult, key: string): SwarmEventBody {
  return kindOf(call).run!.done(speaker, call, result, key);
}

/**
 * The events that report a finished call: its {@link callDoneEvent}, then the artifact of the
 * files a tool returned, when it returned any.
 */
export function callDoneEvents(speaker: string, call: SpawnedCall, result: CallResult, key: string): SwarmEventBody[] {
  const done = callDoneEvent(speaker, call, result, key);
  return result.files && call.kind === 'tool' ? [done, toolFilesEvent(speaker, call, result.files)] : [done];
}
