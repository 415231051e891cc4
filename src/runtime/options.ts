/**
 * Every option of `createRuntime`, checked and defaulted once: {@link resolveOptions} returns
 * the one resolved object the runtime is composed from, each part taking its slice. A bad
 * option is refused here, before anything is built or connected, with one `TypeError` naming
 * the option.
 *
 * @module
 */
import { z } from 'zod';
import type { Model } from '../../actors/index.js';
import { a2aRemoteAgents } from '../a2a/lazy.js';
import type { RemoteAgentClient } from '../a2a/remote.js';
import type { CatalogEntries } from '../catalog/catalog.js';
import type { AgentDefinition } from '../define/agent.js';
import type { HostingTimings } from '../distribution/protocol.js';
import type { ReachOptions } from '../distribution/reach.js';
import { defaultOwner } from '../leases/holder.js';
import { type NatsOptions, natsPrefix, natsSecrets } from '../nats/options.js';
import type { AgentRegistry } from '../registry/registry.js';
import type { SwarmStore } from '../store/types.js';
import { teamSwarms, type TeamDefinition } from '../define/team.js';
import { withTeamTools } from '../team/team-tools.js';
import { MAX_TIMEOUT_MS } from '../define/timeout.js';
import { type Redactor, redactor } from '../util/redact.js';
import { guardedObserver } from './inspect.js';
import { checkPrices, type Prices } from '../usage/report.js';
import type { InspectObserver, RuntimeOptions } from './types.js';
import { checkKeyBudgets, type KeyBudget } from '../define/budget.js';
import { DEFAULT_MAX_OUTPUT_TOKENS } from './budget-gate.js';
import { guardedLogger, type Logger } from '../util/logger.js';
import { isRegistry, newRegistry } from './metrics.js';
import type { MetricsRegistry } from './metrics-registry.js';
import { isTracingOption } from './tracing/options.js';
import type { TracingOption } from './tracing/tracer-like.js';

/** How long a lease lasts without renewal unless `leaseMs` says otherwise. */
export const DEFAULT_LEASE_MS = 15_000;

/** Defaults of the hosting timings (see `HostingOptions`). */
const DEFAULT_HOSTING = { deadlineMs: 10_000, heartbeatMs: 2_000, heartbeatTimeoutMs: 10_000 } as const;

/** `createRuntime`'s options, resolved: every default applied, every value checked. */
export interface ResolvedOptions {
  /** The definitions the catalog checks together (team workers' swarms included). */
  catalog: CatalogEntries;
  teams: readonly TeamDefinition[];
  /** The model of orchestrators and of agents without one of their own. */
  model: Model;
  /** The caller's store; undefined: the runtime opens one (JetStream with `nats`, else memory). */
  store: SwarmStore | undefined;
  leaseMs: number;
  owner: string;
  remote: RemoteAgentClient;
  registry: AgentRegistry | undefined;
  /** Removes every known secret (the caller's, the models', the NATS credentials); undefined: none. */
  redact: Redactor | undefined;
  passivateAfterMs: number | undefined;
  /** How long one model call may take; undefined: unbounded. */
  modelTimeoutMs: number | undefined;
  /** What each model's tokens cost (checked); undefined: every model is unpriced. */
  prices: Prices | undefined;
  /** Budgets per key over a window (checked); undefined: none. */
  keyBudgets: Record<string, KeyBudget> | undefined;
  /** The output ceiling of a budgeted model call. */
  maxOutputTokens: number;
  /** The reach to other runtimes (`nats` or `transport`); undefined: a runtime on its own. */
  reach: ReachOptions | undefined;
  hosting: HostingTimings;
  /** The inspection observer of every actor; undefined: no inspection wiring at all. */
  inspect: InspectObserver | undefined;
  /** The caller's logger, guarded; undefined: silent (nothing is logged, nothing is built for it). */
  logger: Logger | undefined;
  /** The registry of the runtime's metrics; undefined: no metrics. */
  metrics: MetricsRegistry | undefined;
  /** Whether and how to trace (`tracing`); undefined or false: no tracing. */
  tracing: TracingOption | undefined;
}

