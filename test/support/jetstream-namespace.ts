/**
 * One real nats-server per test file, and a JetStream namespace (prefix) of it per test, for
 * the tests of the JetStream store: connections and stores made by a test are closed after it,
 * last opened first, and the next test gets a fresh namespace of the same server.
 */
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { afterAll, afterEach, beforeAll } from 'vitest';
import { jetstreamStore } from '../../src/store/jetstream/store.js';
import { type NatsServer, natsServerMissing, startNatsServer } from './nats-server.js';

/** Registers the file's hooks; `letter` starts each test's prefix (`<letter><n>`). */
export function jetstreamNamespace(letter: string) {
  let server: NatsServer | undefined;
  let cleanup: (() => Promise<unknown>)[] = [];
  let tests = 0;
  let prefix = `${letter}0`;

  beforeAll(async () => {
    if (!natsServerMissing) server = await startNatsServer();
  });
  afterAll(async () => {
    await server?.stop();
  });
  afterEach(async () => {
    for (const close of cleanup.reverse()) await close().catch(() => undefined);
    cleanup = [];
    prefix = `${letter}${++tests}`;
  });

  const ns = {
    /** The file's server (started before the first test). */
    get server(): NatsServer {
      return server!;
    },
    /** The current test's namespace. */
    get prefix(): string {
      return prefix;
    },
    /** Closes `close` after the test. */
    onCleanup(close: () => Promise<unknown>): void {
      cleanup.push(close);
    },
    /** A connection as a runtime would make it: reconnecting forever. */
    async connection(): Promise<NatsConnection> {
      const nc = await connect({ servers: ns.server.url, maxReconnectAttempts: -1, reconnectTimeWait: 50, waitOnFirstConnect: true });
      ns.onCleanup(() => nc.close());
      return nc;
    },
    /** A store on a connection of its own (another process, as far as NATS can tell). */
    async open(options: { timeoutMs?: number; prefix?: string } = {}) {
      const store = jetstreamStore({ connection: await ns.connection(), prefix: options.prefix ?? prefix, timeoutMs: options.timeoutMs ?? 2000 });
      ns.onCleanup(() => store.close());
      return store;
    },
  };
  return ns;
}
