/**
 * `createRuntime`: the composition of a runtime from its parts, built in one fixed order, each
 * receiving the parts it uses: the options resolved once (`options.ts`) → the store (and the
 * reach to other runtimes, `distribution/`) → the catalog of definitions (`catalog/`) → the live
 * swarms (`live.ts`, their actors wired by `ports.ts`) → adoption (`leases.ts`) and passivation
 * (`passivation.ts`) → reading (`reading.ts`) → commands (`commands.ts`) → the launcher
 * (`launch.ts`) → the runners of calls (`runners/`) → serving other runtimes (`hosting.ts`) →
 * teams (`team/`) and the agent registry's record. Then the {@link Runtime} façade over them.
 *
 * @module
 */
import { randomUUID } from 'node:crypto';
import type { PauseReason, SwarmEvent } from '../../machines/events.js';
import type { UsageReport } from '../usage/report.js';
import { createSwarmLogic } from '../../actors/index.js';
import { AdhocClient, type ResumeOptions, type StartOptions, SwarmClient, type SwarmControl, type SwarmLimits, type ApproveOptions } from '../client/client.js';
import { Catalog } from '../catalog/catalog.js';
import { Elsewhere } from '../catalog/elsewhere.js';
import { RemoteCards } from '../catalog/remote-cards.js';
import { Resolver } from '../catalog/resolve.js';
import { ToolSpecs } from '../catalog/tool-specs.js';
import { ADHOC_ID } from '../define/ids.js';
import { RuntimeDrainingError } from '../errors.js';
import type { SwarmDefinition } from '../define/swarm.js';
import type { SwarmCard } from '../define/swarm-registry.js';
import { OtherRuntimes } from '../distribution/calls.js';
import { openReach, type Reach } from '../distribution/reach.js';
import { Owner } from '../leases/owner.js';
import { RegistryRecord } from '../registry/persistence.js';
import { ChildSwarms } from '../runners/child-swarm.js';
import { HumanQuestions } from '../runners/questions.js';
import { RemoteAgents } from '../runners/remote-agent.js';
import { deferredStore } from '../store/deferred.js';
import { memoryStore } from '../store/memory.js';
import type { SwarmResult } from '../store/result.js';
import type { SwarmFilter, SwarmStore } from '../store/types.js';
import type { TeamClient } from '../team/client.js';
import type { TeamDefinition } from '../define/team.js';
import { type TeamListing, Teams } from '../team/teams.js';
import { CallRunners } from './calls.js';
import { Forking } from './fork.js';
import type { ForkOptions, ForkPlan } from './fork-plan.js';
import { Commands } from './commands.js';
import type { SwarmHost } from './host.js';
import { Serving } from './hosting.js';
import { Launcher } from './launch.js';
import { CallGate, closingReserve, type DrainOptions, drainDeadline, parked } from './drain.js';
import { Notices } from './notices.js';
import { Leases } from './leases.js';
import { LiveSwarms } from './live.js';
import { resolveOptions } from './options.js';
import { Passivation, withoutPassivation } from './passivation.js';
import { createPorts } from './ports.js';
import { BudgetGate, DEFAULT_RESERVATION_TTL_MS } from './budget-gate.js';
import { memoryLedger } from '../store/budgets.js';
import { Reading } from './reading.js';
import { judgingPorts, replaySwarm } from './replay.js';
import { teamPort } from './team-port.js';
import { teamToolRemote } from './team-tools-remote.js';
import { answerTeamToolCall, registerTeamToolRemote } from '../team/team-tools.js';
import type { Logger } from '../util/logger.js';
import { RuntimeMetrics, timedStore } from './metrics.js';
import type { MetricsRegistry } from './metrics-registry.js';
import { observeRuntime } from './observe.js';
import { tracingOf } from './tracing/options.js';
import type { SwarmTracing } from './tracing/swarm-spans.js';
import { tracedPorts } from './tracing/traced-ports.js';
import type { ListedSwarm, ListOptions, Runtime, RuntimeOptions } from './types.js';

export type { ListedSwarm, ListOptions, Runtime, RuntimeOptions } from './types.js';
export type { DrainOptions } from './drain.js';

