/**
 * Guardrails as the machines know them: where one ran (its step), which one decided, and what
 * its rejection does. Plain JSON: a rejection lives in the outcome, the `failed` fact and the
 * pause reason, so it is persisted and replayed like every other fact. The guardrails
 * themselves run in `actors/guardrails.ts`.
 *
 * @module
 */
import type { PauseReason } from './events.js';

/** Where a guardrail runs: the input, each model response, each tool call before it runs, the result. */
export type GuardrailStep = 'input' | 'response' | 'toolCall' | 'output';

/**
 * What a guardrail's rejection does: `reject` ends the swarm (A2A state `rejected`, the
 * `failed` state node), `pause` pauses it (resume goes on as if allowed, stop ends it), `block`
 * (tool calls only) refuses that one call, and the model reads why as its error result.
 */
export type GuardrailAction = 'reject' | 'pause' | 'block';

/** Which guardrail rejected what: carried by a rejected outcome, its `failed` fact and a guardrail pause. */
export interface GuardrailRejection {
  /** The guardrail's name. */
  guardrail: string;
  step: GuardrailStep;
  /** The tool call it rejected, for a `toolCall` guardrail. */
  callId?: string;
}

/**
 * The pause a guardrail makes (`onReject: 'pause'`): never asked for by a model or a client, so
 * not in `PAUSE_TYPES`.
 */
export const GUARDRAIL_PAUSE = 'GUARDRAIL';

/**
 * Names of registered guardrails, per step: how an ad-hoc swarm (whose configuration must be
 * JSON) names its guardrails, resolved by the runtime's `guardrails` option.
 */
export interface GuardrailNames {
  input?: string[];
  response?: string[];
  toolCall?: string[];
  output?: string[];
}

/** A guardrail's verdict as the step carries it (see `StepVerdict` in `plan.ts`). */
interface GuardrailVerdict {
  reason: string;
  rejected: GuardrailRejection;
}

/** The outcome of a swarm a guardrail rejected: failed, saying which guardrail and why. */
export function rejectedOutcome(verdict: GuardrailVerdict): { status: 'failed'; reason: string; rejected: GuardrailRejection } {
  return { status: 'failed', reason: verdict.reason, rejected: verdict.rejected };
}

/** The reason of a guardrail's pause: it names the guardrail, the step and why. */
export function guardrailPauseReason(verdict: GuardrailVerdict): PauseReason {
  return {
    type: GUARDRAIL_PAUSE,
    message: `${verdict.reason}. Resume to go on as if allowed, or stop the swarm`,
    guardrail: verdict.rejected,
  };
}
