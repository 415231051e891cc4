/**
 * Following swarms written by other processes: {@link Watchers} wakes the readers of a swarm at
 * each of its events and keeps its latest value, so that readers of a swarm driven elsewhere
 * need not poll. Only the swarms followed here are delivered here (two core subscriptions per
 * followed swarm: its events' subject and its key's); the listing of every swarm is brought up
 * to date on demand instead (`./listing-sync.ts`).
 *
 * A core subscription is delivered every publish on its subject, stored or not (a
 * compare-and-set the bucket refused, a publish the stream did not take): what is delivered is
 * taken as committed only when something shows it stored. A record commit's message does (its
 * value was stored before it was published); a value, once that message names its revision; an
 * events-only commit, once the swarm's next commit continues it.
 *
 * @module
 */
import type { Msg, NatsConnection } from '@nats-io/transport-node';
import type { SwarmEvent } from '../../../machines/events.js';
import { eventProblem } from '../stored-event.js';
import { type CommitHeader, readCommitBody } from './batch.js';
import { heldBy } from './events.js';
import type { Names } from './names.js';
import { type Decoded, decodeValue } from './records.js';
import { continuing } from './seen.js';
import type { Setup } from './setup.js';

/** How many of a followed swarm's latest delivered events are kept. */
const KEPT_EVENTS = 256;

/**
 * How long the events of an events-only commit delivered to a follower wait for the swarm's next
 * commit to show they are stored (see {@link Watchers.hold}) before its readers are told of them
 * anyway, to read them from the stream. A streamed text's next window follows within
 * `CHUNK_WINDOW_MS` (25 ms), and the step that ends the stream at once.
 */
const CONFIRM_MS = 100;

/** The header a deletion marker of a KV key carries (`DEL`, or `PURGE`); a value has none. */
const KV_OPERATION = 'KV-Operation';

/** Where the values of followed swarms go: what this process has seen (see `Seen`). */
export interface ValueSink {
  /** A value of `swarmId` at KV revision `rev`, written at `at`, written by any process. */
  delivered(swarmId: string, rev: number, decoded: Decoded, at: number): void;
  /** A deletion of `swarmId`'s key was published (pruned, removed; not known to be stored: the bucket may have refused it). */
  deleted(swarmId: string): void;
}

/** A value published on a followed swarm's key's subject, kept until the commit message that tells its revision. */
interface Arrived {
  decoded: Decoded;
  /** The value as published: its commit message's body is checked against it (see {@link Watchers.pair}). */
  text: string;
  at: number;
}

