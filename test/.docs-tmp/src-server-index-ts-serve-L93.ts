import { serve } from 'xswarm/server';
const server = await serve(runtime, { port: 4000 });
console.log(`POST ${server.url}/swarms/activity-planner`);
await server.close();
export {};
