/**
 * The JetStream store's push outbox (see `../push-outbox.ts`): one key per webhook in a KV bucket
 * of its own (`<prefix>_push`, created on first use), so a server restarting over the same NATS
 * (and prefix) delivers every webhook's backlog.
 *
 * The outbox interface is synchronous (the server reads it between deliveries), and a KV bucket
 * is not: the outbox keeps a copy of the bucket in memory, filled by {@link PushOutbox.ready}
 * (which the server awaits before it resumes deliveries or answers a config method) and then kept
 * up to date by a KV watch (another server's configs, cursors and leases, without a restart), and
 * writes each change through to the bucket in the background, in order per key. Every write is a
 * compare-and-set on the key's revision: a cursor advance racing a write of another server (or a
 * delete) reads the key again and applies itself to what is there (a cursor never moves back, a
 * deleted config is not brought back by an advance).
 *
 * A write that fails because NATS is unreachable is retried with capped backoff until it lands,
 * never dropped; waiting writes of one key are coalesced (a later cursor advance replaces one
 * not yet sent: only the latest matters), so an outage holds a bounded amount per webhook.
 * Writes still under way when the store closes are awaited (one more try each, then given up).
 *
 * The delivery lease of a webhook (`PushOutbox.lease`) is kept in its value (`leaseOwner`,
 * `leaseUntil`), taken and renewed by the same compare-and-set, in order with the key's cursor
 * advances (a released lease is released after the cursor it covers landed).
 *
 * @module
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { KV, KvEntry } from '@nats-io/kv';
import { delay } from '../../util/abort.js';
import { fromSubjectToken, subjectToken } from '../../transport/types.js';
import type { PushOutbox, PushSubscription } from '../push-outbox.js';
import type { Names } from './names.js';
import { isWrongSequence } from './outage.js';
import type { Setup } from './setup.js';
import { sideBucket } from './side-bucket.js';

/** What a key holds: the subscription, when it was first saved (the outbox's order), and its delivery lease. */
interface Stored extends PushSubscription {
  created: number;
  /** The server delivering it (absent: none). */
  leaseOwner?: string;
  /** Until when (ms since the epoch) the lease holds unless renewed. */
  leaseUntil?: number;
}

/** One key as the bucket holds it: its value (undefined: none, or deleted) and its revision (0: never written). */
interface Entry {
  value: Stored | undefined;
  revision: number;
}

/** A change of one key, applied to what it holds: the new value, or `undefined` to leave it. */
type Change = (current: Stored | undefined) => Stored | undefined;

/** The key of one webhook: task and config id, each as a subject token (any text is a valid key so). */
function keyOf(taskId: string, configId: string): string {
  return `${subjectToken(taskId)}.${subjectToken(configId)}`;
}

function byCreated(a: Stored, b: Stored): number {
  return a.created - b.created || a.taskId.localeCompare(b.taskId) || a.configId.localeCompare(b.configId);
}

function copy(s: Stored): PushSubscription {
  const { created: _created, leaseOwner: _owner, leaseUntil: _until, ...subscription } = s;
  return { ...subscription };
}

/** A write waiting for its key's earlier ones; `kind` says which waiting writes a new one replaces. */
interface Job {
  kind: 'save' | 'advance' | 'delete' | 'lease';
  run: () => Promise<void>;
}

/** The waiting writes of one key, and the promise of their being done. */
interface Queue {
  jobs: Job[];
  drained: Promise<void>;
}

/** The longest wait between two tries of a write while NATS is unreachable. */
const MAX_RETRY_MS = 5000;

/** What a key's stored text holds, or undefined when it is not a subscription this code wrote. */
function parse(key: string, text: string): Stored | undefined {
  try {
    const value = JSON.parse(text) as Stored;
    const [task, config] = key.split('.');
    if (value.taskId !== fromSubjectToken(task ?? '') || value.configId !== fromSubjectToken(config ?? '')) return undefined;
    return value;
  } catch {
    return undefined;
  }
}

