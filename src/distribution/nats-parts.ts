/**
 * What `createRuntime({ nats })` builds on: one connection, the transport over it and the
 * JetStream store on it, loaded on demand so the core never loads the NATS client otherwise.
 *
 * @module
 */
import type { SwarmStore } from '../store/types.js';
import type { NatsOptions } from '../nats/options.js';
import type { Transport } from '../transport/types.js';
import { closeConnection, connectNats } from '../nats/connection.js';
import { jetstreamStore } from '../store/jetstream/store.js';
import { natsTransport } from '../transport/nats.js';

/** A runtime's NATS parts; `close` closes the connection they share. */
export interface NatsParts {
  transport: Transport;
  store: SwarmStore;
  close(): Promise<void>;
}

/** Connects and builds the transport and the store (in `prefix`'s namespace). */
export async function natsParts(options: NatsOptions, prefix: string): Promise<NatsParts> {
  const connection = await connectNats(options);
  const transport = natsTransport(connection);
  const store = jetstreamStore({ connection, prefix });
  return {
    transport,
    store,
    async close() {
      await closeConnection(connection);
    },
  };
}
