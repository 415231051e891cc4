/**
 * What the machines know of a kind of call: how a planned call opens in a round, which events
 * announce it, which actor runs it and with what input, and which event reports its result.
 * Each kind is a file of this folder; the table of kinds is `index.ts`.
 *
 * @module
 */
import type { SessionEntry } from '../agent.js';
import type { FilePart, SwarmEventBody } from '../events.js';
import type { SwarmConfig } from '../swarm.js';
import type { UsageByModel } from '../usage.js';

/** What a call produced: `content` is what the model reads as the tool result. */
export interface CallResult {
  ok: boolean;
  content: string;
  /**
   * The agent that answered a handoff whose agent is chosen when the call runs (the best
   * agent for a skill): the `handoff-result` event names it instead of the planned target.
   */
  agentId?: string;
  /**
   * A child swarm's rolled-up usage by model (or a remote peer's, when it reports one): added to
   * the parent's children's usage once, with this result, and kept in the `handoff-result` fact.
   */
  usage?: UsageByModel;
  /**
   * The call timed out and its `onTimeout` is `'fail'`: the swarm that made it fails (an agent
   * handing the result on ends with it, failing its swarm). Recorded in the call's event.
   */
  failsSwarm?: true;
  /** The files a tool returned (`file-parts.ts`): recorded with its result, announced as an artifact. */
  files?: FilePart[];
}

/**
 * What a call past its deadline does: `'result'` (the default) gives the timeout to the model as
 * the call's result; `'fail'` fails the swarm that made the call.
 */
export type OnTimeout = 'result' | 'fail';

/** Where a call is made: the swarm, who speaks, and what a handoff to an agent needs of the swarm. */
export interface CallSite {
  swarmId: string;
  definitionId: string;
  /** Who makes the call: the swarm's definition id for the orchestrator, else the agent's id. */
  speaker: string;
  /** The call's idempotency key (see `toolKey` in `round.ts`): stable across restarts. */
  key: string;
  /** When the call's round opened (see `Round.openedAt`): what the call's deadline counts from. */
  openedAt?: number;
  /**
   * The orchestrator's configuration and session, which an agent handoff starts the agent with.
   * Absent when an agent makes the call (agents only call tools).
   */
  swarm?: { config: SwarmConfig; session: SessionEntry[]; approvedTools?: string[] } | undefined;
}

/** A call's timeout: how long it may take, and the absolute deadline that makes (ms since the epoch). */
export interface CallTimeout {
  ms: number;
  deadline: number;
  /** Its `onTimeout` is `'fail'`: the timeout's result fails the swarm (absent: it is a result). */
  fails?: true;
}

/**
 * A call's timeout: its round's opening plus its `timeoutMs`, both stored with the round, so a
 * restored call keeps the deadline it had. Undefined when the call has no timeout (or its round
 * was stored before timeouts existed).
 */
export function timeoutOf(site: CallSite, timeoutMs: number | undefined, onTimeout?: OnTimeout): CallTimeout | undefined {
  if (timeoutMs === undefined || site.openedAt === undefined) return undefined;
  const timeout: CallTimeout = { ms: timeoutMs, deadline: site.openedAt + timeoutMs };
  if (onTimeout === 'fail') timeout.fails = true;
  return timeout;
}

/** The keys of `setup({ actors })` that run calls (see `CALL_SLOTS` in `index.ts`, and the agent machine). */
export type CallActorKey = 'runTool' | 'agent' | 'childSwarm' | 'remoteAgent';

/** A call's child actor: its key in `setup({ actors })` and its input. */
export interface Spawn {
  src: CallActorKey;
  input: unknown;
}

/** How a child actor runs a kind of call, and what reports its result. */
export interface CallRun<C> {
  /** The child actor that runs `call` made at `site`. */
  spawn(call: C, site: CallSite): Spawn;
  /** The event reporting `call`'s result (`speaker` made the call; `key` is its idempotency key). */
  done(speaker: string, call: C, result: CallResult, key: string): SwarmEventBody;
}

/** Everything the machines need to know about one kind of call (`P`: planned, `C`: in a round). */
export interface CallKind<P, C> {
  /** Whether the swarm waits in `awaitingHandoff` while such a call runs. */
  readonly handoff: boolean;
  /** The round's call for a planned one: the `index`-th call of the round opened at `turn` in swarm `swarmId`. */
  open(planned: P, turn: number, index: number, swarmId: string): C;
  /** Pushes onto `events` what announces the call when its round opens (`speaker` made it). */
  announce(speaker: string, call: C, events: SwarmEventBody[]): void;
  /** How a child actor runs it; absent for a call no actor runs (a pause waits for a human, a rejected call has its result). */
  readonly run?: CallRun<C>;
}

/**
 * Child actor id for the call at `index` of the round produced at `turn`, by the call's kind.
 * Turn-scoped so that a model reusing call ids across rounds never collides.
 */
export function childIdFor(kind: string, turn: number, index: number): string {
  return `${kind}:${turn}:${index}`;
}
