import { createRuntime } from 'xswarm';
const runtime = createRuntime({ swarms: [planner], agents: [weather], model });
await runtime.start();
const client = runtime.forSwarm(planner); // or runtime.forSwarm('planner', 'my-swarm-id')
await client.run('Plan my Saturday');
for (const s of await runtime.list({ status: ['paused'] })) console.log(s.swarmId, 'waits for a human');
await runtime.close();
export {};
