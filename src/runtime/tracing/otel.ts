/**
 * `@opentelemetry/api`, loaded only by a runtime created with `tracing` (an optional peer: a
 * runtime without it never loads it, and one with it fails at once, naming the package).
 *
 * @module
 */
import type * as OtelApi from '@opentelemetry/api';
import { OPTIONAL_PEERS, requireOptional } from '../../util/optional.js';

/** The OpenTelemetry API module. */
export type Otel = typeof OtelApi;

/** The API, loaded synchronously (it ships CommonJS), so `createRuntime` stays synchronous. */
export function loadOtel(): Otel {
  return requireOptional<Otel>('createRuntime({ tracing })', OPTIONAL_PEERS.tracing[0]);
}
