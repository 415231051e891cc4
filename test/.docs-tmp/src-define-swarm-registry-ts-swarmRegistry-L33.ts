import { defineSwarm, swarmRegistry } from 'xswarm';
const planner = defineSwarm({ id: 'planner', instructions: 'Find a swarm for each task.', tools: [swarmRegistry({ limit: 3 })] });
export {};