/**
 * Creates a runtime. Options are checked first (a bad one is a `TypeError` naming it), then the
 * definitions together: duplicate ids, a handoff to an unknown agent, an invalid or reserved tool
 * name throw a `DefinitionError` at once. Nothing connects before both passed.
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

/** The parts composed: every method of the façade is one part's. */
class ComposedRuntime implements Runtime, SwarmControl {
  readonly store: SwarmStore;
  private readonly ownsStore: boolean;
  /** The transport and JetStream store `nats` opens (or a caller's `transport`). */
  private readonly reach: Reach | undefined;
  private readonly catalog: Catalog;
  private readonly specs: ToolSpecs;
  private readonly live: LiveSwarms;
  private readonly leases: Leases;
  private readonly reading: Reading;
  private readonly commands: Commands;
  private readonly launcher: Launcher;
  /** Serving other runtimes (with `nats` or `transport`). */
  private readonly serving: Serving | undefined;
  private readonly teams: Teams;
  /** The agent registry kept in the store (`options.registry` with a durable store). */
  private readonly registryRecord: RegistryRecord | undefined;
  /** Forks of recorded swarms (`fork.ts`). */
  private readonly forking: Forking;
  /** The gate of every call, closed by a drain (see `drain.ts`). */
  private readonly gate = new CallGate();
  /** Releases told to and heard from the other runtimes, stops left in a shared store (`notices.ts`). */
  private readonly notices: Notices;
  /** The drain under way, once `drain` was called. */
  private draining: Promise<void> | undefined;
  readonly metrics: MetricsRegistry | undefined;
  readonly logger: Logger | undefined;
  /** Unsubscribes the logs and metrics (see `observe.ts`). */
  private readonly unobserve: () => void;
  /** The spans of this runtime (`createRuntime({ tracing })`); undefined without. */
  private readonly tracing: SwarmTracing | undefined;
  /** Unsubscribes the spans from the events. */
  private readonly untrace: () => void;
  /** Undoes the registration of this runtime's team tools remote (see `team-tools-remote.ts`). */
  private readonly unregisterTeamTools: () => void;

