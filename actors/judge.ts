/**
 * What a model response means: planned calls and a verdict — which calls are tools, handoffs
 * (planned in `plan-handoff.ts`) or built-ins, which are malformed, and whether the response ends
 * the swarm. Nothing a model says throws here: every problem becomes an error text that goes
 * back to the model.
 *
 * @module
 */
import type { PauseReason } from '../machines/events.js';
import { PAUSE_TYPES, type PauseType } from '../machines/pause.js';
import type { ModelResponse, ToolCall } from '../machines/messages.js';
import type { ModelStepInput } from '../machines/contracts.js';
import type { StepVerdict } from '../machines/plan.js';
import type { PlannedCall } from '../machines/calls/index.js';
import { guardResult } from './guardrails.js';
import { invalidCall, planHandoff } from './plan-handoff.js';
import type { Checked, SwarmPorts } from './ports.js';

/** Names of the orchestrator's built-in tools. */
export const BUILTIN_TOOLS = ['complete', 'pause', 'fail'] as const;

/**
 * Validates the shape of whatever a model returned and gives every tool call a unique id.
 * Throws only when the response is not a response at all (a programming error in a model).
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
      const args = typeof call.arguments === 'string' ? call.arguments : call.arguments === undefined ? '{}' : JSON.stringify(call.arguments);
      return { id, name: typeof call.name === 'string' ? call.name : '', arguments: args };
    });
  }
  const usage = r.usage as { inputTokens?: unknown; outputTokens?: unknown; cachedInputTokens?: unknown } | undefined;
  if (usage && typeof usage.inputTokens === 'number' && typeof usage.outputTokens === 'number') {
    response.usage = { inputTokens: usage.inputTokens, outputTokens: usage.outputTokens };
    if (typeof usage.cachedInputTokens === 'number') response.usage.cachedInputTokens = usage.cachedInputTokens;
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

/** Parses a text answer as a typed result: the whole text, or the first fenced code block. */
export function parseTypedText(text: string): Checked {
  const fenced = /```(?:json)?\s*([\s\S]*?)```/.exec(text);
  const candidate = (fenced?.[1] ?? text).trim();
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
    const args = parseArgs(call);
    if (!args.ok) {
      calls.push(invalidCall(call, args.error));
      continue;
    }
    const a = args.value as Record<string, unknown>;
    if (input.orchestrator && isBuiltin(call.name)) {
      const planned = planBuiltin(call, a, input, ports);
      if ('type' in planned) terminal ??= planned;
      else calls.push(planned);
    } else {
      calls.push(planHandoff(call, a, input, ports) ?? planTool(call, a, input, ports));
    }
  }
  return terminal ? { calls, terminal } : { calls };
}

function isBuiltin(name: string): name is (typeof BUILTIN_TOOLS)[number] {
  return (BUILTIN_TOOLS as readonly string[]).includes(name);
}

/**
 * A built-in call of the orchestrator: `complete` and `fail` end the swarm (a verdict),
 * `pause` asks for a human (a planned call); a malformed one is an invalid call.
 */
function planBuiltin(call: ToolCall, a: Record<string, unknown>, input: ModelStepInput, ports: SwarmPorts): PlannedCall | StepVerdict {
  if (call.name === 'complete') {
    if (!('result' in a)) return invalidCall(call, 'complete needs a "result" argument.');
    const checked = ports.checkResult(input.definitionId, input.swarmId, a.result);
    if (!checked.ok) return invalidCall(call, `The result does not match the result schema: ${checked.error}`);
    return { type: 'complete', result: checked.value };
  }
  if (call.name === 'fail') {
    const reason = typeof a.reason === 'string' && a.reason.trim() ? a.reason : 'The model gave up without a reason.';
    return { type: 'fail', reason };
  }
  if (typeof a.reason !== 'string' || !a.reason.trim()) return invalidCall(call, 'pause needs a "reason" string.');
  const type: PauseType = PAUSE_TYPES.includes(a.type as PauseType) ? (a.type as PauseType) : 'HITL';
  const context = typeof a.context === 'string' && a.context.trim() ? `\n\n${a.context}` : '';
  const reason: PauseReason = { type, message: `${a.reason}${context}` };
  if (type === 'APPROVAL_NEEDED') reason.pendingApprovalId = call.id;
  if (a.response_schema !== undefined) {
    const schema = a.response_schema;
    const problem =
      !schema || typeof schema !== 'object' || Array.isArray(schema)
        ? `it must be a JSON Schema object such as {"type":"object","properties":{"approved":{"type":"boolean"}}}, got ${truncate(JSON.stringify(schema) ?? 'nothing')}`
        : ports.responseSchemaProblem?.(schema as Record<string, unknown>);
    if (problem) return invalidCall(call, `pause: "response_schema" is not usable: ${problem}. Call pause again with a valid schema, or without one.`);
    reason.responseSchema = schema as Record<string, unknown>;
  }
  return { id: call.id, name: call.name, kind: 'pause', reason };
}

