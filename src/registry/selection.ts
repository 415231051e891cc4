/**
 * Best-agent selection: pure functions of the agents' current view.
 *
 * @module
 */
import type { RegistrySkill } from './card-check.js';
import type { AgentInfo } from './types.js';

/**
 * Whether `skill` names one of `skills`: equal, ignoring case and surrounding spaces, to a
 * skill's `id`, its `name`, or one of its `tags`.
 */
export function hasSkill(skills: readonly RegistrySkill[], skill: string): boolean {
  const wanted = normalize(skill);
  if (wanted === '') return false;
  return skills.some((s) => normalize(s.id) === wanted || normalize(s.name) === wanted || s.tags.some((t) => normalize(t) === wanted));
}

/**
 * The best agent for `skill`, or undefined when no healthy agent has it.
 *
 * Scoring, in order:
 * 1. only agents whose last health check succeeded (`healthy`) and that have the skill
 *    ({@link hasSkill}: id, name or tag, case-insensitive) are candidates; an agent not yet
 *    checked or found unhealthy is skipped until a check finds it healthy again;
 * 2. the lowest `load` wins: the tasks and messages this registry has in flight on it;
 * 3. ties go to the agent registered first (lowest `order`), so equal agents are chosen
 *    stably and the same inputs always give the same choice.
 *
 * How well the skill matched (id, name or tag) does not weigh in: any match qualifies.
 */
export function selectAgent(agents: readonly AgentInfo[], skill: string): AgentInfo | undefined {
  let best: AgentInfo | undefined;
  for (const agent of agents) {
    if (agent.health !== 'healthy' || !hasSkill(agent.skills, skill)) continue;
    if (!best || agent.load < best.load || (agent.load === best.load && agent.order < best.order)) best = agent;
  }
  return best;
}

function normalize(s: string): string {
  return s.trim().toLowerCase();
}
