/**
 * A runtime's OpenTelemetry spans (`createRuntime({ tracing })`): one `swarm` span per swarm this
 * process drives → one span per orchestrator `turn` → the model calls (`chat <model>`), tool calls
 * (`execute_tool <name>`) and handoffs (`invoke_agent <target>`) of that turn; an agent's own
 * model and tool calls sit under its handoff's span, a child swarm's `swarm` span too.
 *
 * The swarm, turn and handoff spans follow the durable events (as the metrics do); the model and
 * tool spans wrap the calls themselves (through the ports), so their context is active while
 * they run and whatever they call (a hosted agent over NATS, an A2A peer, an MCP server) carries
 * it on. The machines know nothing of this.
 *
 * A swarm that outlives its process keeps its trace. One a caller's context started keeps that
 * context (its W3C `traceparent`) in its machine's context: an adopter's `swarm` span is a child
 * of the same parent. Otherwise its trace id and its root's span id derive from the swarm id, so
 * the `swarm` span of every process that drives it (the first one, an adopter after a restart)
 * has the same virtual parent (never exported) in the same trace.
 *
 * @module
 */
import { createHash } from 'node:crypto';
import type { Attributes, Context, Span, Tracer } from '@opentelemetry/api';
import type { SwarmEvent } from '../../../machines/events.js';
import type { ModelStepInput } from '../../../machines/contracts.js';
import type { ToolRunInput } from '../../../machines/calls/tool.js';
import type { CallResult } from '../../../machines/calls/kind.js';
import type { TracedModelCall } from '../../../actors/index.js';
import type { CallerTrace } from '../../../machines/swarm.js';
import type { Otel } from './otel.js';

/** The instrumentation scope's name: what a backend shows as the spans' library. */
export const TRACER_NAME = 'xswarm';

/** A span and the context it is active in. */
interface Open {
  span: Span;
  ctx: Context;
}

/** A swarm as its spans follow it. */
interface Followed extends Open {
  definitionId: string;
  /** The orchestrator's open turn, if any. */
  turn?: Open & { n: number };
  /** The last turn seen (a handoff's key names it). */
  lastTurn: number;
  /** The open handoffs, by their key (`<swarm id>:t<turn>:<call id>`: an agent's scope). */
  handoffs: Map<string, Open>;
}

/** What the spans read from the runtime besides its events. */
export interface TracingSources {
  /** The definition of a swarm driven here (for a swarm whose `task` event was not seen: an adopted one). */
  definitionOf(swarmId: string): string | undefined;
  /** The caller's trace context kept with a swarm driven here (see {@link SwarmTracing.startingIn}), if any. */
  traceOf?(swarmId: string): CallerTrace | undefined;
}

/** A W3C `traceparent` (version 00 and the future versions it allows): trace id, parent span id, flags. */
const TRACEPARENT = /^([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})(-.*)?$/;

/** The spans of one runtime. */
export class SwarmTracing {
  private readonly swarms = new Map<string, Followed>();
  /** Contexts that started swarms not yet seen (a child swarm's handoff, an A2A caller's), by swarm id. */
  private readonly parents = new Map<string, Context>();
  /** The `team_task` spans of attempts started here, by their swarm's id: ended with it. */
  private readonly tasks = new Map<string, Span>();

  constructor(
    private readonly otel: Otel,
    private readonly tracer: Tracer,
    private readonly sources: TracingSources,
  ) {}

  /** Makes `ctx` the parent of the swarm `swarmId` once it starts here (before its `task` event). */
  parentOf(swarmId: string, ctx: Context): void {
    this.parents.set(swarmId, ctx);
  }

  /**
   * The active trace context as W3C headers (`traceparent`, `tracestate`: through the registered
   * propagator), for a request to another runtime; undefined when there is none to carry.
   */
  inject(): Record<string, string> | undefined {
    const carrier: Record<string, string> = {};
    this.otel.propagation.inject(this.otel.context.active(), carrier);
    return Object.keys(carrier).length > 0 ? carrier : undefined;
  }

  /**
   * A swarm starts here: the span active in its caller's context, if any, becomes its parent
   * (unless one was named). Returns that parent as W3C fields, for the swarm to keep: an adopter
   * after a restart continues the caller's trace (undefined when no caller's context started it).
   */
  startingIn(swarmId: string): CallerTrace | undefined {
    const active = this.otel.context.active();
    if (!this.parents.has(swarmId) && this.otel.trace.getSpanContext(active)) this.parents.set(swarmId, active);
    const parent = this.parents.get(swarmId);
    const sc = parent && this.otel.trace.getSpanContext(parent);
    if (!sc || !this.otel.isSpanContextValid(sc)) return undefined;
    // Written by hand rather than by the registered propagator: an application without one
    // still gets its swarms' traces kept (as the derived roots need none either).
    const flags = (sc.traceFlags & 0xff).toString(16).padStart(2, '0');
    const tracestate = sc.traceState?.serialize();
    return { traceparent: `00-${sc.traceId}-${sc.spanId}-${flags}`, ...(tracestate ? { tracestate } : {}) };
  }

