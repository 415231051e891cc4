/**
 * `createRuntime({ tracing })`: off by default; `true` traces through the global tracer provider
 * (`trace.getTracer('xswarm')`: no-op spans until an SDK is registered), `{ tracer }` through the
 * caller's tracer.
 *
 * @module
 */
import type { Tracer } from '@opentelemetry/api';
import type { TracerLike, TracingOption } from './tracer-like.js';
import { loadOtel } from './otel.js';
import { SwarmTracing, TRACER_NAME, type TracingSources } from './swarm-spans.js';

export type { TracingOption } from './tracer-like.js';

/** Whether `value` is a valid {@link TracingOption}. */
export function isTracingOption(value: unknown): value is TracingOption {
  if (typeof value === 'boolean') return true;
  if (typeof value !== 'object' || value === null) return false;
  const tracer = (value as { tracer?: unknown }).tracer;
  return tracer === undefined || (typeof tracer === 'object' && tracer !== null && typeof (tracer as TracerLike).startSpan === 'function');
}

/** The spans of a runtime created with `option`; undefined (nothing loaded) without it. */
export function tracingOf(option: TracingOption | undefined, sources: TracingSources): SwarmTracing | undefined {
  if (!option) return undefined;
  const otel = loadOtel();
  // A caller's tracer is an OpenTelemetry `Tracer` (typed loosely in the options, see `tracer-like.ts`).
  const tracer = option === true || !option.tracer ? otel.trace.getTracer(TRACER_NAME) : (option.tracer as Tracer);
  return new SwarmTracing(otel, tracer, sources);
}
