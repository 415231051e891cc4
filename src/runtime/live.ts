/**
 * The swarms a runtime drives: one host per live swarm, the ids being started, the stored
 * swarms it found it cannot restore; hosts are created and launched here, and their durable
 * events reach the runtime's subscribers from here.
 *
 * @module
 */
import type { SwarmEvent } from '../../machines/events.js';
import type { createSwarmLogic } from '../../actors/index.js';
import type { Catalog } from '../definitions/catalog.js';
import { SwarmError } from '../errors.js';
import { type HostStart, SwarmHost } from './host.js';
import type { Redactor } from '../redact.js';
import type { Lease, SwarmStore } from '../store/types.js';

/** What the live swarms are built with. */
export interface LiveOptions {
  store: SwarmStore;
  catalog: Catalog;
  /** The swarm machine with the runtime's actors (see `wiring.ts`). */
  logic: ReturnType<typeof createSwarmLogic>;
  /** The lease a commit of this runtime holds (see `leases.ts`). */
  lease: () => Lease;
  /** Called whenever a host is launched (the leases start being renewed). */
  launched: () => void;
  redact: Redactor | undefined;
}

/** The live swarms of one runtime. */
export class LiveSwarms {
  readonly store: SwarmStore;
  /** The host of each swarm driven here. */
  readonly hosts = new Map<string, SwarmHost>();
  /** Ids reserved by a start or an adoption that has not created its host yet. */
  readonly starting = new Set<string>();
  /** Swarms of the store that this runtime could not restore, with the reason. */
  readonly unrestorable = new Map<string, string>();
  private readonly listeners = new Set<(event: SwarmEvent) => void>();
  private isClosed = false;

  constructor(private readonly options: LiveOptions) {
    this.store = options.store;
  }

  /** Whether the runtime was closed: nothing starts, adopts or re-reads any more. */
  get closed(): boolean {
    return this.isClosed;
  }

  /** Throws the `closed` error once the runtime was closed. */
  assertOpen(): void {
    if (this.isClosed) throw new SwarmError('This runtime is closed', 'closed');
  }

  /**
   * A host for a swarm of a registered definition, not started yet: from a fresh input, or
   * restored from a stored record (building one is a restore's dry run; it throws when the
   * record cannot be restored).
   */
  createHost(swarmId: string, definitionId: string, from: HostStart): SwarmHost {
    const def = this.options.catalog.swarm(definitionId)!;
    return new SwarmHost(
      this.options.logic,
      this.store,
      {
        swarmId,
        definitionId,
        definitionVersion: def.version,
        lease: this.options.lease,
        redact: this.options.redact,
        committed: (events) => this.deliver(events),
      },
      from,
      (h) => {
        if (this.hosts.get(h.swarmId) === h) this.hosts.delete(h.swarmId);
      },
    );
  }

  /** Starts driving a host. */
  launch(host: SwarmHost): SwarmHost {
    this.hosts.set(host.swarmId, host);
    this.options.launched();
    host.start();
    return host;
  }

  /** Adds a subscriber to every durable event; returns the unsubscribe function. */
  subscribe(listener: (event: SwarmEvent) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Stops driving every swarm (their stored state stays); returns their ids. */
  close(): string[] {
    this.isClosed = true;
    const ids = [...this.hosts.keys()];
    for (const host of [...this.hosts.values()]) host.detach();
    this.hosts.clear();
    return ids;
  }

  private deliver(events: SwarmEvent[]): void {
    for (const listener of this.listeners) {
      for (const e of events) {
        // Unsubscribed while this batch was being delivered (from a listener): nothing more.
        if (!this.listeners.has(listener)) break;
        try {
          listener(e);
        } catch {
          // One subscriber's bug must not stop a swarm or the other subscribers.
        }
      }
    }
  }
}
