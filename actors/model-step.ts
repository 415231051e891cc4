/**
 * The `modelStep` actor: asks a model for the next response of a conversation and judges it.
 *
 * @module
 */
import { fromPromise } from 'xstate';
import type { ModelStepInput, ModelStepOutput } from '../machines/contracts.js';
import type { ChatMessage } from '../machines/messages.js';
import { gateCalls } from './approval-gate.js';
import { gatedCall } from './durable-gate.js';
import { guardInput } from './guardrails.js';
import { sentHistory } from './history-view.js';
import { judgeStep } from './judge-step.js';
import { budgetedModelCall } from './model-call.js';
import { normalizeResponse } from './judge.js';
import type { SwarmPorts } from './ports.js';

/**
 * Creates the `modelStep` actor logic. Input guardrails run before the orchestrator's first
 * call; a rejection fails the swarm without calling the model.
 */
export function createModelStep(ports: SwarmPorts) {
  return fromPromise<ModelStepOutput, ModelStepInput>(({ input, signal }) => gatedCall(ports, input.swarmId, signal, () => modelStep(ports, input, signal)));
}

/** One model step, past its durability gate. */
async function modelStep(ports: SwarmPorts, input: ModelStepInput, signal: AbortSignal): Promise<ModelStepOutput> {
  const guarded = guardInput(input, ports);
  const rejected = guarded instanceof Promise ? await guarded : guarded;
  if (rejected) return rejected;
  const model = ports.modelFor(input.definitionId, input.speaker);
  const tools = ports.toolSpecs(input);
  // What is sent: the whole conversation, unless a history policy shrinks it (maybe summarizing
  // first, a budgeted call of its own).
  const sent = input.history ? await sentHistory(input, model, ports, signal) : undefined;
  const sending: ModelStepInput = sent ? { ...input, messages: sent.messages as ChatMessage[] } : input;
  let first = true;
  // Reserved for what is sent.
  const call = () =>
    budgetedModelCall(ports, model, sending, tools, signal, 'model call', (bounded) => ({
      agentId: input.speaker,
      swarmId: input.swarmId,
      messages: sending.messages,
      onText: (chunk) => {
        if (bounded.aborted || chunk === '') return;
        ports.onText(input.swarmId, input.speaker, input.turn, chunk, first);
        first = false;
      },
    }));
  // Traced only when the runtime traces (no wrapper otherwise: nothing added to the call).
  const { raw, durationMs } = await (ports.traceModelCall ? ports.traceModelCall(input, model.name, call) : call());
  // The call returned after streaming: its stream is over (an aborted call's text is replaced
  // by the next attempt's, so it is not ended here).
  if (!first && !signal.aborted) ports.onTextEnd?.(input.swarmId, input.speaker, input.turn);
  let response: ModelStepOutput['response'];
  try {
    response = normalizeResponse(raw, input.turn);
  } catch (e) {
    throw new Error(`${model.name}: ${(e as Error).message}`);
  }
  const judged = judgeStep(response, input, ports);
  const { calls: planned, verdict } = judged instanceof Promise ? await judged : judged;
  const gated = gateCalls(planned, input, ports);
  const calls = gated instanceof Promise ? await gated : gated;
  const out: ModelStepOutput = { response, calls, verdict, durationMs, model: model.name, at: Date.now() };
  if (sent?.summary) out.summary = sent.summary;
  return out;
}
