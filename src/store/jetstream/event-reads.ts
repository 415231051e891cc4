/**
 * Answering `readEvents` on JetStream. A reader of a swarm's latest events (a page after a
 * recent cursor: what followers of a running swarm ask for) is answered from the outbox of the
 * swarm's latest value seen here, with a direct get or a few, instead of a stream read (a
 * consumer, several times dearer for the server). Other reads go through the stream (see
 * `./events.ts`), completed with the events of an outbox not published yet, since a commit's
 * KV update lands before its publishes.
 *
 * @module
 */
import type { SwarmEvent } from '../../../machines/events.js';
import { isFinal } from '../result.js';
import type { Listing } from './listing.js';
import type { Names } from './names.js';
import { unavailable } from './outage.js';
import type { RecentValues, Seen } from './seen.js';
import type { Broker, Setup } from './setup.js';
import type { Watchers } from './watching.js';

/**
 * How many stored messages a read of the events before a known outbox walks with direct gets
 * (more: a stream read). A message is a commit, whatever number of events it holds: a swarm of
 * a few commits is read this way from its start.
 */
const FEW_MESSAGES = 12;

/** Reads swarms' events (see `SwarmStore.readEvents`). */
export class EventReads {
  constructor(
    private readonly setup: Setup,
    private readonly names: Names,
    private readonly seen: Seen,
    private readonly recent: RecentValues,
    private readonly listing: Listing,
    private readonly watchers: Watchers,
  ) {}

  /** The events of `swarmId` with `seq > since`, in order: the first `limit` of them when given. */
  async read(swarmId: string, since: number, limit?: number): Promise<SwarmEvent[]> {
    if (limit !== undefined && limit <= 0) return [];
    try {
      const r = await this.setup.ready();
      const subject = this.names.eventSubject(swarmId);
      // A swarm followed here whose latest value is not known yet: one KV get makes it known
      // (its later values come to its followers).
      if (this.watchers.has(swarmId) && !this.recent.has(swarmId)) await this.seen.read(r.kv, swarmId);
      let latest = await this.fromOutbox(r, swarmId, subject, since, limit);
      if (latest === 'newer') {
        // Its followers may not have been delivered the latest value yet: one KV get reads it
        // (the same value: the events after it are an events-only commit's, in the stream).
        const seen = this.recent.get(swarmId)?.rev;
        await this.seen.read(r.kv, swarmId);
        latest = this.recent.get(swarmId)?.rev !== seen ? await this.fromOutbox(r, swarmId, subject, since, limit) : undefined;
      }
      if (latest && latest !== 'newer') return latest;
      const events = await r.events.read(swarmId, subject, since, limit);
      const full = () => limit !== undefined && events.length >= limit;
      let last = events.at(-1)?.seq ?? since;
      // Where the latest value may not be known here (a swarm written elsewhere, not followed
      // here), the record is read to know.
      if (full() || (this.upToDate(swarmId) && this.lastKnownSeq(swarmId) <= last)) return events;
      // The stream is behind the record: a commit's outbox is not (all) published yet.
      const cur = await this.seen.read(r.kv, swarmId);
      const value = cur.decoded?.value;
      if (!value || value.record.lastSeq <= last) return events;
      const append = (more: readonly SwarmEvent[]) => {
        for (const e of more) {
          if (full()) return;
          if (e.seq === last + 1) {
            events.push(e);
            last++;
          }
        }
      };
      // Events published since the stream was read come before the outbox's.
      if ((value.outbox?.events[0]?.seq ?? Infinity) > last + 1)
        append(await r.events.read(swarmId, subject, last, limit === undefined ? undefined : limit - events.length));
      append(value.outbox?.events ?? []);
      return events;
    } catch (e) {
      throw unavailable(e);
    }
  }

  /**
   * The events after `since` this process holds in the latest values of `swarmId` it saw, or in
   * the record commits' messages its followers were delivered (see `SwarmStore.knownEvents`): a
   * value's outbox is committed with it (in the stream, or published by its next writer), so
   * they are stored events, read without a round trip.
   */
  known(swarmId: string, since: number): readonly SwarmEvent[] {
    const fromValues = following(this.recent.get(swarmId)?.events ?? [], since);
    // A record's commit message may reach a follower before the value holding its events.
    return fromValues.length > 0 ? fromValues : following(this.watchers.deliveredEvents(swarmId), since);
  }

