import { z } from 'zod';
import { createRuntime, defineAgent, defineSwarm, handoff, scriptedModel, tool } from 'xswarm';

const forecast = tool({
  name: 'get_forecast', description: 'Weather forecast for a day',
  parameters: z.object({ day: z.string() }),
  execute: async ({ day }, ctx) => ({ day, sky: 'sunny' }), // ctx.idempotencyKey survives restarts
});
const weather = defineAgent({ id: 'weather-agent', description: 'Weather expert',
  instructions: 'Answer with the forecast.', tools: [forecast] });
const planner = defineSwarm({
  id: 'planner', instructions: ({ input }) => `Plan outdoor activities: ${input}`,
  result: z.object({ day: z.string(), activities: z.array(z.string()) }),
  handoffs: [handoff.toAgent(weather)],
});
const runtime = createRuntime({ swarms: [planner], model: myModel /* scriptedModel(...) or openaiModel({ model: 'gpt-4o-mini' }) */ });
const client = runtime.forSwarm(planner);
await client.run('this weekend');
for await (const e of client.events()) console.log(e.seq, e.kind);   // ends after the final event
console.log(await client.getResult());  // { status: 'completed', result: { day, activities } }
export {};
