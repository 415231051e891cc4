/**
 * Watching other processes' writes to the JetStream store. {@link BucketWatch} follows every
 * write to the bucket (a KV watch: first every swarm's value, then each write as it lands) and
 * hands each value to what this process has seen and to the listing; {@link Watchers} wakes the
 * readers of a swarm at each of its events (a subscription to its subject) and each new value
 * of its key, so that readers of a swarm driven elsewhere need not poll.
 *
 * @module
 */
import type { KV, KvEntry } from '@nats-io/kv';
import type { NatsConnection } from '@nats-io/transport-node';
import { delay } from '../../util/abort.js';
import type { SwarmEvent } from '../../../machines/events.js';
import { eventProblem } from '../stored-event.js';
import { type CommitHeader, readCommitBody } from './batch.js';
import { heldBy } from './events.js';
import type { Listing } from './listing.js';
import type { Names } from './names.js';
import { decodeValue } from './records.js';
import { continuing, type RecentValues, type Seen } from './seen.js';
import type { Setup } from './setup.js';

/** How many of a followed swarm's latest delivered events are kept. */
const KEPT_EVENTS = 256;

/** The readers following swarms here (`SwarmStore.watch`), by swarm. */
export class Watchers {
  private readonly listeners = new Map<string, Set<(lastSeq?: number) => void>>();
  /** Per followed swarm, the latest events its record commits' messages delivered (see {@link Watchers.deliver}). */
  private readonly delivered = new Map<string, readonly SwarmEvent[]>();
  /** Event subscriptions of watchers, ended by `close()`. */
  private readonly subscriptions = new Set<() => void>();

  constructor(
    private readonly setup: Setup,
    private readonly names: Names,
  ) {}

  /** Whether someone here follows `swarmId` (its values are then parsed as they come). */
  has(swarmId: string): boolean {
    return this.listeners.has(swarmId);
  }

  /** Wakes the readers of `swarmId` (a new value of its key, whose record's last event is `lastSeq` when known). */
  notify(swarmId: string, lastSeq?: number): void {
    for (const f of this.listeners.get(swarmId) ?? []) f(lastSeq);
  }

  /**
   * Calls `onChange` whenever `swarmId` may have changed, with the seq of the last event the
   * change holds when known (see `SwarmStore.watch`); returns the function that stops the calls.
   */
  watch(swarmId: string, onChange: (lastSeq?: number) => void): () => void {
    let set = this.listeners.get(swarmId);
    if (!set) this.listeners.set(swarmId, (set = new Set()));
    const call = (lastSeq?: number) => onChange(lastSeq);
    set.add(call);
    let stopped = false;
    let unsubscribe: (() => void) | undefined;
    void this.setup.ready().then(
      (r) => {
        if (stopped) return;
        // A message of the swarm's subject: the header of a commit message names its last event.
        const sub = r.nc.subscribe(this.names.eventSubject(swarmId), {
          callback: (_, m) => {
            const held = heldBy((name) => m.headers?.get(name));
            this.deliver(swarmId, held?.commit, m);
            onChange(held?.last);
          },
        });
        unsubscribe = () => {
          this.subscriptions.delete(unsubscribe!);
          sub.unsubscribe();
        };
        this.subscriptions.add(unsubscribe);
        // Events published while the subscription was on its way to the server reached nobody:
        // once it is in place, one wake-up makes the reader look again.
        r.nc.flush().then(
          () => stopped || onChange(),
          () => undefined,
        );
      },
      () => undefined,
    );
    return () => {
      stopped = true;
      unsubscribe?.();
      this.listeners.get(swarmId)?.delete(call);
      if (this.listeners.get(swarmId)?.size === 0) {
        this.listeners.delete(swarmId);
        this.delivered.delete(swarmId);
      }
    };
  }

  /** Ends every subscription and forgets every reader (the store is closed). */
  stop(): void {
    for (const unsubscribe of [...this.subscriptions]) unsubscribe();
    this.listeners.clear();
    this.delivered.clear();
  }

  /**
   * The latest events of `swarmId` its commit messages delivered here, contiguous (see
   * {@link Watchers.deliver}); empty when none.
   */
  deliveredEvents(swarmId: string): readonly SwarmEvent[] {
    return this.delivered.get(swarmId) ?? [];
  }

