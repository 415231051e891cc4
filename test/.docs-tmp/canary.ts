import { createRuntime, defineSwarm } from 'xswarm';
const s = defineSwarm({ id: 'x', instructions: 'y' });
createRuntime({ swarms: [s], model, maxTurns: 3 });
for await (const e of client.events()) if (e.kind === "status-update") console.log(e.state);
export {};
