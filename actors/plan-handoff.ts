/**
 * Handoff planning: turns a model's call of a handoff tool into a planned agent, remote-agent
 * or child-swarm call, or into an error text for the model. The judge (`judge.ts`) asks here
 * for every call that is not a built-in. What runs a planned handoff: the agent machine
 * (`machines/agent.ts`) for an agent, and the runtime's runners (`src/runners/`: child swarms, remote A2A agents);
 * the tool specs the model sees are in `src/catalog/tool-specs.ts`.
 *
 * @module
 */
import type { ModelStepInput } from '../machines/contracts.js';
import type { ToolCall } from '../machines/messages.js';
import type { Customization } from '../machines/calls/swarm.js';
import type { PlannedCall } from '../machines/calls/index.js';
import type { HandoffTarget } from '../machines/plan.js';
import type { SwarmPorts } from './ports.js';

/** What planning a child swarm handoff needs of its target. */
type ChildTarget = Pick<Extract<HandoffTarget, { kind: 'swarm' }>, 'definitionId' | 'structured' | 'customizable' | 'timeoutMs' | 'onTimeout'>;

/** The swarm registry's search tool: a regular tool whose results a registry handoff may name. */
export const REGISTRY_SEARCH = 'swarm_registry_search';

/**
 * The name of the registry's handoff tool; it only reaches ids a search returned earlier in the
 * same conversation.
 */
export const REGISTRY_HANDOFF = 'swarm_registry_handoff';

/**
 * The planned call for `call` if it is a handoff (a handoff tool of the step, or the registry's
 * handoff when the step has the registry tools), else undefined. `args` are the call's parsed
 * arguments. Only the orchestrator hands off.
 */
export function planHandoff(call: ToolCall, args: Record<string, unknown>, input: ModelStepInput, ports: SwarmPorts): PlannedCall | undefined {
  const invalid = (error: string) => invalidCall(call, error);
  const handoff = input.handoffs.find((h) => h.toolName === call.name);
  if (handoff?.kind === 'agent' || handoff?.kind === 'remote') {
    if (typeof args.request !== 'string' || !args.request.trim()) return invalid(`${call.name} needs a non-empty "request" string.`);
    return handoff.kind === 'agent'
      ? { id: call.id, name: call.name, kind: 'agent', agentId: handoff.agentId, request: args.request }
      : {
          id: call.id,
          name: call.name,
          kind: 'remote',
          agentId: handoff.agentId,
          url: handoff.url,
          request: args.request,
          ...(handoff.timeoutMs !== undefined ? { timeoutMs: handoff.timeoutMs } : {}),
          ...(handoff.onTimeout === 'fail' ? { onTimeout: handoff.onTimeout } : {}),
        };
  }
  if (handoff?.kind === 'swarm') return planSwarmHandoff(call, args, handoff, ports);
  if (call.name === REGISTRY_HANDOFF && input.tools.includes(call.name)) {
    // An agent's round runs tools only (machines/agent.ts): a child swarm is the orchestrator's to start.
    if (!input.orchestrator) return invalid(`${REGISTRY_HANDOFF} is for the orchestrator; an agent cannot hand off.`);
    return planRegistryHandoff(call, args, input, ports);
  }
  return undefined;
}

/** A call rejected before running, with the error text the model reads as its result. */
export function invalidCall(call: ToolCall, error: string): PlannedCall {
  return { id: call.id, name: call.name, kind: 'invalid', error };
}

/** Plans a handoff to a child swarm: its input from the arguments, plus any customization. */
function planSwarmHandoff(call: ToolCall, args: Record<string, unknown>, target: ChildTarget, ports: SwarmPorts): PlannedCall {
  const { definitionId, structured, customizable, timeoutMs, onTimeout } = target;
  const invalid = (error: string) => invalidCall(call, error);
  const { customization, ...rest } = args;
  let childInput: unknown;
  if (structured) {
    const checked = ports.childInput(definitionId, rest);
    if (!checked.ok) return invalid(`Invalid input for swarm "${definitionId}": ${checked.error}`);
    childInput = checked.value;
  } else {
    if (typeof rest.request !== 'string' || !rest.request.trim()) return invalid(`${call.name} needs a non-empty "request" string.`);
    childInput = rest.request;
  }
  const planned: PlannedCall = {
    id: call.id,
    name: call.name,
    kind: 'swarm',
    definitionId,
    input: childInput,
    ...(timeoutMs !== undefined ? { timeoutMs } : {}),
    ...(onTimeout === 'fail' ? { onTimeout } : {}),
  };
  if (customization === undefined) return planned;
  if (!customizable) return invalid(`Swarm "${definitionId}" cannot be customized; call ${call.name} without "customization".`);
  const checked = ports.checkCustomization(customization);
  if (!checked.ok) return invalid(`Invalid customization: ${checked.error}`);
  return { ...planned, customization: checked.value as Customization };
}

/** Swarm ids that `swarm_registry_search` calls of this conversation returned. */
function searchedIds(input: ModelStepInput): Set<string> {
  const searches = new Set<string>();
  for (const m of input.messages) {
    for (const c of m.toolCalls ?? []) if (c.name === REGISTRY_SEARCH) searches.add(c.id);
  }
  const ids = new Set<string>();
  for (const m of input.messages) {
    if (m.role !== 'tool' || !m.toolCallId || !searches.has(m.toolCallId)) continue;
    try {
      const found = JSON.parse(m.content) as { matches?: { id?: unknown }[] };
      for (const match of found.matches ?? []) if (typeof match.id === 'string') ids.add(match.id);
    } catch {
      // An error result of a search lists no ids.
    }
  }
  return ids;
}

/** Plans `swarm_registry_handoff`: only to swarms an earlier search in this swarm returned. */
function planRegistryHandoff(call: ToolCall, args: Record<string, unknown>, input: ModelStepInput, ports: SwarmPorts): PlannedCall {
  const id = args.swarm_id;
  if (typeof id !== 'string' || !id) {
    return invalidCall(call, `${REGISTRY_HANDOFF} needs a "swarm_id" string.`);
  }
  if (!searchedIds(input).has(id)) {
    return invalidCall(call, `Swarm "${id}" was not returned by ${REGISTRY_SEARCH} in this conversation; search first and use an id it returns.`);
  }
  const { swarm_id: _drop, request, input: structured, customization } = args;
  const forwarded: Record<string, unknown> =
    structured !== undefined && structured !== null && typeof structured === 'object' ? { ...(structured as object) } : { request };
  if (customization !== undefined) forwarded.customization = customization;
  const isText = structured === undefined;
  const timeoutMs = ports.swarmTimeoutMs(id);
  const fails = timeoutMs !== undefined && ports.swarmOnTimeout?.(id) === 'fail';
  return planSwarmHandoff(
    call,
    forwarded,
    {
      definitionId: id,
      structured: !isText,
      customizable: ports.isCustomizable(id),
      ...(timeoutMs !== undefined ? { timeoutMs } : {}),
      ...(fails ? { onTimeout: 'fail' as const } : {}),
    },
    ports,
  );
}
