/**
 * Reading a stored stream page by page: every reader of a swarm's stored events (the event
 * stream, the WebSocket replay, `xswarm events`, a child's re-attachment, A2A task snapshots)
 * holds at most one page however long the swarm's stream is.
 *
 * @module
 */
import type { SwarmEvent } from '../../machines/events.js';
import { CorruptEventError, type SwarmStore } from './types.js';

/**
 * How many stored events a reader asks for at a time: small enough that a page of large events
 * stays a few hundred KB, large enough that a long stream costs few reads.
 */
export const PAGE_SIZE = 500;

/**
 * The first `pageSize` events of `swarmId` after `cursor`, or the readable ones before a corrupt
 * event among them. A read that starts at the corrupt event has none before it and throws its
 * {@link CorruptEventError}: so a reader delivers what can be read, then reports where the
 * stream breaks.
 */
export async function readPage(store: Pick<SwarmStore, 'readEvents'>, swarmId: string, cursor: number, pageSize = PAGE_SIZE): Promise<SwarmEvent[]> {
  try {
    return await store.readEvents(swarmId, cursor, pageSize);
  } catch (e) {
    if (!(e instanceof CorruptEventError)) throw e;
    // The corrupt event may itself be readable (a row with more lines than its range names its
    // last event): delivering it would start the next page after it, past the corruption.
    const before = e.readable.filter((r) => r.seq < e.seq);
    if (before.length > 0) return before;
    throw e;
  }
}

/**
 * The stored events of `swarmId` after `since`, in order, as pages of at most `pageSize` events
 * ({@link readPage}): it ends at the first empty page; at a corrupt event it yields the events
 * before it, then throws that event's {@link CorruptEventError}. Stopping the iteration stops
 * the reading.
 */
export async function* storedPages(store: Pick<SwarmStore, 'readEvents'>, swarmId: string, since: number, pageSize = PAGE_SIZE): AsyncGenerator<SwarmEvent[]> {
  for (let cursor = since; ; ) {
    const page = await readPage(store, swarmId, cursor, pageSize);
    if (page.length === 0) return;
    yield page;
    cursor = page.at(-1)!.seq;
  }
}
