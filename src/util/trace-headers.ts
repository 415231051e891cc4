/**
 * The trace context of the call being made, as W3C headers, for the requests xswarm sends to
 * peers (A2A, MCP). Nothing is loaded for it: until a runtime with `tracing` has loaded
 * `@opentelemetry/api` (and handed it here), there is no context to carry and no cost.
 *
 * @module
 */
import type * as OtelApi from '@opentelemetry/api';
import { importIfInstalled, OPTIONAL_PEERS } from './optional.js';

let api: typeof OtelApi | undefined;

/** Hands the loaded API over (a runtime with `tracing` does, once). */
export function useTraceApi(loaded: typeof OtelApi): void {
  api = loaded;
}

/** The active trace context as headers (`traceparent`, `tracestate`), through the registered propagator; undefined without one. */
export function activeTraceHeaders(): Record<string, string> | undefined {
  if (!api) return undefined;
  const carrier: Record<string, string> = {};
  api.propagation.inject(api.context.active(), carrier);
  return Object.keys(carrier).length > 0 ? carrier : undefined;
}

/** `init` with the active trace headers added (its own headers win); `init` itself without them. */
export function withTraceHeaders(init: RequestInit): RequestInit {
  const trace = activeTraceHeaders();
  if (!trace) return init;
  const headers = new Headers(init.headers);
  for (const [key, value] of Object.entries(trace)) if (!headers.has(key)) headers.set(key, value);
  return { ...init, headers };
}

/**
 * The W3C trace context in `carrier` (request headers, or an MCP request's `_meta`), as string
 * fields; undefined when it has no `traceparent`.
 */
export function traceCarrierOf(carrier: Readonly<Record<string, unknown>> | undefined): Record<string, string> | undefined {
  const traceparent = carrier?.traceparent;
  if (typeof traceparent !== 'string') return undefined;
  const tracestate = carrier?.tracestate;
  return { traceparent, ...(typeof tracestate === 'string' ? { tracestate } : {}) };
}

/**
 * Runs `work` with the caller's trace context in `carrier` active (a swarm it starts continues
 * the caller's trace), when there is one and `@opentelemetry/api` is installed; else as it is.
 */
export async function withCarriedTrace<T>(carrier: Record<string, string> | undefined, work: () => Promise<T>): Promise<T> {
  if (!carrier) return work();
  const otel = api ?? (await importIfInstalled(OPTIONAL_PEERS.tracing[0], () => import('@opentelemetry/api')));
  if (!otel) return work();
  return otel.context.with(otel.propagation.extract(otel.context.active(), carrier), work);
}
