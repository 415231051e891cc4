/**
 * What runtimes serving each other say (see `runtime/hosting.ts`): a request to host a swarm,
 * a command for the runtime holding one, the answers, each checked with its schema as it
 * arrives (a peer's message is untrusted input), and the timings of hosted calls.
 *
 * @module
 */
import { z } from 'zod';
import type { Part, PauseReason } from '../../machines/events.js';
import type { Customization } from '../../machines/calls/swarm.js';
import type { BudgetAccountRef, BudgetCaps } from '../../machines/budget.js';
import type { SwarmErrorCode } from '../errors.js';
import type { HostedCard } from '../catalog/elsewhere.js';
import { subjectToken } from '../transport/types.js';

/** A request to host a swarm: start it, or attach to it when it exists. */
export interface HostRequest {
  swarmId: string;
  definitionId: string;
  input: unknown;
  customization?: Customization;
  contextId?: string;
  /** The parts of the message the input was read from, as sent, when they hold files (`StartOptions.inputParts`). */
  inputParts?: Part[];
  /** The budget accounts the swarm draws from besides its own (its parent's chain). */
  budgetOuter?: BudgetAccountRef[];
  /**
   * A handoff's call (the swarm id is its idempotency key): a swarm that exists is attached to.
   * Without it (a client's `run`), an existing swarm is an `id-in-use` error.
   */
  attach?: boolean;
  /**
   * A stop (its reason) for a swarm whose holder did not answer: the runtime serving this request
   * stops the swarm if it holds it, else takes it over (as adoption does, waiting out a live
   * lease; a holder that answers meanwhile gets the stop relayed) and stops it right after
   * restoring. Accepted at once, applied by whichever runtime takes the swarm over; no new swarm
   * is started. Restoring starts the swarm's actor before the stop lands, so a call that was in
   * flight when its holder died may begin again first (with its idempotency key), as after any
   * takeover.
   */
  stop?: string;
}

/** A command for the runtime holding a swarm. */
export type OwnerCommand =
  | { op: 'pause'; swarmId: string; reason: PauseReason }
  /**
   * A resume: a text answer as `message` (as before typed answers), any other JSON value as
   * `answer`; `pauseId` when the client named the pause it answers. The holder checks both.
   */
  | { op: 'resume'; swarmId: string; message?: string; answer?: unknown; pauseId?: string }
  | { op: 'stop'; swarmId: string; reason: string }
  | { op: 'extend'; swarmId: string; maxTurns: number }
  /** A budget raised (`client.extend({ budget })`), with `maxTurns` when that is raised too. */
  | { op: 'extend'; swarmId: string; maxTurns?: number; budget: BudgetCaps }
  /** An answer to a gated tool call (`client.approve` / `client.reject`); the holder checks the id. */
  | { op: 'approve'; swarmId: string; approvalId: string; always?: boolean }
  | { op: 'reject'; swarmId: string; approvalId: string; reason: string };

export const hostRequestSchema = z.object({
  swarmId: z.string(),
  definitionId: z.string(),
  input: z.unknown(),
  customization: z.record(z.string(), z.unknown()).optional(),
  contextId: z.string().optional(),
  // Checked by the event schema when the task event is written; here only carried.
  inputParts: z.array(z.record(z.string(), z.unknown())).optional(),
  budgetOuter: z.array(z.union([z.object({ id: z.string(), caps: z.record(z.string(), z.number()) }), z.object({ key: z.string() })])).optional(),
  attach: z.boolean().optional(),
  stop: z.string().optional(),
});

export const ownerCommandSchema = z.discriminatedUnion('op', [
  z.object({ op: z.literal('pause'), swarmId: z.string(), reason: z.object({ type: z.string(), message: z.string() }).passthrough() }),
  z.object({ op: z.literal('resume'), swarmId: z.string(), message: z.string().optional(), answer: z.unknown().optional(), pauseId: z.string().optional() }),
  z.object({ op: z.literal('stop'), swarmId: z.string(), reason: z.string() }),
  z.object({ op: z.literal('extend'), swarmId: z.string(), maxTurns: z.number().int().positive().optional(), budget: z.record(z.string(), z.number()).optional() }),
  z.object({ op: z.literal('approve'), swarmId: z.string(), approvalId: z.string(), always: z.boolean().optional() }),
  z.object({ op: z.literal('reject'), swarmId: z.string(), approvalId: z.string(), reason: z.string() }),
]);

/**
 * A team tool call of a worker swarm hosted here, for the runtime driving its team (the team
 * record's lease owner): see `TeamToolCall` in `team/team-tools.ts`. `waitMs`: how long a help
 * request may wait for its answer before the reply says it is pending.
 */
export const teamToolCallSchema = z.intersection(
  z.object({ swarmId: z.string(), key: z.string(), waitMs: z.number().int().positive().max(60_000) }),
  z.discriminatedUnion('op', [
    z.object({ op: z.literal('write'), to: z.string(), text: z.string() }),
    z.object({ op: z.literal('broadcast'), text: z.string() }),
    z.object({ op: z.literal('read') }),
    z.object({ op: z.literal('help'), question: z.string() }),
  ]),
);

/**
 * Every answer between runtimes: done, or the error to raise at the caller. A team tool call's
 * answer carries its value (`found: false`: the runtime drives no team holding that attempt).
 */
export type Reply = { ok: true; card?: HostedCard; found?: boolean; value?: unknown } | { ok: false; code: SwarmErrorCode | 'error'; message: string };

/** Timings of hosted calls, all resolved (see `HostingOptions`). */
export interface HostingTimings {
  deadlineMs: number;
  heartbeatMs: number;
  heartbeatTimeoutMs: number;
  leaseMs: number;
  /** Whether other runtimes' calls to this runtime's definitions are taken. */
  serve: boolean;
}

/** What a subject carries: host requests and cards per definition, commands and team tool calls per owner, heartbeats per swarm. */
export type SubjectKind = 'host' | 'card' | 'owner' | 'beat' | 'team';

/** The subject of `kind` for `id` in the `prefix` namespace. */
export function subjectOf(prefix: string, kind: SubjectKind, id: string): string {
  return `${prefix}.${kind}.${subjectToken(id)}`;
}

/** A message body parsed as JSON, or undefined when it is not JSON (a peer's message is untrusted). */
export function parseJson(data: string): unknown {
  try {
    return JSON.parse(data);
  } catch {
    return undefined;
  }
}

/** An answer of another runtime, or the error answer standing for a malformed one. */
export function parseReply(data: string): Reply {
  const reply = parseJson(data) as Reply | undefined;
  if (!reply || typeof reply !== 'object' || typeof reply.ok !== 'boolean') {
    return { ok: false, code: 'error', message: 'Malformed answer from another runtime' };
  }
  return reply;
}
