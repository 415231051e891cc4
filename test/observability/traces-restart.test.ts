/**
 * A swarm that outlives its runtime keeps its trace: the runtime that adopts it records its
 * spans in the same trace (its `swarm` span marked adopted), and the first runtime's spans end.
 */
import { describe, expect, it } from 'vitest';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { W1_INPUT, W1_SWARM_ID, w1Respond, newCounts, checkW1Result, W1_AGENTS } from '../../bench/w1.js';
import { createRuntime, defineAgent, defineSwarm, handoff, memoryStore, scriptedModel } from '../../src/index.js';
import { until } from '../support/wait.js';

function recorder() {
  const exporter = new InMemorySpanExporter();
  const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
  return { exporter, tracer: provider.getTracer('test') };
}

describe('traces across a restart', () => {
  it('an adopting runtime continues the same trace', async () => {
    const store = memoryStore();
    const first = recorder();
    let calls = 0;
    // The first runtime's model answers the first orchestrator call, then hangs until aborted (its runtime closes).
    const counts = newCounts();
    const hanging = scriptedModel((req) => {
      if (req.agentId === W1_SWARM_ID && ++calls > 1)
        return new Promise((_, reject) => req.signal.addEventListener('abort', () => reject(req.signal.reason), { once: true }));
      return w1Respond(req, counts);
    });
    const agents = W1_AGENTS.map((id) => defineAgent({ id, instructions: `You are the ${id}.` }));
    const swarm = defineSwarm({ id: W1_SWARM_ID, instructions: 'Plan.', handoffs: agents.map((agent) => handoff.toAgent(agent)) });
    const a = createRuntime({ swarms: [swarm], agents, model: hanging, store, tracing: { tracer: first.tracer } });
    const client = a.forSwarm(W1_SWARM_ID, 'restarted');
    await client.run(W1_INPUT);
    await until('the second orchestrator call', () => calls > 1);
    await a.close();
    const before = first.exporter.getFinishedSpans();
    const traceId = before.find((s) => s.name === `swarm ${W1_SWARM_ID}`)!.spanContext().traceId;
    expect(before.find((s) => s.name === `swarm ${W1_SWARM_ID}`)!.attributes['xswarm.swarm.outcome']).toBe('released');

    const second = recorder();
    const b = createRuntime({ swarms: [swarm], agents, model: scriptedModel((req) => w1Respond(req, counts)), store, tracing: { tracer: second.tracer } });
    try {
      // Starting scans the store: the released swarm is adopted at once.
      await b.start();
      checkW1Result(
        await until(
          'b to finish it',
          () => b.forSwarm(W1_SWARM_ID, 'restarted').getResult(),
          (r) => r.status === 'completed',
          { timeout: 5_000 },
        ),
      );
    } finally {
      await b.close();
    }
    const after = second.exporter.getFinishedSpans();
    expect(after.length).toBeGreaterThan(0);
    expect(new Set(after.map((s) => s.spanContext().traceId))).toEqual(new Set([traceId]));
    const adopted = after.find((s) => s.name === `swarm ${W1_SWARM_ID}`)!;
    expect(adopted.attributes['xswarm.swarm.adopted']).toBe(true);
    expect(adopted.attributes['xswarm.swarm.outcome']).toBe('completed');
    // Both processes' swarm spans hang from the same (virtual) root.
    const firstSwarm = before.find((s) => s.name === `swarm ${W1_SWARM_ID}`)!;
    expect(adopted.parentSpanContext?.spanId).toBe(firstSwarm.parentSpanContext?.spanId);
    // The adopter made the remaining agent calls: their spans are in the trace.
    expect(after.filter((s) => s.attributes['gen_ai.operation.name'] === 'chat').map((s) => s.attributes['gen_ai.agent.name'])).toContain(W1_AGENTS[2]);
  });
});
