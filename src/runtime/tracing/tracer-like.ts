/**
 * The shape of an OpenTelemetry `Tracer` as the public options name it: the declarations of the
 * core must not import `@opentelemetry/api` (an optional peer), and any `Tracer` fits this.
 *
 * @module
 */

/** An OpenTelemetry `Tracer` (`trace.getTracer(name)` or `provider.getTracer(name)`). */
export interface TracerLike {
  startSpan(name: string, options?: unknown, context?: unknown): unknown;
}

/** What `createRuntime({ tracing })` takes: `true` (the global tracer provider's tracer), or the tracer to use. */
export type TracingOption = boolean | { tracer?: TracerLike };
