/**
 * Agents as plain, frozen values: instructions, tools and an optional model of their own, run as
 * a child actor (the agent machine) when a swarm hands off to them.
 *
 * @module
 */
import type { Model } from '../../actors/index.js';
import type { Tool } from './tool.js';
import { DEFAULT_MAX_TURNS } from './swarm.js';
import { type AgentGuardrails, checkGuardrails } from './guardrail.js';
import { checkHistory, type HistoryPolicy } from './history.js';
import { checkOnTimeout, checkTimeoutMs, type OnTimeout } from './timeout.js';

/** An agent: instructions, tools and an optional model of its own. */
export interface AgentDefinition {
  readonly kind: 'agent';
  readonly id: string;
  readonly name: string;
  readonly description: string;
  readonly instructions: string;
  readonly tools: readonly Tool[];
  readonly model?: Model;
  /** Bound on the agent's own tool loop (model responses), default {@link DEFAULT_MAX_TURNS}. */
  readonly maxTurns: number;
  /**
   * Guardrails on the agent's model responses and tool calls. A rejection (or a pause, which an
   * agent cannot make) fails the agent's handoff, and the orchestrator reads why; a tool-call
   * guardrail with `onReject: 'block'` refuses that call only.
   */
  readonly guardrails?: AgentGuardrails;
  /**
   * What the agent's model sees of its conversation (see docs/history.md): past `maxTokens`,
   * older turns are trimmed or summarized. Absent: the swarm's policy, else everything.
   */
  readonly history?: HistoryPolicy;
  /**
   * How long a handoff to the agent may take, in ms, counted from the orchestrator response that
   * handed off: past it the agent is stopped (its model call and tools aborted) and the
   * orchestrator's model reads the timeout as the handoff's result.
   */
  readonly timeoutMs?: number;
  /** What the timeout does: `'result'` (the default), or `'fail'` to fail the swarm that handed off. */
  readonly onTimeout?: OnTimeout;
}

/**
 * Defines an agent: instructions, tools and its own tool loop, run as a child actor when a
 * swarm hands off to it (`handoff.toAgent`); it shares the swarm's session.
 *
 * @example
 * import { defineAgent } from 'xswarm';
 * const weather = defineAgent({
 *   id: 'weather-agent', name: 'Weather Agent',
 *   description: 'Provides weather information and forecasts',
 *   instructions: 'You are a weather expert. Use get_forecast.',
 *   tools: [forecast],
 * });
 */
export function defineAgent(spec: {
  id: string;
  name?: string;
  description?: string;
  instructions: string;
  tools?: readonly Tool[];
  model?: Model;
  maxTurns?: number;
  guardrails?: AgentGuardrails;
  history?: HistoryPolicy;
  timeoutMs?: number;
  onTimeout?: OnTimeout;
}): AgentDefinition {
  const owner = `Agent "${spec.id}"`;
  const g = spec.guardrails;
  const history = checkHistory(spec.history, owner);
  const timeoutMs = checkTimeoutMs(spec.timeoutMs, owner);
  const onTimeout = checkOnTimeout(spec.onTimeout, owner);
  return Object.freeze({
    kind: 'agent' as const,
    id: spec.id,
    name: spec.name ?? spec.id,
    description: spec.description ?? spec.name ?? spec.id,
    instructions: spec.instructions,
    tools: Object.freeze([...(spec.tools ?? [])]),
    ...(spec.model ? { model: spec.model } : {}),
    maxTurns: spec.maxTurns ?? DEFAULT_MAX_TURNS,
    ...(g
      ? {
          guardrails: Object.freeze({
            ...(g.response ? { response: checkGuardrails(g.response, 'response', owner) } : {}),
            ...(g.toolCall ? { toolCall: checkGuardrails(g.toolCall, 'toolCall', owner) } : {}),
          }),
        }
      : {}),
    ...(history ? { history } : {}),
    ...(timeoutMs !== undefined ? { timeoutMs } : {}),
    ...(onTimeout !== undefined ? { onTimeout } : {}),
  });
}
