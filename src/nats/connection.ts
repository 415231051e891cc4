/**
 * Connecting to NATS with the v3 client, supervised for a long-running runtime: it reconnects
 * forever (the client's default gives up after ~20 s of outage and closes for good), waits for
 * a server that is not up yet, and retries soon after a restart. The client is loaded on first
 * use, so the core package never loads `@nats-io/*` unless NATS is used.
 *
 * @module
 */
import type { NatsConnection, NodeConnectionOptions } from '@nats-io/transport-node';
import { importOptional } from '../util/optional.js';
import { type NatsOptions, natsPrefix } from './options.js';

/** The schemes the Node client dials (`host:port` without one means `nats://`). */
const SCHEMES = new Set(['nats:', 'tls:']);

/**
 * The servers as the client takes them, checked: a URL the client cannot dial would otherwise
 * make it retry forever (it waits for the first connection), never reporting the typo.
 */
function serverList(servers: NatsOptions['servers']): string[] {
  const list = typeof servers === 'string' ? [servers] : [...servers];
  if (list.length === 0) throw new TypeError('nats.servers names no server');
  for (const server of list) {
    let url: URL | undefined;
    try {
      url = new URL(server.includes('://') ? server : `nats://${server}`);
    } catch {
      url = undefined;
    }
    if (!url || !SCHEMES.has(url.protocol) || url.hostname === '') {
      throw new TypeError(`nats.servers: ${JSON.stringify(server)} is not a NATS server URL (nats://host:port, tls://host:port or host:port)`);
    }
  }
  return list;
}

/**
 * Opens a NATS connection for a runtime, a store or a transport. Defaults suited to a service
 * that must ride out server restarts: `maxReconnectAttempts: -1` (forever), `waitOnFirstConnect`
 * (a server started later is still reached), `reconnectTimeWait: 250` ms; every other option in
 * `options` goes to the client's `connect()` as it is and overrides these. `nkeySeed` is checked
 * before use: the client would otherwise throw on a malformed seed inside its protocol handler,
 * crashing the process instead of failing this call.
 *
 * Rejects with an Error naming the servers when the client cannot be loaded, the URL is not a
 * NATS URL, or the server refuses the credentials.
 */
export async function connectNats(options: NatsOptions): Promise<NatsConnection> {
  // `prefix` is xswarm's namespace, not a client option; checked here so a bad one fails early.
  const { servers, prefix: _prefix, nkeySeed, ...passthrough } = options;
  natsPrefix(options);
  const list = serverList(servers);
  const nats = await importOptional('connectNats()', ['@nats-io/transport-node'], () => import('@nats-io/transport-node'));
  let authenticator: NodeConnectionOptions['authenticator'];
  if (nkeySeed !== undefined) {
    const seed = new TextEncoder().encode(nkeySeed);
    try {
      nats.nkeys.fromSeed(seed);
    } catch (e) {
      throw new Error(`nats.nkeySeed is not a valid nkey seed (an "SU…" string): ${(e as Error).message}`, { cause: e });
    }
    authenticator = nats.nkeyAuthenticator(seed);
  }
  const connectOptions: NodeConnectionOptions = {
    maxReconnectAttempts: -1,
    waitOnFirstConnect: true,
    reconnectTimeWait: 250,
    // The client otherwise builds an Error (a stack trace) for every request, in case it fails:
    // a few percent of a runtime's CPU on the hot path.
    noAsyncTraces: true,
    ...(passthrough as NodeConnectionOptions),
    servers: list,
    ...(authenticator ? { authenticator } : {}),
  };
  try {
    return await nats.connect(connectOptions);
  } catch (e) {
    throw new Error(`Could not connect to NATS at ${list.join(', ')}: ${(e as Error).message}`, { cause: e });
  }
}

/**
 * Drains and closes a connection: drain delivers what has arrived and flushes what was
 * published, but an outage would keep it waiting forever, so after `waitMs` a plain close.
 */
export async function closeConnection(connection: NatsConnection, waitMs = 2_000): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const drained = connection.drain().then(
    () => true,
    () => false,
  );
  const waited = new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(false), waitMs)));
  const ok = await Promise.race([drained, waited]);
  clearTimeout(timer);
  if (!ok && !connection.isClosed()) await connection.close();
}
