import { z } from 'zod';
import { tool } from 'xswarm';
const forecast = tool({
  name: 'get_forecast',
  description: 'Weather forecast for a day',
  parameters: z.object({ day: z.string() }),
  execute: async ({ day }, ctx) => ({ day, sky: 'sunny', key: ctx.idempotencyKey }),
});
export {};
