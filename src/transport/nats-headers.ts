/**
 * NATS message headers to and from the plain records the {@link Transport} seam carries (a trace
 * context's `traceparent` and `tracestate`). The client's `headers()` is loaded only when a
 * request carries some, so a runtime that sends none loads no `@nats-io/*` code for it.
 *
 * @module
 */
import type { MsgHdrs } from '@nats-io/transport-node';

/** `record` as NATS headers. */
export async function natsHeaders(record: Readonly<Record<string, string>>): Promise<MsgHdrs> {
  const { headers } = await import('@nats-io/transport-node');
  const h = headers();
  for (const [key, value] of Object.entries(record)) h.set(key, value);
  return h;
}

/** A message's headers as a record (undefined when it has none). */
export function headerRecord(h: MsgHdrs | undefined): Record<string, string> | undefined {
  if (!h) return undefined;
  const record: Record<string, string> = {};
  for (const key of h.keys()) record[key] = h.get(key);
  return record;
}
