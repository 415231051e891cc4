/**
 * Turns a model response into planned calls and a verdict: which calls are tools, handoffs or
 * built-ins, which are malformed, and whether the response ends the swarm. Nothing a model
 * says throws here: every problem becomes an error text that goes back to the model.
 *
 * @module
 */
import type { PauseReason } from '../machines/events.js';
import type { ModelResponse, ToolCall } from '../machines/messages.js';
import type { Customization, ModelStepInput, PlannedCall, StepVerdict } from '../machines/round.js';
import type { Checked, SwarmPorts } from './ports.js';

/**
 * Names of the orchestrator's built-in tools.
 *
 * @example
 * (BUILTIN_TOOLS as readonly string[]).includes('complete') // true
 */
export const BUILTIN_TOOLS = ['complete', 'pause', 'fail'] as const;

/**
 * The swarm registry's tools: a search (a regular tool) and a handoff (planned here).
 *
 * @example
 * const searched = response.toolCalls?.some((c) => c.name === REGISTRY_SEARCH);
 */
export const REGISTRY_SEARCH = 'swarm_registry_search';
/**
 * The name of the registry's handoff tool; it only reaches ids a search returned earlier in the
 * same conversation.
 *
 * @example
 * const canHandOff = input.tools.includes(REGISTRY_HANDOFF); // true once swarmRegistry() is in the swarm's tools
 */
export const REGISTRY_HANDOFF = 'swarm_registry_handoff';

const PAUSE_TYPES = new Set<PauseReason['type']>(['HITL', 'EMERGENCY', 'APPROVAL_NEEDED']);

/**
 * Validates the shape of whatever a model returned and gives every tool call a unique id.
 * Throws only when the response is not a response at all (a programming error in a model).
 *
 * @example
 * normalizeResponse({ toolCalls: [{ id: '', name: 'x', arguments: '{}' }] }, 2).toolCalls![0].id // 'call_2_0'
 */
export function normalizeResponse(raw: unknown, turn: number): ModelResponse {
  if (!raw || typeof raw !== 'object') {
    throw new Error(`model returned ${raw === null ? 'null' : typeof raw}, expected { text?, toolCalls? }`);
  }
  const r = raw as { text?: unknown; toolCalls?: unknown; usage?: unknown };
  const response: ModelResponse = {};
  if (r.text !== undefined && r.text !== null) response.text = typeof r.text === 'string' ? r.text : String(r.text);
  if (Array.isArray(r.toolCalls) && r.toolCalls.length > 0) {
    const seen = new Set<string>();
    response.toolCalls = r.toolCalls.map((c: unknown, i): ToolCall => {
      const call = (c && typeof c === 'object' ? c : {}) as { id?: unknown; name?: unknown; arguments?: unknown };
      let id = typeof call.id === 'string' && call.id.length > 0 ? call.id : `call_${turn}_${i}`;
      if (seen.has(id)) id = `${id}_${i}`;
      seen.add(id);
      const args =
        typeof call.arguments === 'string'
          ? call.arguments
          : call.arguments === undefined
            ? '{}'
            : JSON.stringify(call.arguments);
      return { id, name: typeof call.name === 'string' ? call.name : '', arguments: args };
    });
  }
  const usage = r.usage as { inputTokens?: unknown; outputTokens?: unknown } | undefined;
  if (usage && typeof usage.inputTokens === 'number' && typeof usage.outputTokens === 'number') {
    response.usage = { inputTokens: usage.inputTokens, outputTokens: usage.outputTokens };
  }
  return response;
}

function parseArgs(call: ToolCall): Checked {
  const text = call.arguments.trim() === '' ? '{}' : call.arguments;
  try {
    const value: unknown = JSON.parse(text);
    if (!value || typeof value !== 'object' || Array.isArray(value)) {
      return { ok: false, error: `Arguments for "${call.name}" must be a JSON object, got: ${truncate(text)}` };
    }
    return { ok: true, value };
  } catch (e) {
    return {
      ok: false,
      error: `Arguments for "${call.name}" are not valid JSON (${(e as Error).message}): ${truncate(text)}. Send a JSON object.`,
    };
  }
}

