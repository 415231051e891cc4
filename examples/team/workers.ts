/**
 * A worker process of the distributed PRD build (`xswarm worker`): it hosts the database, api
 * and frontend worker definitions for every process on the same NATS, so the team leader's task
 * attempts run here. Start as many as you like: they share the attempts.
 *
 * Offline on the example's scripted model; with `OPENAI_API_KEY` set the CLI picks `openaiModel`.
 *
 * @example
 * // terminal 1: nats-server -js -sd /tmp/xswarm-nats
 * // terminals 2 and 3: npx xswarm worker examples/team/workers.ts --nats nats://127.0.0.1:4222
 * // terminal 4: npx xswarm serve examples/team/leader.ts --port 4000 --nats nats://127.0.0.1:4222
 *
 * @module
 */
import { prdModel, workerSwarms } from './index.js';

/** The task swarms this process runs for the team's leader. */
export const swarms = workerSwarms;

/** The model the task swarms speak through: the example's, without the stalling story. */
export const model = process.env.OPENAI_API_KEY ? undefined : prdModel({ crashOn: '' });
