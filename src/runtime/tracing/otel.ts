/**
 * `@opentelemetry/api`, loaded only by a runtime created with `tracing` (an optional peer: a
 * runtime without it never loads it, and one with it fails at once, naming the package).
 *
 * @module
 */
import type * as OtelApi from '@opentelemetry/api';
import { OPTIONAL_PEERS, requireOptional } from '../../util/optional.js';
import { useTraceApi } from '../../util/trace-headers.js';

/** The OpenTelemetry API module. */
export type Otel = typeof OtelApi;

/** The API, loaded synchronously (it ships CommonJS), so `createRuntime` stays synchronous. */
export function loadOtel(): Otel {
  const otel = requireOptional<Otel>('createRuntime({ tracing })', OPTIONAL_PEERS.tracing[0]);
  // Requests to A2A and MCP peers carry the active trace context from now on.
  useTraceApi(otel);
  return otel;
}
