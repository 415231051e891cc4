/**
 * The JetStream store: swarm state shared by runtimes in several processes over NATS.
 * Records live in a KV bucket (one value per swarm: record, lease, outbox; the KV revision
 * compare-and-set is what keeps one writer per swarm), each commit's events and message-list
 * writes in one message of a stream with a subject per swarm (its message id, the swarm and
 * KV revision, makes republishing idempotent; see `batch.ts`). Streams written before record
 * format 3 (a message per event; list rows in a second stream) still read. See the commit
 * protocol in {@link jetstreamStore}.
 *
 * This file only builds the store from its parts, each in a file named for its job:
 * - `names.ts`: the bucket, streams, subjects, keys and message ids (the stored names);
 * - `setup.ts`: creating or opening the streams and the bucket on first use;
 * - `records.ts`: what a KV value holds, and how it reads back as a record or a summary;
 * - `writer.ts`: the compare-and-set write of a swarm's key, one operation per swarm at a time;
 * - `commit.ts`: commits (a record's KV update and its outbox's publish, or events alone);
 * - `batch.ts`: a commit's message (its header, its body); `outbox.ts`: publishing it;
 *   `lists.ts`: reading message lists back;
 * - `leases.ts`: claim, renew, release;
 * - `loading.ts`: `load` and `summary`; `event-reads.ts`: `readEvents` (over `events.ts`,
 *   which reads a stream subject in order);
 * - `seen.ts`: what this process has seen of each key; `listing.ts`: the summaries `list` reads;
 * - `listing-sync.ts`: bringing the listing up to date with every process's writes, on demand;
 * - `watching.ts`: following the swarms read here (their events and values as they land);
 * - `prune.ts`: deleting finished swarms; `outage.ts`: waiting while NATS is unreachable;
 * - `push-outbox.ts`: the A2A push outbox (webhooks and their cursors) in a bucket of its own.
 *
 * @module
 */
import type { NatsConnection } from '@nats-io/transport-node';
import type { SwarmEvent } from '../../../machines/events.js';
import { natsPrefix } from '../../nats/options.js';
import type { Commit, StoreStats, SwarmFilter, SwarmStore, SwarmSummary } from '../types.js';
import { Committer } from './commit.js';
import { EventReads } from './event-reads.js';
import { Leases } from './leases.js';
import { MessageLists } from './lists.js';
import { Listing } from './listing.js';
import { Loader } from './loading.js';
import { Names } from './names.js';
import { Outages, unavailable } from './outage.js';
import { OutboxPublisher } from './outbox.js';
import { Pruner } from './prune.js';
import { RecentValues, Seen } from './seen.js';
import { openBroker, Setup } from './setup.js';
import { Watchers } from './watching.js';
import { ListingSync } from './listing-sync.js';
import { KeyWriter } from './writer.js';
import { jetstreamLedger } from './budgets.js';
import { jetstreamPushOutbox } from './push-outbox.js';

/** Options of {@link jetstreamStore}. */
export interface JetStreamStoreOptions {
  /** The connection (or a promise of it). The store does not close it unless `closeConnection`. */
  connection: NatsConnection | Promise<NatsConnection>;
  /** Namespace of the bucket, streams and subjects (default `xswarm`; see `NatsOptions.prefix`). */
  prefix?: string;
  /** Timeout of each JetStream call, default 5000 ms. */
  timeoutMs?: number;
  /**
   * How long a commit keeps retrying while NATS is unreachable (a server restarting) before it
   * fails with a `SwarmError` code `unavailable`; default 300 000 ms.
   */
  outageMs?: number;
  /** Whether `close()` closes the connection too (for a connection made for this store alone). */
  closeConnection?: boolean;
}

/** What {@link jetstreamStore} returns: commits always answer with a promise, it can be watched, and it reads summaries alone. */
export interface JetStreamStore extends SwarmStore {
  commit(commit: Commit): Promise<void>;
  summary(swarmId: string): Promise<SwarmSummary | undefined>;
  stats(): StoreStats;
  watch(swarmId: string, onChange: (lastSeq?: number) => void): () => void;
  knownEvents(swarmId: string, since: number): readonly SwarmEvent[];
  announcesAfter(swarmId: string, lastSeq: number): boolean;
}

