/**
 * What an event cursor (`since`) may be. Events are numbered from 1; reading after `since`
 * returns the events with a greater `seq`. Past the end of a swarm that is still unfinished a
 * cursor is fine (the reader waits for the events after it); past the end of a swarm that has
 * ended no event can ever come, so it is refused instead of answered with a stream that ends
 * silently (a client holding such a cursor has the wrong swarm or a corrupt cursor).
 *
 * @module
 */
import { SwarmError } from '../errors.js';
import { isFinal } from '../store/result.js';
import type { SwarmRecord, SwarmStore } from '../store/types.js';

/**
 * Throws a `SwarmError` with code `invalid-cursor` when `since` is beyond the last event of a
 * swarm that has ended (a final record's `lastSeq` is its final event's `seq`).
 */
export function assertCursor(record: Pick<SwarmRecord, 'swarmId' | 'status' | 'lastSeq'>, since: number): void {
  if (isFinal(record.status) && since > record.lastSeq) {
    throw new SwarmError(
      `Cursor ${since} is beyond the end of swarm "${record.swarmId}": it has ended (${record.status}) at event ${record.lastSeq}, so no event can follow`,
      'invalid-cursor',
    );
  }
}

/**
 * The `seq` of a swarm's last stored event: its record's `lastSeq` is the last checkpoint, and
 * events may follow it (the record may trail its events by a step).
 */
export async function lastStoredSeq(store: Pick<SwarmStore, 'readEvents'>, record: Pick<SwarmRecord, 'swarmId' | 'lastSeq'>): Promise<number> {
  return (await store.readEvents(record.swarmId, record.lastSeq)).at(-1)?.seq ?? record.lastSeq;
}
