/**
 * `createRuntime`: the composition of a runtime from its parts, each in a file of its own — the
 * catalog of definitions (`definitions/`), the live swarms and their hosts (`live.ts`), leases
 * and adoption (`leases.ts`), starting (`launch.ts`), commands (`commands.ts`), reading
 * (`reading.ts`), the runners behind handoffs (`handoffs/`), the actors' wiring (`wiring.ts`)
 * and replay (`replay.ts`) — and the {@link Runtime} façade over them.
 *
 * @module
 */
import { randomUUID } from 'node:crypto';
import type { PauseReason, SwarmEvent } from '../../machines/events.js';
import { createSwarmLogic } from '../../actors/index.js';
import { AdhocClient, type StartOptions, SwarmClient, type SwarmControl } from '../client/client.js';
import { Catalog } from '../catalog/catalog.js';
import type { SwarmDefinition } from '../define/swarm.js';
import { ADHOC_ID } from '../define/ids.js';
import { ChildSwarms } from '../runners/child-swarm.js';
import { Elsewhere } from '../catalog/elsewhere.js';
import type { SwarmCard } from '../define/swarm-registry.js';
import { RemoteAgents } from '../runners/remote-agent.js';
import { Resolver } from '../catalog/resolve.js';
import { RegistryRecord } from '../registry/persistence.js';
import { ToolSpecs } from '../catalog/tool-specs.js';
import { defaultOwner } from '../leases/holder.js';
import { a2aRemoteAgents } from '../a2a/lazy.js';
import { redactor } from '../util/redact.js';
import { judgingPorts, replaySwarm } from './replay.js';
import { isFinal, type SwarmResult } from '../store/result.js';
import { deferredStore } from '../store/deferred.js';
import { memoryStore } from '../store/memory.js';
import { summaryOf } from '../store/summary.js';
import { natsSecrets } from '../nats/options.js';
import { type Distribution, distributionOf, hostingTimings } from '../distribution/reach.js';
import { Hosting } from './hosting.js';
import { type HostRequest } from '../distribution/protocol.js';
import type { SwarmFilter, SwarmStore, SwarmSummary } from '../store/types.js';
import { MAX_DERIVED_SWARM_ID_LENGTH, MAX_SWARM_ID_LENGTH } from '../define/swarm-id.js';
import { Commands } from './commands.js';
import { type LaunchDeps, launchSwarm } from './launch.js';
import { Leases } from './leases.js';
import { LiveSwarms } from './live.js';
import { Reading } from './reading.js';
import type { Runtime, RuntimeOptions } from './types.js';
import { createPorts } from './ports.js';
import type { TeamClient } from '../team/client.js';
import { teamSwarms, type TeamDefinition } from '../team/define.js';
import { Teams } from '../team/teams.js';

export type { Runtime, RuntimeOptions } from './types.js';

/** How long a lease lasts without renewal unless `leaseMs` says otherwise. */
const DEFAULT_LEASE_MS = 15_000;

/**
 * Creates a runtime. Definitions are checked together here: duplicate ids, a handoff to an
 * unknown agent, an invalid or reserved tool name throw a `DefinitionError` at once.
 *
 * @example
 * import { createRuntime, openaiModel, scriptedModel, sqliteStore } from 'xswarm';
 * const runtime = createRuntime({
 *   swarms: [planner], agents: [weather],
 *   model: process.env.OPENAI_API_KEY ? openaiModel({ model: 'gpt-4o-mini' }) : scriptedModel(() => ({ text: 'Go hiking.' })),
 *   store: sqliteStore('.xswarm/state.db'), // default: memoryStore()
 * });
 * await runtime.start(); // continues the swarms a previous process left unfinished
 */
export function createRuntime(options: RuntimeOptions): Runtime {
  return new ComposedRuntime(options);
}

/** The parts composed: every method of the façade is one step's. */
class ComposedRuntime implements Runtime, SwarmControl {
  readonly store: SwarmStore;
  private readonly ownsStore: boolean;
  private readonly catalog: Catalog;
  private readonly specs: ToolSpecs;
  private readonly live: LiveSwarms;
  private readonly leases: Leases;
  private readonly reading: Reading;
  private readonly commands: Commands;
  private readonly launching: LaunchDeps;
  /** Serving and calling other runtimes, with `nats` or `transport`. */
  private readonly hosting: Hosting | undefined;
  private readonly distribution: Distribution | undefined;
  private readonly teams: Teams;
  /** The agent registry kept in the store (`options.registry` with a durable store). */
  private readonly registryRecord: RegistryRecord | undefined;

