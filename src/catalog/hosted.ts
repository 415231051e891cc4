/**
 * Agents served to other runtimes. A runtime on NATS hosts each of its agents for the others as
 * a swarm of its own — the agent's instructions, tools, model and turn bound as the
 * orchestrator, its text answer as the result — so an agent working in another process persists
 * every completed step and resumes after a crash exactly as a child swarm does. Its definition
 * id is the agent's id under a reserved prefix.
 *
 * @module
 */
import type { Model } from '../models/scripted.js';
import { defineSwarm, type SwarmDefinition } from '../define/swarm.js';
import type { AgentDefinition } from '../define/agent.js';
import { agentOfHosted, hostedAgentId } from '../define/ids.js';

/** The swarm definition that runs `agent` for another runtime's handoff. */
export function agentAsSwarm(agent: AgentDefinition): SwarmDefinition {
  return defineSwarm({
    id: hostedAgentId(agent.id),
    name: agent.name,
    description: agent.description,
    instructions: agent.instructions,
    tools: agent.tools,
    maxTurns: agent.maxTurns,
    // Its guardrails hold wherever it runs (there its pause pauses the hosted run).
    ...(agent.guardrails ? { guardrails: agent.guardrails } : {}),
    // What its model sees is the agent's own policy, in whichever runtime hosts it.
    ...(agent.history ? { history: agent.history } : {}),
  });
}

/**
 * `model` as the agent speaks through it: requests name the agent (`agentId`), as they do when
 * the agent runs inside its caller's swarm, not the hosting definition.
 */
export function speakingAs(agentId: string, model: Model): Model {
  return {
    name: model.name,
    ...(model.secrets ? { secrets: model.secrets } : {}),
    call: (request) => model.call({ ...request, agentId }),
  };
}

/** How a handoff target is named to a model and in errors: `Agent "x"` or `Swarm "y"`. */
export function targetName(definitionId: string): string {
  const agent = agentOfHosted(definitionId);
  return agent === undefined ? `Swarm "${definitionId}"` : `Agent "${agent}"`;
}
