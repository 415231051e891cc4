/**
 * Writing a swarm's KV key, what every commit with a record and every lease write goes through:
 * compare-and-set on the revision last seen here, decided again on a fresh read when another
 * process wrote meanwhile, retried through outages (a write that timed out may have landed: it
 * is recognised by its id). The value being replaced has its outbox published first, so no
 * commit's events or rows are lost with it. {@link KeyWriter} also runs one operation per swarm
 * at a time here, in call order, and keeps the ones in flight for `close()` to wait for.
 *
 * @module
 */
import { randomUUID } from 'node:crypto';
import type { Names } from './names.js';
import { isWrongSequence, type Outages } from './outage.js';
import type { OutboxPublisher } from './outbox.js';
import { RECORD_FORMAT, type StoredValue, valueBytes } from './records.js';
import type { Known, Seen } from './seen.js';
import type { Broker } from './setup.js';

/** The ids of this process's writes: one random prefix, then a count (unique without a random draw per write). */
const WRITE_IDS = `${randomUUID()}.`;
let writes = 0;

/** Serializes, tracks and writes the operations on swarms' keys. */
export class KeyWriter {
  private readonly inFlight = new Set<Promise<unknown>>();
  private readonly locks = new Map<string, Promise<unknown>>();

  constructor(
    private readonly names: Names,
    private readonly seen: Seen,
    private readonly outbox: OutboxPublisher,
    private readonly outages: Outages,
    private readonly timeoutMs: number,
  ) {}

  /** One operation on a swarm at a time here (commits, lease writes), in call order. */
  locked<T>(swarmId: string, fn: () => Promise<T>): Promise<T> {
    const run = (this.locks.get(swarmId) ?? Promise.resolve()).then(fn, fn);
    const tail = run.catch(() => undefined);
    this.locks.set(swarmId, tail);
    void tail.then(() => {
      if (this.locks.get(swarmId) === tail) this.locks.delete(swarmId);
    });
    return run;
  }

  /** Tracks an operation so `close()` waits for it. */
  track<T>(p: Promise<T>): Promise<T> {
    this.inFlight.add(p);
    const done = () => this.inFlight.delete(p);
    p.then(done, done);
    return p;
  }

  /** Settles once every operation tracked so far has (written, or failed). */
  settled(): Promise<unknown> {
    return Promise.allSettled([...this.inFlight]);
  }

  /**
   * Writes `next(cur)` over the current value of the key with compare-and-set, retrying on a
   * concurrent write (re-read, `next` decides again) and on transient failures (re-read: a
   * write that timed out may have landed, recognised by its id). `next` returns undefined to
   * write nothing. The current value's outbox is published before it is replaced.
   *
   * `create`: the write makes a new swarm (its record's first revision). With nothing of the key
   * known here, it is written without a read first, as a create (compare-and-set on "no value"):
   * a key that holds a value (or a deletion marker) fails that, and `next` decides again on a
   * fresh read, so an existing swarm is refused as before, one broker round trip sooner.
   */
  async update(r: Broker, swarmId: string, what: string, next: (cur: Known) => Omit<StoredValue, 'w'> | undefined, create = false): Promise<Known | undefined> {
    const w = WRITE_IDS + (writes++).toString(36);
    let fresh = false;
    return this.outages.retry(what, async () => {
      for (;;) {
        const cached = !fresh ? (this.seen.get(swarmId) ?? (create ? absent() : undefined)) : undefined;
        const cur = cached ?? (await this.seen.read(r.kv, swarmId));
        fresh = true;
        if (cur.decoded?.value?.w === w) return cur;
        let value: Omit<StoredValue, 'w'> | undefined;
        try {
          value = next(cur);
        } catch (e) {
          // Refused on what this store remembered: decide again on what is stored.
          if (cached) continue;
          throw e;
        }
        // A write the compare-and-set checks; a refusal is decided on a fresh read.
        if (!value && cached) continue;
        if (!value) return undefined;
        const before = cur.decoded?.value;
        // Every value written is in this format; one over an older value (a row per message in
        // the messages stream) says that the rows there are read too.
        const legacy = before && (before.legacyRows || (before.v < RECORD_FORMAT && (before.lists === undefined || Object.keys(before.lists).length > 0)));
        const { legacyRows: _l, ...rest } = value;
        const stored: StoredValue = { ...rest, v: RECORD_FORMAT, ...(legacy ? { legacyRows: true } : {}), w };
        // Serialized before the wait below, while the replaced value's publish is in flight (a
        // swarm's next step is usually ready before its last commit's publish is acknowledged):
        // the write leaves as soon as that publish is. Serialized and encoded once: the bytes of
        // its outbox are kept for the publish of its commit message.
        const { bytes, body } = valueBytes(stored);
        if (body) this.outbox.keepBody(stored.outbox!, body);
        // This store's own publish of it may be in flight: awaited rather than made again.
        if (before?.outbox && !cur.published) await this.outbox.settled(swarmId);
        if (before?.outbox && !cur.published) {
          await this.outbox.publish(r.ctx, swarmId, before.outbox, cur.rev, before.record.lastSeq);
          cur.published = true;
        }
        const key = this.names.key(swarmId);
        let rev: number;
        try {
          rev = await r.kv.put(key, bytes, { previousSeq: cur.rev, timeout: this.timeoutMs });
        } catch (e) {
          if (isWrongSequence(e)) continue;
          throw e;
        }
        const k: Known = { rev, decoded: { value: stored }, at: Date.now(), published: !stored.outbox, written: true };
        this.seen.remember(swarmId, k);
        fresh = false;
        return k;
      }
    });
  }
}

/** A key assumed to hold nothing (never written): what a new swarm's first write starts from. */
function absent(): Known {
  return { rev: 0, at: 0, published: true };
}
