/**
 * Guardrails: named checks on a swarm's input, each model response, each tool call before it
 * runs and the final result (`defineSwarm`), on an agent's responses and tool calls
 * (`defineAgent`), and, registered by name, on ad-hoc swarms. What a rejection does is the
 * guardrail's own `onReject`.
 *
 * @module
 */
import type { GuardrailAction, GuardrailStep } from '../../machines/guardrail.js';
import type { ModelResponse } from '../../machines/messages.js';
import type { StallRule } from '../../machines/stall.js';
import { DefinitionError } from '../errors.js';

/**
 * A guardrail: `check` returns `true` to allow, or a string saying why it rejects. What a
 * rejection does is `onReject`: `'reject'` (the default) ends the swarm in A2A's `rejected`
 * state (the `failed` state node, its result saying `rejected`); `'pause'` pauses it with a
 * `GUARDRAIL` reason naming the guardrail and why (resume goes on as if allowed, stop ends
 * it); `'block'`, for tool-call guardrails only, refuses that one call and the model reads
 * why as the call's error result. A check that throws rejects the swarm, whatever `onReject`
 * says (fail closed), with the error in the reason.
 */
export interface Guardrail<T> {
  name: string;
  check(value: T, ctx: { swarmId: string }): true | string | Promise<true | string>;
  onReject?: GuardrailAction;
}

/** What a tool-call guardrail checks: the call before it runs, its arguments parsed. */
export interface GuardedToolCall {
  name: string;
  arguments: Record<string, unknown>;
  /** The model's id of the call. */
  callId: string;
  /** Who calls it: the swarm's definition id for the orchestrator, else the agent's id. */
  agentId: string;
}

/** The guardrails of an agent (`defineAgent`): on its model responses and its tool calls. */
export interface AgentGuardrails {
  response?: readonly Guardrail<ModelResponse>[];
  toolCall?: readonly Guardrail<GuardedToolCall>[];
}

/** The guardrails of a swarm, per step. */
export interface SwarmGuardrails<I, R> extends AgentGuardrails {
  input?: readonly Guardrail<I>[];
  output?: readonly Guardrail<R>[];
}

/** `list` checked for `step` (a name, a check, a known `onReject`; `block` on tool calls only). */
export function checkGuardrails<T>(list: readonly Guardrail<T>[] | undefined, step: GuardrailStep, owner: string): readonly Guardrail<T>[] {
  if (list === undefined) return [];
  if (!Array.isArray(list)) throw new DefinitionError(`${owner}: guardrails.${step} must be an array of guardrails`);
  for (const g of list) {
    if (!g || typeof g.name !== 'string' || g.name === '' || typeof g.check !== 'function') {
      throw new DefinitionError(`${owner}: each guardrails.${step} entry needs a name and a check function`);
    }
    const action = g.onReject;
    if (action !== undefined && action !== 'reject' && action !== 'pause' && action !== 'block') {
      throw new DefinitionError(`${owner}: guardrail "${g.name}" has onReject ${JSON.stringify(action)}; use 'reject', 'pause' or 'block'`);
    }
    if (action === 'block' && step !== 'toolCall') {
      throw new DefinitionError(`${owner}: guardrail "${g.name}" may not block: only tool-call guardrails block (onReject: 'block')`);
    }
  }
  return Object.freeze([...list]);
}

/** `value` when it is a usable {@link StallRule} or absent; else a {@link DefinitionError} naming `owner`. */
export function checkStall(value: unknown, owner: string): StallRule | undefined {
  if (value === undefined) return undefined;
  const rule = value as StallRule;
  const whole = (n: unknown, min: number) => typeof n === 'number' && Number.isInteger(n) && n >= min;
  if (
    !value ||
    typeof value !== 'object' ||
    (rule.repeats !== undefined && !whole(rule.repeats, 2)) ||
    (rule.turnsWithoutNewResult !== undefined && !whole(rule.turnsWithoutNewResult, 1)) ||
    (rule.repeats === undefined && rule.turnsWithoutNewResult === undefined)
  ) {
    throw new DefinitionError(
      `${owner}: stall must be { repeats?: integer ≥ 2, turnsWithoutNewResult?: integer ≥ 1 } with at least one set, got ${JSON.stringify(value) ?? String(value)}`,
    );
  }
  return {
    ...(rule.repeats !== undefined ? { repeats: rule.repeats } : {}),
    ...(rule.turnsWithoutNewResult !== undefined ? { turnsWithoutNewResult: rule.turnsWithoutNewResult } : {}),
  };
}
