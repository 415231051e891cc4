/**
 * The model interface and the deterministic scripted model.
 *
 * @module
 */
import type { ModelResponse } from '../../machines/messages.js';
import type { Model, ModelRequest } from '../../actors/ports.js';

export type { ChatMessage, ModelResponse, ToolCall, ToolSpec, Usage } from '../../machines/messages.js';
export type { Model, ModelRequest } from '../../actors/ports.js';

/**
 * A deterministic model driven by a function of the request: for tests, demos and benchmarks.
 * The function may be async (to simulate latency); an aborted signal rejects the call.
 *
 * @example
 * import { scriptedModel } from 'xswarm';
 * const model = scriptedModel((req) =>
 *   req.messages.some((m) => m.role === 'tool')
 *     ? { text: 'Go hiking on Saturday.' }
 *     : { toolCalls: [{ id: 'c1', name: 'handoff_to_weather_agent', arguments: '{"request":"forecast"}' }] });
 */
export function scriptedModel(respond: (request: ModelRequest) => ModelResponse | Promise<ModelResponse>, name = 'scripted'): Model {
  return {
    name,
    async call(request) {
      request.signal.throwIfAborted();
      const response = await respond(request);
      // A script that sleeps must not deliver an answer after the caller gave up.
      request.signal.throwIfAborted();
      return response;
    },
  };
}
