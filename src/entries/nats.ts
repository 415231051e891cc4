/**
 * `xswarm/nats`: the NATS parts of a distributed runtime, for wiring them by hand (one
 * connection shared by the transport and the store, a connection with options of your own).
 * `createRuntime({ nats: { servers } })` does this wiring itself. Needs the optional packages
 * @nats-io/transport-node, @nats-io/jetstream and @nats-io/kv; importing this entry point
 * without them fails.
 *
 * @example
 * import { createRuntime } from 'xswarm';
 * import { connectNats, jetstreamStore, natsTransport } from 'xswarm/nats';
 * const connection = await connectNats({ servers: 'nats://127.0.0.1:4222', name: 'planner-api' });
 * const store = jetstreamStore({ connection });
 * const runtime = createRuntime({ swarms, model, transport: natsTransport(connection), store });
 * // ... later: a runtime closes only what it made; the store and the connection it was given are yours
 * await runtime.close();
 * await store.close();
 * await connection.drain();
 *
 * @module
 */
export { connectNats } from '../nats/connection.js';
export { natsTransport } from '../transport/nats.js';
export { jetstreamStore } from '../store/jetstream/store.js';
export type { JetStreamStore, JetStreamStoreOptions } from '../store/jetstream/store.js';
export type { NatsOptions } from '../nats/options.js';
