/**
 * What a runtime is to the code that uses it: the {@link Runtime} interface and the options it
 * is created with. Servers, protocol adapters and the CLI depend on this module, not on the
 * implementation in `index.ts`.
 *
 * @module
 */
import type { InspectionEvent, Observer } from 'xstate';
import type { z } from 'zod';
import type { SwarmEvent } from '../../machines/events.js';
import type { Model } from '../../actors/index.js';
import type { AdhocClient, SwarmClient } from '../client/client.js';
import type { SwarmDefinition } from '../define/swarm.js';
import type { AgentDefinition } from '../define/agent.js';
import type { SwarmCard } from '../define/swarm-registry.js';
import type { RemoteAgentClient } from '../a2a/remote.js';
import type { AgentRegistry } from '../registry/registry.js';
import type { SwarmFilter, SwarmStore, SwarmSummary } from '../store/types.js';
import type { Tool } from '../define/tool.js';
import type { Guardrail } from '../define/guardrail.js';
import type { KeyBudget } from '../define/budget.js';
import type { NatsOptions } from '../nats/options.js';
import type { Transport } from '../transport/types.js';
import type { TeamClient } from '../team/client.js';
import type { TeamListing } from '../team/teams.js';
import type { TeamDefinition } from '../define/team.js';
import type { Prices, UsageTotals } from '../usage/report.js';
import type { ForkOptions, ForkPlan } from './fork-plan.js';
import type { DrainOptions } from './drain.js';
import type { Logger } from '../util/logger.js';
import type { MetricsRegistry } from './metrics-registry.js';
import type { TracingOption } from './tracing/tracer-like.js';

