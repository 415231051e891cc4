/**
 * The structured request of an A2A `input-required` status: besides the question as text, the
 * status message carries the pause itself as a data part (`type`, `message`, `pauseId`, and when
 * there is one, `responseSchema`, the `limit` that tripped, `pendingApprovalId`), so a program
 * can answer it without parsing prose. Added at the edge when events leave over A2A: the stored
 * events are unchanged, so older logs read the same and gain the part too.
 *
 * @module
 */
import type { DataPart, PauseReason, SwarmEvent } from '../../machines/events.js';

/** The `metadata.kind` of the data part that carries a pause's structured request. */
export const PAUSE_REQUEST_PART = 'xswarm.pause';

/** The data part of a pause's structured request. */
export function pauseRequestPart(reason: PauseReason): DataPart {
  return { kind: 'data', data: { ...reason }, metadata: { kind: PAUSE_REQUEST_PART } };
}

/**
 * A paused status update with its structured request as a data part after the text (the event
 * itself for any other event, or one that has the part already).
 */
export function withPauseRequest<E extends SwarmEvent>(event: E): E {
  if (event.kind !== 'status-update' || event.metadata.type !== 'paused') return event;
  const message = event.status.message;
  if (!message || message.parts.some((p) => p.kind === 'data' && p.metadata?.kind === PAUSE_REQUEST_PART)) return event;
  return { ...event, status: { ...event.status, message: { ...message, parts: [...message.parts, pauseRequestPart(event.metadata.reason)] } } };
}

/**
 * The pause request in a message's parts (v0.3 shape: a remote peer's `input-required` status),
 * or undefined: the data part marked {@link PAUSE_REQUEST_PART}, or any data part that reads
 * as one (a `message` string and a `responseSchema` object).
 */
export function pauseRequestOf(parts: readonly { kind: string; data?: unknown; metadata?: Record<string, unknown> }[]): Partial<PauseReason> | undefined {
  for (const p of parts) {
    if (p.kind !== 'data' || !p.data || typeof p.data !== 'object' || Array.isArray(p.data)) continue;
    const data = p.data as Record<string, unknown>;
    const marked = p.metadata?.kind === PAUSE_REQUEST_PART;
    const schema = data.responseSchema;
    if (!marked && !(schema && typeof schema === 'object' && !Array.isArray(schema))) continue;
    return data as Partial<PauseReason>;
  }
  return undefined;
}
