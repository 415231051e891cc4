/**
 * The swarms a runtime drives: one host per live swarm, the ids of the swarms passivated (owned,
 * not in memory), being started, and found unrestorable; hosts are created and launched here,
 * their leases renewed while they are held, and their durable events reach the runtime's
 * subscribers from here.
 *
 * @module
 */
import type { SwarmEvent } from '../../machines/events.js';
import type { SwarmCommand } from '../../machines/swarm.js';
import type { createSwarmLogic } from '../../actors/index.js';
import type { Catalog } from '../catalog/catalog.js';
import { SwarmError } from '../errors.js';
import type { Owner } from '../leases/owner.js';
import { Renewal } from '../leases/renewal.js';
import type { SwarmStore } from '../store/types.js';
import type { Redactor } from '../util/redact.js';
import type { InspectObserver } from './types.js';
import { type HostStart, SwarmHost } from './host.js';
import type { Waiting } from './deploys.js';
import type { Logger } from '../util/logger.js';
import { errorText } from '../../machines/error-text.js';

/** What the live swarms are built with. */
export interface LiveOptions {
  store: SwarmStore;
  catalog: Catalog;
  /** The swarm machine with the runtime's actors (see `actors/index.ts` and `ports.ts`). */
  logic: ReturnType<typeof createSwarmLogic>;
  /**
   * The hosts of the swarms driven here, by id: kept here, and read by the actors' ports and the
   * catalog's registry search, which are built before the live swarms.
   */
  hosts: Map<string, SwarmHost>;
  /** The lease every commit of this runtime holds. */
  owner: Owner;
  redact: Redactor | undefined;
  /** The inspection observer every host's actor reports to (`createRuntime({ inspect })`). */
  inspect?: InspectObserver | undefined;
  /** The runtime's logger (`createRuntime({ logger })`); undefined: silent. */
  logger?: Logger | undefined;
}

/**
 * Told when a host starts driving its swarm, commits a step, and stops (passivation listens,
 * see `passivation.ts`).
 */
export interface HostObserver {
  launched(host: SwarmHost): void;
  committed(host: SwarmHost, events: readonly SwarmEvent[]): void;
  ended(host: SwarmHost): void;
  /** Resolves once what the observer set in motion for `swarmId` has settled (at close). */
  settled(swarmId: string): Promise<void> | undefined;
  /** The runtime closes. */
  stop(): void;
}

/** The live swarms of one runtime. */
export class LiveSwarms {
  readonly store: SwarmStore;
  /** The host of each swarm driven here. */
  readonly hosts: Map<string, SwarmHost>;
  /** Ids reserved by a start or an adoption that has not created its host yet. */
  readonly starting = new Set<string>();
  /** Swarms of the store that this runtime could not restore, with the reason. */
  readonly unrestorable = new Map<string, string>();
  /**
   * Swarms of the store that wait for a definition (or a version of one) this runtime lacks, or
   * whose migration failed: they read their stored status with the note (see `deploys.ts`).
   */
  readonly waiting = new Map<string, Waiting>();
  /** Swarms this runtime owns but evicted from memory while they wait (see `passivation.ts`). */
  readonly passivated = new Set<string>();
  /** Renews the leases of the swarms held here (passivated ones included: nobody may adopt them). */
  private readonly renewal: Renewal;
  private observer: HostObserver | undefined;
  private readonly listeners = new Set<(event: SwarmEvent) => void>();
  private isClosed = false;

  constructor(private readonly options: LiveOptions) {
    this.store = options.store;
    this.hosts = options.hosts;
    const { owner } = options;
    this.renewal = new Renewal({ store: this.store, owner: owner.id, leaseMs: owner.leaseMs, ids: () => [...this.hosts.keys(), ...this.passivated] });
  }

  /** Sets the one observer of the hosts' lives (passivation, when configured). */
  observe(observer: HostObserver): void {
    this.observer = observer;
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
  createHost(swarmId: string, definitionId: string, from: HostStart, { dryRun = false }: { dryRun?: boolean } = {}): SwarmHost {
    const def = this.options.catalog.swarm(definitionId)!;
    const host: SwarmHost = new SwarmHost(
      this.options.logic,
      this.store,
      {
        swarmId,
        definitionId,
        // A restored swarm runs on the version it was stored by (or migrated to): see leases.ts.
        definitionVersion: 'record' in from ? from.record.definitionVersion : def.version,
        lease: () => this.options.owner.lease(),
        redact: this.options.redact,
        // A dry run's actor is never started nor stopped: an inspector would keep it as live.
        inspect: dryRun ? undefined : this.options.inspect,
        logger: this.options.logger,
        committed: (events) => {
          this.deliver(events);
          this.observer?.committed(host, events);
        },
      },
      from,
      (h) => {
        if (this.hosts.get(h.swarmId) === h) this.hosts.delete(h.swarmId);
        this.observer?.ended(h);
      },
    );
    return host;
  }

  /** Starts driving a host (`first`: see {@link SwarmHost.start}). */
  launch(host: SwarmHost, first?: SwarmCommand): SwarmHost {
    this.hosts.set(host.swarmId, host);
    // Renewed from the first launch on (a runtime that only reads renews nothing).
    this.renewal.start();
    host.start(first);
    this.observer?.launched(host);
    return host;
  }

  /** How many swarms are in memory and how many are passivated. */
  stats(): { live: number; passivated: number } {
    return { live: this.hosts.size, passivated: this.passivated.size };
  }

  /** Adds a subscriber to every durable event; returns the unsubscribe function. */
  subscribe(listener: (event: SwarmEvent) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /**
   * Stops driving every swarm (their stored state stays) and releases their leases, once the
   * commits still in flight have settled (a commit landing later would take the lease again).
   */
  async close(): Promise<void> {
    this.isClosed = true;
    this.observer?.stop();
    this.renewal.stop();
    const ids = [...this.hosts.keys(), ...this.passivated];
    const hosts = [...this.hosts.values()];
    for (const host of hosts) host.detach();
    this.hosts.clear();
    this.passivated.clear();
    await Promise.all([...hosts.map((h) => h.durable()), ...ids.map((id) => this.observer?.settled(id))].map((p) => p?.catch(() => undefined)));
    await this.store.release(this.options.owner.id, ids).catch(() => undefined);
  }

  private deliver(events: SwarmEvent[]): void {
    if (this.listeners.size === 0) return;
    for (const listener of this.listeners) {
      for (const e of events) {
        // Unsubscribed while this batch was being delivered (from a listener): nothing more.
        if (!this.listeners.has(listener)) break;
        try {
          listener(e);
        } catch (err) {
          // One subscriber's bug must not stop a swarm or the other subscribers.
          this.options.logger?.warn({ swarmId: e.swarmId, seq: e.seq, error: errorText(err) }, 'an event listener threw; ignored');
        }
      }
    }
  }
}