  /** Makes the caller's context in `headers` (W3C `traceparent`) the parent of the swarm `swarmId` started here. */
  extract(swarmId: string, headers: Readonly<Record<string, string>>): void {
    if (headers.traceparent === undefined) return;
    const ctx = this.otel.propagation.extract(this.otel.ROOT_CONTEXT, headers);
    if (this.otel.trace.getSpanContext(ctx)) this.parentOf(swarmId, ctx);
  }

  /** The context of a swarm's span (for a call that must carry it), if it is followed here. */
  contextOf(swarmId: string): Context | undefined {
    return this.swarms.get(swarmId)?.ctx;
  }

  /** Follows one durable event. */
  event(e: SwarmEvent): void {
    if (e.kind === 'task') {
      this.follow(e.swarmId, e.metadata.definitionId, Date.parse(e.status.timestamp), e.metadata.label?.name);
      return;
    }
    if (e.kind !== 'status-update') return;
    const s = this.follow(e.swarmId);
    const fact = e.metadata;
    if (fact.type === 'agent-handoff' || fact.type === 'swarm-handoff') {
      const h = this.handoff(s, e.swarmId, `${e.swarmId}:t${s.lastTurn}:${fact.callId}`, fact.to);
      h.span.setAttribute('xswarm.handoff.kind', fact.type === 'agent-handoff' ? 'agent' : 'swarm');
      if (fact.type === 'swarm-handoff') h.span.setAttribute('xswarm.child_swarm.id', fact.childSwarmId);
    } else if (fact.type === 'handoff-result') {
      const h = s.handoffs.get(fact.key);
      if (!h) return;
      s.handoffs.delete(fact.key);
      if (!fact.ok) h.span.setStatus({ code: this.otel.SpanStatusCode.ERROR, message: fact.content });
      h.span.end();
    } else if (fact.type === 'turn-completed') {
      if (s.turn && s.turn.n === fact.turn) {
        s.turn.span.end();
        delete s.turn;
      }
    } else if (e.final) {
      this.end(e.swarmId, s, fact.type === 'failed' ? fact.reason : undefined, fact.type);
      this.endTask(e.swarmId, fact.type === 'failed' ? fact.reason : undefined);
    }
  }

  /**
   * Runs a model call in a span of its own, under its agent's handoff or its turn; a history
   * policy's summary call (`purpose: 'summary'`) is marked `xswarm.purpose: summary`.
   */
  async modelCall(input: ModelStepInput, model: string, work: () => Promise<TracedModelCall>, purpose?: 'summary'): Promise<TracedModelCall> {
    const s = this.follow(input.swarmId, input.definitionId);
    const parent = input.orchestrator ? this.turn(s, input.swarmId, input.turn).ctx : this.handoff(s, input.swarmId, input.scope, input.speaker).ctx;
    const attributes: Attributes = {
      'gen_ai.operation.name': 'chat',
      'gen_ai.request.model': model,
      'gen_ai.agent.name': input.speaker,
      'gen_ai.agent.id': input.speaker,
      'xswarm.swarm.id': input.swarmId,
      'xswarm.definition.id': input.definitionId,
      'xswarm.turn': input.turn,
    };
    if (purpose !== undefined) attributes['xswarm.purpose'] = purpose;
    return this.run(`chat ${model}`, parent, attributes, work, (span, { raw }) => {
      const calls = raw.toolCalls?.length ?? 0;
      span.setAttribute('gen_ai.response.finish_reasons', [calls > 0 ? 'tool_calls' : 'stop']);
      if (raw.usage) {
        span.setAttribute('gen_ai.usage.input_tokens', raw.usage.inputTokens);
        span.setAttribute('gen_ai.usage.output_tokens', raw.usage.outputTokens);
      }
    });
  }