  constructor(options: RuntimeOptions) {
    if (!options.model || typeof options.model.call !== 'function') {
      throw new TypeError('createRuntime: `model` is required (scriptedModel(...) or openaiModel(...))');
    }
    const leaseMs = options.leaseMs ?? DEFAULT_LEASE_MS;
    if (!(leaseMs > 0)) throw new TypeError('createRuntime: leaseMs must be positive');
    // Checked before anything connects, so a mistake leaves no connection behind.
    const timings = hostingTimings(options, leaseMs);
    const distribution = distributionOf(options);
    this.distribution = distribution;
    this.catalog = new Catalog(
      options.teams ? { ...options, swarms: teamSwarms(options.teams, options.swarms) } : options,
      (id) => live.hosts.get(id)?.config(),
      distribution && new Elsewhere((id, timeoutMs) => this.hosting!.card(id, timeoutMs)),
    );
    const { passivateAfterMs } = options;
    if (passivateAfterMs !== undefined && !(passivateAfterMs >= 0 && Number.isFinite(passivateAfterMs))) {
      throw new TypeError('createRuntime: passivateAfterMs must be a finite number of milliseconds (0 or more)');
    }
    this.specs = new ToolSpecs(this.catalog);
    this.ownsStore = !options.store;
    this.store = options.store ?? (distribution?.store ? deferredStore(distribution.store) : memoryStore());

    const remote = new RemoteAgents({
      client: options.remote ?? a2aRemoteAgents(),
      endedProbe: (swarmId) => {
        const host = live.hosts.get(swarmId);
        return () => !live.closed && !!host && isFinal(host.status());
      },
      isPaused: (swarmId) => {
        const host = live.hosts.get(swarmId);
        return host ? host.status() === 'paused' : undefined;
      },
      pause: (swarmId, reason) => this.commands.pause(swarmId, reason),
      registry: options.registry,
    });
    const children = new ChildSwarms({
      store: this.store,
      host: (id) => live.hosts.get(id),
      rehydrate: (id) => live.rehydrate(id),
      closed: () => live.closed,
      start: (definitionId, swarmId, input, startOptions) =>
        launchSwarm(this.launching, definitionId, swarmId, input, startOptions, MAX_DERIVED_SWARM_ID_LENGTH),
      adopt: () => this.leases.adopt(),
      events: (swarmId, since, signal) => this.reading.events(swarmId, since, signal),
      result: (swarmId) => this.reading.result(swarmId),
      pause: (swarmId, reason) => this.commands.pause(swarmId, reason),
      resume: (swarmId, message) => this.commands.resume(swarmId, message),
      stop: (swarmId, reason) => this.commands.stop(swarmId, reason),
      ...(distribution
        ? {
            hosted: {
              isLocal: (definitionId: string) => this.catalog.has(definitionId),
              host: (request: HostRequest, signal: AbortSignal) => this.hosting!.host(request, signal),
              keepAlive: (request: HostRequest, ended: () => Promise<boolean>, signal: AbortSignal) => this.hosting!.keepAlive(request, ended, signal),
            },
          }
        : {}),
    });
    const logic = createSwarmLogic(
      createPorts({
        catalog: this.catalog,
        specs: this.specs,
        model: options.model,
        host: (id) => live.hosts.get(id),
        runChild: (input, signal) => children.run(input, signal),
        runRemote: (input, signal) => remote.run(input, signal),
      }),
    );
    const live: LiveSwarms = new LiveSwarms({
      store: this.store,
      catalog: this.catalog,
      logic,
      lease: () => this.leases.lease(),
      launched: () => this.leases.keepRenewing(),
      passivateAfterMs,
      restore: (id) => this.leases.restore(id),
      remote,
      redact: redactor([
        ...(options.redact ?? []),
        ...(options.model.secrets ?? []),
        ...(options.agents ?? []).flatMap((a) => a.model?.secrets ?? []),
        ...natsSecrets(options.nats),
      ]),
    });
    this.live = live;
    this.leases = new Leases(live, this.catalog, options.owner ?? defaultOwner(), leaseMs);
    this.registryRecord =
      options.registry && !this.store.volatile ? new RegistryRecord(options.registry, { store: this.store, lease: () => this.leases.lease() }) : undefined;
    this.reading = new Reading(live);
    this.launching = { live, catalog: this.catalog, resolver: new Resolver(this.catalog, (url) => remote.card(url)), remote };
    if (distribution) {
      this.hosting = new Hosting({
        transport: distribution.transport,
        prefix: distribution.prefix,
        owner: this.leases.owner,
        catalog: this.catalog,
        live,
        timings,
        launch: (definitionId, swarmId, input, startOptions) =>
          launchSwarm(this.launching, definitionId, swarmId, input, startOptions, MAX_DERIVED_SWARM_ID_LENGTH),
        restore: (id, takeover, first) => this.leases.restore(id, takeover, first),
        command: (c) =>
          c.op === 'pause'
            ? this.commands.pause(c.swarmId, c.reason)
            : c.op === 'resume'
              ? this.commands.resume(c.swarmId, c.message)
              : this.commands.stop(c.swarmId, c.reason),
      });
      this.launching.hosting = this.hosting;
    }
    this.commands = new Commands(live, children, remote, this.hosting);
    // A task swarm whose definition this runtime lacks runs in a worker process (over NATS).
    const remoteTask = (definitionId: string) => (this.hosting && !this.catalog.has(definitionId) ? this.hosting : undefined);
    this.teams = new Teams(
      options.teams ?? [],
      {
        // The attempt's swarm id is the hosted call's idempotency key: sent again (a leader
        // restarted), it attaches to the attempt instead of reading "id in use".
        startSwarm: (definitionId, swarmId, input) =>
          remoteTask(definitionId)?.host({ swarmId, definitionId, input, attach: true }) ?? this.startSwarm(definitionId, swarmId, input),
        // A task swarm left by a previous process is adopted first (a team restored on first use).
        wait: async (swarmId, signal) => {
          if (!this.live.hosts.has(swarmId)) await this.leases.adopt().catch(() => undefined);
          return this.reading.wait(swarmId, signal);
        },
        stop: (swarmId, reason) => this.stop(swarmId, reason),
        stored: async (swarmId) => ((await summaryOf(this.store, swarmId)) ? this.result(swarmId) : undefined),
        subscribe: (listener) => this.subscribe(listener),
        follow: (definitionId, swarmId, input, onProgress, signal) => {
          const hosting = remoteTask(definitionId);
          if (!hosting || signal.aborted) return;
          const request: HostRequest = { swarmId, definitionId, input, attach: true };
          hosting.keepAlive(request, async () => isFinal((await this.result(swarmId)).status), signal, onProgress);
          const unwatch = this.store.watch?.(swarmId, onProgress);
          if (unwatch) signal.addEventListener('abort', unwatch, { once: true });
        },
      },
      (id) => this.catalog.has(id) || distribution !== undefined,
      { store: this.store, lease: () => this.leases.lease(), owner: this.leases.owner, leaseMs },
    );
  }