/** The events of an events-only commit delivered to a follower, not known to be stored yet. */
interface Unconfirmed {
  first: number;
  last: number;
  events: readonly SwarmEvent[];
  /** Tells the readers of them when nothing confirms them in time. */
  timer: ReturnType<typeof setTimeout>;
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
  /** Per followed swarm, the events of its latest events-only commit message, until a later commit shows them stored (see {@link Watchers.hold}). */
  private readonly unconfirmed = new Map<string, Unconfirmed>();
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
    for (const u of this.unconfirmed.values()) clearTimeout(u.timer);
    this.unconfirmed.clear();
    this.delivered.clear();
    this.announced.clear();
    this.arrived.clear();
  }

  /** Subscribes to the subjects of a swarm followed here: its events' and its key's. */
  private subscribe(swarmId: string, f: Followed, r: { nc: NatsConnection }): void {
    // A message of the swarm's subject: the header of a commit message names its last event.
    const events = r.nc.subscribe(this.names.eventSubject(swarmId), {
      callback: (_, msg) => {
        const held = heldBy((name) => msg.headers?.get(name));
        // Its body decoded once, whichever of the steps below reads it.
        let text: string | undefined;
        const m = { string: () => (text ??= msg.string()) };
        if (held?.last !== undefined) this.announce(swarmId, held.last);
        const commit = held?.commit;
        const settled = commit ? this.settle(swarmId, commit.first) : undefined;
        // An events-only commit's events wait for the next commit to show them stored.
        if (commit?.rev === 0 && this.hold(swarmId, commit, m)) {
          if (settled !== undefined) this.notify(swarmId, settled);
          return;
        }
        // Paired with the value that holds its events: those, parsed with the value, are its body.
        const paired = commit ? this.pair(swarmId, commit, m) : undefined;
        this.deliver(swarmId, commit, paired ?? m);
        this.notify(swarmId, held?.last === undefined ? undefined : Math.max(held.last, settled ?? 0));
      },
    });
    // A value published on its key's subject: kept until its commit message tells its revision.
    const values = r.nc.subscribe(this.names.keySubject(swarmId), {
      callback: (_, m) => {
        if (this.arrive(swarmId, m)) this.notify(swarmId);
      },
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
    clearTimeout(this.unconfirmed.get(swarmId)?.timer);
    this.unconfirmed.delete(swarmId);
  }

  /**
   * Holds the events of an events-only commit message of `swarmId` (`header`, its body: `m`)
   * until the swarm's next commit shows them stored. Its core subscription is delivered a
   * publish whether or not the stream stores it, and such a commit has no KV value holding its
   * events. But a swarm's writer writes its next commit only once this one's publish is
   * acknowledged (a failed one ends the writer's chain: it writes its failure over the events it
   * knows stored), and a writer taking the swarm over knows only stored events: a commit whose
   * events continue these, from whoever writes it, shows them stored ({@link Watchers.settle}).
   * Meanwhile the followers are not woken: a reader woken now would read them from the stream,
   * a round trip or two, which the next commit, following within a chunk window, makes needless.
   * Should none come within {@link CONFIRM_MS}, the followers are told of them, to read them.
   * Returns false when there is nothing to hold (no new events, a body that does not read as
   * them): the message then goes the usual way.
   */
  private hold(swarmId: string, header: CommitHeader, m: { string(): string }): boolean {
    const { first, last } = header;
    if (first > last || !this.isNew(swarmId, last)) return false;
    const events = eventsOf(m, swarmId, first, last);
    if (!events) return false;
    clearTimeout(this.unconfirmed.get(swarmId)?.timer);
    const timer = setTimeout(() => {
      // After the messages already received: on a busy process the next commit may be waiting
      // in the socket (timers run before I/O in a turn of the event loop).
      setImmediate(() => {
        if (this.unconfirmed.get(swarmId)?.timer !== timer) return;
        this.unconfirmed.delete(swarmId);
        this.notify(swarmId, last);
      });
    }, CONFIRM_MS);
    // A process is not kept alive to tell a reader it may already have let go.
    timer.unref();
    this.unconfirmed.set(swarmId, { first, last, events, timer });
    return true;
  }

  /**
   * A commit of `swarmId` whose events start at `first` was delivered (a commit message, or a
   * value on its key, stored or not: see {@link Watchers.hold}): it settles the events held
   * before it. When it continues them, they are stored: they are kept as committed. When it
   * does not, they are let go (a commit written over them, whose events were never stored; or
   * one after a message missed here), for the readers to read from the stream. Returns their
   * last seq, to tell the readers; undefined when nothing was held, or the commit is an older
   * one (a copy published again), which says nothing of them.
   */
  private settle(swarmId: string, first: number): number | undefined {
    const u = this.unconfirmed.get(swarmId);
    if (!u || first < u.first) return undefined;
    clearTimeout(u.timer);
    this.unconfirmed.delete(swarmId);
    // Read as the swarm's when they were held.
    if (first === u.last + 1) this.add(swarmId, u.last, u.events);
    return u.last;
  }

  /** Notes that a commit message of `swarmId` ending at event `last` was delivered (see {@link Watchers.announcesAfter}). */
  private announce(swarmId: string, last: number): void {
    const a = this.announced.get(swarmId);
    // A copy of an older message published again may come after newer ones.
    if (a?.epoch !== this.epoch || a.last < last) this.announced.set(swarmId, { epoch: this.epoch, last });
  }

  /**
   * A value published on `swarmId`'s key's subject (a core message: its revision is not in it).
   * It is not known to be stored: the subscription is also delivered a compare-and-set the
   * bucket refused (a writer that lost its lease, a stale revision), which nothing else
   * follows. It is kept until the commit message of its outbox, published only once the value
   * is stored and naming its revision, comes (see {@link Watchers.pair}); that message wakes the
   * followers. Returns true when no such message will come (a deleted key, a value without an
   * outbox: a lease write): the followers are woken now, to look.
   */
  private arrive(swarmId: string, m: Msg): boolean {
    const op = m.headers?.get(KV_OPERATION);
    if (op === 'DEL' || op === 'PURGE') {
      this.arrived.delete(swarmId);
      // A swarm made again under its id starts its events anew.
      this.forgetDelivered(swarmId);
      this.values.deleted(swarmId);
      return true;
    }
    const text = m.string();
    const decoded = decodeValue(text);
    const outbox = decoded.value?.outbox;
    if (outbox) {
      this.arrived.set(swarmId, { decoded, text, at: Date.now() });
      // Stored or refused, a value continuing an events-only commit shows that commit stored.
      const first = outbox.events[0]?.seq;
      const settled = first === undefined ? undefined : this.settle(swarmId, first);
      if (settled !== undefined) this.notify(swarmId, settled);
      return false;
    }
    this.arrived.delete(swarmId);
    return true;
  }

  /**
   * Hands the value kept by {@link Watchers.arrive} on with its revision, when the record
   * commit message `header` (its body: `message`) is its outbox's. Such a message is published
   * once its value is stored and before the swarm's next value is written, so on one
   * subscription a value comes before its commit message. The value kept is the message's when
   * its record ends at the message's last event, its outbox starts at its first, and its text
   * holds the message's body as its outbox: a refused value written for the same events by
   * another writer, or a republished message of an older value, does not match and hands
   * nothing on. (A reader that finds the message stored before it is delivered here pairs it
   * the same way.) Returns the events of the value's outbox when it was paired: the message's.
   */
  pair(swarmId: string, header: CommitHeader, message: { string(): string }): readonly SwarmEvent[] | undefined {
    const v = this.arrived.get(swarmId);
    const value = v?.decoded.value;
    if (!v || !value || header.rev === 0) return undefined;
    const first = value.outbox?.events[0]?.seq ?? header.first;
    if (value.record.lastSeq !== header.last || first !== header.first) return undefined;
    // A body is `{"events":[…]}` or `{"events":[…],"messages":[…]}`, the value's outbox
    // `{"events":[…],"messages":[…]}`: the body but its closing brace starts the outbox.
    const body = message.string();
    if (!v.text.includes(`"outbox":${body.slice(0, -1)}`)) return undefined;
    this.arrived.delete(swarmId);
    this.values.delivered(swarmId, header.rev, v.decoded, v.at);
    return value.outbox?.events ?? [];
  }

  /**
   * Keeps the events of a record's commit message delivered to a follower of `swarmId` (they
   * are known here even when the value holding them was not paired with it): a record's
   * outbox is committed with its KV value before it is published, so they are stored events.
   * An events-only commit's (revision 0) are held instead, until a later commit shows them
   * stored ({@link Watchers.hold}). Events that do not read as the swarm's, in order, are not kept.
   * `m`: the message, or, when it was paired with its value, that value's outbox events (its
   * body, parsed with the value already).
   */
  private deliver(swarmId: string, header: CommitHeader | undefined, m: { string(): string } | readonly SwarmEvent[]): void {
    if (!header || header.rev === 0 || header.first > header.last || !this.isNew(swarmId, header.last)) return;
    if (!('string' in m)) return this.keep(swarmId, header.first, header.last, m);
    const events = eventsOf(m, swarmId, header.first, header.last);
    if (events) this.add(swarmId, header.last, events);
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
    if (readAs(events, swarmId, first, last)) this.add(swarmId, last, events);
  }

  /** {@link Watchers.keep} for `events` (ending at `last`) already read as the swarm's. */
  private add(swarmId: string, last: number, events: readonly SwarmEvent[]): void {
    if (this.isNew(swarmId, last)) this.delivered.set(swarmId, continuing(this.delivered.get(swarmId) ?? [], events, KEPT_EVENTS));
  }
}

/** Whether `events` read as `swarmId`'s, seqs `first` to `last` in order. */
function readAs(events: readonly SwarmEvent[], swarmId: string, first: number, last: number): boolean {
  if (events.length !== last - first + 1) return false;
  for (let i = 0; i < events.length; i++) if (eventProblem(events[i], swarmId, first + i)) return false;
  return true;
}

/** The events of commit message `m`, when they read as `swarmId`'s seqs `first` to `last`; else undefined. */
function eventsOf(m: { string(): string }, swarmId: string, first: number, last: number): readonly SwarmEvent[] | undefined {
  const body = readCommitBody(m.string());
  const events = typeof body === 'string' ? undefined : body.events;
  return events && readAs(events, swarmId, first, last) ? events : undefined;
}
