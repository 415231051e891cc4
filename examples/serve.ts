/**
 * A module for `xswarm serve`: the activity planner and its agents, on the offline demo model
 * unless `OPENAI_API_KEY` is set (then the CLI picks `openaiModel`).
 *
 * @example
 * // npm run xswarm -- serve examples/serve.ts --port 4000
 *
 * @module
 */
import { activityAgents, activityPlanner, demoModel } from './activity-planner/index.js';

/** The swarms served: each gets REST, SSE, WebSocket, A2A and MCP endpoints. */
export const swarms = [activityPlanner];

/** The agents they hand off to. */
export const agents = [...activityAgents];

/** The model: the scripted demo offline; left out when an API key selects OpenAI. */
export const model = process.env.OPENAI_API_KEY ? undefined : demoModel;
