/**
 * The two definitions the distributed tests split across runtimes: `weather`, an agent with a
 * forecast tool, and `planner`, a swarm that hands off to it without having it. One copy for the
 * in-process tests and the NATS fault fixture, so both run the same topology.
 */
import { z } from 'zod';
import { defineAgent, defineSwarm, handoff, tool } from '../../src/index.js';

/**
 * The `weather` agent and the `planner` swarm; `onForecast` hears the idempotency key of every
 * forecast the tool makes, the side effect the tests count.
 */
export function weatherAndPlanner(onForecast: (idempotencyKey: string) => void) {
  const forecast = tool({
    name: 'get_forecast',
    description: 'The forecast for a day',
    parameters: z.object({ day: z.string() }),
    execute: async ({ day }, ctx) => {
      onForecast(ctx.idempotencyKey);
      return { day, sky: 'sunny' };
    },
  });
  const weather = defineAgent({ id: 'weather', description: 'Weather forecasts', instructions: 'Forecast.', tools: [forecast] });
  const planner = defineSwarm({
    id: 'planner',
    instructions: 'Plan the day.',
    handoffs: [handoff.toAgent('weather').withDescription('Asks the weather agent')],
  });
  return { weather, planner };
}
