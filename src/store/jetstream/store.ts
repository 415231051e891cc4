/**
 * The JetStream store: swarm state shared by runtimes in several processes over NATS.
 * Records live in a KV bucket (one value per swarm: record, lease, outbox; the KV revision
 * compare-and-set is what keeps one writer per swarm), events in a stream with a subject per
 * swarm (message ids `${swarmId}:${seq}` make republishing idempotent), message lists as rows
 * in a second stream (a subject per list). See the commit protocol in {@link jetstreamStore}.
 *
 * @module
 */
import { randomUUID } from 'node:crypto';
import { delay } from '../../util/abort.js';
import { jetstream, JetStreamApiCodes, JetStreamApiError, jetstreamManager, StorageType } from '@nats-io/jetstream';
import { type KV, type KvEntry, Kvm } from '@nats-io/kv';
import { headers, nanos, type NatsConnection } from '@nats-io/transport-node';
import type { SwarmEvent } from '../../../machines/events.js';
import { SwarmError } from '../../errors.js';
import { isFinal } from '../result.js';
import { type MessageWrite, nextListLengths } from '../messages.js';
import {
  type Commit,
  type Lease,
  LeaseLostError,
  leftOutBy,
  RevisionConflictError,
  type StoreStats,
  type SwarmFilter,
  type SwarmStore,
  type SwarmSummary,
} from '../types.js';
import { natsPrefix } from '../../nats/options.js';
import { fromSubjectToken, subjectToken } from '../../transport/types.js';
import { EventReader, scanSubject, type StreamContext } from './events.js';
import { applyWrites, type Decoded, decodeValue, type Outbox, RECORD_FORMAT, type StoredValue, toRecord, toSummary } from './records.js';

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
  watch(swarmId: string, onChange: () => void): () => void;
}

/** What this store knows of a swarm's KV key: its revision (0: never written) and value. */
interface Known {
  rev: number;
  /** Undefined when the key holds no value (never written, or deleted). */
  decoded?: Decoded;
  /** When the value was written (for a record that cannot be read). */
  at: number;
  /** Whether the value's outbox is known to be in the streams. */
  published: boolean;
}

/** A swarm's value as last seen here, with the latest events of the swarm it holds. */
interface Recent {
  /** Its KV revision. */
  rev: number;
  /** When the value that wrote the last of `events` was written. */
  at: number;
  value: StoredValue;
  /** The latest events up to the record's `lastSeq`, in order, contiguous (or none known). */
  events: readonly SwarmEvent[];
}

/** An entry of the listing index: the KV revision it reflects and the summary. */
interface Indexed {
  rev: number;
  summary?: SwarmSummary;
  /** The value, not parsed yet, and when it was written (see `setIndexLater`). */
  raw?: Uint8Array;
  at?: number;
}

/**
 * Creates a store whose state lives in JetStream, shared by every runtime on the same NATS
 * (and prefix). The bucket and streams are created on first use when missing.
 *
 * Commit protocol: a commit with a record is one KV update, compare-and-set on the revision this
 * store last saw (create for a new swarm), whose value holds the record, the lease and the
 * commit's outbox (its events and message writes); that update is the commit point. The outbox
 * is then published (events with their message id, rows of message lists) and the commit
 * resolves once every publish is acknowledged, so each commit's events are in the stream before
 * the next commit starts. A crash in between leaves the outbox in the KV value: readers merge
 * it, and `claim` (or the next writer) publishes it again, idempotently. A commit without a
 * record publishes its events and awaits their acknowledgements. Readers of a swarm's latest
 * events are answered from the outbox of its latest value seen here (every process sees every
 * value through the listing's KV watch) with one direct get checking that the stream holds
 * nothing after it; other reads go through the stream. A timed-out update is never
 * assumed lost: the key is read again and the write recognised by its id. While NATS is
 * unreachable, commits wait and retry (up to `outageMs`); reads fail (within `timeoutMs`) with a
 * `SwarmError` code `unavailable`.
 *
 * @example
 * import { createRuntime } from 'xswarm';
 * import { connectNats, jetstreamStore } from 'xswarm/nats';
 * const store = jetstreamStore({ connection: connectNats({ servers: 'nats://127.0.0.1:4222' }) });
 * const runtime = createRuntime({ swarms, model, store });
 */
