/**
 * The guardrail steps of the loop: the input's, checked before the orchestrator's first model
 * call (`model-step.ts`); each model response's, before it is judged; each tool call's, before
 * it runs (after the judge planned it: the place approvals and budgets hook into as well); and
 * the result's, when a response would complete the swarm (`judge.ts`). A rejection rejects the
 * swarm, pauses it or (a tool call only) blocks that call, as the guardrail says. Each answers
 * at once (no promise) when the definition has no guardrails there, as most do.
 *
 * @module
 */
import type { ModelStepInput, ModelStepOutput } from '../machines/contracts.js';
import type { GuardrailStep } from '../machines/guardrail.js';
import type { HeldVerdict, StepVerdict } from '../machines/plan.js';
import type { GuardDecision, GuardSite, SwarmPorts } from './ports.js';

/** A value, or its promise when a guardrail had to be awaited. */
export type Maybe<T> = T | Promise<T>;

/** `f` of `value`, at once when `value` is not a promise (the hot path makes none). */
export function after<T, U>(value: Maybe<T>, f: (v: T) => Maybe<U>): Maybe<U> {
  return value instanceof Promise ? value.then(f) : f(value);
}

/** The site of a model step, for `SwarmPorts.guard`. */
export function siteOf(input: ModelStepInput): GuardSite {
  return { definitionId: input.definitionId, swarmId: input.swarmId, speaker: input.speaker, orchestrator: input.orchestrator };
}

const LABEL: Record<GuardrailStep, string> = { input: 'Input', response: 'Response', toolCall: 'Tool-call', output: 'Output' };

/**
 * The verdict of a guardrail's decision at `step`: a rejection, or a pause holding `then`.
 * Inside an agent (which cannot pause the swarm) a pause rejects: the agent's handoff fails.
 */
export function verdictOf(d: GuardDecision, step: GuardrailStep, what: string, then: HeldVerdict, orchestrator: boolean, callId?: string): StepVerdict {
  const rejected = { guardrail: d.guardrail, step, ...(callId !== undefined ? { callId } : {}) };
  if (d.action === 'pause' && orchestrator) return { type: 'pause', reason: `${LABEL[step]} guardrail paused ${what}: ${d.guardrail}: ${d.reason}`, rejected, then };
  return { type: 'reject', reason: `${LABEL[step]} guardrail rejected ${what}: ${d.guardrail}: ${d.reason}`, rejected };
}

/**
 * The step's output when the input guardrails reject or pause the input (the model is not
 * called), or undefined when they let it through. Only the orchestrator's first call is guarded.
 */
export function guardInput(input: ModelStepInput, ports: SwarmPorts): ModelStepOutput | undefined | Promise<ModelStepOutput | undefined> {
  if (!input.orchestrator || input.turn !== 1) return undefined;
  const output = (verdict: StepVerdict): ModelStepOutput => ({ response: {}, calls: [], verdict, durationMs: 0 });
  if (ports.guard) {
    return after(ports.guard('input', siteOf(input), undefined), (d) => (d ? output(verdictOf(d, 'input', 'the input', { type: 'continue' }, true)) : undefined));
  }
  const rejection = (rejected: string | undefined): ModelStepOutput | undefined =>
    rejected ? output({ type: 'fail', reason: `Input guardrail rejected the input: ${rejected}` }) : undefined;
  return after(ports.guardInput(input.definitionId, input.swarmId), rejection);
}

/** The verdict on a result about to complete the swarm: its output guardrails decide. */
export function guardResult(result: unknown, input: ModelStepInput, ports: SwarmPorts): StepVerdict | Promise<StepVerdict> {
  const complete: StepVerdict = { type: 'complete', result };
  if (ports.guard) {
    return after(ports.guard('output', siteOf(input), result), (d) => (d ? verdictOf(d, 'output', 'the result', complete, true) : complete));
  }
  const verdict = (rejected: string | undefined): StepVerdict => (rejected ? { type: 'fail', reason: `Output guardrail rejected the result: ${rejected}` } : complete);
  return after(ports.guardOutput(input.definitionId, input.swarmId, result), verdict);
}
