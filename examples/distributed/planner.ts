/**
 * The orchestrator of the distributed example (`xswarm run` or `xswarm serve`, with `--nats`):
 * the activity planner's swarm, naming its agents by id only. This process does not have them:
 * its handoffs go over NATS to a worker hosting them (`examples/distributed/worker.ts`), which
 * persists the agents' steps in JetStream as this process persists the planner's.
 *
 * @example
 * // npx xswarm run examples/distributed/planner.ts day-planner "Plan my Saturday" --nats nats://127.0.0.1:4222
 *
 * @module
 */
import { defineSwarm, handoff } from '../../src/index.js';
import { activityAgents, activityPlanner, demoModel } from '../activity-planner/index.js';

/**
 * The activity planner with its agents named by id (`handoff.toAgent('weather-agent')`), so a
 * runtime on NATS sends each handoff to whichever worker hosts that agent.
 */
export const dayPlanner = defineSwarm({
  ...activityPlanner,
  id: 'day-planner',
  name: 'Day Planner',
  handoffs: activityAgents.map((a) => handoff.toAgent(a.id).withDescription(a.description)),
});

/** The swarms this module runs; it exports no agents: the workers have them. */
export const swarms = [dayPlanner];

/** The orchestrator's model: the scripted demo offline; left out when an API key selects OpenAI. */
export const model = process.env.OPENAI_API_KEY ? undefined : demoModel;
