/**
 * A runtime's reach to other runtimes: the transport (a caller's, or NATS from `nats`, loaded on
 * demand), the namespace they share, and the JetStream store `nats` opens. Built from the slice
 * `resolveOptions` (`runtime/options.ts`) made of `nats` and `transport`.
 *
 * @module
 */
import { importOptional, OPTIONAL_PEERS } from '../util/optional.js';
import type { SwarmStore } from '../store/types.js';
import type { NatsOptions } from '../nats/options.js';
import type { Transport } from '../transport/types.js';

/** Where a runtime reaches other runtimes, as its options say (checked). */
export type ReachOptions =
  /** NATS from `nats`: the runtime connects, and opens its JetStream store unless it was given a store. */
  | { kind: 'nats'; nats: NatsOptions; prefix: string; openStore: boolean }
  /** A caller's transport (e.g. `localTransport(bus)`), which the caller also closes. */
  | { kind: 'transport'; transport: Transport; prefix: string };

/** A runtime's reach to other runtimes: its transport, their namespace, a store it opens. */
export interface Reach {
  transport: Promise<Transport>;
  prefix: string;
  /** The JetStream store `nats` opens (absent with a caller's `transport`, or a caller's store). */
  store?: Promise<SwarmStore>;
  /** Closes what the runtime opened itself (the NATS connection). */
  close(): Promise<void>;
}

/** Opens the reach `options` describe (NATS connects in the background; the first call that needs it reports a failure). */
export function openReach(options: ReachOptions): Reach {
  const { prefix } = options;
  if (options.kind === 'transport') return { transport: Promise.resolve(options.transport), prefix, close: async () => {} };
  const parts = importOptional('createRuntime({ nats })', OPTIONAL_PEERS.nats, () => import('./nats-parts.js')).then((m) => m.natsParts(options.nats, prefix));
  // Reported by the first call that needs NATS (`start`, a run, a read), not as an unhandled rejection.
  parts.catch(() => undefined);
  return {
    transport: parts.then((p) => p.transport),
    prefix,
    ...(options.openStore ? { store: parts.then((p) => p.store) } : {}),
    close: async () => (await parts.catch(() => undefined))?.close(),
  };
}
