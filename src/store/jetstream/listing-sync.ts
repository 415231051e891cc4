/**
 * Bringing the listing up to date before it is read (`list`, adoption scans, `prune`): the keys
 * of the bucket written since the last sync are read once each, in one pass. Nothing is
 * delivered to a process between listings, so no process pays for every other process's every
 * write: a KV watch of the whole bucket (what kept the listing before) cost each process a
 * message per write of every swarm, a third of a worker's CPU in the distributed W1 rows.
 *
 * The pass reads the bucket's stream from the first revision after the last one read. The
 * bucket keeps one value per key (history 1), so the stream holds only each key's latest value
 * (a deletion marker for a deleted key) and the pass reads each key written since at most once,
 * however often it was written: a listing costs the number of swarms that changed since the one
 * before, not the number of writes.
 *
 * @module
 */
import type { KV, KvEntry } from '@nats-io/kv';
import { setImmediate as turn } from 'node:timers/promises';
import type { Listing } from './listing.js';
import type { Names } from './names.js';
import { type Outages, unavailable } from './outage.js';
import { decodeValue } from './records.js';
import type { Seen } from './seen.js';
import type { Setup } from './setup.js';
import type { Watchers } from './watching.js';

/** Values parsed between two turns of the event loop (a sync after a busy minute reads thousands). */
const VALUES_PER_TURN = 200;

/** Keeps the listing up to date with every process's writes, on demand (see the module's comment). */
export class ListingSync {
  /** The last revision of the bucket read by a sync (0: none yet). */
  private upTo = 0;
  /** Whether a sync has read the whole bucket once: the listing holds every swarm. */
  private complete = false;
  private running: Promise<void> | undefined;
  /** The sync that starts once the running one ends, shared by every caller meanwhile. */
  private queued: Promise<void> | undefined;
  private stopPass: (() => void) | undefined;
  /** Set by {@link stop}: no pass reads any more. */
  private stopped = false;

  constructor(
    private readonly setup: Setup,
    private readonly names: Names,
    private readonly seen: Seen,
    private readonly listing: Listing,
    private readonly watchers: Watchers,
    private readonly outages: Outages,
    private readonly timeoutMs: number,
  ) {}

  /**
   * Brings the listing up to date with every write acknowledged before the call. Calls made
   * while a sync runs share the next one (a sync that started before them may miss their
   * writes). While NATS is unreachable, a listing synced before answers from what it holds (a
   * read failing or waiting would stop adoption scans for nothing); one never synced fails
   * with a `SwarmError` code `unavailable`.
   */
  sync(): Promise<void> {
    if (this.queued) return this.queued;
    const start = (): Promise<void> => {
      this.queued = undefined;
      const run = this.pass().finally(() => {
        if (this.running === run) this.running = undefined;
      });
      this.running = run;
      return run;
    };
    if (!this.running) return start();
    const next = this.running.then(start, start);
    this.queued = next;
    return next;
  }

  /**
   * Ends a sync under way and waits for it (the store is closing, its connection still open): a
   * watch it was opening is stopped too, so nothing of it outlives the store (its consumer's
   * heartbeat timer would keep the process alive).
   */
  async stop(): Promise<void> {
    this.stopped = true;
    this.stopPass?.();
    await this.running?.catch(() => undefined);
  }

  private async pass(): Promise<void> {
    if (this.stopped || (this.complete && !this.outages.connected)) return;
    try {
      const r = await this.setup.ready();
      const status = await r.kv.status();
      const last = status.streamInfo.state.last_seq;
      if (last > this.upTo && status.values > 0) await this.read(r.kv, last);
      else this.upTo = Math.max(this.upTo, last);
      this.complete = true;
    } catch (e) {
      if (!this.complete) throw unavailable(e);
    }
  }

  /**
   * Reads the keys written after {@link upTo}: every value the bucket held when the pass began
   * (`last`, its last revision then, was taken before), then stops.
   */
  private async read(kv: KV, last: number): Promise<void> {
    // From the start: each key's latest value. After a sync: what was written since.
    const it = await kv.watch(this.upTo > 0 ? { resumeFromRevision: this.upTo + 1 } : {});
    if (this.stopped) return it.stop();
    this.stopPass = () => it.stop();
    // The watch marks the last of the values pending when it began (`isUpdate`; a busy bucket's
    // new writes keep coming after it). Should it never come, the pass ends at the timeout and
    // the next one starts from the same revision.
    const timer = setTimeout(() => it.stop(), Math.max(this.timeoutMs, 1000));
    let top = this.upTo;
    let ended = false;
    try {
      let n = 0;
      for await (const e of it) {
        this.note(this.names.swarmOf(e.key), e);
        top = Math.max(top, e.revision);
        if (e.isUpdate) {
          ended = true;
          break;
        }
        if (++n % VALUES_PER_TURN === 0) await turn();
      }
    } finally {
      clearTimeout(timer);
      this.stopPass = undefined;
      it.stop();
    }
    if (!ended) throw new Error(`the bucket's values after revision ${this.upTo} were not all read in time`);
    this.upTo = Math.max(top, last);
  }

  private note(swarmId: string, e: KvEntry): void {
    // This store's own write (or read) of this value: the listing holds it already.
    if (this.listing.revision(swarmId) >= e.revision) return;
    const decoded = e.operation === 'PUT' ? decodeValue(e.string()) : undefined;
    // Deleted (pruned, removed): a swarm made again under its id starts its events anew.
    if (!decoded) this.watchers.forgetDelivered(swarmId);
    this.seen.delivered(swarmId, e.revision, decoded, e.created.getTime(), this.watchers.has(swarmId));
  }
}