/** A function, checked by type only: zod 4's `z.function()` is a schema of its own, not a value check. */
const fn = z.custom<(...args: never[]) => unknown>((v) => typeof v === 'function');
const ms = z.number().finite().positive();
const list = z.array(z.unknown()).readonly();

/**
 * The shape of the options; what a shape cannot say (cross-field rules) is checked below. Keys it
 * does not know are let through, as they always were (a caller may spread a larger object).
 */
const optionsSchema = z.looseObject({
  swarms: list.optional(),
  agents: list.optional(),
  tools: list.optional(),
  guardrails: list.optional(),
  model: z.object({ call: fn }, { error: '`model` is required (scriptedModel(...) or openaiModel(...))' }).loose(),
  store: z.object({ commit: fn, load: fn }).loose().optional(),
  leaseMs: ms.optional(),
  owner: z.string().min(1).optional(),
  remote: z.object({ card: fn, send: fn }).loose().optional(),
  registry: z.object({ callBest: fn }).loose().optional(),
  redact: z.array(z.string()).readonly().optional(),
  passivateAfterMs: z.number().finite().min(0).optional(),
  modelTimeoutMs: z.number().int().min(1).max(MAX_TIMEOUT_MS).optional(),
  maxOutputTokens: z.number().int().min(1).optional(),
  nats: z
    .object({ servers: z.union([z.string(), z.array(z.string()).readonly()]) })
    .loose()
    .optional(),
  transport: z.object({ request: fn, subscribe: fn, publish: fn }).loose().optional(),
  hosting: z.looseObject({ deadlineMs: ms.optional(), heartbeatMs: ms.optional(), heartbeatTimeoutMs: ms.optional(), serve: z.boolean().optional() }).optional(),
  teams: list.optional(),
  // A function, or an observer with at least one of its callbacks (XState's `Observer`).
  inspect: z
    .union([fn, z.looseObject({ next: fn.optional(), error: fn.optional(), complete: fn.optional() }).refine((o) => ['next', 'error', 'complete'].some((k) => k in o))])
    .optional(),
  logger: z.looseObject({ debug: fn, info: fn, warn: fn, error: fn }).optional(),
  metrics: z.union([z.boolean(), z.custom<MetricsRegistry>(isRegistry)]).optional(),
  tracing: z.custom<TracingOption>(isTracingOption).optional(),
});

/** What each option must be, for the error that names it. */
const EXPECTED: Record<string, string> = {
  model: '`model` is required (scriptedModel(...) or openaiModel(...))',
  store: 'store must be a SwarmStore (memoryStore(), sqliteStore(...), jetstreamStore(...))',
  leaseMs: 'leaseMs must be positive (a finite number of milliseconds)',
  owner: 'owner must be a non-empty string',
  remote: 'remote must be a RemoteAgentClient (card and send)',
  registry: 'registry must be an AgentRegistry (createAgentRegistry())',
  redact: 'redact must be a list of strings',
  passivateAfterMs: 'passivateAfterMs must be a finite number of milliseconds (0 or more)',
  modelTimeoutMs: `modelTimeoutMs must be a whole number of milliseconds from 1 to ${MAX_TIMEOUT_MS}`,
  maxOutputTokens: 'maxOutputTokens must be a whole number of tokens (1 or more)',
  nats: 'nats must be NATS options with `servers`',
  transport: 'transport must be a Transport (request, subscribe, publish)',
  hosting: 'hosting must be { deadlineMs?, heartbeatMs?, heartbeatTimeoutMs?, serve? }',
  'hosting.serve': 'hosting.serve must be a boolean',
  logger: 'logger must be a logger with debug, info, warn and error methods (pino, or jsonLogger())',
  metrics: 'metrics must be true or a prom-client Registry',
  tracing: 'tracing must be a boolean or { tracer } (an OpenTelemetry Tracer)',
  inspect: 'inspect must be an inspection observer: a function, or an object with next (e.g. createWebSocketInspector().inspect)',
};

