import { createRuntime } from 'xswarm';
import { connectNats, jetstreamStore } from 'xswarm/nats';
const store = jetstreamStore({ connection: connectNats({ servers: 'nats://127.0.0.1:4222' }) });
const runtime = createRuntime({ swarms, model, store });
export {};
