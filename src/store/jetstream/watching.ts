/**
 * Following swarms written by other processes: {@link Watchers} wakes the readers of a swarm at
 * each of its events and keeps its latest value, so that readers of a swarm driven elsewhere
 * need not poll. Only the swarms followed here are delivered here (two core subscriptions per
 * followed swarm: its events' subject and its key's); the listing of every swarm is brought up
 * to date on demand instead (`./listing-sync.ts`).
 *
 * @module
 */
import type { Msg, NatsConnection } from '@nats-io/transport-node';
import type { SwarmEvent } from '../../../machines/events.js';
import { eventProblem } from '../stored-event.js';
import { type CommitHeader, readCommitBody } from './batch.js';
import { heldBy } from './events.js';
import type { Names } from './names.js';
import { isFinal } from '../result.js';
import { type Decoded, decodeValue } from './records.js';
import { continuing } from './seen.js';
import type { Setup } from './setup.js';

/** How many of a followed swarm's latest delivered events are kept. */
const KEPT_EVENTS = 256;

/** The header a deletion marker of a KV key carries (`DEL`, or `PURGE`); a value has none. */
const KV_OPERATION = 'KV-Operation';

/** Where the values of followed swarms go: what this process has seen (see `Seen`). */
export interface ValueSink {
  /** A value of `swarmId` at KV revision `rev`, written at `at`, written by any process. */
  delivered(swarmId: string, rev: number, decoded: Decoded, at: number): void;
  /** `swarmId`'s key was deleted (pruned, removed). */
  deleted(swarmId: string): void;
}

/** A value of a followed swarm's key, received before the commit message that tells its revision. */
export interface Arrived {
  decoded: Decoded;
  at: number;
}

/** A swarm followed here: its readers, and the subscriptions they share. */
interface Followed {
  readonly listeners: Set<(lastSeq?: number) => void>;
  /** Resolves once its subscriptions are in place on the server (never, should NATS be down). */
  readonly placed: Promise<void>;
  readonly place: () => void;
  /** Whether {@link Followed.placed} has resolved. */
  isPlaced: boolean;
  /** Ends its subscriptions (set once they are made). */
  unsubscribe?: () => void;
}

/** The readers following swarms here (`SwarmStore.watch`), by swarm. */
export class Watchers {
  private readonly followed = new Map<string, Followed>();
  /** Per followed swarm, the latest events its record commits' messages delivered (see {@link Watchers.deliver}). */
  private readonly delivered = new Map<string, readonly SwarmEvent[]>();
  /** Per followed swarm, the latest value of its key received and not paired with its commit message yet. */
  private readonly arrived = new Map<string, Arrived>();
  /**
   * Per followed swarm, the highest last event seq a commit message delivered on its events'
   * subscription named, with the {@link Watchers.epoch} it came in (see {@link Watchers.announcesAfter}).
   */
  private readonly announced = new Map<string, { epoch: number; last: number }>();
  /** Counts the connection's returns: what was published while it was down reached no subscription. */
  private epoch = 0;

  constructor(
    private readonly setup: Setup,
    private readonly names: Names,
    private readonly values: ValueSink,
  ) {}

  /** Whether someone here follows `swarmId` (its values are then parsed as they come). */
  has(swarmId: string): boolean {
    return this.followed.has(swarmId);
  }

  /** Wakes the readers of `swarmId` (a new value of its key, whose record's last event is `lastSeq` when known). */
  notify(swarmId: string, lastSeq?: number): void {
    for (const f of this.followed.get(swarmId)?.listeners ?? []) f(lastSeq);
  }