export function jetstreamStore(options: JetStreamStoreOptions): JetStreamStore {
  const prefix = natsPrefix(options);
  const timeoutMs = options.timeoutMs ?? 5000;
  const outageMs = options.outageMs ?? 300_000;
  const bucket = `${prefix}_swarms`;
  const eventStream = `${prefix}_events`;
  const messageStream = `${prefix}_messages`;
  const eventSubject = (swarmId: string) => `${prefix}.ev.${subjectToken(swarmId)}`;
  const listsSubject = (swarmId: string) => `${prefix}.msg.${subjectToken(swarmId)}`;
  // A list token never empty (the swarm machine's own list is ''): `m` + the id's token.
  const listSubject = (swarmId: string, list: string) => `${listsSubject(swarmId)}.m${subjectToken(list)}`;
  const listOf = (subject: string) => fromSubjectToken(subject.slice(subject.lastIndexOf('.') + 2));

  let closed = false;
  /** Set when close() begins: commits retrying through an outage give up instead of holding it. */
  let closing = false;
  let connected = true;
  const stats: StoreStats = { commits: 0, transactions: 0 };
  /** Full values this store wrote or read, by swarm (what the next write starts from). */
  const known = new Map<string, Known>();
  /** Summaries of every swarm in the bucket, kept by a KV watch (listings). */
  const index = new Map<string, Indexed>();
  /** Swarms whose index entry holds a value not parsed yet, and the timer that parses them. */
  const unparsed = new Set<string>();
  let parseTimer: NodeJS.Timeout | undefined;
  /**
   * The latest value seen here of the swarms written most recently (delivered by the index
   * watch, written or read here), with the events of its outbox and of the outboxes just before
   * it: readers of a swarm's latest events are answered from it.
   */
  const recent = new Map<string, Recent>();
  const listeners = new Map<string, Set<() => void>>();
  const inFlight = new Set<Promise<unknown>>();
  const locks = new Map<string, Promise<unknown>>();
  /** Event subscriptions of watchers, ended by `close()`. */
  const subscriptions = new Set<() => void>();
  let stopWatch: (() => void) | undefined;
  let stopStatus: (() => void) | undefined;
  /** Whether the index holds every swarm of the bucket (its watch delivered the first values). */
  let indexComplete = false;
  let indexReady!: () => void;
  const indexed = new Promise<void>((r) => (indexReady = r)).then(() => void (indexComplete = true));
  /** Waits for the index to be complete (listings); a bounded wait: NATS may be down. */
  const fullIndex = async () => {
    if (indexComplete) return;
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new SwarmError('The JetStream store is unavailable: the listing of swarms is not loaded yet', 'unavailable')), Math.max(4 * timeoutMs, 10_000));
    });
    try {
      await Promise.race([indexed, late]);
    } finally {
      clearTimeout(timer);
    }
  };

  interface Ready {
    nc: NatsConnection;
    kv: KV;
    ctx: StreamContext;
    events: EventReader;
    /**
     * How long after a value is written its outbox's events cannot have been republished as
     * duplicates (a quarter of the events stream's duplicate window: room for clock skew).
     */
    recentMs: number;
  }
  let readyPromise: Promise<Ready> | undefined;
  const ready = (): Promise<Ready> => {
    if (closed) return Promise.reject(new SwarmError('The JetStream store is closed', 'closed'));
    readyPromise ??= setUp().catch((e: unknown) => {
      readyPromise = undefined;
      throw e;
    });
    return readyPromise;
  };

  /** Connects, creates the bucket and streams when missing, starts the index watch. */
  const setUp = async (): Promise<Ready> => {
    const nc = await options.connection;
    watchStatus(nc);
    const js = jetstream(nc, { timeout: timeoutMs });
    const jsm = await jetstreamManager(nc, { timeout: timeoutMs });
    for (const [name, subjects, extra] of [
      [eventStream, [`${prefix}.ev.>`], { duplicate_window: nanos(120_000) }],
      [messageStream, [`${prefix}.msg.>`], {}],
    ] as const) {
      try {
        await jsm.streams.add({ name, subjects: [...subjects], storage: StorageType.File, allow_direct: true, ...extra });
      } catch (e) {
        // Another process created it first (with another config: it is used as it is). Racing
        // creations fail as "name in use" or as "subjects overlap", depending on timing: what
        // counts is that the stream exists now.
        if (!(e instanceof JetStreamApiError) || !(await jsm.streams.info(name).then(() => true, () => false))) throw e;
      }
    }
    const kvm = new Kvm(js);
    let kv: KV;
    try {
      kv = await kvm.create(bucket, { history: 1, storage: StorageType.File, timeout: timeoutMs });
    } catch (e) {
      if (!(e instanceof JetStreamApiError)) throw e;
      // Created by another process meanwhile (the same race as above). Direct gets: see
      // ../shared/notes/nats.md (Kvm.open defaults to allow_direct false).
      kv = await kvm.open(bucket, { allow_direct: true, timeout: timeoutMs }).catch(() => {
        throw e;
      });
    }
    const ctx: StreamContext = { js, jsm, timeoutMs };
    const recentMs = (await jsm.streams.info(eventStream)).config.duplicate_window / 4e6;
    void runIndex(kv);
    return { nc, kv, ctx, events: new EventReader(ctx, eventStream), recentMs };
  };

  /** Tracks whether the connection is up, so retries wait for it instead of timing out. */
  const watchStatus = (nc: NatsConnection) => {
    const it = nc.status();
    stopStatus = () => (it as { stop?: () => void }).stop?.();
    void (async () => {
      for await (const s of it) {
        if (s.type === 'disconnect') connected = false;
        else if (s.type === 'reconnect') connected = true;
      }
    })().catch(() => undefined);
  };

  /**
   * Keeps {@link index} up to date with every process's writes: a KV watch of the bucket (its
   * first values are every swarm's; then each write as it lands). Started again should it end
   * while the store is open (values seen before are skipped by revision).
   */
  const runIndex = async (kv: KV) => {
    while (!closed) {
      try {
        const it = await kv.watch();
        stopWatch = () => it.stop();
        if (closed) it.stop();
        if ((await kv.status()).values === 0) indexReady();
        for await (const e of it) {
          noteEntry(fromSubjectToken(e.key), e);
          if (e.isUpdate) indexReady();
        }
      } catch {
        // NATS unreachable while (re)starting the watch: tried again below.
      }
      if (!closed) await delay(500);
    }
  };

  const noteEntry = (swarmId: string, e: KvEntry) => {
    const k = known.get(swarmId);
    // Another process wrote it: the next write here starts from a fresh read.
    if (k && k.rev < e.revision) known.delete(swarmId);
    const at = e.created.getTime();
    // A copy: the entry's bytes are a view of the connection's read buffer.
    if (e.operation === 'PUT' && !listeners.has(swarmId)) return setIndexLater(swarmId, e.revision, e.value.slice(), at);
    const decoded = e.operation === 'PUT' ? decodeValue(e.string()) : undefined;
    noteValue(swarmId, e.revision, at, decoded?.value);
    setIndex(swarmId, e.revision, decoded, at);
  };

  /**
   * Indexes a value of a swarm nobody follows here without parsing it yet: it is parsed within
   * {@link PARSE_LATER_MS}, or when a listing needs it, unless the swarm writes again before
   * (a running swarm writes several values in that time; only the last one is parsed).
   */
  const setIndexLater = (swarmId: string, rev: number, raw: Uint8Array, at: number) => {
    const before = index.get(swarmId);
    if (before && before.rev >= rev) return;
    index.set(swarmId, { rev, raw, at });
    unparsed.add(swarmId);
    parseTimer ??= setTimeout(parseIndex, PARSE_LATER_MS).unref();
  };

  /** Parses the index entries not parsed yet (all, or one swarm's). */
  const parseIndex = (only?: string) => {
    for (const swarmId of only === undefined ? unparsed : [only]) {
      const entry = index.get(swarmId);
      if (entry?.raw) {
        const decoded = decodeValue(utf8.decode(entry.raw));
        index.set(swarmId, { rev: entry.rev, summary: toSummary(swarmId, decoded, entry.at!) });
      }
    }
    if (only !== undefined) return void unparsed.delete(only);
    unparsed.clear();
    clearTimeout(parseTimer);
    parseTimer = undefined;
  };

  /** Keeps `value` (written at `at`) as the swarm's latest in {@link recent}, its outbox's events after those of the one before when they follow on. */
  const noteValue = (swarmId: string, rev: number, at: number, value: StoredValue | undefined) => {
    const prev = recent.get(swarmId);
    if (prev && prev.rev >= rev) return;
    recent.delete(swarmId);
    if (!value) return;
    const out = value.outbox?.events ?? [];
    let events: readonly SwarmEvent[] = [];
    let written = at;
    if (out.length > 0) {
      const follows = prev !== undefined && prev.events.length > 0 && prev.events.at(-1)!.seq === out[0]!.seq - 1;
      events = follows ? [...prev.events, ...out].slice(-RECENT_EVENTS) : out;
    } else if (prev && prev.events.length > 0 && prev.events.at(-1)!.seq === value.record.lastSeq) {
      // A lease write: the same record, its events written by the value before.
      events = prev.events;
      written = prev.at;
    }
    // Bounded: the swarms written most recently.
    if (recent.size >= 10_000) recent.delete(recent.keys().next().value!);
    recent.set(swarmId, { rev, at: written, value, events });
  };

  const setIndex = (swarmId: string, rev: number, decoded: Decoded | undefined, at: number) => {
    const before = index.get(swarmId);
    if (before && before.rev >= rev) return;
    index.set(swarmId, { rev, ...(decoded ? { summary: toSummary(swarmId, decoded, at) } : {}) });
    for (const f of listeners.get(swarmId) ?? []) f();
  };

  /** Remembers a value this store wrote or read. */
  const remember = (swarmId: string, k: Known) => {
    const before = known.get(swarmId);
    if (before && before.rev > k.rev) return;
    if (before?.rev === k.rev && before.published) k.published = true;
    known.delete(swarmId);
    // Bounded: the swarms written most recently (live ones).
    if (known.size >= 10_000) known.delete(known.keys().next().value!);
    known.set(swarmId, k);
    if (k.rev > 0) {
      noteValue(swarmId, k.rev, k.at, k.decoded?.value);
      setIndex(swarmId, k.rev, k.decoded, k.at);
    }
  };

  /** Reads a swarm's KV key now. */
  const readKey = async (r: Ready, swarmId: string): Promise<Known> => {
    const e = await r.kv.get(subjectToken(swarmId));
    const k: Known = !e
      ? { rev: 0, at: 0, published: true }
      : e.operation === 'PUT'
        ? { rev: e.revision, decoded: decodeValue(e.string()), at: e.created.getTime(), published: false }
        : { rev: e.revision, at: e.created.getTime(), published: true };
    // A missing key too: a new swarm's first write then needs no read (its create() is the check).
    remember(swarmId, k);
    return k;
  };

  /** One operation on a swarm at a time here (commits, lease writes), in call order. */
  const locked = <T>(swarmId: string, fn: () => Promise<T>): Promise<T> => {
    const run = (locks.get(swarmId) ?? Promise.resolve()).then(fn, fn);
    const tail = run.catch(() => undefined);
    locks.set(swarmId, tail);
    void tail.then(() => {
      if (locks.get(swarmId) === tail) locks.delete(swarmId);
    });
    return run;
  };

  /** Tracks an operation so `close()` waits for it. */
  const track = <T>(p: Promise<T>): Promise<T> => {
    inFlight.add(p);
    const done = () => inFlight.delete(p);
    p.then(done, done);
    return p;
  };

  /**
   * Runs `attempt` until it succeeds, waiting out transient failures (connection down, timeouts,
   * JetStream not answering yet after a server restart) up to `outageMs`.
   */
  const retrying = async <T>(what: string, attempt: () => Promise<T>): Promise<T> => {
    const deadline = Date.now() + outageMs;
    for (let i = 0; ; i++) {
      try {
        return await attempt();
      } catch (e) {
        // Closing during an outage: one more try, then the commit fails instead of holding close() for minutes.
        if (!isTransient(e) || (closing && i > 0)) throw e;
        if (Date.now() >= deadline) {
          throw new SwarmError(`${what}: NATS has been unreachable for ${Math.round(outageMs / 1000)} s (${(e as Error).message})`, 'unavailable');
        }
        const r = await readyPromise?.catch(() => undefined);
        while (!connected && !closing && Date.now() < deadline && !r?.nc.isClosed()) await delay(50);
        await delay(Math.min(1000, 25 * 2 ** Math.min(i, 6)));
      }
    }
  };

  /** Publishes an outbox (idempotent: events by message id, message rows by index). */
  const publishOutbox = async (r: Ready, swarmId: string, outbox: Outbox | undefined) => {
    if (!outbox) return;
    const acks: Promise<unknown>[] = publishEvents(r, swarmId, outbox.events);
    const fresh = new Set(outbox.fresh);
    for (const w of outbox.messages) acks.push(publishRows(r, swarmId, w, fresh.has(w.list)));
    await Promise.all(acks);
  };

  const publishEvents = (r: Ready, swarmId: string, events: readonly SwarmEvent[]) => {
    const subject = eventSubject(swarmId);
    return events.map((e) => r.ctx.js.publish(subject, JSON.stringify(e), { msgID: `${swarmId}:${e.seq}`, timeout: timeoutMs }));
  };

  const publishRows = async (r: Ready, swarmId: string, { list, from, items }: MessageWrite, fresh: boolean) => {
    const subject = listSubject(swarmId, list);
    // A rewrite replaces the list: its old rows go first (a list that had none needs no purge).
    if (from === 0 && !fresh) await r.ctx.jsm.streams.purge(messageStream, { filter: subject });
    await Promise.all(
      items.map((m, i) => {
        const h = headers();
        h.set('Xswarm-Index', String(from + i));
        return r.ctx.js.publish(subject, JSON.stringify(m), { headers: h, timeout: timeoutMs });
      }),
    );
  };

  /** Why `commit` may not replace `cur`: the same checks, in the same order, as the SQLite store. */
  const refusal = (c: Commit, cur: Known): Error | undefined => {
    const r = c.record!;
    const stored = cur.decoded ? (cur.decoded.value?.record.revision ?? 0) : 0;
    const holder = cur.decoded?.value?.lease?.owner;
    if (r.revision === 1) return cur.decoded ? new RevisionConflictError(r.swarmId, 0, stored) : undefined;
    if (cur.decoded && c.lease && holder && holder !== c.lease.owner) return new LeaseLostError(r.swarmId, holder);
    if (!cur.decoded?.value || stored !== r.revision - 1) return new RevisionConflictError(r.swarmId, r.revision - 1, stored);
    return undefined;
  };

  /**
   * Writes `next(cur)` over the current value of the key with compare-and-set, retrying on a
   * concurrent write (re-read, `next` decides again) and on transient failures (re-read: a
   * write that timed out may have landed, recognised by its id). `next` returns undefined to
   * write nothing. The current value's outbox is published before it is replaced.
   */
  const update = async (r: Ready, swarmId: string, what: string, next: (cur: Known) => Omit<StoredValue, 'w'> | undefined): Promise<Known | undefined> => {
    const w = randomUUID();
    let fresh = false;
    return retrying(what, async () => {
      for (;;) {
        const cached = !fresh ? known.get(swarmId) : undefined;
        const cur = cached ?? (await readKey(r, swarmId));
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
        if (cur.decoded?.value?.outbox && !cur.published) {
          await publishOutbox(r, swarmId, cur.decoded.value.outbox);
          cur.published = true;
        }
        const stored: StoredValue = { ...value, w };
        const key = subjectToken(swarmId);
        let rev: number;
        try {
          rev = await r.kv.put(key, JSON.stringify(stored), { previousSeq: cur.rev, timeout: timeoutMs });
        } catch (e) {
          if (isWrongSequence(e)) continue;
          throw e;
        }
        const k: Known = { rev, decoded: { value: stored }, at: Date.now(), published: !stored.outbox };
        remember(swarmId, k);
        fresh = false;
        return k;
      }
    });
  };

  const commitRecord = async (r: Ready, c: Commit) => {
    const record = c.record!;
    const written = await update(r, c.swarmId, `Commit of swarm "${c.swarmId}"`, (cur) => {
      const refused = refusal(c, cur);
      if (refused) throw refused;
      const { lease: _l, problem: _p, ...rest } = record;
      const held = cur.decoded?.value?.lease;
      // As in the SQLite store: the writer's lease is extended, never shortened.
      const lease = c.lease ? { ...c.lease, until: Math.max(c.lease.until, held?.owner === c.lease.owner ? held.until : 0) } : held;
      const stored = record.revision === 1 ? undefined : cur.decoded?.value?.lists;
      // Lists with no stored rows: the value's lengths name every list that has rows (its outbox
      // is published before it is replaced), and a key never written (revision 0) has none. A
      // deleted key (a pruned swarm, id used again) may have rows its prune did not purge.
      const none = record.revision === 1 ? (cur.rev === 0 ? {} : undefined) : (stored ?? {});
      const writes = c.messages ?? [];
      const once = (list: string) => writes.filter((m) => m.list === list).length === 1;
      const fresh = none ? writes.filter((m) => m.from === 0 && none[m.list] === undefined && once(m.list)).map((m) => m.list) : [];
      const outbox =
        c.events.length > 0 || (c.messages?.length ?? 0) > 0
          ? { events: c.events, messages: c.messages ?? [], ...(fresh.length > 0 ? { fresh } : {}) }
          : undefined;
      const lists: { lengths?: Record<string, number>; bad?: string } = c.messages?.length ? nextListLengths(stored, c.messages) : { lengths: stored };
      // The writer is wrong about what is stored: nothing of the step is written.
      if (lists.bad) throw new Error(`Swarm "${c.swarmId}": ${lists.bad}`);
      return {
        v: RECORD_FORMAT,
        record: rest,
        ...(lease ? { lease } : {}),
        ...(outbox ? { outbox } : {}),
        ...(lists.lengths && Object.keys(lists.lengths).length > 0 ? { lists: lists.lengths } : {}),
      };
    });
    const outbox = written?.decoded?.value?.outbox;
    if (!written || !outbox) return;
    let retry = false;
    await retrying(`Commit of swarm "${c.swarmId}"`, async () => {
      // A retry after the value was replaced: its next writer published this outbox first.
      if (retry && (await readKey(r, c.swarmId)).rev !== written.rev) return;
      retry = true;
      await publishOutbox(r, c.swarmId, outbox);
    });
    written.published = true;
    // A re-read meanwhile remembered the same revision as another object.
    const now = known.get(c.swarmId);
    if (now?.rev === written.rev) now.published = true;
  };

  const commitEvents = async (r: Ready, c: Commit) => {
    await retrying(`Commit of swarm "${c.swarmId}"`, async () => {
      // The record's outbox first, so the stream keeps the events in order.
      const cur = known.get(c.swarmId);
      if (cur && !cur.published && cur.decoded?.value?.outbox) {
        await publishOutbox(r, c.swarmId, cur.decoded.value.outbox);
        cur.published = true;
      }
      await Promise.all(publishEvents(r, c.swarmId, c.events));
    });
  };

  /**
   * Reads a swarm's message lists as the stream holds them (rows by index, the last of an index
   * winning), then applies `pending` (the current value's outbox: rows perhaps not published
   * yet). Returns a function giving the lists, which throws naming a missing or unreadable row.
   */
  const readLists = async (r: Ready, swarmId: string, pending: readonly MessageWrite[]): Promise<() => Map<string, unknown[]>> => {
    const lists = new Map<string, unknown[]>();
    await scanSubject(r.ctx, messageStream, `${listsSubject(swarmId)}.>`, 1, (m) => {
      const list = listOf(m.subject);
      const idx = Number(m.headers?.get('Xswarm-Index'));
      if (!Number.isInteger(idx) || idx < 0) return true;
      let rows = lists.get(list);
      if (!rows) lists.set(list, (rows = []));
      try {
        rows[idx] = JSON.parse(m.string());
      } catch (e) {
        rows[idx] = new Unreadable(`message ${idx} of list "${list}" is not JSON (${(e as Error).message})`);
      }
      return true;
    });
    applyWrites(lists, pending);
    return () => {
      for (const [list, rows] of lists) {
        for (let i = 0; i < rows.length; i++) {
          if (!(i in rows)) throw new Error(`message ${i} of list "${list}" is missing`);
          const row = rows[i];
          if (row instanceof Unreadable) throw new Error(row.detail);
        }
      }
      return lists;
    };
  };

  /**
   * The last event seq of `swarmId`'s latest record known here (own writes, the index): a stream
   * read that ends before it may be missing an outbox not published yet.
   */
  const lastKnownSeq = (swarmId: string): number => {
    const k = known.get(swarmId);
    if (unparsed.has(swarmId)) parseIndex(swarmId);
    return Math.max(k?.decoded?.value?.record.lastSeq ?? 0, index.get(swarmId)?.summary?.lastSeq ?? 0);
  };

  /**
   * The events after `since` answered from the outbox of the swarm's latest value known here,
   * with a few direct gets instead of a stream read (a consumer); undefined when that cannot be
   * exact. It is when the outbox holds the events up to the record's `lastSeq` (those before it,
   * at most {@link FEW_EVENTS}, are stored and read one by one) and the stream holds none after
   * `lastSeq`: the event stored last is at most `lastSeq` (`'newer'` when it is after it: the
   * value known here is not the latest). That says so, since
   * events after `lastSeq` are published only once the outbox is acknowledged, so they follow
   * it in the stream, and a republished copy of the outbox landing after them (once the
   * duplicate window has passed) is ruled out while the value is recent.
   */
  const fromOutbox = async (r: Ready, swarmId: string, subject: string, since: number, limit: number | undefined): Promise<SwarmEvent[] | 'newer' | undefined> => {
    const v = recent.get(swarmId);
    if (!v || Date.now() - v.at > r.recentMs) return undefined;
    const { record } = v.value;
    const { events } = v;
    if (events.length === 0 || events.at(-1)!.seq !== record.lastSeq) return undefined;
    const first = events[0]!.seq;
    // Events before the outbox's are stored (an outbox is published before its value is
    // replaced): a few of them are read with direct gets.
    const gap = since < record.lastSeq ? first - 1 - since : 0;
    if (gap > FEW_EVENTS) return undefined;
    const [stored, before] = await Promise.all([r.events.lastStored(subject), gap > 0 ? r.events.readFew(swarmId, subject, since, first - 1, 2 * gap) : []]);
    if (stored !== undefined && stored > record.lastSeq) return 'newer';
    if (stored === undefined || !before) return undefined;
    const after = [...before, ...events.filter((e) => e.seq > since)];
    return limit === undefined ? after : after.slice(0, limit);
  };

  const store: JetStreamStore = {
    async load(swarmId) {
      try {
        const r = await ready();
        for (let attempt = 0; ; attempt++) {
          const cur = await readKey(r, swarmId);
          if (!cur.decoded) return undefined;
          if (!cur.decoded.value) return toRecord(swarmId, cur.decoded, cur.at);
          const lists = await readLists(r, swarmId, cur.decoded.value.outbox?.messages ?? []);
          // Written meanwhile: the rows read may be the next commit's; read both again.
          const again = await r.kv.get(subjectToken(swarmId));
          if ((again?.revision ?? 0) !== cur.rev && attempt < 5) continue;
          const record = toRecord(swarmId, cur.decoded, cur.at, lists);
          // The holder, so that a command can be sent to it.
          const lease = cur.decoded.value.lease;
          return lease ? { ...record, lease: { ...lease } } : record;
        }
      } catch (e) {
        throw unavailable(e);
      }
    },

    async summary(swarmId) {
      // A final swarm's result does not change: the latest value seen here answers.
      const seen = recent.get(swarmId);
      if (seen && isFinal(seen.value.record.status)) return toSummary(swarmId, { value: seen.value }, seen.at);
      try {
        const cur = await readKey(await ready(), swarmId);
        return cur.decoded ? toSummary(swarmId, cur.decoded, cur.at) : undefined;
      } catch (e) {
        throw unavailable(e);
      }
    },

    commit(c) {
      const p = (async () => {
        // While NATS is unreachable at the start too, the commit waits for it.
        const r = await retrying(`Commit of swarm "${c.swarmId}"`, ready);
        await locked(c.swarmId, () => (c.record ? commitRecord(r, c) : commitEvents(r, c)));
        stats.commits++;
        stats.transactions++;
      })();
      return track(p);
    },

    async readEvents(swarmId, since, limit) {
      if (limit !== undefined && limit <= 0) return [];
      try {
        const r = await ready();
        const subject = eventSubject(swarmId);
        // A swarm followed here whose latest value is not known yet: one KV get makes it known.
        if (listeners.has(swarmId) && !recent.has(swarmId)) await readKey(r, swarmId);
        let latest = await fromOutbox(r, swarmId, subject, since, limit);
        if (latest === 'newer') {
          // The index watch may not have delivered the latest value yet: one KV get reads it
          // (the same value: the events after it are an events-only commit's, in the stream).
          const seen = recent.get(swarmId)?.rev;
          await readKey(r, swarmId);
          latest = recent.get(swarmId)?.rev !== seen ? await fromOutbox(r, swarmId, subject, since, limit) : undefined;
        }
        if (latest && latest !== 'newer') return latest;
        const events = await r.events.read(swarmId, subject, since, limit);
        const full = () => limit !== undefined && events.length >= limit;
        let last = events.at(-1)?.seq ?? since;
        // Before the index is complete, the record is read to know.
        if (full() || (indexComplete && lastKnownSeq(swarmId) <= last)) return events;
        // The stream is behind the record: a commit's outbox is not (all) published yet.
        const cur = await readKey(r, swarmId);
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
        if ((value.outbox?.events[0]?.seq ?? Infinity) > last + 1) append(await r.events.read(swarmId, subject, last, limit === undefined ? undefined : limit - events.length));
        append(value.outbox?.events ?? []);
        return events;
      } catch (e) {
        throw unavailable(e);
      }
    },

    async list(filter: SwarmFilter = {}) {
      await ready().catch((e: unknown) => {
        throw unavailable(e);
      });
      await fullIndex();
      parseIndex();
      const out: SwarmSummary[] = [];
      for (const { summary } of index.values()) {
        if (!summary) continue;
        if (filter.definitionId && summary.definitionId !== filter.definitionId) continue;
        if (filter.status && filter.status.length > 0 && !filter.status.includes(summary.status)) continue;
        if (leftOutBy(filter.notHeldBy, summary.lease)) continue;
        out.push(summary);
      }
      out.sort((a, b) => b.updatedAt - a.updatedAt);
      return out.slice(0, filter.limit ?? Infinity).map((s) => ({ ...s, ...(s.lease ? { lease: { ...s.lease } } : {}) }));
    },

    claim(swarmId, lease, now, takeover) {
      return track(
        (async () => {
          const r = await ready().catch((e: unknown) => {
            throw unavailable(e);
          });
          let granted = false;
          await locked(swarmId, () =>
            update(r, swarmId, `Claim of swarm "${swarmId}"`, (cur) => {
              granted = false;
              const value = cur.decoded?.value;
              if (!value || isFinal(value.record.status)) return undefined;
              const holder = value.lease;
              if (holder && holder.owner !== lease.owner && holder.owner !== takeover && holder.until > now) return undefined;
              granted = true;
              // Without the outbox: update() publishes it (unless known published) before replacing the value.
              const { w: _w, outbox: _o, ...rest } = value;
              return { ...rest, lease: { ...lease } };
            }),
          ).catch((e: unknown) => {
            throw unavailable(e);
          });
          return granted;
        })(),
      );
    },

    async renew(owner, swarmIds, until) {
      await leaseWrites(owner, swarmIds, 'Renewal', (lease) => ({ ...lease, until }));
    },

    async release(owner, swarmIds) {
      await leaseWrites(owner, swarmIds, 'Release', () => undefined);
    },

    watch(swarmId, onChange) {
      let set = listeners.get(swarmId);
      if (!set) listeners.set(swarmId, (set = new Set()));
      const call = () => onChange();
      set.add(call);
      let stopped = false;
      let unsubscribe: (() => void) | undefined;
      void ready().then(
        (r) => {
          if (stopped) return;
          const sub = r.nc.subscribe(eventSubject(swarmId), { callback: () => onChange() });
          unsubscribe = () => {
            subscriptions.delete(unsubscribe!);
            sub.unsubscribe();
          };
          subscriptions.add(unsubscribe);
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
        listeners.get(swarmId)?.delete(call);
        if (listeners.get(swarmId)?.size === 0) listeners.delete(swarmId);
      };
    },

    connected() {
      return connected;
    },

    stats() {
      return { ...stats };
    },

    async prune(olderThan) {
      const r = await ready().catch((e: unknown) => {
        throw unavailable(e);
      });
      await fullIndex();
      parseIndex();
      let n = 0;
      for (const [swarmId, { rev, summary }] of [...index]) {
        if (!summary || !isFinal(summary.status) || summary.problem || summary.updatedAt >= olderThan) continue;
        try {
          await r.kv.delete(subjectToken(swarmId), { previousSeq: rev });
        } catch (e) {
          // Written meanwhile: not pruned this time.
          if (isWrongSequence(e)) continue;
          throw unavailable(e);
        }
        n++;
        known.delete(swarmId);
        index.delete(swarmId);
        recent.delete(swarmId);
        r.events.forget(swarmId);
        await r.ctx.jsm.streams.purge(eventStream, { filter: eventSubject(swarmId) });
        await r.ctx.jsm.streams.purge(messageStream, { filter: `${listsSubject(swarmId)}.>` });
      }
      return n;
    },

    async close() {
      if (closed || closing) return;
      closing = true;
      // Commits already taken are written before the store closes (or fail, NATS being down).
      await Promise.allSettled([...inFlight]);
      closed = true;
      stopWatch?.();
      stopStatus?.();
      clearTimeout(parseTimer);
      for (const unsubscribe of [...subscriptions]) unsubscribe();
      listeners.clear();
      indexReady();
      if (options.closeConnection) {
        const nc = await Promise.resolve(options.connection).catch(() => undefined);
        await nc?.close();
      }
    },
  };

  /** Rewrites the lease of `owner`'s swarms among `swarmIds` (renew, release). */
  const leaseWrites = async (owner: string, swarmIds: readonly string[], what: string, next: (lease: Lease) => Lease | undefined) => {
    const r = await ready().catch((e: unknown) => {
      throw unavailable(e);
    });
    await Promise.all(
      swarmIds.map((swarmId) =>
        track(
          locked(swarmId, () =>
            update(r, swarmId, `${what} of swarm "${swarmId}"`, (cur) => {
              const value = cur.decoded?.value;
              if (!value?.lease || value.lease.owner !== owner) return undefined;
              // Without the outbox: update() publishes it (unless known published) before replacing the value.
              const { lease: _l, w: _w, outbox: _o, ...rest } = value;
              const lease = next(value.lease);
              return lease ? { ...rest, lease } : rest;
            }),
          ),
        ),
      ),
    ).catch((e: unknown) => {
      throw unavailable(e);
    });
  };

  return store;
}

