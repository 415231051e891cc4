/**
 * The ports of a traced runtime: the model and tool calls run in spans of their own, a child
 * swarm or remote agent in its handoff's span (so the child's `swarm` span, the NATS request to a
 * worker or the A2A request to a peer carry its context). A runtime without tracing keeps its
 * ports as they are.
 *
 * @module
 */
import type { SwarmPorts } from '../../../actors/index.js';
import type { SwarmTracing } from './swarm-spans.js';

/** `ports` with their calls traced by `tracing`. */
export function tracedPorts(ports: SwarmPorts, tracing: SwarmTracing): SwarmPorts {
  return {
    ...ports,
    traceModelCall: (input, model, work, purpose) => tracing.modelCall(input, model, work, purpose),
    traceToolCall: (input, work) => tracing.toolCall(input, work),
    runChild(input, signal) {
      const ctx = tracing.handoffContext(input.parentId, input.key, input.definitionId);
      tracing.parentOf(input.childSwarmId, ctx);
      return tracing.within(ctx, () => ports.runChild(input, signal));
    },
    runRemote(input, signal) {
      const ctx = tracing.handoffContext(input.swarmId, input.key, input.agentId);
      return tracing.within(ctx, () => ports.runRemote(input, signal));
    },
  };
}