/**
 * Creates a store whose state lives in JetStream, shared by every runtime on the same NATS
 * (and prefix). The bucket and streams are created on first use when missing.
 *
 * Commit protocol: a commit with a record is one KV update, compare-and-set on the revision this
 * store last saw (create for a new swarm), whose value holds the record, the lease and the
 * commit's outbox (its events and message writes); that update is the commit point, and the
 * commit resolves once it is acknowledged. The outbox is then published as one message of the
 * events stream (its id names the swarm and the KV revision), in the background: the swarm's
 * next write awaits its acknowledgement first, so each commit's events are in the stream before
 * the next commit's, while other swarms' commits go on. A crash in between leaves the outbox in
 * the KV value: readers merge it, and `claim` (or the next writer) publishes it again,
 * idempotently. A commit without a record publishes its events as one message and awaits its
 * acknowledgement. `load` reads a swarm's message lists back from its commit messages (and,
 * for a swarm stored before record format 3, from the rows of the messages stream). Readers of a swarm's latest
 * events are answered from the outbox of its latest value seen here (a process following a
 * swarm receives each of its values) with one direct get checking that the stream holds
 * nothing after it (none for a final value: a swarm that ended writes nothing more); other
 * reads go through the stream. A timed-out update is never
 * assumed lost: the key is read again and the write recognised by its id. While NATS is
 * unreachable, commits wait and retry (up to `outageMs`); reads fail (within `timeoutMs`) with a
 * `SwarmError` code `unavailable`.
 *
 * @example
 * import { createRuntime } from 'xswarm';
 * import { connectNats, jetstreamStore } from 'xswarm/nats';
 * const connection = await connectNats({ servers: 'nats://127.0.0.1:4222' });
 * const store = jetstreamStore({ connection });
 * const runtime = createRuntime({ swarms, model, store });
 * // ... later: the store and the connection given to the runtime are closed by their owner
 * await runtime.close();
 * await store.close();
 * await connection.drain();
 */
export function jetstreamStore(options: JetStreamStoreOptions): JetStreamStore {
  const names = new Names(natsPrefix(options));
  const timeoutMs = options.timeoutMs ?? 5000;
  // References point forward, used only once the store is in use: a retry looks at the setup
  // under way, and the followers hand the values they receive to what this process has seen.
  const outages = new Outages(options.outageMs ?? 300_000, () => setup.pending);
  const setup = new Setup(async () => {
    const nc = await options.connection;
    outages.follow(nc);
    return openBroker(nc, names, timeoutMs);
  });
  const watchers = new Watchers(setup, names, {
    delivered: (swarmId, rev, decoded, at) => seen.delivered(swarmId, rev, decoded, at, true),
    // What is delivered on the key's subject may be a deletion the bucket refused: what this
    // process holds of the swarm is let go (read again when needed); the listing drops the swarm
    // only when its sync reads the stored marker.
    deleted: (swarmId) => seen.delete(swarmId),
  });
  const listing = new Listing((swarmId, lastSeq) => watchers.notify(swarmId, lastSeq));
  const recent = new RecentValues();
  const seen = new Seen(names, recent, listing);
  // Core subscriptions lose what is published while the connection is down.
  outages.reconnected = () => watchers.wakeAll();
  const listingSync = new ListingSync(setup, names, seen, listing, watchers, outages, timeoutMs);
  const lists = new MessageLists(names);
  const outbox = new OutboxPublisher(names, timeoutMs);
  const writer = new KeyWriter(names, seen, outbox, outages, timeoutMs);
  const committer = new Committer(setup, writer, seen, outbox, outages);
  const leases = new Leases(setup, writer);
  const loader = new Loader(setup, names, seen, recent, lists);
  const eventReads = new EventReads(setup, names, seen, recent, listing, watchers);
  const pruner = new Pruner(setup, names, listing, listingSync, seen);
  const pushOutbox = jetstreamPushOutbox(setup, names, timeoutMs, () => outages.closing);

  return {
    // A new swarm's first write is a create, refused on a key that holds a value (`commit.ts`).
    refusesExisting: true,
    load: (swarmId) => loader.load(swarmId),
    summary: (swarmId) => loader.summary(swarmId),
    commit: (c) => committer.commit(c),
    readEvents: (swarmId, since, limit) => eventReads.read(swarmId, since, limit),
    async list(filter: SwarmFilter = {}) {
      await setup.ready().catch((e: unknown) => {
        throw unavailable(e);
      });
      await listingSync.sync();
      return listing.list(filter);
    },
    claim: (swarmId, lease, now, takeover) => leases.claim(swarmId, lease, now, takeover),
    renew: (owner, swarmIds, until) => leases.renew(owner, swarmIds, until),
    release: (owner, swarmIds) => leases.release(owner, swarmIds),
    watch: (swarmId, onChange) => watchers.watch(swarmId, onChange),
    knownEvents: (swarmId, since) => eventReads.known(swarmId, since),
    announcesAfter: (swarmId, lastSeq) => watchers.announcesAfter(swarmId, lastSeq),
    connected: () => outages.connected,
    stats: () => ({ ...committer.stats }),
    prune: (olderThan) => pruner.prune(olderThan),
    remove: (swarmIds) => pruner.remove(swarmIds),
    budgets: jetstreamLedger(setup, names, timeoutMs),
    pushOutbox,
    async close() {
      if (setup.closed || outages.closing) return;
      outages.closing = true;
      // Commits already taken are written before the store closes (or fail, NATS being down).
      await writer.settled();
      // So are the push outbox's cursor advances and configs (a restart resumes from them).
      await pushOutbox.settled();
      pushOutbox.stop();
      // A listing's pass under way ends before the connection can be closed under it.
      await listingSync.stop();
      setup.closed = true;
      outages.stop();
      watchers.stop();
      if (options.closeConnection) {
        const nc = await Promise.resolve(options.connection).catch(() => undefined);
        await nc?.close();
      }
    },
  };
}
