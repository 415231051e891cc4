/**
 * Handoffs to the best agent for a skill (`handoff.toBestAgent(skill)`): how they resolve and
 * how their calls reach the runtime's agent registry.
 *
 * Such a handoff plans and runs as a remote-agent call (the machines know no other kind): its
 * target's `url` is `xswarm-registry:<skill>` and its `agentId` `best:<skill>`, so the swarm's
 * `agent-handoff` event names the skill. {@link RemoteAgents} sends calls with such a URL to
 * the registry ({@link AgentRegistry.callBest}), which picks the agent when the call runs and
 * answers with the agent's id: the `handoff-result` event names the agent that answered.
 *
 * @module
 */
import type { ResolvedHandoff } from '../../machines/swarm.js';
import { DefinitionError } from '../errors.js';
import type { AgentRegistry } from '../registry/registry.js';
import { hasSkill } from '../registry/selection.js';
import { type BestAgentHandoff, handoffToolName } from '../define/handoff.js';

const SCHEME = 'xswarm-registry:';

/** The target URL of a handoff to the best agent for `skill`. */
export function registryUrl(skill: string): string {
  return `${SCHEME}${encodeURIComponent(skill)}`;
}

/** The skill a target URL asks the registry for, or undefined for any other URL. */
export function registrySkill(url: string): string | undefined {
  return url.startsWith(SCHEME) ? decodeURIComponent(url.slice(SCHEME.length)) : undefined;
}

/**
 * The handoff as the machine runs it: tool `handoff_to_best_<skill>`, described as "the best
 * available agent for <skill>" plus the skill's description from the registry's agents, when
 * one has it now. Without a registry, or with an empty skill, a definition error.
 */
export function resolveBestAgent(registry: AgentRegistry | undefined, swarmId: string, h: BestAgentHandoff): ResolvedHandoff {
  const skill = h.skill.trim();
  if (!skill) throw new DefinitionError(`Swarm "${swarmId}" hands off to the best agent for an empty skill`);
  if (!registry) {
    throw new DefinitionError(`Swarm "${swarmId}" hands off to the best agent for "${skill}", but the runtime has no agent registry: pass createRuntime({ registry })`);
  }
  return {
    toolName: handoffToolName(`best_${skill}`),
    kind: 'remote',
    agentId: `best:${skill}`,
    url: registryUrl(skill),
    description: h.description ?? describeSkill(registry, skill),
  };
}

/** "The best available agent for <skill>", plus what the first agent having it says of it. */
function describeSkill(registry: AgentRegistry, skill: string): string {
  const base = `The best available agent for ${skill}`;
  for (const agent of registry.agents({ skill })) {
    const found = agent.skills.find((s) => s.description.trim() && hasSkill([s], skill));
    if (found) return `${base}: ${found.description.trim()}`;
  }
  return base;
}
