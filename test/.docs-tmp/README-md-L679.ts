import { createRuntime } from 'xswarm';
// process 1: hosts the agent for every runtime on this NATS
const worker = createRuntime({ agents: [weather], model, nats: { servers: 'nats://127.0.0.1:4222' } });
await worker.start();
// process 2: its swarm names the agent by id (handoff.toAgent('weather')); the call goes to a worker
const home = createRuntime({ swarms: [planner], model, nats: { servers: 'nats://127.0.0.1:4222' } });
await home.start();
const trip = home.forSwarm('planner', 'trip-42');
await trip.run('Plan my Saturday');
console.log(await trip.wait());
// any process on the same NATS: the same client, wherever the swarm runs
await home.forSwarm('planner', 'trip-42').getResult();
export {};
