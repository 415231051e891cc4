import { createRuntime } from 'xswarm';
import { connectNats, jetstreamStore, natsTransport } from 'xswarm/nats';
const connection = await connectNats({ servers: 'nats://127.0.0.1:4222', name: 'planner-api' });
const runtime = createRuntime({ swarms, model, transport: natsTransport(connection), store: jetstreamStore({ connection }) });
// ... later: the runtime leaves the connection it was given to its owner
await runtime.close();
await connection.drain();
export {};