  /** Runs a tool call in a span of its own, under its agent's handoff or the orchestrator's turn. */
  async toolCall(input: ToolRunInput, work: () => Promise<CallResult>): Promise<CallResult> {
    const s = this.follow(input.swarmId);
    // An agent's call key starts with its handoff's key (its scope): see `toolKey` in machines/round.ts.
    let parent = s.turn?.ctx ?? s.ctx;
    for (const [key, h] of s.handoffs) if (input.idempotencyKey.startsWith(`${key}:`)) parent = h.ctx;
    const attributes: Attributes = {
      'gen_ai.operation.name': 'execute_tool',
      'gen_ai.tool.name': input.name,
      'gen_ai.tool.call.id': input.toolCallId,
      'gen_ai.agent.name': input.agentId,
      'xswarm.swarm.id': input.swarmId,
      'xswarm.definition.id': s.definitionId,
    };
    return this.run(`execute_tool ${input.name}`, parent, attributes, work, (span, result) => {
      if (!result.ok) span.setStatus({ code: this.otel.SpanStatusCode.ERROR, message: result.content });
    });
  }

  /** The context of a handoff's span (a child swarm or a remote agent runs in it), opening it if its event was not seen yet. */
  handoffContext(swarmId: string, key: string, to: string): Context {
    return this.handoff(this.follow(swarmId), swarmId, key, to).ctx;
  }

  /**
   * Starts a team task attempt's swarm (`start`) in a `team_task` span, ended with the swarm (or
   * at once if it could not start): the attempt's swarm span, here or in a worker, is its child.
   */
  async teamTask(swarmId: string, definitionId: string, start: () => Promise<void>): Promise<void> {
    const active = this.otel.context.active();
    const parent = this.otel.trace.getSpanContext(active) ? active : this.rootOf(swarmId);
    const attributes: Attributes = {
      'gen_ai.operation.name': 'invoke_agent',
      'gen_ai.agent.name': definitionId,
      'xswarm.task.swarm_id': swarmId,
      'xswarm.definition.id': definitionId,
    };
    const span = this.tracer.startSpan(`team_task ${definitionId}`, { attributes }, parent);
    const ctx = this.otel.trace.setSpan(parent, span);
    this.parentOf(swarmId, ctx);
    this.tasks.set(swarmId, span);
    try {
      await this.within(ctx, start);
    } catch (e) {
      this.tasks.delete(swarmId);
      span.setStatus({ code: this.otel.SpanStatusCode.ERROR, message: e instanceof Error ? e.message : String(e) });
      span.end();
      throw e;
    }
  }

  /**
   * The team's attempt of `swarmId` ended (its wait resolved with the swarm's outcome, or the
   * team gave it up): its `team_task` span ends now. What ends it for an attempt that ran in
   * another process, whose final event this runtime never sees; a local one may end it first.
   */
  teamTaskEnded(swarmId: string, outcome: string, error?: string): void {
    this.tasks.get(swarmId)?.setAttribute('xswarm.task.outcome', outcome);
    this.endTask(swarmId, error);
  }

  /** Runs `work` with `ctx` active (where a context manager is registered). */
  within<T>(ctx: Context, work: () => T): T {
    return this.otel.context.with(ctx, work);
  }

  /** Ends every open span: the runtime closes (a swarm it drove continues elsewhere, in the same trace). */
  close(): void {
    for (const [id, s] of this.swarms) this.end(id, s, undefined, 'released');
    for (const id of [...this.tasks.keys()]) this.endTask(id, undefined);
  }

  /**
   * Ends a task attempt's span once its swarm ended: at its final event when it ran here, when
   * the team's wait on it ends ({@link teamTaskEnded}) when it ran in a worker process, or when
   * this runtime closes.
   */
  private endTask(swarmId: string, error: string | undefined): void {
    const span = this.tasks.get(swarmId);
    if (!span) return;
    this.tasks.delete(swarmId);
    if (error !== undefined) span.setStatus({ code: this.otel.SpanStatusCode.ERROR, message: error });
    span.end();
  }

  /** The swarm's spans, its `swarm` span opened at first sight (its `task` event, or adoption). */
  private follow(swarmId: string, definitionId?: string, startTime?: number, name?: string): Followed {
    let s = this.swarms.get(swarmId);
    if (s) return s;
    const def = definitionId ?? this.sources.definitionOf(swarmId) ?? 'unknown';
    // A live caller's context first; else the one the swarm kept (adopted after a restart); else its derived root.
    const parent = this.parents.get(swarmId) ?? this.keptContext(swarmId) ?? this.rootOf(swarmId);
    this.parents.delete(swarmId);
    const attributes: Attributes = {
      'gen_ai.operation.name': 'invoke_agent',
      'gen_ai.agent.name': def,
      'xswarm.swarm.id': swarmId,
      'xswarm.definition.id': def,
    };
    if (name !== undefined) attributes['xswarm.swarm.name'] = name;
    // Seen first by a later event: the swarm was started elsewhere (adopted, or started before a restart).
    if (startTime === undefined) attributes['xswarm.swarm.adopted'] = true;
    const span = this.tracer.startSpan(`swarm ${def}`, { attributes, ...(startTime !== undefined && !Number.isNaN(startTime) ? { startTime } : {}) }, parent);
    s = { span, ctx: this.otel.trace.setSpan(parent, span), definitionId: def, lastTurn: 1, handoffs: new Map() };
    this.swarms.set(swarmId, s);
    return s;
  }

