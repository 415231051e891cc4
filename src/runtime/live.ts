/**
 * The swarms a runtime drives: one host per live swarm, the ids of the swarms passivated (owned,
 * not in memory) and being started, the stored swarms it found it cannot restore; hosts are
 * created, launched and rehydrated here, and their durable events reach the runtime's
 * subscribers from here.
 *
 * @module
 */
import type { SwarmEvent } from '../../machines/events.js';
import type { SwarmCommand } from '../../machines/swarm.js';
import type { createSwarmLogic } from '../../actors/index.js';
import type { Catalog } from '../catalog/catalog.js';
import { SwarmError } from '../errors.js';
import { type HostStart, SwarmHost } from './host.js';
import { Passivation, type RemoteQuestions } from './passivation.js';
import type { Redactor } from '../util/redact.js';
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
  /** How long a swarm may only wait before it is passivated; undefined: never. */
  passivateAfterMs?: number | undefined;
  /** Restores a passivated swarm from the store and launches its host (see `leases.ts`). */
  restore: (swarmId: string) => Promise<SwarmHost | undefined>;
  /** The remote agents' questions to swarms' humans (see `runners/remote-agent.ts`). */
  remote: RemoteQuestions;
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
  /** Swarms this runtime owns but evicted from memory while they wait (see `passivation.ts`). */
  readonly passivated = new Set<string>();
  private readonly passivation: Passivation | undefined;
  private readonly rehydrating = new Map<string, Promise<SwarmHost | undefined>>();
  private readonly listeners = new Set<(event: SwarmEvent) => void>();
  private isClosed = false;

  constructor(private readonly options: LiveOptions) {
    this.store = options.store;
    this.passivation = options.passivateAfterMs === undefined ? undefined : new Passivation(this, options.passivateAfterMs, options.remote);
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
    const host: SwarmHost = new SwarmHost(
      this.options.logic,
      this.store,
      {
        swarmId,
        definitionId,
        definitionVersion: def.version,
        lease: this.options.lease,
        redact: this.options.redact,
        committed: (events) => {
          this.deliver(events);
          this.passivation?.committed(host, events);
        },
      },
      from,
      (h) => {
        if (this.hosts.get(h.swarmId) === h) this.hosts.delete(h.swarmId);
        this.passivation?.ended(h);
      },
    );
    return host;
  }

  /** Starts driving a host (`first`: see {@link SwarmHost.start}). */
  launch(host: SwarmHost, first?: SwarmCommand): SwarmHost {
    this.hosts.set(host.swarmId, host);
    this.options.launched();
    host.start(first);
    this.passivation?.launched(host);
    return host;
  }

  /**
   * The host of a swarm owned here: the live one, or a passivated swarm restored from the store
   * (once, however many ask at the same time). Undefined when it is neither, or when restoring
   * found that another runtime took it meanwhile (or that it cannot be restored).
   */
  async rehydrate(swarmId: string): Promise<SwarmHost | undefined> {
    const host = this.hosts.get(swarmId);
    if (host || !this.passivated.has(swarmId) || this.isClosed) return host;
    let restoring = this.rehydrating.get(swarmId);
    if (!restoring) {
      restoring = (async () => {
        try {
          await this.passivation?.settled(swarmId);
          const restored = await this.options.restore(swarmId);
          this.passivated.delete(swarmId);
          return restored;
        } finally {
          // A failing store leaves it passivated (still owned): the next ask tries again.
          this.rehydrating.delete(swarmId);
        }
      })();
      this.rehydrating.set(swarmId, restoring);
    }
    return restoring;
  }

  /** Keeps a swarm from being passivated while a command is applied to it; returns the release. */
  hold(swarmId: string): () => void {
    return this.passivation?.hold(swarmId) ?? noop;
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
   * Stops driving every swarm (their stored state stays); resolves with their ids once the
   * commits still in flight have settled, so that releasing the leases comes after them (a
   * commit landing later would take the lease again).
   */
  async close(): Promise<string[]> {
    this.isClosed = true;
    this.passivation?.stop();
    const ids = [...this.hosts.keys(), ...this.passivated];
    const hosts = [...this.hosts.values()];
    for (const host of hosts) host.detach();
    this.hosts.clear();
    this.passivated.clear();
    await Promise.all([...hosts.map((h) => h.gate()), ...ids.map((id) => this.passivation?.settled(id))].map((p) => p?.catch(() => undefined)));
    return ids;
  }

  private deliver(events: SwarmEvent[]): void {
    if (this.listeners.size === 0) return;
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

function noop(): void {}
