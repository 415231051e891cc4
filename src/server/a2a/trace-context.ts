/**
 * The caller's W3C trace context on an A2A request (`traceparent`, `tracestate` headers): a
 * swarm the request starts runs with it active, so a traced runtime makes the swarm's span a
 * child of the caller's. `@opentelemetry/api` is loaded only for a request that carries one,
 * and only where it is installed; the extraction is the registered propagator's (an SDK's).
 *
 * @module
 */
import type { ServerCallContext } from '@a2a-js/sdk/server';
import { importIfInstalled, OPTIONAL_PEERS } from '../../util/optional.js';

/** The call-context key under which the request's trace headers are kept. */
export const TRACE_HEADERS_KEY = 'xswarm.traceHeaders';

/** Keeps the request's trace headers in its call context (nothing when it carries none). */
export function keepTraceHeaders(context: ServerCallContext, headers: Readonly<Record<string, string | string[] | undefined>>): void {
  const traceparent = headers.traceparent;
  if (typeof traceparent !== 'string') return;
  const tracestate = headers.tracestate;
  context.state.set(TRACE_HEADERS_KEY, { traceparent, ...(typeof tracestate === 'string' ? { tracestate } : {}) });
}

/** Runs `work` with the request's trace context active, when it carried one and the API is installed. */
export async function withCallerTrace<T>(context: ServerCallContext, work: () => Promise<T>): Promise<T> {
  const carrier = context.state.get(TRACE_HEADERS_KEY) as Record<string, string> | undefined;
  if (!carrier) return work();
  const otel = await importIfInstalled(OPTIONAL_PEERS.tracing[0], () => import('@opentelemetry/api'));
  if (!otel) return work();
  return otel.context.with(otel.propagation.extract(otel.context.active(), carrier), work);
}
