/**
 * The `modelStep` actor: asks a model for the next response of a conversation and judges it.
 *
 * @module
 */
import { fromPromise } from 'xstate';
import type { ModelStepInput, ModelStepOutput } from '../machines/contracts.js';
import { withinDeadline } from './call-timeout.js';
import { passDurableGate } from './durable-gate.js';
import { guardInput } from './guardrails.js';
import { sentHistory } from './history-view.js';
import { judgeResponse, normalizeResponse } from './judge.js';
import type { SwarmPorts } from './ports.js';

/**
 * Creates the `modelStep` actor logic. Input guardrails run before the orchestrator's first
 * call; a rejection fails the swarm without calling the model.
 */
export function createModelStep(ports: SwarmPorts) {
  return fromPromise<ModelStepOutput, ModelStepInput>(async ({ input, signal }) => {
    await passDurableGate(ports, input.swarmId, signal);
    const guarded = guardInput(input, ports);
    const rejected = guarded instanceof Promise ? await guarded : guarded;
    if (rejected) return rejected;
    const model = ports.modelFor(input.definitionId, input.speaker);
    // What is sent: the whole conversation, unless a history policy shrinks it (maybe summarizing first).
    const sent = input.history ? await sentHistory(input, model, ports, signal) : undefined;
    const started = performance.now();
    let first = true;
    // Each attempt of a model call gets the whole `modelTimeoutMs` (a restart asks again, afresh).
    const limit = ports.modelTimeoutMs;
    const timeout = limit === undefined ? undefined : { ms: limit, deadline: Date.now() + limit };
    const raw = await withinDeadline(
      timeout,
      signal,
      (bounded) =>
        model.call({
          agentId: input.speaker,
          swarmId: input.swarmId,
          messages: sent ? sent.messages : input.messages,
          tools: ports.toolSpecs(input),
          signal: bounded,
          onText: (chunk) => {
            if (bounded.aborted || chunk === '') return;
            ports.onText(input.swarmId, input.speaker, input.turn, chunk, first);
            first = false;
          },
        }),
      (e) => {
        throw new Error(`${model.name}: the model call timed out after ${e.timeoutMs} ms (modelTimeoutMs)`);
      },
    );
    const durationMs = performance.now() - started;
    let response: ModelStepOutput['response'];
    try {
      response = normalizeResponse(raw, input.turn);
    } catch (e) {
      throw new Error(`${model.name}: ${(e as Error).message}`);
    }
    const judged = judgeResponse(response, input, ports);
    const { calls, verdict } = judged instanceof Promise ? await judged : judged;
    const out: ModelStepOutput = { response, calls, verdict, durationMs, model: model.name, at: Date.now() };
    if (sent?.summary) out.summary = sent.summary;
    return out;
  });
}
