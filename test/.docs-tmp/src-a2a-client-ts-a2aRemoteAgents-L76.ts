import { a2aRemoteAgents, createRuntime } from 'xswarm';
const runtime = createRuntime({
  swarms: [planner], model,
  remote: a2aRemoteAgents({ headers: { authorization: `Bearer ${process.env.PEER_TOKEN}` } }),
});
export {};