/** How long a value delivered by the index watch may wait before it is parsed. */
const PARSE_LATER_MS = 1000;

const utf8 = new TextDecoder();

/** How many of a swarm's latest events {@link Recent} keeps. */
const RECENT_EVENTS = 64;

/** How many stored events before a known outbox a read fetches with direct gets (more: a stream read). */
const FEW_EVENTS = 8;

/** Whether a failure may pass once NATS is reachable again (so the operation is retried). */
function isTransient(e: unknown): boolean {
  if (!(e instanceof Error)) return false;
  if (e.name === 'ClosedConnectionError') return false;
  if (e instanceof JetStreamApiError) return e.status === 503;
  return /Timeout|Request|NoResponders|Connection|JetStreamNotEnabled/.test(e.name) || /disconnect|no responders|timeout/i.test(e.message);
}

/** A compare-and-set that lost: the key's revision is not the expected one. */
function isWrongSequence(e: unknown): boolean {
  return e instanceof JetStreamApiError && (e.code === JetStreamApiCodes.StreamWrongLastSequence || e.code === JetStreamApiCodes.StreamWrongLastSequenceUnknown);
}

/** A transient failure of a read, as the error callers see: NATS is unreachable right now. */
function unavailable(e: unknown): unknown {
  if (!isTransient(e)) return e;
  return new SwarmError(`The JetStream store is unavailable: ${(e as Error).message}`, 'unavailable');
}

/** A stored message row that is not JSON (an error once the list is used). */
class Unreadable {
  constructor(readonly detail: string) {}
}
