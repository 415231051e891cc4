/**
 * The builders of event bodies (the model is in `events.ts`): what the machines emit for a
 * status, a value and a model response. (What announces and reports a call is its kind's, in
 * `calls/`.) The runtime stamps each body into a full event (`stampEvent` in `src/events/stamp.ts`).
 *
 * @module
 */
import type { CallResult } from './calls/kind.js';
import type { ModelStepOutput } from './contracts.js';
import type { MadeSummary } from './history.js';
import { DATA_PART_COMPAT_FLAG, type DataPart, type Part, type SwarmEventBody, type SwarmFact, type SwarmFailureKind, type TaskState } from './events.js';
import type { GuardrailRejection } from './guardrail.js';

/** States after which nothing follows. */
export const FINAL_STATES: ReadonlySet<TaskState> = new Set(['completed', 'failed', 'canceled', 'rejected']);

/** The text of a value: a string as it is, anything else as JSON ('' for undefined). */
export function valueText(value: unknown): string {
  if (typeof value === 'string') return value;
  return JSON.stringify(value) ?? '';
}

/**
 * The parts that carry a value: a string (or nothing) as one text part; anything else as a
 * data part (a non-object wrapped, see {@link DataPart}) followed by its JSON text, for
 * readers of text only.
 */
export function valueParts(value: unknown): Part[] {
  if (typeof value === 'string' || value === undefined) return [{ kind: 'text', text: value ?? '' }];
  const data: DataPart =
    typeof value === 'object' && value !== null && !Array.isArray(value)
      ? { kind: 'data', data: value as Record<string, unknown> }
      : { kind: 'data', data: { value }, metadata: { [DATA_PART_COMPAT_FLAG]: true } };
  return [data, { kind: 'text', text: valueText(value) }];
}

/**
 * A status update body: `final` follows from the state, and `said` becomes its status message
 * (the agent's words unless `role` says the user's).
 */
export function statusUpdate(state: TaskState, fact: SwarmFact, said?: string, role: 'agent' | 'user' = 'agent'): SwarmEventBody {
  return {
    kind: 'status-update',
    status: said === undefined ? { state } : { state, message: { kind: 'message', role, parts: [{ kind: 'text', text: said }] } },
    final: FINAL_STATES.has(state),
    metadata: fact,
  };
}

/**
 * The final status update of a failure: the `failed` fact with its `error` (its kind recorded
 * here, where the failure is known, so readers need not read it from the reason), `rejected`
 * (state `rejected`) when a guardrail rejected the swarm.
 */
export function failedUpdate(reason: string, kind: SwarmFailureKind, rejected?: GuardrailRejection): SwarmEventBody {
  const error = { kind, message: reason, ...(rejected ? { guardrail: rejected.guardrail } : {}) };
  const fact: SwarmFact = rejected ? { type: 'failed', reason, rejected, error } : { type: 'failed', reason, error };
  return statusUpdate(rejected ? 'rejected' : 'failed', fact, reason);
}

/** The `internal:llm-call` event for one model response: the replay journal of that step. */
export function llmCallEvent(agent: string, scope: string, turn: number, step: ModelStepOutput): SwarmEventBody {
  return {
    kind: 'internal:llm-call',
    agent,
    scope,
    turn,
    response: step.response,
    ...(step.response.usage ? { usage: step.response.usage } : {}),
    ...(step.model !== undefined ? { model: step.model } : {}),
    durationMs: step.durationMs,
    calls: step.calls,
    verdict: step.verdict,
  };
}

/**
 * The `internal:llm-call` event of a summary call (a `'summarize'` history policy), recorded just
 * before the call of the step it was made for: marked by `summary`, with no calls of its own.
 */
export function summaryCallEvent(agent: string, scope: string, turn: number, made: MadeSummary): SwarmEventBody {
  return {
    kind: 'internal:llm-call',
    agent,
    scope,
    turn,
    response: { text: made.text, ...(made.usage ? { usage: made.usage } : {}) },
    ...(made.usage ? { usage: made.usage } : {}),
    model: made.model,
    durationMs: made.durationMs,
    calls: [],
    verdict: { type: 'continue' },
    summary: { upTo: made.upTo },
  };
}

/** The `handoff-result` fact of a finished handoff: `from` is who answered, `to` who handed off. */
export function handoffResultEvent(speaker: string, call: { id: string; childSwarmId?: string }, from: string, result: CallResult, key: string): SwarmEventBody {
  return statusUpdate('working', {
    type: 'handoff-result',
    from,
    to: speaker,
    callId: call.id,
    ok: result.ok,
    ...(call.childSwarmId !== undefined ? { childSwarmId: call.childSwarmId } : {}),
    content: result.content,
    key,
    ...(result.usage ? { usage: result.usage } : {}),
    ...(result.failsSwarm ? { failsSwarm: true as const } : {}),
  });
}
