/**
 * The `nats` option of `createRuntime` and of the NATS store and transport: where the servers
 * are, how to authenticate, and the namespace of subjects and JetStream names. Kept free of the
 * NATS client's types, so the core package does not depend on it.
 *
 * @module
 */

/**
 * How to reach NATS. Every option besides the ones named here is passed to the client's
 * `connect()` as it is (`reconnectTimeWait`, `pingInterval`, `tls`, …).
 */
export interface NatsOptions {
  /** `nats://host:port`, or several (a cluster). */
  servers: string | readonly string[];
  /**
   * The namespace of every subject, KV bucket and stream this runtime uses (default `xswarm`):
   * runtimes reach each other only within one prefix. Isolating teams or tenants is the job of
   * NATS accounts (see docs/distributed.md); the prefix only keeps deployments in one account apart.
   */
  prefix?: string;
  user?: string;
  pass?: string;
  token?: string;
  /** An nkey seed (`SU…`): authenticates with the matching public key configured on the server. */
  nkeySeed?: string;
  /** A connection name, shown by the server's monitoring. */
  name?: string;
  /** Other `connect()` options of `@nats-io/transport-node`. */
  [option: string]: unknown;
}

/** The prefix every name starts with, checked: letters, digits, `_` and `-` only. */
export function natsPrefix(options: Pick<NatsOptions, 'prefix'>): string {
  const prefix = options.prefix ?? 'xswarm';
  if (!/^[A-Za-z0-9_-]{1,32}$/.test(prefix)) {
    throw new TypeError(`nats.prefix must be 1-32 letters, digits, "_" or "-", got ${JSON.stringify(prefix)}`);
  }
  return prefix;
}

/** The credentials in NATS options: never persisted (the runtime redacts them from what it writes). */
export function natsSecrets(options: NatsOptions | undefined): string[] {
  if (!options) return [];
  return [options.pass, options.token, options.nkeySeed].filter((s): s is string => typeof s === 'string' && s !== '');
}
