/**
 * The swarm event model: one ordered stream per swarm, shaped as A2A events.
 *
 * Machines emit {@link SwarmEventBody} values; the runtime stamps each with `seq`, `swarmId`
 * and `timestamp` to make a {@link SwarmEvent}, persists it, and hands it to subscribers.
 * Everything a user can learn about a swarm's progress is one of these; nothing is a string
 * to parse.
 *
 * @module
 */
import type { ModelResponse, Usage } from './messages.js';
import type { PlannedCall, StepVerdict } from './round.js';

/**
 * A2A task states used by xswarm (v0.3 spelling; the A2A v1.0 mapping lives in the servers).
 *
 * @example
 * const s: TaskState = 'input-required';
 */
export type TaskState = 'submitted' | 'working' | 'input-required' | 'completed' | 'failed' | 'canceled';

/**
 * Why a swarm is paused.
 *
 * @example
 * const r: PauseReason = { type: 'HITL', message: 'Which day suits you?' };
 */
export interface PauseReason {
  type: 'HITL' | 'EMERGENCY' | 'APPROVAL_NEEDED';
  message: string;
  pendingApprovalId?: string;
}

/**
 * The swarm-level facts carried in `metadata` of a status update. Discriminated by `type`.
 *
 * @example
 * function describe(f: SwarmFact): string {
 *   return f.type === 'agent-handoff' ? `${f.from} → ${f.to}` : f.type;
 * }
 */
export type SwarmFact =
  | { type: 'started'; definitionId: string }
  | { type: 'agent-handoff'; from: string; to: string; callId: string; request: string }
  | { type: 'swarm-handoff'; from: string; to: string; childSwarmId: string; callId: string; input: unknown }
  | {
      type: 'handoff-result';
      from: string;
      to: string;
      callId: string;
      ok: boolean;
      childSwarmId?: string;
      /** What the orchestrator reads as the handoff's tool result (the replay journal). */
      content: string;
      key: string;
    }
  | {
      type: 'child-swarm';
      childSwarmId: string;
      definitionId: string;
      callId: string;
      lifecycle: 'started' | 'paused' | 'resumed' | 'completed' | 'failed' | 'stopped';
      reason?: string;
      /** The `seq` of the child's own event this relays (a restarted parent resumes after it). */
      childSeq: number;
    }
  | { type: 'tool-call'; agent: string; toolName: string; callId: string }
  | { type: 'turn-completed'; turn: number; maxTurns: number; activeAgent: string }
  | { type: 'paused'; reason: PauseReason }
  | { type: 'resumed'; message?: string }
  | { type: 'completed'; result: unknown }
  | { type: 'failed'; reason: string }
  | { type: 'stopped'; reason: string };

/**
 * A part of an artifact: text or structured data.
 *
 * @example
 * const p: Part = { kind: 'data', data: { day: 'Saturday', activities: ['hike'] } };
 */
export type Part = { kind: 'text'; text: string } | { kind: 'data'; data: unknown };

/**
 * Internal observability payloads. They are part of the stream (and persisted) but never leave
 * over A2A.
 *
 * @example
 * const e: InternalEventBody = { kind: 'internal:tool-start', agent: 'planner', toolName: 'get_forecast',
 *   callId: 'c1', arguments: '{"day":"Sat"}' };
 */
export type InternalEventBody =
  | {
      kind: 'internal:llm-call';
      agent: string;
      /** '' for the orchestrator; the handoff's scope for an agent (tells parallel agents apart). */
      scope: string;
      turn: number;
      response: ModelResponse;
      usage?: Usage;
      durationMs: number;
      /** The calls the runtime planned from the response and its verdict: the replay journal. */
      calls: PlannedCall[];
      verdict: StepVerdict;
    }
  | { kind: 'internal:tool-start'; agent: string; toolName: string; callId: string; arguments: string }
  | {
      kind: 'internal:tool-complete';
      agent: string;
      toolName: string;
      callId: string;
      ok: boolean;
      content: string;
      /** The call's idempotency key ('' for calls rejected before running). */
      key: string;
    }
  | { kind: 'internal:checkpoint'; step: CheckpointStep };

/**
 * The kinds of completed steps after which the swarm is persisted.
 *
 * @example
 * const s: CheckpointStep = 'tool-result';
 */
export type CheckpointStep =
  | 'start'
  | 'model-response'
  | 'tool-result'
  | 'handoff-result'
  | 'agent-step'
  | 'pause'
  | 'resume'
  | 'stop';

/**
 * An event as a machine emits it, before the runtime numbers it.
 *
 * @example
 * const e: SwarmEventBody = { kind: 'status-update', state: 'working', final: false,
 *   metadata: { type: 'turn-completed', turn: 1, maxTurns: 10, activeAgent: 'planner' } };
 */
export type SwarmEventBody =
  | { kind: 'task'; state: 'submitted'; definitionId: string; input: unknown }
  | { kind: 'status-update'; state: TaskState; final: boolean; metadata: SwarmFact }
  | {
      kind: 'artifact-update';
      artifact: { artifactId: string; name: string; parts: Part[] };
      append: boolean;
      lastChunk: boolean;
      metadata?: { agent: string; turn: number };
    }
  | InternalEventBody;

/**
 * Fields the runtime adds to every event.
 *
 * @example
 * const stamp: EventStamp = { seq: 1, swarmId: 'swarm-1', timestamp: Date.now() };
 */
export interface EventStamp {
  /** 1, 2, 3 … per swarm, without gaps. */
  seq: number;
  swarmId: string;
  /** Milliseconds since the epoch when the runtime recorded the event. */
  timestamp: number;
}

/**
 * One event of a swarm's stream.
 *
 * @example
 * for await (const e of client.events()) {
 *   if (e.kind === 'status-update' && e.metadata.type === 'agent-handoff') console.log(e.metadata.to);
 * }
 */
export type SwarmEvent = SwarmEventBody & EventStamp;

/**
 * Names of the swarm facts, for {@link SwarmFact} narrowing helpers.
 *
 * @example
 * const t: SwarmFactType = 'agent-handoff';
 */
export type SwarmFactType = SwarmFact['type'];
