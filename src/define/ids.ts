/**
 * What ids of definitions look like, and every id xswarm reserves for itself: no swarm
 * definition may take one, so the store's records and the runtime's own definitions never
 * collide with a user's.
 *
 * @module
 */

/** What an agent or swarm id may look like. */
export const DEFINITION_ID = /^[a-zA-Z0-9][a-zA-Z0-9_.:-]{0,127}$/;

/** The definition id ad-hoc swarms run under (reserved). */
export const ADHOC_ID = 'xswarm.adhoc';

/** The reserved prefix of hosted agents' definition ids (`xswarm.agent.<agentId>`, see `catalog/hosted.ts`). */
export const HOSTED_AGENT_PREFIX = 'xswarm.agent.';

/** The definition id under which an agent is hosted for other runtimes. */
export function hostedAgentId(agentId: string): string {
  return `${HOSTED_AGENT_PREFIX}${agentId}`;
}

/** The agent id a hosted agent's definition id stands for, or undefined for any other id. */
export function agentOfHosted(definitionId: string): string | undefined {
  return definitionId.startsWith(HOSTED_AGENT_PREFIX) ? definitionId.slice(HOSTED_AGENT_PREFIX.length) : undefined;
}

/** The prefix of a team record's definition id (`xswarm.team.<definition>`), so no swarm definition is mistaken for it. */
export const TEAM_RECORD_PREFIX = 'xswarm.team.';

/** The definition id of the agent registry's record (see `registry/persistence.ts`). */
export const REGISTRY_RECORD_DEFINITION = 'xswarm.registry';
