/**
 * Handoffs: how an orchestrator delegates, and the builders a definition declares them with.
 * Each becomes a `handoff_to_<id>` tool with the target's description as the tool description:
 * `request: string` for agents and text-input swarms, the child's input schema for
 * structured-input swarms.
 *
 * The rest of a handoff's life is in this folder: `resolve.ts` turns declared handoffs into
 * what the machine runs with, `tool-specs.ts` into what the model sees, `child-swarm.ts` and
 * `remote-agent.ts` run them; `actors/plan-handoff.ts` plans them from a model response.
 *
 * @module
 */
import { DEFAULT_MAX_TURNS, type SwarmDefinition } from './swarm.js';
import type { AgentDefinition } from './agent.js';
import type { Tool } from './tool.js';
import { checkOnTimeout, checkTimeoutMs, type OnTimeout } from './timeout.js';

/** Options of the handoff builders that run a call elsewhere (a child swarm, a remote agent). */
export interface HandoffOptions {
  /**
   * How long the handoff may take, in ms, counted from the model response that asked for it:
   * past it a child swarm is stopped (a remote agent's task canceled) and the model reads the
   * timeout as the handoff's result. The deadline is stored with the call, so a restart keeps it.
   */
  timeoutMs?: number;
  /**
   * What the timeout does: `'result'` (the default) gives it to the model as the handoff's
   * result; `'fail'` fails the swarm that handed off.
   */
  onTimeout?: OnTimeout;
}

/** A handoff to an agent, by definition or by registered id. */
export interface AgentHandoff {
  readonly kind: 'agent';
  readonly agent: AgentDefinition | string;
  /** Overrides the agent's description as the tool description. */
  readonly description?: string;
  /** A copy of this handoff with another tool description. */
  withDescription(text: string): AgentHandoff;
}

/**
 * A handoff to a child swarm: it runs as a swarm of its own with a new session; its result
 * (or failure) comes back as the handoff's tool result.
 */
export interface SwarmHandoff {
  readonly kind: 'swarm';
  readonly swarm: SwarmDefinition | string;
  readonly description?: string;
  /** Whether the parent's model may pass a `customization` argument. */
  readonly isCustomizable: boolean;
  /** This handoff's timeout (see {@link HandoffOptions}); else the child definition's `timeoutMs`. */
  readonly timeoutMs?: number;
  /** What this handoff's timeout does (see {@link HandoffOptions}); else the child definition's `onTimeout`. */
  readonly onTimeout?: OnTimeout;
  withDescription(text: string): SwarmHandoff;
  /**
   * Adds a `customization` argument to the handoff tool: `additional_instructions`,
   * `additional_agents`, `additional_tools`, `max_turns_override`. It only ever extends the
   * child's own configuration.
   */
  customizable(): SwarmHandoff;
}

/** A lightweight agent declared inside a handoff list, with no registration. */
export interface InlineHandoff {
  readonly kind: 'inline';
  readonly id: string;
  readonly description: string;
  readonly instructions: string;
  readonly tools: readonly Tool[];
  readonly maxTurns: number;
}

/**
 * A handoff to an agent served elsewhere over A2A, found by its agent card. The card's name
 * and description become the handoff tool's.
 */
export interface RemoteHandoff {
  readonly kind: 'remote';
  readonly url: string;
  readonly description?: string;
  /** This handoff's timeout (see {@link HandoffOptions}). */
  readonly timeoutMs?: number;
  /** What its timeout does (see {@link HandoffOptions}). */
  readonly onTimeout?: OnTimeout;
  withDescription(text: string): RemoteHandoff;
}

/**
 * A handoff to the best available agent for a skill, found in the runtime's agent registry
 * (`createRuntime({ registry })`) each time the model calls it: the least-loaded healthy agent
 * having the skill, remote (over A2A, as {@link RemoteHandoff}) or local.
 */
export interface BestAgentHandoff {
  readonly kind: 'best';
  /** Matched against the agents' skills (id, name or tag, case-insensitively). */
  readonly skill: string;
  readonly description?: string;
  withDescription(text: string): BestAgentHandoff;
}

/** Any handoff a swarm can declare. */
export type Handoff = AgentHandoff | SwarmHandoff | InlineHandoff | RemoteHandoff | BestAgentHandoff;

function bestAgentHandoff(skill: string, description?: string): BestAgentHandoff {
  return Object.freeze({
    kind: 'best' as const,
    skill,
    ...(description !== undefined ? { description } : {}),
    withDescription: (text: string) => bestAgentHandoff(skill, text),
  });
}

function remoteHandoff(url: string, description: string | undefined, timing: Timing): RemoteHandoff {
  return Object.freeze({
    kind: 'remote' as const,
    url,
    ...(description !== undefined ? { description } : {}),
    ...timing,
    withDescription: (text: string) => remoteHandoff(url, text, timing),
  });
}

