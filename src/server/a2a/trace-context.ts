/**
 * The caller's W3C trace context on an A2A request (`traceparent`, `tracestate` headers): a
 * swarm the request starts runs with it active, so a traced runtime makes the swarm's span a
 * child of the caller's. `@opentelemetry/api` is loaded only for a request that carries one,
 * and only where it is installed; the extraction is the registered propagator's (an SDK's).
 *
 * @module
 */
import type { ServerCallContext } from '@a2a-js/sdk/server';
import { traceCarrierOf, withCarriedTrace } from '../../util/trace-headers.js';

/** The call-context key under which the request's trace headers are kept. */
export const TRACE_HEADERS_KEY = 'xswarm.traceHeaders';

/** Keeps the request's trace headers in its call context (nothing when it carries none). */
export function keepTraceHeaders(context: ServerCallContext, headers: Readonly<Record<string, unknown>>): void {
  const carrier = traceCarrierOf(headers);
  if (carrier) context.state.set(TRACE_HEADERS_KEY, carrier);
}

/** Runs `work` with the request's trace context active, when it carried one and the API is installed. */
export function withCallerTrace<T>(context: ServerCallContext, work: () => Promise<T>): Promise<T> {
  return withCarriedTrace(context.state.get(TRACE_HEADERS_KEY) as Record<string, string> | undefined, work);
}
