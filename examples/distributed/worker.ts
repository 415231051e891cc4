/**
 * The worker of the distributed example (`xswarm worker`): it hosts the activity planner's
 * weather, calendar and allergen agents for every process on the same NATS. It exports agents
 * alone: it runs no swarm of its own, only the agents' work that handoffs send it.
 *
 * Offline on the scripted demo model; with `OPENAI_API_KEY` set the CLI picks `openaiModel`.
 *
 * @example
 * // terminal 1: nats-server -js -sd /tmp/xswarm-nats
 * // terminal 2: npx xswarm worker examples/distributed/worker.ts --nats nats://127.0.0.1:4222
 * // terminal 3: npx xswarm run examples/distributed/planner.ts day-planner "Plan my Saturday" --nats nats://127.0.0.1:4222
 *
 * @module
 */
import { activityAgents, demoModel } from '../activity-planner/index.js';

/** The agents this worker hosts: handoffs to their ids from other processes land here. */
export const agents = [...activityAgents];

/** The model the agents speak through: the scripted demo offline; left out when an API key selects OpenAI. */
export const model = process.env.OPENAI_API_KEY ? undefined : demoModel;
