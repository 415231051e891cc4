/**
 * The resumability store of one MCP session (the SDK's `EventStore`): every message the
 * session's transport writes on an SSE stream is kept, so a client that lost a stream
 * reconnects with `GET` and `Last-Event-ID` and gets what it missed, on the standalone stream
 * too (a `notifications/resources/updated` sent while no `GET` stream was open).
 *
 * Bounded and in memory, as the session itself: at most `max` messages per session, the oldest
 * dropped first. A `Last-Event-ID` older than that is unknown, which the SDK answers 400; the
 * client then opens a fresh stream (and reads the resource again: an update is only a hint).
 *
 * @module
 */
import type { EventId, EventStore, JSONRPCMessage, StreamId } from '@modelcontextprotocol/server';

/** Messages a session keeps for resumption by default. */
export const DEFAULT_SESSION_EVENTS = 1000;

/** A bounded in-memory {@link EventStore} for one session (see the module doc). */
export class BoundedEventStore implements EventStore {
  // Insertion order is storage order: the first key is the oldest event.
  private readonly events = new Map<EventId, { streamId: StreamId; message: JSONRPCMessage }>();
  private next = 0;

  constructor(private readonly max = DEFAULT_SESSION_EVENTS) {}

  async storeEvent(streamId: StreamId, message: JSONRPCMessage): Promise<EventId> {
    // The counter makes ids unique within the session and ordered; the stream id tells a replay
    // which stream an id belongs to even after older events are gone.
    const id = `${++this.next}_${streamId}`;
    this.events.set(id, { streamId, message });
    if (this.events.size > this.max) this.events.delete(this.events.keys().next().value!);
    return id;
  }

  async getStreamIdForEventId(eventId: EventId): Promise<StreamId | undefined> {
    return this.events.get(eventId)?.streamId;
  }

  async replayEventsAfter(lastEventId: EventId, { send }: { send: (eventId: EventId, message: JSONRPCMessage) => Promise<void> }): Promise<StreamId> {
    const last = this.events.get(lastEventId);
    if (!last) return '';
    let after = false;
    // A snapshot: events stored while replaying go out live on the reconnected stream.
    for (const [id, event] of [...this.events]) {
      if (after && event.streamId === last.streamId && !isPriming(event.message)) await send(id, event.message);
      if (id === lastEventId) after = true;
    }
    return last.streamId;
  }

  /** How many messages are kept (for tests). */
  get size(): number {
    return this.events.size;
  }
}

/** The empty message the SDK stores for a stream's priming event: nothing to replay. */
function isPriming(message: JSONRPCMessage): boolean {
  return Object.keys(message).length === 0;
}
