/**
 * A runtime's Prometheus metrics (`createRuntime({ metrics })`), in a registry of its own (never
 * prom-client's global one, and no default process metrics unless the caller registers them).
 * Everything is read from what the runtime already has: its durable events (`subscribe`), the
 * time of each store commit, its live and passivated swarms, its transport's state changes. A
 * runtime without `metrics` builds none of this and never loads prom-client.
 *
 * @module
 */
import type * as PromClient from 'prom-client';
import type { SwarmEvent } from '../../machines/events.js';
import type { Commit, SwarmStore } from '../store/types.js';
import { OPTIONAL_PEERS, requireOptional } from '../util/optional.js';
import type { MetricsRegistry } from './metrics-registry.js';

/** What the metrics read from the runtime besides its events. */
export interface MetricsSources {
  /** The definition of a swarm driven here (for a swarm whose `task` event was not seen: an adopted one). */
  definitionOf(swarmId: string): string | undefined;
  /** How many swarms this runtime holds the lease of (in memory and passivated). */
  leasesHeld(): number;
  /** Whether this runtime still drives the swarm (in memory or passivated). */
  holds(swarmId: string): boolean;
}

/** The buckets of the step histogram, in seconds: a scripted model's microseconds to a slow model's minutes. */
const STEP_BUCKETS = [0.0005, 0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 2.5, 5, 10, 30, 60, 120];
/** The buckets of the commit histogram, in seconds: an in-memory write to a slow network store. */
const COMMIT_BUCKETS = [0.00005, 0.0001, 0.0005, 0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 5];

/** A swarm as the metrics follow it: its definition, its state, the tool calls it has running. */
interface Followed {
  definition: string;
  state: 'running' | 'paused';
  /** The start time of each tool call in flight, by call id. */
  tools?: Map<string, number>;
}

/** The final status of a swarm, from its final event's fact. */
function finalState(e: Extract<SwarmEvent, { kind: 'status-update' }>): string {
  const type = e.metadata.type;
  return type === 'completed' || type === 'failed' || type === 'stopped' ? type : e.status.state;
}

/**
 * The metrics of one runtime. `event` is called with each durable event, `commit` with each
 * store commit's duration; gauges are computed when scraped.
 */
export class RuntimeMetrics {
  private readonly swarms = new Map<string, Followed>();
  private readonly started: PromClient.Counter<'definition'>;
  private readonly finished: PromClient.Counter<'definition' | 'state'>;
  private readonly modelCalls: PromClient.Counter<'definition' | 'model'>;
  private readonly toolCalls: PromClient.Counter<'definition' | 'tool' | 'outcome'>;
  private readonly tokens: PromClient.Counter<'definition' | 'model' | 'direction'>;
  private readonly handoffs: PromClient.Counter<'definition' | 'to'>;
  private readonly steps: PromClient.Histogram<'definition' | 'step'>;
  private readonly commits: PromClient.Histogram<'outcome'>;
  private readonly reconnects: PromClient.Counter;
  private readonly disconnects: PromClient.Counter;

  constructor(
    readonly registry: MetricsRegistry,
    sources: MetricsSources,
  ) {
    const prom = promClient();
    // The caller's registry is prom-client's (MetricsRegistry is its structural type).
    const registers = [registry as unknown as PromClient.Registry];
    const swarms = this.swarms;
    new prom.Gauge({
      name: 'xswarm_swarms',
      help: 'Swarms this runtime drives, by definition and state (running or paused)',
      labelNames: ['definition', 'state'] as const,
      registers,
      collect() {
        this.reset();
        for (const [id, s] of swarms) {
          // A swarm this runtime stopped driving without its final event (its lease was lost,
          // the runtime closed it) is no longer this runtime's to count.
          if (!sources.holds(id)) swarms.delete(id);
          else this.inc({ definition: s.definition, state: s.state });
        }
      },
    });
    new prom.Gauge({
      name: 'xswarm_leases_held',
      help: 'Swarms whose lease this runtime holds (in memory and passivated)',
      registers,
      collect() {
        this.set(sources.leasesHeld());
      },
    });
    this.started = new prom.Counter({ name: 'xswarm_swarms_started_total', help: 'Swarms started', labelNames: ['definition'] as const, registers });
    this.finished = new prom.Counter({
      name: 'xswarm_swarms_finished_total',
      help: 'Swarms that ended, by final state (completed, failed, stopped)',
      labelNames: ['definition', 'state'] as const,
      registers,
    });
    this.modelCalls = new prom.Counter({ name: 'xswarm_model_calls_total', help: 'Model calls', labelNames: ['definition', 'model'] as const, registers });
    this.toolCalls = new prom.Counter({
      name: 'xswarm_tool_calls_total',
      help: 'Tool calls, by outcome (ok or error)',
      labelNames: ['definition', 'tool', 'outcome'] as const,
      registers,
    });
    this.tokens = new prom.Counter({
      name: 'xswarm_tokens_total',
      help: 'Tokens of model calls, by direction (input or output)',
      labelNames: ['definition', 'model', 'direction'] as const,
      registers,
    });
    this.handoffs = new prom.Counter({
      name: 'xswarm_handoffs_total',
      help: 'Handoffs to agents and child swarms, by target',
      labelNames: ['definition', 'to'] as const,
      registers,
    });
    this.steps = new prom.Histogram({
      name: 'xswarm_step_duration_seconds',
      help: 'Duration of a swarm step: a model call (step="model") or a tool call (step="tool")',
      labelNames: ['definition', 'step'] as const,
      buckets: STEP_BUCKETS,
      registers,
    });
    this.commits = new prom.Histogram({
      name: 'xswarm_store_commit_duration_seconds',
      help: 'Duration of a store commit (a step written), by outcome (ok or error)',
      labelNames: ['outcome'] as const,
      buckets: COMMIT_BUCKETS,
      registers,
    });
    this.reconnects = new prom.Counter({ name: 'xswarm_nats_reconnects_total', help: 'Reconnections of the NATS connection', registers });
    this.disconnects = new prom.Counter({ name: 'xswarm_nats_disconnects_total', help: 'Drops of the NATS connection', registers });
    this.sources = sources;
  }