  forTeam(definition: TeamDefinition | string, teamId?: string): TeamClient {
    return this.teams.forTeam(definition, teamId);
  }

  forSwarm(definition: SwarmDefinition | string, swarmId: string = randomUUID()): SwarmClient<any, any> {
    const id = typeof definition === 'string' ? definition : definition.id;
    return new SwarmClient(this, id, swarmId);
  }

  adhoc(swarmId: string = randomUUID()): AdhocClient {
    return new AdhocClient(this, swarmId);
  }

  definitions(): SwarmCard[] {
    return this.catalog.cards();
  }

  teamDefinitions(): TeamDefinition[] {
    return this.teams.definitions();
  }

  definition(id: string): SwarmDefinition | undefined {
    return id === ADHOC_ID ? undefined : this.catalog.swarm(id);
  }

  async start(): Promise<void> {
    this.live.assertOpen();
    await this.hosting?.serving;
    // The registry first: swarms adopted next may hand off to its agents.
    await this.registryRecord?.start();
    await this.leases.watch();
    await this.teams.watch();
  }

  async prune(options: { olderThan: Date | number }): Promise<number> {
    const olderThan = options.olderThan instanceof Date ? options.olderThan.getTime() : options.olderThan;
    return this.store.prune(olderThan);
  }

  async *replay(swarmId: string): AsyncGenerator<SwarmEvent> {
    yield* await replaySwarm(this.store, swarmId, (input) => judgingPorts({ catalog: this.catalog, specs: this.specs }, input));
  }

  async close(): Promise<void> {
    if (this.live.closed) return;
    await this.teams.close();
    await this.registryRecord?.close();
    this.hosting?.stop();
    await this.leases.release(await this.live.close());
    if (this.ownsStore) await this.store.close();
    await this.distribution?.close();
  }

  list(filter?: SwarmFilter): Promise<SwarmSummary[]> {
    return this.reading.list(filter);
  }

  subscribe(listener: (event: SwarmEvent) => void): () => void {
    return this.live.subscribe(listener);
  }

  stats(): { live: number; passivated: number } {
    return this.live.stats();
  }

  // ---- SwarmControl: what clients call ------------------------------------------------

  /** Starts a swarm under an id its caller chose (at most {@link MAX_SWARM_ID_LENGTH} characters). */
  startSwarm(definitionId: string, swarmId: string, input: unknown, options: StartOptions = {}): Promise<void> {
    return launchSwarm(this.launching, definitionId, swarmId, input, options, MAX_SWARM_ID_LENGTH);
  }

  result(swarmId: string): Promise<SwarmResult> {
    return this.reading.result(swarmId);
  }

  wait(swarmId: string): Promise<SwarmResult> {
    return this.reading.wait(swarmId);
  }

  events(swarmId: string, since: number, signal?: AbortSignal): AsyncGenerator<SwarmEvent> {
    return this.reading.events(swarmId, since, signal);
  }

  pause(swarmId: string, reason: PauseReason): Promise<void> {
    return this.commands.pause(swarmId, reason);
  }

  resume(swarmId: string, message: string | undefined): Promise<void> {
    return this.commands.resume(swarmId, message);
  }

  stop(swarmId: string, reason: string): Promise<void> {
    return this.commands.stop(swarmId, reason);
  }
}
