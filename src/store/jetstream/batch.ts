/**
 * A commit's outbox as one message of the events stream (record format 3): its events and its
 * message-list writes in one publish on the swarm's event subject, acknowledged once, instead of
 * a message per event and per row. A header says what the message holds without parsing it
 * (the events' seqs, the KV revision whose outbox it is, how many list writes), so readers of
 * events skip a commit without events, readers of lists skip one without writes, and seq lookups
 * (the last stored event, a seek) read the header alone. The message id names the swarm and the
 * KV revision (an events-only commit: its events' seqs), so a publish made again (a retry, a
 * republish by the next writer) is dropped by the stream within its duplicate window; readers
 * skip copies landing later (events by seq, list writes by revision).
 *
 * Streams written before format 3 hold a message per event (its seq in its message id) on the
 * same subject, and rows of message lists in the messages stream: both still read.
 *
 * @module
 */
import type { SwarmEvent } from '../../../machines/events.js';
import type { MessageWrite } from '../messages.js';

/** The header of a commit message: `<first seq> <last seq> <KV revision> <list writes>`. */
export const COMMIT_HEADER = 'Xswarm-Commit';

/** What a commit message's header says. */
export interface CommitHeader {
  /** The seqs of the events it holds, `first` to `last` (none when `first > last`: `last` is then the swarm's last seq before it). */
  first: number;
  last: number;
  /** The KV revision of the value whose outbox it is (0: an events-only commit). */
  rev: number;
  /** How many message-list writes it holds. */
  writes: number;
}

/** The header value of a commit message. */
export function commitHeader(h: CommitHeader): string {
  return `${h.first} ${h.last} ${h.rev} ${h.writes}`;
}

/** Reads a commit message's header; undefined when the message is not one (an event of the old layout). */
export function readCommitHeader(value: string | undefined): CommitHeader | undefined {
  if (!value) return undefined;
  const [first, last, rev, writes] = value.split(' ').map(Number);
  if (![first, last, rev, writes].every((n) => Number.isInteger(n))) return undefined;
  return { first: first!, last: last!, rev: rev!, writes: writes! };
}

/** A commit message's body. */
export interface CommitBody {
  events?: SwarmEvent[];
  messages?: MessageWrite[];
}

/** Parses a commit message's body; a string says why it cannot be read. */
export function readCommitBody(text: string): CommitBody | string {
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch (e) {
    return (e as Error).message;
  }
  if (typeof body !== 'object' || body === null) return 'not a commit message';
  const { events, messages } = body as CommitBody;
  if ((events !== undefined && !Array.isArray(events)) || (messages !== undefined && !Array.isArray(messages))) return 'not a commit message';
  return body as CommitBody;
}