  private readonly sources: MetricsSources;

  /** Counts one durable event. */
  event(e: SwarmEvent): void {
    if (e.kind === 'task') {
      this.swarms.set(e.swarmId, { definition: e.metadata.definitionId, state: 'running' });
      this.started.inc({ definition: e.metadata.definitionId });
      return;
    }
    const s = this.follow(e.swarmId);
    switch (e.kind) {
      case 'internal:llm-call': {
        const model = e.model ?? 'unknown';
        this.modelCalls.inc({ definition: s.definition, model });
        this.steps.observe({ definition: s.definition, step: 'model' }, e.durationMs / 1000);
        if (e.usage) {
          if (e.usage.inputTokens) this.tokens.inc({ definition: s.definition, model, direction: 'input' }, e.usage.inputTokens);
          if (e.usage.outputTokens) this.tokens.inc({ definition: s.definition, model, direction: 'output' }, e.usage.outputTokens);
        }
        return;
      }
      case 'internal:tool-start':
        (s.tools ??= new Map()).set(e.callId, e.timestamp);
        return;
      case 'internal:tool-complete': {
        this.toolCalls.inc({ definition: s.definition, tool: e.toolName, outcome: e.ok ? 'ok' : 'error' });
        const startedAt = s.tools?.get(e.callId);
        if (startedAt !== undefined) {
          s.tools!.delete(e.callId);
          this.steps.observe({ definition: s.definition, step: 'tool' }, Math.max(0, e.timestamp - startedAt) / 1000);
        }
        return;
      }
      case 'status-update':
        if (e.metadata.type === 'agent-handoff' || e.metadata.type === 'swarm-handoff') this.handoffs.inc({ definition: s.definition, to: e.metadata.to });
        else if (e.final) {
          this.swarms.delete(e.swarmId);
          this.finished.inc({ definition: s.definition, state: finalState(e) });
        } else if (e.metadata.type === 'paused') s.state = 'paused';
        else if (e.metadata.type === 'resumed' || e.metadata.type === 'extended' || e.metadata.type === 'approval') s.state = 'running';
        return;
      default:
        return;
    }
  }

  /** Times one commit: `duration` in milliseconds. */
  commit(durationMs: number, ok: boolean): void {
    this.commits.observe({ outcome: ok ? 'ok' : 'error' }, durationMs / 1000);
  }

  /** The NATS connection dropped (`false`) or came back (`true`). */
  link(connected: boolean): void {
    (connected ? this.reconnects : this.disconnects).inc();
  }

  /** A swarm this runtime drives, followed from its first event seen here (an adopted swarm's is not its `task`). */
  private follow(swarmId: string): Followed {
    let s = this.swarms.get(swarmId);
    if (!s) {
      s = { definition: this.sources.definitionOf(swarmId) ?? 'unknown', state: 'running' };
      this.swarms.set(swarmId, s);
    }
    return s;
  }
}

/**
 * `store` with each commit timed into `metrics`; every other member is the store's own. Only a
 * runtime with metrics wraps its store.
 */
export function timedStore(store: SwarmStore, metrics: RuntimeMetrics): SwarmStore {
  const commit = (c: Commit): void | Promise<void> => {
    const start = performance.now();
    let written: void | Promise<void>;
    try {
      written = store.commit(c);
    } catch (e) {
      metrics.commit(performance.now() - start, false);
      throw e;
    }
    if (!written) {
      metrics.commit(performance.now() - start, true);
      return;
    }
    return written.then(
      () => metrics.commit(performance.now() - start, true),
      (e: unknown) => {
        metrics.commit(performance.now() - start, false);
        throw e;
      },
    );
  };
  return new Proxy(store, {
    get(target, key) {
      if (key === 'commit') return commit;
      const value: unknown = Reflect.get(target, key, target);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
}

/** prom-client, loaded on first use, synchronously (it is CommonJS): a runtime without metrics never loads it. */
function promClient(): typeof PromClient {
  return requireOptional<typeof PromClient>('createRuntime({ metrics })', OPTIONAL_PEERS.metrics[0]);
}

/** A new registry of prom-client's (for `metrics: true`). */
export function newRegistry(): MetricsRegistry {
  return new (promClient().Registry)() as unknown as MetricsRegistry;
}

/** Whether `value` looks like a prom-client registry (`metrics` may be one). */
export function isRegistry(value: unknown): value is MetricsRegistry {
  const r = value as Partial<MetricsRegistry> | null;
  return typeof r === 'object' && r !== null && typeof r.registerMetric === 'function' && typeof r.metrics === 'function';
}