/** The outbox of a JetStream store opened by `setup`; `closing` tells background writes to stop retrying. */
export function jetstreamPushOutbox(setup: Setup, names: Names, timeoutMs: number, closing: () => boolean): PushOutbox & { settled(): Promise<void>; stop(): void } {
  /** The outbox as this process sees it (what the methods read); a deleted key is absent. */
  const entries = new Map<string, Stored>();
  /** What the bucket holds as last read, written or watched here: the base of the next compare-and-set. */
  const stored = new Map<string, Entry>();
  const queues = new Map<string, Queue>();
  let loading: Promise<void> | undefined;
  let watching = false;
  let stopWatch: (() => void) | undefined;
  let stopped = false;

  const kv = sideBucket(setup, names.pushBucket, timeoutMs);

  const read = async (store: KV, key: string): Promise<Entry> => {
    const e = await store.get(key);
    const entry: Entry = { value: e?.operation === 'PUT' ? parse(key, e.string()) : undefined, revision: e?.revision ?? 0 };
    stored.set(key, entry);
    return entry;
  };

  /** Reads every key once (a key changed here meanwhile keeps what was changed here). */
  const load = async (): Promise<void> => {
    const store = await kv();
    const keys: string[] = [];
    for await (const k of await store.keys()) keys.push(k);
    for (let i = 0; i < keys.length; i += 64) {
      await Promise.all(
        keys.slice(i, i + 64).map(async (key) => {
          if (stored.has(key)) return;
          const { value } = await read(store, key);
          if (value && !entries.has(key)) entries.set(key, value);
        }),
      );
    }
  };

  /** Another server's write (or this one's, seen again): the copy follows it unless a change of this process is on its way. */
  const note = (e: KvEntry): void => {
    const known = stored.get(e.key);
    if (known && e.revision <= known.revision) return;
    const value = e.operation === 'PUT' ? parse(e.key, e.string()) : undefined;
    stored.set(e.key, { value, revision: e.revision });
    // A change queued here applies itself to this value when it is written (compare-and-set).
    if (queues.has(e.key)) return;
    if (value) entries.set(e.key, value);
    else entries.delete(e.key);
  };

  /** Follows the bucket for as long as the store is open; started again should the watch end. */
  const follow = async (): Promise<void> => {
    while (!stopped && !closing()) {
      try {
        const broker = await setup.ready();
        if (broker.nc.isClosed()) return;
        const it = await (await kv()).watch();
        stopWatch = () => it.stop();
        if (stopped) it.stop();
        for await (const e of it) note(e);
      } catch {
        // NATS unreachable while (re)starting the watch: tried again below.
      }
      if (!stopped && !closing()) await delay(500);
    }
  };

  /**
   * Writes `change` of `key` to the bucket, compare-and-set on the revision known here, read again
   * on a conflict; resolves with what was written (undefined: the change left the key as it was).
   * `persistent`: an unreachable NATS is waited for (capped backoff) until the store closes.
   */
  const write = async (key: string, change: Change, persistent: boolean): Promise<Stored | undefined> => {
    await loading?.catch(() => undefined);
    let current = stored.get(key);
    for (let attempt = 0; ; attempt++) {
      try {
        const store = await kv();
        current ??= await read(store, key);
        const next = change(current.value);
        if (next === undefined) return undefined;
        const revision = await store.put(key, JSON.stringify(next), { previousSeq: current.revision, timeout: timeoutMs });
        stored.set(key, { value: next, revision });
        // Nothing more of this process waits for the key: the copy is what the bucket holds.
        if (!queues.get(key)?.jobs.length && entries.has(key)) entries.set(key, next);
        return next;
      } catch (e) {
        // Another server wrote (or deleted) the key: the change applies to what it holds now.
        current = undefined;
        if (isWrongSequence(e)) continue;
        stored.delete(key);
        if (!persistent || closing()) throw e;
        // NATS unreachable for now (a restart): the change waits, in order with the key's next ones.
        await sleep(Math.min(MAX_RETRY_MS, 100 * 2 ** Math.min(attempt, 10)));
      }
    }
  };

  /** Deletes `key` from the bucket, waiting for an unreachable NATS like a persistent write. */
  const remove = async (key: string): Promise<void> => {
    await loading?.catch(() => undefined);
    for (let attempt = 0; ; attempt++) {
      try {
        await (await kv()).delete(key);
        stored.delete(key);
        return;
      } catch (e) {
        if (closing()) throw e;
        await sleep(Math.min(MAX_RETRY_MS, 100 * 2 ** Math.min(attempt, 10)));
      }
    }
  };

  /** Queues `job` after the key's earlier writes; a waiting advance (or save) is replaced by a newer one, and a delete drops both. */
  const enqueue = (key: string, job: Job): void => {
    const queue = queues.get(key);
    if (queue) {
      const last = queue.jobs.at(-1);
      if (last && last.kind === job.kind && (job.kind === 'advance' || job.kind === 'save')) queue.jobs[queue.jobs.length - 1] = job;
      else {
        if (job.kind === 'delete') queue.jobs = queue.jobs.filter((j) => j.kind === 'lease' || j.kind === 'delete');
        queue.jobs.push(job);
      }
      return;
    }
    const created: Queue = { jobs: [job], drained: Promise.resolve() };
    queues.set(key, created);
    created.drained = (async () => {
      // A write given up (the store closing during an outage) is delivered again after a restart, with the same event id.
      for (let next = created.jobs.shift(); next; next = created.jobs.shift()) await next.run().catch(() => undefined);
      queues.delete(key);
    })();
  };

  /** Applies `change` here at once, and queues it for the bucket after the key's earlier writes. */
  const apply = (key: string, kind: 'save' | 'advance', change: Change): void => {
    const next = change(entries.get(key));
    if (next === undefined) return;
    entries.set(key, next);
    enqueue(key, { kind, run: () => write(key, change, true).then(() => undefined) });
  };

  /** Runs a lease change of `key` (one try: a lease is not worth waiting for NATS); resolves with what was written. */
  const leaseWrite = (key: string, change: Change): Promise<Stored | undefined> =>
    new Promise((resolve) => {
      enqueue(key, {
        kind: 'lease',
        run: () =>
          write(key, change, false).then(
            (written) => resolve(written),
            () => resolve(undefined),
          ),
      });
    });

  const sorted = (filter: (s: Stored) => boolean): PushSubscription[] => [...entries.values()].filter(filter).sort(byCreated).map(copy);

  const settled = async (): Promise<void> => {
    while (queues.size > 0) await Promise.all([...queues.values()].map((q) => q.drained));
  };

  return {
    ready: () => {
      loading ??= load().catch((e: unknown) => {
        loading = undefined;
        throw e;
      });
      return loading.then(() => {
        if (watching) return;
        watching = true;
        void follow();
      });
    },
    settled,
    stop() {
      stopped = true;
      stopWatch?.();
    },
    async flush(waitMs) {
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([settled(), new Promise<void>((resolve) => (timer = setTimeout(resolve, waitMs)))]);
      clearTimeout(timer);
      return queues.size;
    },
    save(s) {
      const created = Date.now();
      apply(keyOf(s.taskId, s.configId), 'save', (current) => ({
        ...s,
        cursor: current?.cursor ?? s.cursor,
        done: current ? current.done || s.done : s.done,
        created: current?.created ?? created,
        // A config replaced keeps its delivery lease.
        ...(current?.leaseOwner ? { leaseOwner: current.leaseOwner, leaseUntil: current.leaseUntil } : {}),
      }));
    },
    get(taskId, configId) {
      const s = entries.get(keyOf(taskId, configId));
      return s && copy(s);
    },
    list: (taskId) => sorted((s) => s.taskId === taskId),
    delete(taskId, configId) {
      const key = keyOf(taskId, configId);
      if (!entries.delete(key)) return false;
      // A delete wins over a racing advance: the advance reads the key again and finds nothing.
      enqueue(key, { kind: 'delete', run: () => remove(key) });
      return true;
    },
    advance(taskId, configId, cursor, done) {
      apply(keyOf(taskId, configId), 'advance', (current) => (current && cursor >= current.cursor ? { ...current, cursor, done } : undefined));
    },
    pending: () => sorted((s) => !s.done),
    async lease(taskId, configId, owner, until) {
      const key = keyOf(taskId, configId);
      if (!entries.has(key)) return false;
      const written = await leaseWrite(key, (current) =>
        current && (!current.leaseOwner || current.leaseOwner === owner || (current.leaseUntil ?? 0) < Date.now())
          ? { ...current, leaseOwner: owner, leaseUntil: until }
          : undefined,
      );
      if (!written) return false;
      // Taken over from another server: its cursor (and config) are what the bucket holds.
      const local = entries.get(key);
      if (local) entries.set(key, { ...written, cursor: Math.max(local.cursor, written.cursor), done: local.done || written.done });
      return true;
    },
    release(taskId, configId, owner) {
      const key = keyOf(taskId, configId);
      if (!entries.has(key)) return;
      void leaseWrite(key, (current) => {
        if (current?.leaseOwner !== owner) return undefined;
        const { leaseOwner: _owner, leaseUntil: _until, ...rest } = current;
        return rest;
      });
    },
  };
}
