import { createRuntime } from 'xswarm';
import { a2aRemoteAgents } from 'xswarm/a2a';
const runtime = createRuntime({ swarms, model, remote: a2aRemoteAgents({ headers: { authorization: 'Bearer T' } }) });
export {};
