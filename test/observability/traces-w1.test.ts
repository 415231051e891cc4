import { afterEach, describe, expect, it } from 'vitest';
import { context } from '@opentelemetry/api';
import { AsyncHooksContextManager } from '@opentelemetry/context-async-hooks';
import { BasicTracerProvider, InMemorySpanExporter, type ReadableSpan, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { createW1Runtime, runW1, W1_AGENTS, W1_HANDOFF_TOOLS, W1_MODEL_CALLS, W1_SWARM_ID } from '../../bench/w1.js';
import type { Runtime } from '../../src/index.js';

/** The span's parent's id (SDK 2 names it in `parentSpanContext`). */
const parentOf = (s: ReadableSpan) => s.parentSpanContext?.spanId;

describe('traces: the span tree of W1', () => {
  let runtime: Runtime | undefined;
  const manager = new AsyncHooksContextManager().enable();
  context.setGlobalContextManager(manager);

  afterEach(async () => {
    await runtime?.close();
    runtime = undefined;
  });

  it('is one trace: swarm → 4 turns → 7 model calls, the agents’ calls under their handoff, with gen_ai attributes', async () => {
    const exporter = new InMemorySpanExporter();
    const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
    const w1 = createW1Runtime(0, undefined, undefined, undefined, { tracing: { tracer: provider.getTracer('test') } });
    runtime = w1.runtime;
    await runW1(runtime);
    const spans = exporter.getFinishedSpans();
    expect(new Set(spans.map((s) => s.spanContext().traceId)).size).toBe(1);

    const swarms = spans.filter((s) => s.name === `swarm ${W1_SWARM_ID}`);
    expect(swarms).toHaveLength(1);
    const swarm = swarms[0]!;
    expect(swarm.attributes['xswarm.definition.id']).toBe(W1_SWARM_ID);
    expect(swarm.attributes['xswarm.swarm.outcome']).toBe('completed');
    expect(swarm.attributes['xswarm.swarm.adopted']).toBeUndefined();

    const turns = spans.filter((s) => s.name.startsWith('turn '));
    expect(turns.map((t) => t.attributes['xswarm.turn']).sort()).toEqual([1, 2, 3, 4]);
    for (const t of turns) expect(parentOf(t)).toBe(swarm.spanContext().spanId);

    const calls = spans.filter((s) => s.attributes['gen_ai.operation.name'] === 'chat');
    expect(calls).toHaveLength(W1_MODEL_CALLS);
    const turnOf = new Map(turns.map((t) => [t.spanContext().spanId, t.attributes['xswarm.turn']]));
    const orchestrator = calls.filter((c) => c.attributes['gen_ai.agent.name'] === W1_SWARM_ID);
    expect(orchestrator).toHaveLength(4);
    // Each orchestrator call sits in its own turn.
    for (const c of orchestrator) expect(turnOf.get(parentOf(c)!)).toBe(c.attributes['xswarm.turn']);
    for (const c of calls) {
      expect(c.attributes['gen_ai.request.model']).toBeTypeOf('string');
      expect(c.attributes['xswarm.swarm.id']).toBe(swarm.attributes['xswarm.swarm.id']);
      expect(c.attributes['gen_ai.response.finish_reasons']).toHaveLength(1);
    }
    expect(orchestrator.map((c) => (c.attributes['gen_ai.response.finish_reasons'] as string[])[0])).toEqual(['tool_calls', 'tool_calls', 'tool_calls', 'stop']);

    // One handoff span per agent, under the turn that handed off, holding that agent's call.
    const handoffs = spans.filter((s) => s.attributes['xswarm.handoff.to'] !== undefined);
    expect(handoffs.map((h) => h.attributes['xswarm.handoff.to'])).toEqual([...W1_AGENTS]);
    handoffs.forEach((h, i) => {
      expect(h.attributes['xswarm.handoff.kind']).toBe('agent');
      expect(turnOf.get(parentOf(h)!)).toBe(i + 1);
      const agentCalls = calls.filter((c) => parentOf(c) === h.spanContext().spanId);
      expect(agentCalls.map((c) => c.attributes['gen_ai.agent.name'])).toEqual([W1_AGENTS[i]]);
    });
    expect(W1_HANDOFF_TOOLS).toHaveLength(3);
    // Every span ended inside its parent's trace and none is left open.
    expect(spans.every((s) => s.ended)).toBe(true);
  });

  it('with tracing on and no provider registered: the run completes, nothing is recorded, nothing throws', async () => {
    const exporter = new InMemorySpanExporter();
    const w1 = createW1Runtime(0, undefined, undefined, undefined, { tracing: true });
    runtime = w1.runtime;
    await runW1(runtime);
    expect(w1.counts[W1_SWARM_ID]).toBe(4);
    expect(exporter.getFinishedSpans()).toHaveLength(0);
  });

  it('refuses a tracing option that is not a boolean or { tracer }', () => {
    expect(() => createW1Runtime(0, undefined, undefined, undefined, { tracing: { tracer: 42 } as never })).toThrow(/tracing must be/);
  });
});
