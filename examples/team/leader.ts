/**
 * The leader of the distributed PRD build (`xswarm serve`): it has the team and no worker
 * definition of its own, so each task attempt goes over NATS to a worker process running
 * `examples/team/workers.ts`; the team is served over REST, SSE and WebSocket (`/teams/…`).
 *
 * @example
 * // npx xswarm serve examples/team/leader.ts --port 4000 --nats nats://127.0.0.1:4222
 * // curl -X POST localhost:4000/teams/prd-build/sprint-1/run -H 'content-type: application/json' -d '{"tasks":[…]}'
 *
 * @module
 */
import { defineTeam } from '../../src/index.js';
import { prdModel } from './index.js';

/** The PRD team, its workers named by the definitions the worker processes host. */
export const teams = [
  defineTeam({
    id: 'prd-build',
    description: 'Builds a recipe sharing app from its PRD, its workers in other processes',
    workers: [
      { type: 'database', specialty: 'PostgreSQL schemas and seed data', swarm: 'database-worker' },
      { type: 'api', specialty: 'REST endpoints in TypeScript', swarm: 'api-worker', count: 2 },
      { type: 'frontend', specialty: 'React pages', swarm: 'frontend-worker', count: 2 },
    ],
  }),
];

/** The leader calls no model itself (its workers do); the CLI wants one all the same. */
export const model = prdModel({ crashOn: '' });