  constructor(options: RuntimeOptions) {
    // Every option checked before anything is built, so a mistake leaves no connection behind.
    const o = resolveOptions(options);
    const owner = new Owner(o.owner, o.leaseMs);

    // The store: the caller's, else the JetStream store `nats` opens, else a new memory store.
    const reach = o.reach && openReach(o.reach);
    this.reach = reach;
    this.ownsStore = !o.store;
    const store = (this.store = o.store ?? (reach?.store ? deferredStore(reach.store) : memoryStore()));
    // Traces (only when asked for): the calls run in spans through the ports, the rest follows the
    // events; calls to other runtimes carry the trace context in their headers.
    const tracing = (this.tracing = tracingOf(o.tracing, {
      definitionOf: (id) => hosts.get(id)?.definitionId,
      // The caller's trace context an adopted swarm kept (in its machine's context).
      traceOf: (id) => hosts.get(id)?.context().trace,
    }));
    const others =
      reach &&
      new OtherRuntimes({
        transport: reach.transport,
        prefix: reach.prefix,
        owner: owner.id,
        timings: o.hosting,
        store,
        ...(tracing ? { headers: () => tracing.inject() } : {}),
      });

    // The catalog. Its registry search reads a live swarm's configuration from the hosts.
    const hosts = new Map<string, SwarmHost>();
    const catalog = (this.catalog = new Catalog(o.catalog, { configs: hosts, elsewhere: others && new Elsewhere(others) }));
    const specs = (this.specs = new ToolSpecs(catalog));

    // The live swarms. Their actors reach the runners of child-swarm and remote-agent calls
    // through `calls`, bound below once the runners exist (a swarm's calls start swarms).
    const calls = new CallRunners();
    // Budgets: accounts in the store's ledger (a store without one: in this process's memory).
    const ledger = store.budgets ?? memoryLedger();
    const budgets = new BudgetGate({
      ledger,
      hosts,
      prices: o.prices,
      keyBudgets: o.keyBudgets,
      maxOutputTokens: o.maxOutputTokens,
      reservationTtlMs: DEFAULT_RESERVATION_TTL_MS,
      pause: (swarmId, reason) => this.commands.pause(swarmId, reason),
    });
    const ports = createPorts({ catalog, specs, model: o.model, hosts, calls, modelTimeoutMs: o.modelTimeoutMs, budgets, gate: this.gate });
    const logic = createSwarmLogic(tracing ? tracedPorts(ports, tracing) : ports);
    // Metrics (only when asked for): the live swarms' commits are timed through their store.
    this.metrics = o.metrics;
    this.logger = o.logger;
    const metrics =
      o.metrics &&
      new RuntimeMetrics(o.metrics, {
        definitionOf: (id) => hosts.get(id)?.definitionId,
        leasesHeld: () => {
          const { live, passivated } = this.live.stats();
          return live + passivated;
        },
        holds: (id) => hosts.has(id) || this.live.passivated.has(id),
      });
    const liveStore = metrics ? timedStore(store, metrics) : store;
    const live = (this.live = new LiveSwarms({ store: liveStore, catalog, logic, hosts, owner, redact: o.redact, inspect: o.inspect, logger: o.logger }));
    this.unobserve = observeRuntime({ live, reach, logger: o.logger, metrics });
    this.untrace = tracing ? live.subscribe((e) => tracing.event(e)) : () => undefined;
    const leases = (this.leases = new Leases(live, catalog, owner, o.logger));
    const questions = new HumanQuestions();
    const rehydration = o.passivateAfterMs === undefined ? withoutPassivation(live) : new Passivation(live, o.passivateAfterMs, questions, leases);

    // Reading, commands and starting swarms.
    const reading = (this.reading = new Reading(live, o.prices, budgets));
    const commands = (this.commands = new Commands({ live, rehydration, questions, reading, others, budgets: ledger }));
    const cards = new RemoteCards(o.remote);
    const launcher = (this.launcher = new Launcher({
      live,
      catalog,
      resolver: new Resolver(catalog, cards),
      cards,
      others,
      starting: tracing && ((id) => tracing.startingIn(id)),
    }));

    // The runners of calls.
    const remote = new RemoteAgents({ client: o.remote, live, questions, commands, registry: o.registry });
    const children = new ChildSwarms({ store, live, rehydration, launcher, leases, reading, commands, hosted: others && { catalog, others } });
    calls.bind({ childSwarm: children, remoteAgent: remote });

    // Serving other runtimes, teams, and the agent registry's record.
    this.serving =
      reach &&
      others &&
      new Serving({
        transport: reach.transport,
        prefix: reach.prefix,
        owner: owner.id,
        timings: o.hosting,
        catalog,
        live,
        others,
        launcher,
        leases,
        commands,
        ...(tracing ? { heard: (id: string, headers: Readonly<Record<string, string>>) => tracing.extract(id, headers) } : {}),
        teamTools: answerTeamToolCall,
      });
    // The team tools of the worker swarms it hosts reach the runtimes driving their teams.
    this.unregisterTeamTools = others ? registerTeamToolRemote(teamToolRemote({ store, others, owner: owner.id })) : () => undefined;
    this.teams = new Teams(
      o.teams,
      teamPort({
        store,
        catalog,
        live,
        leases,
        reading,
        commands,
        launcher,
        others,
        inspect: o.inspect,
        gate: this.gate,
        traceTask: tracing && ((id, def, start) => tracing.teamTask(id, def, start)),
        taskEnded: tracing && ((id, outcome, error) => tracing.teamTaskEnded(id, outcome, error)),
      }),
      (id) => catalog.has(id) || reach !== undefined,
      {
        store,
        lease: () => owner.lease(),
        owner: owner.id,
        leaseMs: owner.leaseMs,
      },
    );
    this.registryRecord = o.registry && !store.volatile ? new RegistryRecord(o.registry, { store, lease: () => owner.lease() }) : undefined;
    this.forking = new Forking({ live, catalog, specs, leases, owner });
    this.notices = new Notices({ store, live, leases, commands, reach });
    this.notices.watchStops();
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

  listTeams(options?: { definitionId?: string; limit?: number }): Promise<TeamListing[]> {
    return this.teams.list(options);
  }

  deleteTeam(teamId: string): Promise<number> {
    return this.teams.delete(teamId);
  }

  definition(id: string): SwarmDefinition | undefined {
    return id === ADHOC_ID ? undefined : this.catalog.swarm(id);
  }

  async start(): Promise<void> {
    this.live.assertOpen();
    this.gate.assertAccepting('start');
    await this.serving?.serving;
    // The registry first: swarms adopted next may hand off to its agents.
    await this.registryRecord?.start();
    await this.leases.watch();
    await this.teams.watch();
    await this.notices.start();
  }

  async prune(options: { olderThan: Date | number }): Promise<number> {
    const olderThan = options.olderThan instanceof Date ? options.olderThan.getTime() : options.olderThan;
    return this.store.prune(olderThan);
  }

  async *replay(swarmId: string): AsyncGenerator<SwarmEvent> {
    yield* await replaySwarm(this.store, swarmId, (input, version) => judgingPorts({ catalog: this.catalog, specs: this.specs }, input, version));
  }

  fork(swarmId: string, options: ForkOptions): Promise<ForkPlan> {
    return this.forking.fork(swarmId, options);
  }

  forkPlan(swarmId: string, options: ForkOptions): Promise<ForkPlan> {
    return this.forking.plan(swarmId, options);
  }

  async close(): Promise<void> {
    if (this.live.closed) return;
    this.notices.stop();
    await this.teams.close();
    await this.registryRecord?.close();
    this.serving?.stop();
    this.leases.stop();
    await this.live.close();
    // The leases are released: the other runtimes adopt at once, not at their next scan.
    await this.notices.released();
    this.unobserve();
    this.untrace();
    this.unregisterTeamTools();
    this.tracing?.close();
    if (this.ownsStore) await this.store.close();
    await this.reach?.close();
  }

  drain(options?: DrainOptions): Promise<void> {
    if (this.draining) return this.draining;
    let deadlineMs: number;
    try {
      deadlineMs = drainDeadline(options);
    } catch (e) {
      return Promise.reject(e);
    }
    this.draining = this.drainWithin(deadlineMs);
    return this.draining;
  }

  /** See `drain.ts`: refuse, let the calls in flight commit, hold the rest, close within the deadline. */
  private async drainWithin(deadlineMs: number): Promise<void> {
    if (this.live.closed) return;
    const deadline = Date.now() + deadlineMs;
    this.gate.close();
    this.leases.stop();
    this.serving?.stopHosting();
    await parked(this.gate, () => this.live.hosts.values(), deadline - closingReserve(deadlineMs));
    // Whatever is still in flight now is abandoned without committing (the adopter makes it again).
    const closing = this.close();
    closing.catch(() => undefined);
    const left = deadline - Date.now();
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([closing, new Promise<void>((resolve) => (timer = setTimeout(resolve, Math.max(0, left))))]);
    clearTimeout(timer);
  }

  async list(filter?: SwarmFilter, options: ListOptions = {}): Promise<ListedSwarm[]> {
    const swarms = await this.reading.list(filter);
    if (!options.usage) return swarms;
    const listed: ListedSwarm[] = [];
    // One after the other: a long listing must not load every snapshot at once.
    for (const s of swarms) {
      // A swarm pruned since it was listed keeps its summary, without usage.
      const usage = await this.reading.usage(s.swarmId).then(
        (u) => u.total,
        () => undefined,
      );
      listed.push(usage ? { ...s, usage } : s);
    }
    return listed;
  }

  subscribe(listener: (event: SwarmEvent) => void): () => void {
    return this.live.subscribe(listener);
  }

  stats(): { live: number; passivated: number } {
    return this.live.stats();
  }

  // ---- SwarmControl: what clients call ------------------------------------------------

  /** Starts a swarm under an id its caller chose (see `Launcher.start`). */
  startSwarm(definitionId: string, swarmId: string, input: unknown, options: StartOptions = {}): Promise<void> {
    if (this.gate.draining) return Promise.reject(new RuntimeDrainingError(`a start of swarm "${swarmId}"`));
    return this.launcher.start(definitionId, swarmId, input, options);
  }

  result(swarmId: string): Promise<SwarmResult> {
    return this.reading.result(swarmId);
  }

  usage(swarmId: string): Promise<UsageReport> {
    return this.reading.usage(swarmId);
  }

  wait(swarmId: string): Promise<SwarmResult> {
    return this.reading.wait(swarmId);
  }

  events(swarmId: string, since: number | 'latest', signal?: AbortSignal): AsyncGenerator<SwarmEvent> {
    return this.reading.events(swarmId, since, signal);
  }

  pause(swarmId: string, reason: PauseReason): Promise<void> {
    return this.commands.pause(swarmId, reason);
  }

  resume(swarmId: string, answer: unknown, options?: ResumeOptions): Promise<void> {
    return this.commands.resume(swarmId, answer, options);
  }

  extend(swarmId: string, limits: SwarmLimits): Promise<void> {
    return this.commands.extend(swarmId, limits);
  }

  approve(swarmId: string, approvalId: string, options?: ApproveOptions): Promise<void> {
    return this.commands.approve(swarmId, approvalId, options);
  }

  reject(swarmId: string, approvalId: string, reason: string): Promise<void> {
    return this.commands.reject(swarmId, approvalId, reason);
  }

  stop(swarmId: string, reason: string): Promise<void> {
    return this.commands.stop(swarmId, reason);
  }
}