function agentHandoff(agent: AgentDefinition | string, description?: string): AgentHandoff {
  return Object.freeze({
    kind: 'agent' as const,
    agent,
    ...(description !== undefined ? { description } : {}),
    withDescription: (text: string) => agentHandoff(agent, text),
  });
}

function swarmHandoff(swarm: SwarmDefinition | string, description: string | undefined, isCustomizable: boolean, timing: Timing): SwarmHandoff {
  return Object.freeze({
    kind: 'swarm' as const,
    swarm,
    ...(description !== undefined ? { description } : {}),
    isCustomizable,
    ...timing,
    withDescription: (text: string) => swarmHandoff(swarm, text, isCustomizable, timing),
    customizable: () => swarmHandoff(swarm, description, true, timing),
  });
}

/** A handoff's timeout options as it keeps them: only those given. */
type Timing = { timeoutMs?: number; onTimeout?: OnTimeout };

/** The `timeoutMs` and `onTimeout` of a builder's options, checked (`DefinitionError` when invalid). */
function timeoutOption(options: HandoffOptions | undefined, target: string): Timing {
  const timeoutMs = checkTimeoutMs(options?.timeoutMs, `The handoff to ${target}`);
  const onTimeout = checkOnTimeout(options?.onTimeout, `The handoff to ${target}`);
  return { ...(timeoutMs !== undefined ? { timeoutMs } : {}), ...(onTimeout !== undefined ? { onTimeout } : {}) };
}

/**
 * The handoff builders: what a swarm's `handoffs` list holds. Each handoff becomes a
 * `handoff_to_<id>` tool of the orchestrator; the runtime resolves ids when it is created.
 *
 * @example
 * import { defineSwarm, handoff } from 'xswarm';
 * defineSwarm({ id: 'planner', instructions: '…', handoffs: [
 *   handoff.toAgent(weather),
 *   handoff.toAgent('calendar-agent').withDescription('Free/busy lookups'),
 *   handoff.toSwarm(ticketing, { timeoutMs: 60_000 }).withDescription('Books tickets').customizable(),
 *   handoff.inline({ id: 'critic', description: 'Reviews a plan', instructions: 'Find flaws.' }),
 *   handoff.toRemoteAgent('http://127.0.0.1:4001/a2a/weather/.well-known/agent-card.json'),
 *   handoff.toBestAgent('forecast'), // with createRuntime({ registry })
 * ] });
 */
export const handoff = {
  /** Hand off to an agent (its definition, or the id of one registered with the runtime). */
  toAgent(agent: AgentDefinition | string): AgentHandoff {
    return agentHandoff(agent);
  },
  /**
   * Hand off to a child swarm (its definition, or the id of one registered with the runtime);
   * `timeoutMs` bounds each run of it (default: the child definition's own `timeoutMs`).
   */
  toSwarm(swarm: SwarmDefinition<any, any> | string, options?: HandoffOptions): SwarmHandoff {
    const target = swarm as SwarmDefinition | string;
    return swarmHandoff(target, undefined, false, timeoutOption(options, `swarm "${typeof target === 'string' ? target : target.id}"`));
  },
  /** Hand off to a remote A2A agent by the URL of its agent card; `timeoutMs` bounds each call. */
  toRemoteAgent(agentCardUrl: string, options?: HandoffOptions): RemoteHandoff {
    return remoteHandoff(agentCardUrl, undefined, timeoutOption(options, agentCardUrl));
  },
  /**
   * Hand off to the best available agent for `skill` in the runtime's agent registry, chosen
   * when the call runs (its tool is `handoff_to_best_<skill>`). Needs `createRuntime({ registry })`.
   */
  toBestAgent(skill: string): BestAgentHandoff {
    return bestAgentHandoff(skill);
  },
  /** Hand off to an agent defined right here. */
  inline(spec: { id: string; description: string; instructions: string; tools?: readonly Tool[]; maxTurns?: number }): InlineHandoff {
    return Object.freeze({
      kind: 'inline' as const,
      id: spec.id,
      description: spec.description,
      instructions: spec.instructions,
      tools: Object.freeze([...(spec.tools ?? [])]),
      maxTurns: spec.maxTurns ?? DEFAULT_MAX_TURNS,
    });
  },
};

/**
 * The tool name for a handoff target: `handoff_to_` plus the id with every character outside
 * `[a-zA-Z0-9_]` replaced by `_`.
 */
export function handoffToolName(id: string): string {
  return `handoff_to_${id.replace(/[^a-zA-Z0-9_]/g, '_')}`;
}

/** The id of the agent or swarm a handoff names (by definition or by id). */
export function handoffTargetId(h: AgentHandoff | SwarmHandoff): string {
  if (h.kind === 'agent') return typeof h.agent === 'string' ? h.agent : h.agent.id;
  return typeof h.swarm === 'string' ? h.swarm : h.swarm.id;
}
