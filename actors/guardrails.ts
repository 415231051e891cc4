/**
 * The guardrail steps of the loop: the input's, checked before the orchestrator's first model
 * call (`model-step.ts`), and the result's, checked when a response would complete the swarm
 * (`judge.ts`). A rejection fails the swarm with the guardrail's reason. Each answers at once
 * (no promise) when the definition has no guardrails, as most do.
 *
 * @module
 */
import type { ModelStepInput, ModelStepOutput } from '../machines/contracts.js';
import type { StepVerdict } from '../machines/plan.js';
import type { SwarmPorts } from './ports.js';

/**
 * The step's output when the input guardrails reject the input (the model is not called), or
 * undefined when they let it through. Only the orchestrator's first call is guarded.
 */
export function guardInput(input: ModelStepInput, ports: SwarmPorts): ModelStepOutput | undefined | Promise<ModelStepOutput | undefined> {
  if (!input.orchestrator || input.turn !== 1) return undefined;
  const rejection = (rejected: string | undefined): ModelStepOutput | undefined =>
    rejected ? { response: {}, calls: [], verdict: { type: 'fail', reason: `Input guardrail rejected the input: ${rejected}` }, durationMs: 0 } : undefined;
  const guarded = ports.guardInput(input.definitionId, input.swarmId);
  return guarded instanceof Promise ? guarded.then(rejection) : rejection(guarded);
}

/** The verdict on a result about to complete the swarm: its output guardrails decide. */
export function guardResult(result: unknown, input: ModelStepInput, ports: SwarmPorts): StepVerdict | Promise<StepVerdict> {
  const guarded = ports.guardOutput(input.definitionId, input.swarmId, result);
  const verdict = (rejected: string | undefined): StepVerdict =>
    rejected ? { type: 'fail', reason: `Output guardrail rejected the result: ${rejected}` } : { type: 'complete', result };
  return guarded instanceof Promise ? guarded.then(verdict) : verdict(guarded);
}
