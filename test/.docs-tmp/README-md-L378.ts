import { createRuntime, defineSwarm, defineTeam, scriptedModel } from 'xswarm';

const model = scriptedModel(() => ({ text: 'done' }));
const nats = { servers: 'nats://127.0.0.1:4222' };
// worker processes (as many as you like): host the task swarm
const builder = defineSwarm({ id: 'builder', instructions: 'You build what the task says.' });
const worker = createRuntime({ swarms: [builder], model, nats });
await worker.start();
// the leader's process: the team names its workers' swarm by id
const crew = defineTeam({ id: 'crew', workers: [{ type: 'dev', swarm: 'builder', count: 2 }] });
const leader = createRuntime({ teams: [crew], model, nats });
await leader.start();
await leader.forTeam(crew).run([{ id: 'schema', subject: 'Database schema' }]);
export {};