/** A regular tool call of the step, checked against the tool's schema, or an unknown name. */
function planTool(call: ToolCall, a: Record<string, unknown>, input: ModelStepInput, ports: SwarmPorts): PlannedCall {
  if (!input.tools.includes(call.name)) return invalidCall(call, `Unknown tool "${call.name}". Available tools: ${availableNames(input)}.`);
  const checked = ports.checkToolArgs(call.name, a);
  if (!checked.ok) return invalidCall(call, `Invalid arguments for "${call.name}": ${checked.error}`);
  const timeoutMs = ports.toolTimeoutMs(call.name);
  if (timeoutMs === undefined) return { id: call.id, name: call.name, kind: 'tool', arguments: call.arguments };
  const fails = ports.toolOnTimeout?.(call.name) === 'fail';
  return { id: call.id, name: call.name, kind: 'tool', arguments: call.arguments, timeoutMs, ...(fails ? { onTimeout: 'fail' as const } : {}) };
}

/** `calls` with the verdict, once the verdict is decided. */
function judged(calls: PlannedCall[], verdict: StepVerdict | Promise<StepVerdict>): Judgement | Promise<Judgement> {
  return verdict instanceof Promise ? verdict.then((v) => ({ calls, verdict: v })) : { calls, verdict };
}

function textVerdict(response: ModelResponse, input: ModelStepInput, ports: SwarmPorts): StepVerdict | Checked {
  const text = response.text?.trim() ?? '';
  if (!input.orchestrator) return { type: 'continue' };
  if (text === '') {
    return { type: 'correct', message: 'Your response was empty. Use a tool, or call complete(result) with the final result.' };
  }
  if (ports.resultIsText(input.definitionId, input.swarmId)) return { ok: true, value: response.text ?? text };
  const parsed = parseTypedText(text);
  const checked = parsed.ok ? ports.checkResult(input.definitionId, input.swarmId, parsed.value) : parsed;
  if (checked.ok) return checked;
  return {
    type: 'correct',
    message: `Your answer does not match the required result schema: ${checked.error} Call complete(result) with a valid result.`,
  };
}

/** What the judge concluded from a model response: the planned calls and the verdict. */
export interface Judgement {
  calls: PlannedCall[];
  verdict: StepVerdict;
}

/**
 * Plans the calls of a response and decides the round's verdict, in this order: a valid
 * `fail` or `complete` call terminates (first one wins); other calls run; a text answer
 * completes a text swarm, completes a typed swarm when it parses and matches (type-match),
 * or earns a correction round. Only a completion with output guardrails waits for them: every
 * other verdict is returned at once, sparing the model step a promise and a tick per call.
 */
export function judgeResponse(response: ModelResponse, input: ModelStepInput, ports: SwarmPorts): Judgement | Promise<Judgement> {
  const planned = planCalls(response, input, ports);
  const calls = planned.calls;
  if (planned.terminal?.type === 'complete') return judged(calls, guardResult(planned.terminal.result, input, ports));
  if (planned.terminal) return { calls, verdict: planned.terminal };
  if (calls.length > 0) return { calls, verdict: { type: 'continue' } };
  const verdict = textVerdict(response, input, ports);
  if ('type' in verdict) return { calls: [], verdict };
  if (!verdict.ok) return { calls: [], verdict: { type: 'continue' } };
  return judged([], guardResult(verdict.value, input, ports));
}
