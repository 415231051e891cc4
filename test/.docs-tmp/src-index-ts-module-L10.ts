import { z } from 'zod';
import { createRuntime, defineAgent, defineSwarm, handoff, scriptedModel, tool } from 'xswarm';

const forecast = tool({
  name: 'get_forecast', description: 'Weather forecast for a day',
  parameters: z.object({ day: z.string() }),
  execute: async ({ day }) => ({ day, sky: 'sunny' }),
});
const weather = defineAgent({ id: 'weather-agent', instructions: 'Answer with the forecast.', tools: [forecast] });
const planner = defineSwarm({ id: 'planner', instructions: 'Plan outdoor activities.', handoffs: [handoff.toAgent(weather)] });
const model = scriptedModel(() => ({ text: 'Go hiking on Saturday.' }));
const client = createRuntime({ swarms: [planner], model }).forSwarm(planner);
await client.run('this weekend');
console.log(await client.wait()); // { status: 'completed', result: 'Go hiking on Saturday.' }
export {};
