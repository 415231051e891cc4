/**
 * Handoffs: how an orchestrator delegates. Each becomes a `handoff_to_<id>` tool with a
 * `request` string argument and the target's description as the tool description.
 *
 * @module
 */
import type { AgentDefinition } from './define.js';

/**
 * A handoff to an agent, by definition or by registered id.
 *
 * @example
 * const h: AgentHandoff = handoff.toAgent('calendar-agent').withDescription('Checks the calendar');
 */
export interface AgentHandoff {
  readonly kind: 'agent';
  readonly agent: AgentDefinition | string;
  /** Overrides the agent's description as the tool description. */
  readonly description?: string;
  /** A copy of this handoff with another tool description. */
  withDescription(text: string): AgentHandoff;
}

/** Any handoff a swarm can declare. */
export type Handoff = AgentHandoff;

function agentHandoff(agent: AgentDefinition | string, description?: string): AgentHandoff {
  return Object.freeze({
    kind: 'agent' as const,
    agent,
    ...(description !== undefined ? { description } : {}),
    withDescription: (text: string) => agentHandoff(agent, text),
  });
}

/**
 * Handoff builders.
 *
 * @example
 * defineSwarm({ id: 'planner', instructions: '…',
 *   handoffs: [handoff.toAgent(weather), handoff.toAgent('calendar-agent').withDescription('Free/busy lookups')] });
 */
export const handoff = {
  /** Hand off to an agent (its definition, or the id of one registered with the runtime). */
  toAgent(agent: AgentDefinition | string): AgentHandoff {
    return agentHandoff(agent);
  },
};

/**
 * The tool name for a handoff target: `handoff_to_` plus the id with every character outside
 * `[a-zA-Z0-9_]` replaced by `_`.
 *
 * @example
 * handoffToolName('weather-agent') // 'handoff_to_weather_agent'
 */
export function handoffToolName(id: string): string {
  return `handoff_to_${id.replace(/[^a-zA-Z0-9_]/g, '_')}`;
}
