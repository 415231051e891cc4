/**
 * The W1 row with tracing on: the same runs as "W1 / memory / sequential", on a runtime created
 * with `tracing: { tracer }` whose provider records every span through a simple processor into
 * the SDK's in-memory exporter (a real SDK's work per span, no network): the cost per model call
 * of the traces, beside the row without them (whose figures must not move: a runtime without
 * `tracing` loads no OpenTelemetry code and adds no wrapper to any call).
 *
 * @module
 */
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { timeSequential } from './measure.js';
import type { Figures } from './table.js';
import { createW1Runtime, runW1, W1_MODEL_CALLS } from './w1.js';

/** W1 in memory, one run at a time, every span recorded. */
export async function tracedSequential(): Promise<Figures> {
  const exporter = new InMemorySpanExporter();
  const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
  const { runtime } = createW1Runtime(0, undefined, undefined, undefined, { tracing: { tracer: provider.getTracer('bench') } });
  try {
    const timing = await timeSequential(() => runW1(runtime));
    // The spans were recorded: a row whose tracing was off would measure nothing.
    const calls = exporter.getFinishedSpans().filter((s) => s.attributes['gen_ai.operation.name'] === 'chat').length;
    if (calls === 0 || calls % W1_MODEL_CALLS !== 0) throw new Error(`the traces did not record the runs' model calls: ${calls}`);
    return { ...timing, usPerModelCall: timing.usPerRun / W1_MODEL_CALLS };
  } finally {
    await runtime.close();
    await provider.shutdown();
  }
}
