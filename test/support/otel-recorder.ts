/**
 * An OpenTelemetry SDK for the tracing tests: an in-memory exporter behind a tracer of its own,
 * and (once per test file) the async-hooks context manager and the W3C trace-context propagator,
 * as an application's SDK setup registers them.
 */
import { context, propagation } from '@opentelemetry/api';
import { AsyncHooksContextManager } from '@opentelemetry/context-async-hooks';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { BasicTracerProvider, InMemorySpanExporter, type ReadableSpan, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import type { TracerLike } from '../../src/runtime/tracing/tracer-like.js';

/** A tracer whose finished spans are kept in memory. */
export function spanRecorder(): { exporter: InMemorySpanExporter; tracer: TracerLike; spans: () => ReadableSpan[] } {
  const exporter = new InMemorySpanExporter();
  const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
  return { exporter, tracer: provider.getTracer('test'), spans: () => exporter.getFinishedSpans() };
}

/** Registers the global context manager and propagator (what `NodeSDK.start()` does). */
export function registerOtelGlobals(): void {
  context.setGlobalContextManager(new AsyncHooksContextManager().enable());
  propagation.setGlobalPropagator(new W3CTraceContextPropagator());
}

/** The id of a span's parent (SDK 2 names it in `parentSpanContext`). */
export function parentId(span: ReadableSpan): string | undefined {
  return span.parentSpanContext?.spanId;
}