function truncate(text: string, max = 200): string {
  return text.length > max ? `${text.slice(0, max)}…` : text;
}

/**
 * Parses a text answer as a typed result: the whole text, or the first fenced code block.
 *
 * @example
 * parseTypedText('```json\n{"a":1}\n```') // { ok: true, value: { a: 1 } }
 */
export function parseTypedText(text: string): Checked {
  const fenced = /```(?:json)?\s*([\s\S]*?)```/.exec(text);
  const candidate = (fenced ? fenced[1]! : text).trim();
  try {
    return { ok: true, value: JSON.parse(candidate) };
  } catch (e) {
    return { ok: false, error: `Your answer is not valid JSON (${(e as Error).message}).` };
  }
}

function availableNames(input: ModelStepInput): string {
  const names = [...input.tools, ...input.handoffs.map((h) => h.toolName)];
  if (input.orchestrator) names.push(...BUILTIN_TOOLS);
  return names.length > 0 ? names.join(', ') : '(none)';
}

interface Planned {
  calls: PlannedCall[];
  terminal?: StepVerdict;
}

function planCalls(response: ModelResponse, input: ModelStepInput, ports: SwarmPorts): Planned {
  const calls: PlannedCall[] = [];
  let terminal: StepVerdict | undefined;
  for (const call of response.toolCalls ?? []) {
    const invalid = (error: string): void => {
      calls.push({ id: call.id, name: call.name, kind: 'invalid', error });
    };
    const args = parseArgs(call);
    if (!args.ok) {
      invalid(args.error);
      continue;
    }
    const a = args.value as Record<string, unknown>;
    const handoff = input.handoffs.find((h) => h.toolName === call.name);
    if (input.orchestrator && call.name === 'complete') {
      if (!('result' in a)) {
        invalid('complete needs a "result" argument.');
        continue;
      }
      const checked = ports.checkResult(input.definitionId, input.swarmId, a.result);
      if (!checked.ok) invalid(`The result does not match the result schema: ${checked.error}`);
      else terminal ??= { type: 'complete', result: checked.value };
    } else if (input.orchestrator && call.name === 'fail') {
      const reason = typeof a.reason === 'string' && a.reason.trim() ? a.reason : 'The model gave up without a reason.';
      terminal ??= { type: 'fail', reason };
    } else if (input.orchestrator && call.name === 'pause') {
      if (typeof a.reason !== 'string' || !a.reason.trim()) {
        invalid('pause needs a "reason" string.');
        continue;
      }
      const type = PAUSE_TYPES.has(a.type as PauseReason['type']) ? (a.type as PauseReason['type']) : 'HITL';
      const context = typeof a.context === 'string' && a.context.trim() ? `\n\n${a.context}` : '';
      const reason: PauseReason = { type, message: `${a.reason}${context}` };
      if (type === 'APPROVAL_NEEDED') reason.pendingApprovalId = call.id;
      calls.push({ id: call.id, name: call.name, kind: 'pause', reason });
    } else if (handoff?.kind === 'agent') {
      if (typeof a.request !== 'string' || !a.request.trim()) {
        invalid(`${call.name} needs a non-empty "request" string.`);
        continue;
      }
      calls.push({ id: call.id, name: call.name, kind: 'agent', agentId: handoff.agentId, request: a.request });
    } else if (handoff?.kind === 'remote') {
      if (typeof a.request !== 'string' || !a.request.trim()) {
        invalid(`${call.name} needs a non-empty "request" string.`);
        continue;
      }
      calls.push({ id: call.id, name: call.name, kind: 'remote', agentId: handoff.agentId, url: handoff.url, request: a.request });
    } else if (handoff?.kind === 'swarm') {
      calls.push(planSwarmHandoff(call, a, handoff.definitionId, handoff.structured, handoff.customizable, ports));
    } else if (call.name === REGISTRY_HANDOFF && input.tools.includes(call.name)) {
      calls.push(planRegistryHandoff(call, a, input, ports));
    } else if (input.tools.includes(call.name)) {
      const checked = ports.checkToolArgs(call.name, a);
      if (!checked.ok) invalid(`Invalid arguments for "${call.name}": ${checked.error}`);
      else calls.push({ id: call.id, name: call.name, kind: 'tool', arguments: call.arguments });
    } else {
      invalid(`Unknown tool "${call.name}". Available tools: ${availableNames(input)}.`);
    }
  }
  return terminal ? { calls, terminal } : { calls };
}