  /**
   * Calls `onChange` whenever `swarmId` may have changed, with the seq of the last event the
   * change holds when known (see `SwarmStore.watch`); returns the function that stops the calls.
   * The readers of one swarm share its subscriptions. With the store open, they are sent before
   * this returns: a message the caller sends next (asking another process to start the swarm)
   * reaches the server after them, so none of the swarm's values is missed here.
   */
  watch(swarmId: string, onChange: (lastSeq?: number) => void): () => void {
    let f = this.followed.get(swarmId);
    if (!f) {
      let place!: () => void;
      const placed = new Promise<void>((resolve) => (place = resolve));
      const made: Followed = { listeners: new Set(), placed, place, isPlaced: false };
      this.followed.set(swarmId, made);
      const opened = this.setup.opened;
      if (opened) this.subscribe(swarmId, made, opened);
      else
        void this.setup.ready().then(
          (r) => this.followed.get(swarmId) === made && this.subscribe(swarmId, made, r),
          () => undefined,
        );
      f = made;
    }
    const call = (lastSeq?: number) => onChange(lastSeq);
    f.listeners.add(call);
    let stopped = false;
    // Events published while the subscriptions were on their way to the server reached nobody:
    // once they are in place, one wake-up makes the reader look again. (A reader joining
    // subscriptions in place is woken by what comes next; its first read sees what came before.)
    if (!f.isPlaced) void f.placed.then(() => stopped || onChange());
    return () => {
      stopped = true;
      f.listeners.delete(call);
      if (f.listeners.size > 0 || this.followed.get(swarmId) !== f) return;
      f.unsubscribe?.();
      this.followed.delete(swarmId);
      this.forgetDelivered(swarmId);
      this.arrived.delete(swarmId);
    };
  }

  /**
   * Wakes every reader (the connection is back): what was published while it was down reached
   * none of the subscriptions, and each reader looks at the store again at once.
   */
  wakeAll(): void {
    this.epoch++;
    for (const swarmId of this.followed.keys()) this.notify(swarmId);
  }

  /**
   * Whether every commit of `swarmId` whose events come after `lastSeq` reaches its followers
   * here (see `SwarmStore.announcesAfter`). It does once a commit message ending at or before
   * `lastSeq` was delivered on the swarm's subscription since the connection last came back: that
   * message was published after the subscription was in place, and so is everything the stream
   * holds after it (a swarm's commit messages are stored in seq order).
   */
  announcesAfter(swarmId: string, lastSeq: number): boolean {
    const a = this.announced.get(swarmId);
    return a !== undefined && a.epoch === this.epoch && a.last <= lastSeq && this.followed.has(swarmId);
  }

  /** Ends every subscription and forgets every reader (the store is closed). */
  stop(): void {
    for (const f of this.followed.values()) f.unsubscribe?.();
    this.followed.clear();
    this.delivered.clear();
    this.announced.clear();
    this.arrived.clear();
  }

  /** Subscribes to the subjects of a swarm followed here: its events' and its key's. */
  private subscribe(swarmId: string, f: Followed, r: { nc: NatsConnection }): void {
    // A message of the swarm's subject: the header of a commit message names its last event.
    const events = r.nc.subscribe(this.names.eventSubject(swarmId), {
      callback: (_, m) => {
        const held = heldBy((name) => m.headers?.get(name));
        if (held?.last !== undefined) this.announce(swarmId, held.last);
        const paired = held?.commit !== undefined && this.pair(swarmId, held.commit);
        this.deliver(swarmId, held?.commit, m);
        // The value it pairs woke the followers with the same seq as it landed.
        if (!paired) this.notify(swarmId, held?.last);
      },
    });
    // A new value of its key: its events known at once, the value kept until its commit message
    // tells its revision.
    const values = r.nc.subscribe(this.names.keySubject(swarmId), {
      callback: (_, m) => this.arrive(swarmId, m),
    });
    f.unsubscribe = () => {
      events.unsubscribe();
      values.unsubscribe();
    };
    r.nc.flush().then(
      () => {
        f.isPlaced = true;
        f.place();
      },
      () => undefined,
    );
  }

  /**
   * The latest events of `swarmId` its commit messages delivered here, contiguous (see
   * {@link Watchers.deliver}); empty when none.
   */
  deliveredEvents(swarmId: string): readonly SwarmEvent[] {
    return this.delivered.get(swarmId) ?? [];
  }

  /** Forgets the events delivered for `swarmId` (its key was deleted, or nobody follows it any more). */
  forgetDelivered(swarmId: string): void {
    this.delivered.delete(swarmId);
    this.announced.delete(swarmId);
  }

  /** Notes that a commit message of `swarmId` ending at event `last` was delivered (see {@link Watchers.announcesAfter}). */
  private announce(swarmId: string, last: number): void {
    const a = this.announced.get(swarmId);
    // A copy of an older message published again may come after newer ones.
    if (a?.epoch !== this.epoch || a.last < last) this.announced.set(swarmId, { epoch: this.epoch, last });
  }