/** Options of `createRuntime`. */
export interface RuntimeOptions {
  swarms?: readonly SwarmDefinition<any, any>[];
  agents?: readonly AgentDefinition[];
  /**
   * Tools known by name without belonging to a definition: what customizations may add and
   * what overrides and ad-hoc swarms may use after a restart.
   */
  tools?: readonly Tool[];
  /**
   * Guardrails known by name: what ad-hoc swarms' guardrails resolve to after a restart (an
   * ad-hoc swarm stores its guardrails by name; one no runtime knows rejects the swarm).
   */
  guardrails?: readonly Guardrail<any>[];
  /** The model for orchestrators and for agents without a model of their own. */
  model: Model;
  /** Where swarms are persisted; default: a new in-memory store. */
  store?: SwarmStore;
  /**
   * How long this runtime's ownership of a swarm lasts without renewal (default 15 000 ms).
   * Leases are renewed every third of it; another runtime on the same store adopts a swarm
   * once its owner stopped renewing.
   */
  leaseMs?: number;
  /**
   * This runtime's owner id in the store (default: unique per runtime, `host:pid:random`). Leases
   * also record the holder's host and pid, so a runtime restarted on the same host takes over
   * the swarms of a dead predecessor at once instead of waiting its lease out; a live holder's
   * lease is always respected. A restart that passes its predecessor's owner id takes its
   * swarms back at once too.
   */
  owner?: string;
  /** How handoffs reach remote agents (default: the A2A client). */
  remote?: RemoteAgentClient;
  /**
   * The agent registry that `handoff.toBestAgent(skill)` handoffs choose their agent from (each
   * call goes to the best healthy agent with the skill at that moment; see `createAgentRegistry`).
   * A definition with such a handoff and no registry is a `DefinitionError` at creation. The
   * caller creates and closes it.
   */
  registry?: AgentRegistry;
  /**
   * Secrets (API keys, tokens) that must never be persisted: every occurrence in what a swarm
   * writes (snapshots, events, results) is replaced with `[REDACTED]`. The secrets models
   * declare (`Model.secrets`, e.g. `openaiModel`'s API key) are added. Secrets shorter than 8
   * characters are ignored.
   */
  redact?: readonly string[];
  /**
   * Passivation: a swarm that only waits — paused for a human, or awaiting child swarms, with no
   * model, tool, agent or remote call in flight — is evicted from memory once it has waited this
   * long (its state is durable after every step); only its id stays. The next command, or a
   * lifecycle step of a child it awaits, restores it from the store, as a restart would. It stays
   * owned by this runtime meanwhile (its lease is renewed) and reads exactly as before
   * (`getResult`, `wait`, `list`, `events`). Default: undefined, never passivate — every swarm
   * stays in memory until it ends, as in earlier versions. A value such as 60 000 suits a
   * process holding many swarms that wait on humans; 0 passivates at the next sweep.
   */
  passivateAfterMs?: number;
  /**
   * How long one model call may take, in ms (a whole number from 1 up): past it the call's
   * signal aborts and the call fails (the swarm fails, naming the timeout). Each attempt gets
   * the whole time: a call made again after a restart starts afresh. Default: unbounded.
   */
  modelTimeoutMs?: number;
  /**
   * What each model's tokens cost, by model name (`Model.name`), in USD per million tokens:
   * `client.usage()` then reports `usd` per model and in total. A model without a price is
   * reported in `unpriced` and no USD is guessed for it. Negative or non-numeric prices throw a
   * `TypeError` naming the entry.
   */
  prices?: Prices;
  /**
   * Budgets per key over a time window, by key (a run names its key with
   * `withParameters({ budgetKey })` or `adhoc().run({ budgetKey })`): e.g. each tenant's per
   * day, `{ acme: { budget: { usd: 20 }, windowMs: 86_400_000 } }`. See docs/budgets.md.
   */
  keyBudgets?: Record<string, KeyBudget>;
  /**
   * The output ceiling of a model call made under a budget, in tokens: the call reserves its
   * prompt's estimate plus this, and asks the model for at most this (`ModelRequest.maxOutputTokens`).
   * Default 4096.
   */
  maxOutputTokens?: number;
  /**
   * Distribution over NATS: this runtime keeps its state in JetStream (unless given a `store`),
   * serves every swarm and agent definition it has to the other runtimes on the same NATS (and
   * prefix), and sends handoffs to definitions it does not have to them. `handoff.toAgent(id)` and
   * `handoff.toSwarm(id)` may then name definitions hosted elsewhere. A runtime with only agents
   * is a worker. See docs/distributed.md.
   */
  nats?: NatsOptions;
  /**
   * The transport to other runtimes, when not NATS from `nats`: e.g. `localTransport(bus)` for
   * runtimes of one process sharing a bus (and a store). Given by the caller, closed by the caller.
   * With `transport` given, `nats` only names the prefix and the credentials to redact (the
   * caller built the connection, the transport and the store: see `xswarm/nats`).
   */
  transport?: Transport;
  /** Timings of calls to definitions hosted by other runtimes (with `nats` or `transport`). */
  hosting?: HostingOptions;
  /**
   * Teams (`defineTeam`) this runtime runs with `forTeam`; the swarm definitions their workers
   * run are registered beside `swarms`.
   */
  teams?: readonly TeamDefinition[];
  /**
   * An XState inspection observer every actor of this runtime reports to: each swarm with its
   * agents' model steps, tool, child-swarm and remote calls, and each team's leader and workers,
   * from their start and again when restored (a restart, a passivated swarm woken, a swarm
   * adopted from another process). Any observer XState takes works: a plain function,
   * `createWebSocketInspector(...).inspect` or `createBrowserInspector().inspect` of
   * `@statelyai/inspect`, or `inspectRelay(...).inspect` of `xswarm/inspect`, which shows the
   * swarms in the Stately inspector. It is called inside the actors' steps (keep it quick); an
   * error it throws is ignored. Undefined (the default): no inspection wiring at all.
   * See docs/inspect.md.
   *
   * @example
   * import { createRuntime, scriptedModel, type RuntimeOptions } from 'xswarm';
   * const seen = new Set<string>();
   * const inspect: RuntimeOptions['inspect'] = (e) => {
   *   if (e.type === '@xstate.actor') seen.add(e.actorRef.id);
   * };
   * const runtime = createRuntime({ swarms, model: scriptedModel(() => ({ text: 'ok' })), inspect });
   */
  inspect?: InspectObserver;
  /**
   * Where the runtime logs what an operator needs (swarms started, paused, finished and failed;
   * adoption; lost leases; store write retries and failures; NATS drops and reconnections;
   * listener and logger errors): a pino-compatible logger, `{ debug, info, warn, error }(fields, message)`.
   * `jsonLogger({ level })` writes JSON lines to stderr. Default: silent. See docs/observability.md.
   */
  logger?: Logger;
  /**
   * Prometheus metrics of this runtime: `true` for a new registry of its own, or a prom-client
   * `Registry` to register them in (one runtime per registry: the names would clash). Read them
   * from `runtime.metrics` (`await runtime.metrics.metrics()`), or `GET /metrics` of `serve()`.
   * No default process metrics are registered. Default: off, at no cost (prom-client is not even
   * loaded). See docs/observability.md for the names and labels.
   */
  metrics?: MetricsRegistry | boolean;
  /**
   * OpenTelemetry traces (`@opentelemetry/api`, an optional peer): `true` records spans through
   * the globally registered tracer provider (no-ops until an SDK is registered), `{ tracer }`
   * through the given tracer. A span per swarm, turn, model call, tool call and handoff, with the
   * GenAI semantic-convention attributes; trace context carried to hosted agents, child swarms
   * and A2A peers. Default: off, at no cost (the API is not even loaded). See docs/tracing.md.
   */
  tracing?: TracingOption;
}