  /** The orchestrator's turn `n`, opened at its first model call. */
  private turn(s: Followed, swarmId: string, n: number): Open {
    if (s.turn?.n === n) return s.turn;
    s.turn?.span.end();
    const attributes: Attributes = { 'xswarm.turn': n, 'xswarm.swarm.id': swarmId, 'xswarm.definition.id': s.definitionId };
    const span = this.tracer.startSpan(`turn ${n}`, { attributes }, s.ctx);
    s.turn = { n, span, ctx: this.otel.trace.setSpan(s.ctx, span) };
    s.lastTurn = n;
    return s.turn;
  }

  /** The span of the handoff `key` (opened by its event or its first call, whichever comes first). */
  private handoff(s: Followed, swarmId: string, key: string, to: string): Open {
    let h = s.handoffs.get(key);
    if (h) return h;
    const parent = s.turn?.ctx ?? s.ctx;
    const attributes: Attributes = {
      'gen_ai.operation.name': 'invoke_agent',
      'gen_ai.agent.name': to,
      'gen_ai.agent.id': to,
      'xswarm.handoff.to': to,
      'xswarm.swarm.id': swarmId,
      'xswarm.definition.id': s.definitionId,
    };
    const span = this.tracer.startSpan(`invoke_agent ${to}`, { attributes }, parent);
    h = { span, ctx: this.otel.trace.setSpan(parent, span) };
    s.handoffs.set(key, h);
    return h;
  }

  /** Ends a swarm's spans; `error` marks the swarm span failed. */
  private end(swarmId: string, s: Followed, error: string | undefined, outcome: string): void {
    for (const h of s.handoffs.values()) h.span.end();
    s.turn?.span.end();
    s.span.setAttribute('xswarm.swarm.outcome', outcome);
    if (error !== undefined) s.span.setStatus({ code: this.otel.SpanStatusCode.ERROR, message: error });
    s.span.end();
    this.swarms.delete(swarmId);
  }

  /** The caller's context a swarm kept (its `traceparent`), as a remote parent; undefined without a valid one. */
  private keptContext(swarmId: string): Context | undefined {
    const kept = this.sources.traceOf?.(swarmId);
    const m = kept && TRACEPARENT.exec(kept.traceparent);
    if (!m || m[1] === 'ff') return undefined;
    const { trace, ROOT_CONTEXT, createTraceState, isSpanContextValid } = this.otel;
    const sc = {
      traceId: m[2]!,
      spanId: m[3]!,
      traceFlags: Number.parseInt(m[4]!, 16),
      isRemote: true,
      ...(kept.tracestate ? { traceState: createTraceState(kept.tracestate) } : {}),
    };
    return isSpanContextValid(sc) ? trace.setSpanContext(ROOT_CONTEXT, sc) : undefined;
  }

  /** The virtual parent of a swarm started without a caller's context: the same in every process. */
  private rootOf(swarmId: string): Context {
    const hash = createHash('sha256').update(`xswarm:${swarmId}`).digest('hex');
    const { trace, TraceFlags, ROOT_CONTEXT } = this.otel;
    return trace.setSpanContext(ROOT_CONTEXT, { traceId: hash.slice(0, 32), spanId: hash.slice(32, 48), traceFlags: TraceFlags.SAMPLED, isRemote: true });
  }

  /** Runs `work` in a new span under `parent`, its outcome (`describe`, or the error) recorded. */
  private async run<T>(name: string, parent: Context, attributes: Attributes, work: () => Promise<T>, describe: (span: Span, value: T) => void): Promise<T> {
    const { context, trace, SpanKind, SpanStatusCode } = this.otel;
    const span = this.tracer.startSpan(name, { kind: SpanKind.CLIENT, attributes }, parent);
    try {
      const value = await context.with(trace.setSpan(parent, span), work);
      describe(span, value);
      return value;
    } catch (e) {
      span.setStatus({ code: SpanStatusCode.ERROR, message: e instanceof Error ? e.message : String(e) });
      throw e;
    } finally {
      span.end();
    }
  }
}