  /**
   * A new value of `swarmId`'s key (a core message on its subject: its revision is not in it).
   * It is stored, so the events of its outbox are committed: they are kept with those delivered
   * (see {@link Watchers.keep}) and the followers are woken with its last event's seq at once,
   * a broker round trip before the commit message of that outbox comes. The value itself is kept
   * until that message, which names its revision, pairs it (see {@link Watchers.pair}); a
   * finished swarm's summary is answered from it meanwhile ({@link Watchers.arrivedFinal}). A
   * value without an outbox (a lease write) and a deleted key wake the followers without a seq.
   */
  private arrive(swarmId: string, m: Msg): void {
    const op = m.headers?.get(KV_OPERATION);
    if (op === 'DEL' || op === 'PURGE') {
      this.arrived.delete(swarmId);
      // A swarm made again under its id starts its events anew.
      this.forgetDelivered(swarmId);
      this.values.deleted(swarmId);
      return this.notify(swarmId);
    }
    const decoded = decodeValue(m.string());
    const value = decoded.value;
    if (!value?.outbox) {
      this.arrived.delete(swarmId);
      return this.notify(swarmId);
    }
    this.arrived.set(swarmId, { decoded, at: Date.now() });
    const { events } = value.outbox;
    if (events.length > 0) this.keep(swarmId, events[0]!.seq, events.at(-1)!.seq, events);
    this.notify(swarmId, value.record.lastSeq);
  }

  /**
   * The latest value of a followed `swarmId` received and not paired yet, when its record is
   * final: a finished swarm's summary, answered before its commit message names its revision.
   */
  arrivedFinal(swarmId: string): Arrived | undefined {
    const v = this.arrived.get(swarmId);
    return v?.decoded.value && isFinal(v.decoded.value.record.status) ? v : undefined;
  }

  /**
   * Hands the value kept by {@link Watchers.arrive} on with its revision, when the record
   * commit message `header` is its outbox's. A record's outbox is published once its value is
   * stored and before the swarm's next value is written, so on one subscription a value comes
   * before its commit message, and that message before the next value: the value kept is the
   * message's when its record ends at the message's last event and its outbox starts at its
   * first. A republished message of an older value does not match and hands nothing on. (A
   * reader that finds the message stored before it is delivered here pairs it the same way.)
   * Returns whether it paired one.
   */
  pair(swarmId: string, header: CommitHeader): boolean {
    const v = this.arrived.get(swarmId);
    const value = v?.decoded.value;
    if (!v || !value || header.rev === 0) return false;
    const first = value.outbox?.events[0]?.seq ?? header.first;
    if (value.record.lastSeq !== header.last || first !== header.first) return false;
    this.arrived.delete(swarmId);
    this.values.delivered(swarmId, header.rev, v.decoded, v.at);
    return true;
  }

  /**
   * Keeps the events of a record's commit message delivered to a follower of `swarmId` (they
   * are known here even when the value holding them was not paired with it): a record's
   * outbox is committed with its KV value before it is published, so they are stored events.
   * An events-only commit's (revision 0) are not kept: acknowledged only after delivery, they
   * are read from the stream. Events that do not read as the swarm's, in order, are not kept.
   * A message whose events were kept already (from its value, which comes first) is not parsed.
   */
  private deliver(swarmId: string, header: CommitHeader | undefined, m: { string(): string }): void {
    if (!header || header.rev === 0 || header.first > header.last || !this.isNew(swarmId, header.last)) return;
    const body = readCommitBody(m.string());
    if (typeof body !== 'string' && body.events) this.keep(swarmId, header.first, header.last, body.events);
  }

  /** Whether events of `swarmId` up to `last` would be new here: it is followed, and they are not kept already. */
  private isNew(swarmId: string, last: number): boolean {
    return this.followed.has(swarmId) && last > (this.delivered.get(swarmId)?.at(-1)?.seq ?? 0);
  }

  /**
   * Keeps `events` (seqs `first` to `last`, committed) of `swarmId` with those kept before, after
   * them when they follow on, else instead of them.
   */
  private keep(swarmId: string, first: number, last: number, events: readonly SwarmEvent[]): void {
    if (events.length !== last - first + 1 || !this.isNew(swarmId, last)) return;
    for (let i = 0; i < events.length; i++) if (eventProblem(events[i], swarmId, first + i)) return;
    this.delivered.set(swarmId, continuing(this.delivered.get(swarmId) ?? [], events, KEPT_EVENTS));
  }
}