/** What {@link RuntimeOptions.inspect} takes: an XState inspection observer, or a function of each event. */
export type InspectObserver = Observer<InspectionEvent> | ((event: InspectionEvent) => void);

/** Timings of cross-runtime calls (see {@link RuntimeOptions.hosting}). */
export interface HostingOptions {
  /**
   * How long a handoff to a definition keeps asking before nobody hosting it becomes the tool's
   * error (default 10 000 ms): a worker started meanwhile still takes the call.
   */
  deadlineMs?: number;
  /** How often a runtime hosting a swarm for another one says it is still working on it (default 2 000 ms). */
  heartbeatMs?: number;
  /**
   * After how long without a heartbeat the caller sends the call again, to any runtime hosting
   * the definition (the queue group picks one), under the same idempotency key (default 10 000 ms).
   */
  heartbeatTimeoutMs?: number;
  /**
   * Whether this runtime takes other runtimes' calls to its definitions (default true). A
   * short-lived process (a one-shot `xswarm run`) sets it to false, so no call lands on a
   * process about to exit; it still answers commands for the swarms it holds.
   */
  serve?: boolean;
}

/** What `runtime.list` adds to the store's summaries. */
export interface ListOptions {
  /** Each swarm's rolled-up usage (`client.usage().total`): one read of its snapshot per swarm. */
  usage?: boolean;
}

/** A swarm as `runtime.list` reports it: its summary, and its rolled-up usage when asked for. */
export interface ListedSwarm extends SwarmSummary {
  usage?: UsageTotals;
  /**
   * The definition version (`planner@1`) an unfinished swarm waits for: this runtime lacks it, so
   * the swarm keeps its stored status until a runtime that has it adopts it (see docs/deploys.md).
   */
  waitingFor?: string;
  /** Why it waits, naming the definition and version. */
  waitingReason?: string;
}

/**
 * A runtime: the registry of definitions plus the live swarms.
 *
 * @example
 * import { createRuntime } from 'xswarm';
 * const runtime = createRuntime({ swarms: [planner], agents: [weather], model });
 * await runtime.start();
 * const client = runtime.forSwarm(planner); // or runtime.forSwarm('planner', 'my-swarm-id')
 * await client.run('Plan my Saturday');
 * for (const s of await runtime.list({ status: ['paused'] })) console.log(s.swarmId, 'waits for a human');
 * await runtime.close();
 */