  /** Forgets the events delivered for `swarmId` (its key was deleted). */
  forgetDelivered(swarmId: string): void {
    this.delivered.delete(swarmId);
  }

  /**
   * Keeps the events of a record's commit message delivered to a follower of `swarmId` (it can
   * reach a follower before the bucket's watch delivers the value holding them): a record's
   * outbox is committed with its KV value before it is published, so they are stored events.
   * An events-only commit's (revision 0) are not kept: acknowledged only after delivery, they
   * are read from the stream. Events that do not read as the swarm's, in order, are not kept.
   */
  private deliver(swarmId: string, header: CommitHeader | undefined, m: { string(): string }): void {
    if (!header || header.rev === 0 || header.first > header.last || !this.listeners.has(swarmId)) return;
    const before = this.delivered.get(swarmId) ?? [];
    if (header.last <= (before.at(-1)?.seq ?? 0)) return;
    const body = readCommitBody(m.string());
    const events = typeof body === 'string' ? undefined : body.events;
    if (!events || events.length !== header.last - header.first + 1) return;
    for (let i = 0; i < events.length; i++) if (eventProblem(events[i], swarmId, header.first + i)) return;
    this.delivered.set(swarmId, continuing(before, events, KEPT_EVENTS));
  }
}

/**
 * Keeps what this process has seen and the listing up to date with every process's writes: a
 * KV watch of the bucket (its first values are every swarm's; then each write as it lands).
 * Started again should it end while the store is open (values seen before are skipped by
 * revision).
 */
export class BucketWatch {
  private stopped = false;
  private stopWatch: (() => void) | undefined;

  constructor(
    private readonly names: Names,
    private readonly seen: Seen,
    private readonly recent: RecentValues,
    private readonly listing: Listing,
    private readonly watchers: Watchers,
  ) {}

  /** Starts watching the bucket (once the store is set up) for as long as `nc` is open. */
  start(kv: KV, nc: Pick<NatsConnection, 'isClosed'>): void {
    void this.run(kv, nc);
  }

  /** Stops watching (the store is closed). */
  stop(): void {
    this.stopped = true;
    this.stopWatch?.();
  }

  private async run(kv: KV, nc: Pick<NatsConnection, 'isClosed'>): Promise<void> {
    // A closed connection never comes back: watching on would only retry (and keep the process
    // alive) for a store its owner closed the connection of without closing the store.
    while (!this.stopped && !nc.isClosed()) {
      try {
        const it = await kv.watch();
        this.stopWatch = () => it.stop();
        if (this.stopped) it.stop();
        if ((await kv.status()).values === 0) this.listing.loaded();
        for await (const e of it) {
          this.note(this.names.swarmOf(e.key), e);
          if (e.isUpdate) this.listing.loaded();
        }
      } catch {
        // NATS unreachable while (re)starting the watch: tried again below.
      }
      if (!this.stopped && !nc.isClosed()) await delay(500);
    }
  }

  private note(swarmId: string, e: KvEntry): void {
    // Another process wrote it: the next write here starts from a fresh read.
    this.seen.outdated(swarmId, e.revision);
    // This store's own write (or read) of this value, delivered back: the listing and the recent
    // values hold it already, and would ignore it: not copied nor parsed again for nothing.
    const later = e.operation === 'PUT' && !this.watchers.has(swarmId);
    if (this.listing.revision(swarmId) >= e.revision && (later || (this.recent.get(swarmId)?.rev ?? 0) >= e.revision)) return;
    const at = e.created.getTime();
    // A copy: the entry's bytes are a view of the connection's read buffer.
    if (later) return this.listing.setLater(swarmId, e.revision, e.value.slice(), at);
    const decoded = e.operation === 'PUT' ? decodeValue(e.string()) : undefined;
    // Deleted (pruned, removed): a swarm made again under its id starts its events anew.
    if (!decoded) this.watchers.forgetDelivered(swarmId);
    this.recent.note(swarmId, e.revision, at, decoded?.value);
    this.listing.set(swarmId, e.revision, decoded, at);
  }
}