/**
 * Checks and defaults `createRuntime`'s options. Throws a `TypeError` naming the first option
 * that is wrong; definitions themselves are checked by the catalog,
 * which throws a `DefinitionError`.
 */
export function resolveOptions(options: RuntimeOptions): ResolvedOptions {
  const parsed = optionsSchema.safeParse(options ?? {});
  if (!parsed.success) throw new TypeError(`createRuntime: ${problemOf(parsed.error.issues[0]!)}`);
  const leaseMs = options.leaseMs ?? DEFAULT_LEASE_MS;
  const hosting = hostingTimings(options.hosting ?? {}, leaseMs);
  // Read once here: the prefix (checked) and the credentials to redact.
  const prefix = options.nats || options.transport ? natsPrefix(options.nats ?? {}) : undefined;
  return {
    catalog: {
      swarms: options.teams ? withTeamTools(teamSwarms(options.teams, options.swarms), options.teams) : options.swarms,
      agents: options.agents,
      tools: options.tools,
      guardrails: options.guardrails,
      registry: options.registry,
    },
    teams: options.teams ?? [],
    model: options.model,
    store: options.store,
    leaseMs,
    owner: options.owner ?? defaultOwner(),
    remote: options.remote ?? a2aRemoteAgents(),
    registry: options.registry,
    redact: redactor([
      ...(options.redact ?? []),
      ...(options.model.secrets ?? []),
      ...(options.agents ?? []).flatMap((a: AgentDefinition) => a.model?.secrets ?? []),
      ...natsSecrets(options.nats),
    ]),
    passivateAfterMs: options.passivateAfterMs,
    modelTimeoutMs: options.modelTimeoutMs,
    prices: checkPrices(options.prices),
    keyBudgets: checkKeyBudgets(options.keyBudgets),
    maxOutputTokens: options.maxOutputTokens ?? DEFAULT_MAX_OUTPUT_TOKENS,
    reach: reachOf(options.nats, options.transport, prefix, !options.store),
    hosting,
    inspect: options.inspect && guardedObserver(options.inspect),
    logger: options.logger && guardedLogger(options.logger),
    metrics: options.metrics === true ? newRegistry() : options.metrics || undefined,
    tracing: options.tracing,
  };
}

/** The reach to other runtimes, from `nats` and `transport`. */
function reachOf(nats: NatsOptions | undefined, transport: RuntimeOptions['transport'], prefix: string | undefined, openStore: boolean): ReachOptions | undefined {
  if (prefix === undefined) return undefined;
  // A caller's transport: `nats` then only names the prefix (and the credentials redacted above).
  if (transport) return { kind: 'transport', transport, prefix };
  return { kind: 'nats', nats: nats!, prefix, openStore };
}

/** The hosting timings, defaulted and checked together. */
function hostingTimings(h: NonNullable<RuntimeOptions['hosting']>, leaseMs: number): HostingTimings {
  const timings = { ...DEFAULT_HOSTING, ...definedOnly(h), leaseMs };
  if (timings.heartbeatMs >= timings.heartbeatTimeoutMs) {
    throw new TypeError('createRuntime: hosting.heartbeatMs must be shorter than hosting.heartbeatTimeoutMs');
  }
  return { deadlineMs: timings.deadlineMs, heartbeatMs: timings.heartbeatMs, heartbeatTimeoutMs: timings.heartbeatTimeoutMs, leaseMs, serve: h.serve ?? true };
}

function definedOnly<T extends object>(o: T): Partial<T> {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as Partial<T>;
}

/** The message of the first problem zod found, naming the option. */
function problemOf(issue: z.core.$ZodIssue): string {
  const path = issue.path.map(String);
  const name = path.join('.');
  if (EXPECTED[name]) return EXPECTED[name];
  if (path[0] === 'hosting' && path[1]) return `hosting.${path[1]} must be a positive number of milliseconds`;
  const top = path[0] ?? '';
  if (EXPECTED[top]) return EXPECTED[top];
  if (top === 'swarms' || top === 'agents' || top === 'tools' || top === 'teams') return `${top} must be a list of definitions`;
  return `${name || 'options'}: ${issue.message}`;
}