export interface Runtime {
  /** A client for a swarm instance of a definition; a new id is generated when none is given. */
  forSwarm<I extends z.ZodType, R extends z.ZodType>(definition: SwarmDefinition<I, R>, swarmId?: string): SwarmClient<z.input<I>, z.output<R>>;
  forSwarm(definitionId: string, swarmId?: string): SwarmClient;
  /**
   * A client for team `teamId` (default: the definition's id) of a team definition (registered
   * with `teams` or given here) or its id. Throws a `TeamError` for an unknown definition, or a
   * team id already used by another definition.
   */
  forTeam(definition: TeamDefinition | string, teamId?: string): TeamClient;
  /**
   * A client for a swarm started from parameters alone (no definition): its `run` takes
   * `{ userMessage, instructions, result?, handoffs?, tools?, maxTurns?, name?, description? }`.
   */
  adhoc(swarmId?: string): AdhocClient;
  /**
   * Restores every unfinished swarm of the store that no live runtime owns and continues the
   * running ones; keeps watching for swarms whose owner stops renewing its lease and adopts them.
   */
  start(): Promise<void>;
  /** Deletes finished swarms (result and events) last updated before `olderThan`; returns how many. */
  prune(options: { olderThan: Date | number }): Promise<number>;
  /**
   * Re-runs a finished swarm from its journal with zero model and tool calls, yielding exactly
   * its recorded events; throws `ReplayDivergenceError` where the code now behaves differently.
   */
  replay(swarmId: string): AsyncIterable<SwarmEvent>;
  /**
   * Starts a new swarm from a recorded step of another (finished or not): the source's journal
   * is replayed up to the fork point with zero model and tool calls, then the new swarm runs
   * live under its own id, lease, events and record. `atTurn: N` forks just before the
   * orchestrator's model call of turn N; `atSeq: N` just after the source's event N (which must
   * end a step). Its events 1..N are the source's (renamed for it), then a `forked` fact names
   * the source and lists the calls with side effects recorded after the point, which the new
   * branch may make again; the returned plan lists them too. Throws a `ForkError` naming the
   * reason at a point it cannot restore exactly (inside a step, the middle of a parallel join, a
   * child swarm still running, an unknown seq or turn, a swarm with no journal). See docs/forking.md.
   *
   * @example
   * const plan = await runtime.forkPlan('trip-1', { atTurn: 2 }); // what the branch may do again
   * for (const c of plan.sideEffects) console.log(c.name, c.callId, c.arguments, 'recorded at seq', c.seq);
   * const { swarmId } = await runtime.fork('trip-1', { atTurn: 2, instructions: 'Prefer indoor plans.' });
   * console.log(await runtime.forSwarm('planner', swarmId).wait());
   */
  fork(swarmId: string, options: ForkOptions): Promise<ForkPlan>;
  /** What `fork(swarmId, options)` would do, without doing it: the same plan, the same refusals. */
  forkPlan(swarmId: string, options: ForkOptions): Promise<ForkPlan>;
  /**
   * Stops driving all swarms at once (their stored state stays: each continues from its last
   * durable step, and a call in flight is aborted and made again by whoever continues it),
   * releases their leases and closes a store it created. The other runtimes on the same store
   * or NATS are told, and adopt them at once. See {@link drain} for a graceful stop.
   */
  close(): Promise<void>;
  /**
   * Graceful shutdown (what `xswarm serve` and `xswarm worker` do on SIGTERM): refuses new work
   * at once (runs, starts, adoptions and calls from other runtimes get a
   * `RuntimeDrainingError`, code `draining`, HTTP 503), stops hosting its definitions on NATS,
   * lets the model, tool and remote calls in flight finish and commit while holding every call
   * after them, so each swarm and team parks at a step boundary, durably; then closes as
   * {@link close} does: leases released, the other runtimes told, so they adopt the swarms at
   * once. Resolves within `deadlineMs` (default 10 000): calls still in flight near it are
   * abandoned without committing, and the adopter makes them again under the same idempotency
   * keys. Calling it again returns the same drain.
   *
   * @example
   * import { createRuntime, sqliteStore } from 'xswarm';
   * const runtime = createRuntime({ swarms: [planner], model, store: sqliteStore('.xswarm/state.db') });
   * await runtime.start();
   * process.once('SIGTERM', () => void runtime.drain({ deadlineMs: 10_000 }).then(() => process.exit(0)));
   */
  drain(options?: DrainOptions): Promise<void>;
  /** The store this runtime writes to. */
  readonly store: SwarmStore;
  /**
   * Summaries of stored swarms (live ones included), most recently updated first. A swarm whose
   * stored data cannot be read, or that this runtime cannot restore, reads `failed` with the
   * reason, exactly as `getResult()` answers for it. With `{ usage: true }`, each summary also
   * has `usage`: its usage rolled up over its children, as `client.usage().total` (one snapshot
   * read per swarm, so opt-in; a summary is otherwise a cheap read of the store's index).
   */
  list(filter?: SwarmFilter, options?: ListOptions): Promise<ListedSwarm[]>;
  /** Every registered swarm definition as a card: id, description, schemas, capabilities. */
  definitions(): SwarmCard[];
  /** The registered definition with this id, or undefined. */
  definition(id: string): SwarmDefinition | undefined;
  /** Every team definition this runtime knows (`createRuntime({ teams })` and those given to `forTeam`). */
  teamDefinitions(): TeamDefinition[];
  /**
   * The teams the store holds (of the definitions this runtime knows, or of `definitionId`),
   * most recently written first, at most `limit`: their ids, the store's status of each and when
   * it was last written (a record is written just after what it records: a run that has just
   * ended may still read `running`). Read a team's board, counts and current status with
   * `forTeam(definitionId, teamId)`.
   */
  listTeams(options?: { definitionId?: string; limit?: number }): Promise<TeamListing[]>;
  /**
   * Deletes the finished team `teamId` (completed, stalled, failed or stopped), of whichever
   * definition this runtime knows it by: as `forTeam(definitionId, teamId).delete()`, its record
   * (board, inbox, events) and its task attempts' swarms go from the store and the id can run
   * again. Refused with a `TeamError`: a team running or paused (`wrong-team-state`: stop it
   * first), one that never ran or of a definition this runtime does not know (`unknown-team`).
   * Resolves with how many records were deleted.
   *
   * @example
   * for (const t of await runtime.listTeams()) {
   *   if (t.status === 'completed' && t.updatedAt < Date.now() - 7 * 86_400_000) await runtime.deleteTeam(t.teamId);
   * }
   */
  deleteTeam(teamId: string): Promise<number>;
  /**
   * Calls `listener` with every event of every swarm this runtime drives, in commit order,
   * once it is durable. Returns the unsubscribe function. A throwing listener is ignored.
   * One exception: when the store keeps refusing a swarm's commits, its `failed` event (the
   * storage failure) is delivered at once and stored when the store takes writes again.
   */
  subscribe(listener: (event: SwarmEvent) => void): () => void;
  /**
   * How many swarms this runtime holds in memory (`live`) and how many it passivated (owned,
   * waiting, restored on demand; see `passivateAfterMs`).
   */
  stats(): { live: number; passivated: number };
  /** The registry of this runtime's metrics (`createRuntime({ metrics })`); undefined without. */
  readonly metrics?: MetricsRegistry;
  /** The runtime's logger (`createRuntime({ logger })`, guarded); undefined without. A server serving it logs through it too. */
  readonly logger?: Logger;
}