/** Plans a handoff to a child swarm: its input from the arguments, plus any customization. */
function planSwarmHandoff(
  call: ToolCall,
  args: Record<string, unknown>,
  definitionId: string,
  structured: boolean,
  customizable: boolean,
  ports: SwarmPorts,
): PlannedCall {
  const invalid = (error: string): PlannedCall => ({ id: call.id, name: call.name, kind: 'invalid', error });
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
  const planned: PlannedCall = { id: call.id, name: call.name, kind: 'swarm', definitionId, input: childInput };
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
    return { id: call.id, name: call.name, kind: 'invalid', error: `${REGISTRY_HANDOFF} needs a "swarm_id" string.` };
  }
  if (!searchedIds(input).has(id)) {
    return {
      id: call.id,
      name: call.name,
      kind: 'invalid',
      error: `Swarm "${id}" was not returned by ${REGISTRY_SEARCH} in this conversation; search first and use an id it returns.`,
    };
  }
  const { swarm_id: _drop, request, input: structured, customization } = args;
  const forwarded: Record<string, unknown> =
    structured !== undefined && structured !== null && typeof structured === 'object' ? { ...(structured as object) } : { request };
  if (customization !== undefined) forwarded.customization = customization;
  const isText = structured === undefined;
  return planSwarmHandoff(call, forwarded, id, !isText, ports.isCustomizable(id), ports);
}

async function completeWith(result: unknown, input: ModelStepInput, ports: SwarmPorts): Promise<StepVerdict> {
  const rejected = await ports.guardOutput(input.definitionId, input.swarmId, result);
  return rejected ? { type: 'fail', reason: `Output guardrail rejected the result: ${rejected}` } : { type: 'complete', result };
}

function textVerdict(response: ModelResponse, input: ModelStepInput, ports: SwarmPorts): StepVerdict | Checked {
  const text = response.text?.trim() ?? '';
  if (!input.orchestrator) return { type: 'continue' };
  if (text === '') {
    return { type: 'correct', message: 'Your response was empty. Use a tool, or call complete(result) with the final result.' };
  }
  if (ports.resultIsText(input.definitionId, input.swarmId)) return { ok: true, value: response.text! };
  const parsed = parseTypedText(text);
  const checked = parsed.ok ? ports.checkResult(input.definitionId, input.swarmId, parsed.value) : parsed;
  if (checked.ok) return checked;
  return {
    type: 'correct',
    message: `Your answer does not match the required result schema: ${checked.error} Call complete(result) with a valid result.`,
  };
}

/**
 * Plans the calls of a response and decides the round's verdict, in this order: a valid
 * `fail` or `complete` call terminates (first one wins); other calls run; a text answer
 * completes a text swarm, completes a typed swarm when it parses and matches (type-match),
 * or earns a correction round.
 *
 * @example
 * const { calls, verdict } = await judgeResponse(response, input, ports);
 */
export async function judgeResponse(
  response: ModelResponse,
  input: ModelStepInput,
  ports: SwarmPorts,
): Promise<{ calls: PlannedCall[]; verdict: StepVerdict }> {
  const planned = planCalls(response, input, ports);
  if (planned.terminal?.type === 'complete') {
    return { calls: planned.calls, verdict: await completeWith(planned.terminal.result, input, ports) };
  }
  if (planned.terminal) return { calls: planned.calls, verdict: planned.terminal };
  if (planned.calls.length > 0) return { calls: planned.calls, verdict: { type: 'continue' } };
  const verdict = textVerdict(response, input, ports);
  if ('type' in verdict) return { calls: [], verdict };
  return { calls: [], verdict: verdict.ok ? await completeWith(verdict.value, input, ports) : { type: 'continue' } };
}
