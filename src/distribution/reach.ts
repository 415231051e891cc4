/**
 * A runtime's reach to other runtimes, from its options: the transport (a caller's, or NATS
 * from `nats`, loaded on demand), the namespace, the JetStream store `nats` opens, and the
 * timings of hosted calls.
 *
 * @module
 */
import { importOptional, OPTIONAL_PEERS } from '../util/optional.js';
import type { SwarmStore } from '../store/types.js';
import { natsPrefix } from '../nats/options.js';
import type { Transport } from '../transport/types.js';
import type { HostingTimings } from './protocol.js';
import type { RuntimeOptions } from '../runtime/types.js';

/** A runtime's reach to other runtimes: its transport, their namespace, a store it opens. */
export interface Distribution {
  transport: Promise<Transport>;
  prefix: string;
  /** The JetStream store `nats` opens (absent with a caller's `transport`). */
  store?: Promise<SwarmStore>;
  /** Closes what the runtime opened itself (the NATS connection). */
  close(): Promise<void>;
}

/** The transport and store of `options.nats` or `options.transport`, or undefined for a runtime on its own. */
export function distributionOf(options: RuntimeOptions): Distribution | undefined {
  if (options.transport) {
    return { transport: Promise.resolve(options.transport), prefix: natsPrefix(options.nats ?? {}), close: async () => {} };
  }
  if (!options.nats) return undefined;
  const nats = options.nats;
  const prefix = natsPrefix(nats);
  const parts = importOptional('createRuntime({ nats })', OPTIONAL_PEERS.nats, () => import('./nats-parts.js')).then((m) => m.natsParts(nats, prefix));
  // Reported by the first call that needs NATS (`start`, a run, a read), not as an unhandled rejection.
  parts.catch(() => undefined);
  return {
    transport: parts.then((p) => p.transport),
    prefix,
    ...(options.store ? {} : { store: parts.then((p) => p.store) }),
    close: async () => (await parts.catch(() => undefined))?.close(),
  };
}

/** Hosting timings from the options, checked. */
export function hostingTimings(options: RuntimeOptions, leaseMs: number): HostingTimings {
  const h = options.hosting ?? {};
  const timings = { deadlineMs: h.deadlineMs ?? 10_000, heartbeatMs: h.heartbeatMs ?? 2_000, heartbeatTimeoutMs: h.heartbeatTimeoutMs ?? 10_000, leaseMs };
  if (h.serve !== undefined && typeof h.serve !== 'boolean') throw new TypeError('createRuntime: hosting.serve must be a boolean');
  for (const [name, value] of Object.entries(timings)) {
    if (!(value > 0 && Number.isFinite(value))) throw new TypeError(`createRuntime: hosting.${name} must be a positive number of milliseconds`);
  }
  if (timings.heartbeatMs >= timings.heartbeatTimeoutMs) throw new TypeError('createRuntime: hosting.heartbeatMs must be shorter than hosting.heartbeatTimeoutMs');
  return { ...timings, serve: h.serve ?? true };
}
