/**
 * One model call as each step makes it (a turn's, or a history policy's summary): reserved
 * against the swarm's budgets before it is made, bounded by the runtime's `modelTimeoutMs` (each
 * attempt gets the whole of it: a restart asks again, afresh), and settled after with the usage
 * the model reports — at the worst case reserved when it fails or reports none, since a failed
 * call counts.
 *
 * @module
 */
import type { ModelStepInput } from '../machines/contracts.js';
import type { ModelResponse, ToolSpec } from '../machines/messages.js';
import { withinDeadline } from './call-timeout.js';
import type { Model, ModelRequest, SwarmPorts } from './ports.js';

/** What a request is made of besides what the call adds: its tools, its signal and its output ceiling. */
type RequestBody = Omit<ModelRequest, 'tools' | 'signal' | 'maxOutputTokens'>;

/**
 * Makes the call `request` builds (given the call's own signal, aborted at the deadline), with
 * `tools`, under a reservation for `reserveFor` (the step's input as it is sent, its reservation
 * key from its scope); `what` names it in the timeout's error. `durationMs` counts from after the
 * reservation.
 */
export async function budgetedModelCall(
  ports: SwarmPorts,
  model: Model,
  reserveFor: ModelStepInput,
  tools: readonly ToolSpec[],
  signal: AbortSignal,
  what: 'model call' | 'summary call',
  request: (bounded: AbortSignal) => RequestBody,
): Promise<{ raw: ModelResponse; durationMs: number }> {
  // A swarm without a budget gets undefined at once (no promise).
  const reserving = ports.reserveModelCall?.(reserveFor, model.name, tools, signal);
  const hold = reserving instanceof Promise ? await reserving : reserving;
  const started = performance.now();
  const limit = ports.modelTimeoutMs;
  const timeout = limit === undefined ? undefined : { ms: limit, deadline: Date.now() + limit };
  let raw: ModelResponse;
  try {
    raw = await withinDeadline(
      timeout,
      signal,
      (bounded) => model.call({ ...request(bounded), tools, signal: bounded, ...(hold ? { maxOutputTokens: hold.maxOutputTokens } : {}) }),
      (e) => {
        throw new Error(`${model.name}: the ${what} timed out after ${e.timeoutMs} ms (modelTimeoutMs)`);
      },
    );
  } catch (e) {
    hold?.settle();
    throw e;
  }
  hold?.settle(raw.usage);
  return { raw, durationMs: performance.now() - started };
}
