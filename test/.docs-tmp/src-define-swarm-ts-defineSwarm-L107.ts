import { z } from 'zod';
import { defineSwarm, handoff } from 'xswarm';
const planner = defineSwarm({
  id: 'activity-planner',
  result: z.object({ day: z.string(), activities: z.array(z.string()) }),
  instructions: ({ input }) => `Plan outdoor activities for: ${input}`,
  handoffs: [handoff.toAgent(weather)],
  maxTurns: 8,
});
export {};
