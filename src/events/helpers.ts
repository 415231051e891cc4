/**
 * Typed helpers for reading swarm events without parsing strings.
 *
 * @module
 */
import type { SwarmEvent, SwarmFact, SwarmFactType } from '../../machines/events.js';

/**
 * The swarm fact of type `type` carried by an event, or undefined.
 *
 * @example
 * import { factOf } from 'xswarm';
 * for await (const e of client.events()) {
 *   const h = factOf(e, 'agent-handoff');
 *   if (h) console.log(`${h.from} → ${h.to}`);
 * }
 */
export function factOf<T extends SwarmFactType>(event: SwarmEvent, type: T): Extract<SwarmFact, { type: T }> | undefined {
  if (event.kind !== 'status-update' || event.metadata.type !== type) return undefined;
  return event.metadata as Extract<SwarmFact, { type: T }>;
}

/**
 * Whether this is the last event of a finished swarm.
 *
 * @example
 * import { isFinalEvent } from 'xswarm';
 * for await (const e of client.events()) {
 *   if (e.kind === 'status-update') console.log(e.status.state, e.status.message?.parts);
 *   if (isFinalEvent(e)) console.log(`done after ${e.seq} events`); // and the stream ends
 * }
 */
export function isFinalEvent(event: SwarmEvent): boolean {
  return event.kind === 'status-update' && event.final;
}
