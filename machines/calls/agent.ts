/**
 * A handoff to an agent of the swarm: run by an `agent` child (the agent machine, `../agent.ts`)
 * with the agent's instructions, tools and turn bound and the swarm's session; announced by an
 * `agent-handoff` fact, reported by `handoff-result`.
 *
 * @module
 */
import type { AgentInput } from '../agent.js';
import { handoffResultEvent, statusUpdate } from '../event-builders.js';
import type { SwarmConfig } from '../swarm.js';
import { type CallKind, type CallResult, childIdFor, timeoutOf } from './kind.js';

/** A handoff to an agent as the judge planned it. */
export interface PlannedAgentCall {
  id: string;
  name: string;
  kind: 'agent';
  agentId: string;
  request: string;
}

/** A handoff to an agent of the swarm in a round, run by an `agent` child. */
export interface AgentRoundCall {
  kind: 'agent';
  id: string;
  name: string;
  childId: string;
  agentId: string;
  request: string;
  result?: CallResult;
}

/** The agent a call names: the judge plans agent calls only for the swarm's own handoffs. */
function agentSpecOf(config: SwarmConfig, agentId: string) {
  const handoff = config.handoffs.find((h) => h.kind === 'agent' && h.agentId === agentId);
  if (handoff?.kind !== 'agent') throw new Error(`Agent "${agentId}" is not a handoff of this swarm`);
  return handoff.agent;
}

/** The agent handoff kind. */
export const agentCall = {
  handoff: true,
  open: ({ id, name, agentId, request }, turn, index) => ({ id, name, kind: 'agent', childId: childIdFor('agent', turn, index), agentId, request }),
  announce(speaker, call, events) {
    events.push(statusUpdate('working', { type: 'agent-handoff', from: speaker, to: call.agentId, callId: call.id, request: call.request }));
  },
  run: {
    spawn(call, site) {
      if (!site.swarm) throw new Error('Only the orchestrator hands off to an agent');
      const agent = agentSpecOf(site.swarm.config, call.agentId);
      const input: AgentInput = {
        swarmId: site.swarmId,
        definitionId: site.definitionId,
        agentId: call.agentId,
        instructions: agent.instructions,
        tools: agent.tools,
        maxTurns: agent.maxTurns,
        request: call.request,
        session: site.swarm.session,
        scope: site.key,
      };
      if (site.swarm.approvedTools) input.approvedTools = site.swarm.approvedTools;
      // The agent's own policy, else the swarm's.
      const history = agent.history ?? site.swarm.config.history;
      if (history) input.history = history;
      const timeout = timeoutOf(site, agent.timeoutMs, agent.onTimeout);
      if (timeout) input.timeout = timeout;
      return { src: 'agent', input };
    },
    done: (speaker, call, result, key) => handoffResultEvent(speaker, call, result.agentId ?? call.agentId, result, key),
  },
} satisfies CallKind<PlannedAgentCall, AgentRoundCall>;
