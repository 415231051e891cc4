/**
 * The names the JetStream store writes under, all made from its prefix: the KV bucket, the two
 * streams and their subjects, a swarm's key, the subject of its events and of each of its
 * message lists, an event's message id, a message row's index header. They are part of the
 * stored format as much as the values are (a store must find what an earlier one wrote), so
 * they are spelled here once and nowhere else.
 *
 * @module
 */
import { fromSubjectToken, subjectToken } from '../../transport/types.js';

/** The header holding a message row's index in its list: rows are kept by index (see `MessageWrite`). */
export const INDEX_HEADER = 'Xswarm-Index';

/** The bucket, stream, subject and key names of one store: one prefix, one namespace on the NATS. */
export class Names {
  /** The KV bucket: one key per swarm, holding its record, lease and outbox. */
  readonly bucket: string;
  /** The events stream: a subject per swarm. */
  readonly eventStream: string;
  /** The message lists stream: a subject per list of each swarm. */
  readonly messageStream: string;
  /** Every subject of the events stream. */
  readonly eventSubjects: string;
  /** Every subject of the message lists stream. */
  readonly messageSubjects: string;
  /** The budget ledger's KV bucket (created on its first use): one key per budget account. */
  readonly budgetBucket: string;
  /** The push outbox's KV bucket (created on its first use): one key per webhook of a task. */
  readonly pushBucket: string;

  constructor(private readonly prefix: string) {
    this.bucket = `${prefix}_swarms`;
    this.eventStream = `${prefix}_events`;
    this.messageStream = `${prefix}_messages`;
    this.eventSubjects = `${prefix}.ev.>`;
    this.messageSubjects = `${prefix}.msg.>`;
    this.budgetBucket = `${prefix}_budgets`;
    this.pushBucket = `${prefix}_push`;
  }

  /** A swarm's key in the bucket. */
  key(swarmId: string): string {
    return subjectToken(swarmId);
  }

  /**
   * The subject a swarm's key is written on (a KV value is a message of the bucket's stream on
   * it): a core subscription to it receives each new value as it is stored.
   */
  keySubject(swarmId: string): string {
    return `$KV.${this.bucket}.${this.key(swarmId)}`;
  }

  /** The swarm a key of the bucket is for. */
  swarmOf(key: string): string {
    return fromSubjectToken(key);
  }

  /** The subject of a swarm's events. */
  eventSubject(swarmId: string): string {
    return `${this.prefix}.ev.${subjectToken(swarmId)}`;
  }

  /**
   * The message id an event is published with: the events stream drops a republished copy
   * within its duplicate window, and readers take the event's seq from it (see `./events.ts`).
   */
  eventId(swarmId: string, seq: number): string {
    return `${swarmId}:${seq}`;
  }

  /**
   * The message id of a commit message (see `./batch.ts`): the swarm and the KV revision whose
   * outbox it is, or for an events-only commit (revision 0) its events' seqs. A publish made again
   * has the same id, so the events stream drops it within its duplicate window.
   */
  commitId(swarmId: string, rev: number, first: number, last: number): string {
    return rev > 0 ? `${swarmId}@${rev}` : `${swarmId}:${first}-${last}`;
  }

  /** The subject of one of a swarm's message lists. */
  listSubject(swarmId: string, list: string): string {
    // A list token never empty (the swarm machine's own list is ''): `m` + the id's token.
    return `${this.listsOf(swarmId)}.m${subjectToken(list)}`;
  }

  /** A filter on the subjects of all of a swarm's message lists. */
  allLists(swarmId: string): string {
    return `${this.listsOf(swarmId)}.>`;
  }

  /** The list a subject made by {@link Names.listSubject} is for. */
  listOf(subject: string): string {
    return fromSubjectToken(subject.slice(subject.lastIndexOf('.') + 2));
  }

  private listsOf(swarmId: string): string {
    return `${this.prefix}.msg.${subjectToken(swarmId)}`;
  }
}
