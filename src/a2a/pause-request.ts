/**
 * The structured request of an A2A `input-required` status: besides the question as text, the
 * status message carries the pause itself as a data part (`type`, `message`, `pauseId`, and when
 * there is one, `responseSchema`, the `limit` that tripped, `pendingApprovalId`), so a program
 * can answer it without parsing prose. Added at the edge when events leave over A2A: the stored
 * events are unchanged, so older logs read the same and gain the part too.
 *
 * @module
 */
import type { Part } from '@a2a-js/sdk';
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

/** What a peer's `input-required` status asks for, beyond its question's text. */
export interface RemoteRequest {
  /** The JSON Schema the answer must match (checked usable by the caller before it is kept). */
  responseSchema?: Record<string, unknown>;
  /** The id of the peer's pause, named by the answer so a stale one is refused there. */
  pauseId?: string;
}

/**
 * The structured request in the parts of a peer's `input-required` status message (v1.0 parts,
 * as the SDK client reads them), or undefined: the data part marked {@link PAUSE_REQUEST_PART}
 * (an xswarm peer), or any data part with a `responseSchema` object (another peer doing the same).
 */
export function remoteRequestOf(parts: readonly Part[]): RemoteRequest | undefined {
  for (const p of parts) {
    const c = p.content;
    if (c?.$case !== 'data' || !c.value || typeof c.value !== 'object' || Array.isArray(c.value)) continue;
    const data = c.value as Record<string, unknown>;
    const schema = data.responseSchema;
    const hasSchema = !!schema && typeof schema === 'object' && !Array.isArray(schema);
    if (p.metadata?.kind !== PAUSE_REQUEST_PART && !hasSchema) continue;
    return {
      ...(hasSchema ? { responseSchema: schema as Record<string, unknown> } : {}),
      ...(typeof data.pauseId === 'string' ? { pauseId: data.pauseId } : {}),
    };
  }
  return undefined;
}