  /**
   * Whether this process knows the latest value of `swarmId`, or is delivered it as it lands:
   * the swarm is followed here, or its latest value known here is one this process wrote. (Another
   * process writes it next only once it holds its lease: after a takeover a reader here may, until
   * a listing's sync tells of the new value, miss the events of its outbox for the moment they
   * are not in the stream yet.)
   */
  private upToDate(swarmId: string): boolean {
    return this.watchers.has(swarmId) || this.seen.get(swarmId)?.written === true;
  }

  /**
   * The last event seq of `swarmId`'s latest record known here (own writes, the listing): a stream
   * read that ends before it may be missing an outbox not published yet.
   */
  private lastKnownSeq(swarmId: string): number {
    return Math.max(this.seen.lastSeq(swarmId), this.listing.lastSeq(swarmId));
  }

  /**
   * The events after `since` answered from the outbox of the swarm's latest value known here,
   * with a few direct gets instead of a stream read (a consumer); undefined when that cannot be
   * exact. It is when the outbox holds the events up to the record's `lastSeq` (those before it
   * are stored: read with at most {@link FEW_MESSAGES} direct gets) and the event stored last
   * says what follows: none when it is at most `lastSeq`; else the events up to it, stored after
   * the outbox, read with direct gets too (`'newer'` when they are more: the value known here
   * may not be the latest). That says so, since
   * events after `lastSeq` are published only once the outbox is acknowledged, so they follow
   * it in the stream, and a republished copy of the outbox landing after them (once the
   * duplicate window has passed) is ruled out while the value is recent.
   */
  private async fromOutbox(
    r: Broker,
    swarmId: string,
    subject: string,
    since: number,
    limit: number | undefined,
    again = true,
  ): Promise<SwarmEvent[] | 'newer' | undefined> {
    const v = this.recent.get(swarmId);
    if (!v || Date.now() - v.at > r.recentMs) return undefined;
    const { record } = v.value;
    const { events } = v;
    if (events.length === 0 || events.at(-1)!.seq !== record.lastSeq) return undefined;
    const first = events[0]!.seq;
    // Events before the outbox's are stored (an outbox is published before its value is
    // replaced): the messages holding them are read with a few direct gets.
    const gap = since < record.lastSeq ? first - 1 - since : 0;
    // A final record's last seq is its swarm's last event (a swarm that ended writes nothing
    // more): no stream read is needed to know that nothing follows it. Else the last message
    // is the latest commit's (the value is recent): where it is is worth remembering.
    const ended = isFinal(record.status);
    const [stored, before] = await Promise.all([
      // The last message may be the commit of a value of a followed swarm that came without
      // its revision (see `Watchers.pair`): then that value is the recent one, and it answers.
      ended ? record.lastSeq : r.events.lastStored(subject, swarmId, (commit, m) => this.watchers.pair(swarmId, commit, m)),
      gap > 0 ? r.events.readFew(swarmId, subject, since, first - 1, FEW_MESSAGES) : [],
    ]);
    if (again && this.recent.get(swarmId) !== v) return this.fromOutbox(r, swarmId, subject, since, limit, false);
    if (stored === undefined || !before) return stored !== undefined && stored > record.lastSeq ? 'newer' : undefined;
    const after = [...before, ...events.filter((e) => e.seq > since)];
    if (stored > record.lastSeq && (limit === undefined || after.length < limit)) {
      // Events after the record's are stored (an events-only commit's: a streamed text's
      // chunks; or a later value's outbox): the outbox is then stored too, since they are
      // published after it. The messages holding them follow it: a few direct gets too.
      const from = Math.max(since, record.lastSeq);
      const tail = from < stored ? await r.events.readFew(swarmId, subject, from, stored, FEW_MESSAGES) : [];
      if (!tail) return 'newer';
      after.push(...tail);
    }
    return limit === undefined ? after : after.slice(0, limit);
  }
}

/** The events of contiguous `events` after `since`, when they continue from it; else none. */
function following(events: readonly SwarmEvent[], since: number): readonly SwarmEvent[] {
  const first = events[0]?.seq;
  if (first === undefined || since + 1 < first || since >= events.at(-1)!.seq) return [];
  return events.slice(since + 1 - first);
}
