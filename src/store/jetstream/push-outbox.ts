/**
 * The JetStream store's push outbox (see `../push-outbox.ts`): one key per webhook in a KV bucket
 * of its own (`<prefix>_push`, created on first use), so a server restarting over the same NATS
 * (and prefix) delivers every webhook's backlog.
 *
 * The outbox interface is synchronous (the server reads it between deliveries), and a KV bucket
 * is not: the outbox keeps a copy of the bucket in memory, filled once by {@link PushOutbox.ready}
 * (which the server awaits before it resumes deliveries or answers a config method), and writes
 * each change through to the bucket in the background, in order per key. Every write is a
 * compare-and-set on the key's revision: a cursor advance racing a write of another server (or a
 * delete) reads the key again and applies itself to what is there (a cursor never moves back, a
 * deleted config is not brought back by an advance). Writes still under way when the store
 * closes are awaited. The copy is what this process loaded at start plus its own writes: a
 * config registered through another server is that server's to deliver.
 *
 * @module
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { KV } from '@nats-io/kv';
import { fromSubjectToken, subjectToken } from '../../transport/types.js';
import type { PushOutbox, PushSubscription } from '../push-outbox.js';
import type { Names } from './names.js';
import { isWrongSequence } from './outage.js';
import type { Setup } from './setup.js';
import { sideBucket } from './side-bucket.js';

/** What a key holds: the subscription, and when it was first saved (the outbox's order). */
interface Stored extends PushSubscription {
  created: number;
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
  const { created: _created, ...subscription } = s;
  return { ...subscription };
}

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
export function jetstreamPushOutbox(setup: Setup, names: Names, timeoutMs: number, closing: () => boolean): PushOutbox & { settled(): Promise<void> } {
  /** The outbox as this process sees it (what the methods read); a deleted key is absent. */
  const entries = new Map<string, Stored>();
  /** What the bucket holds as last read or written here: the base of the next compare-and-set. */
  const stored = new Map<string, Entry>();
  const queues = new Map<string, Promise<void>>();
  let loading: Promise<void> | undefined;

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

  /** Writes `change` of `key` to the bucket, compare-and-set on the revision known here, read again on a conflict. */
  const write = async (key: string, change: Change): Promise<void> => {
    await loading?.catch(() => undefined);
    let current = stored.get(key);
    for (let attempt = 0; ; attempt++) {
      try {
        const store = await kv();
        current ??= await read(store, key);
        const next = change(current.value);
        if (next === undefined) return;
        const revision = await store.put(key, JSON.stringify(next), { previousSeq: current.revision, timeout: timeoutMs });
        stored.set(key, { value: next, revision });
        return;
      } catch (e) {
        // Another server wrote (or deleted) the key: the change applies to what it holds now.
        current = undefined;
        if (isWrongSequence(e)) continue;
        stored.delete(key);
        if (closing() || attempt >= 20) throw e;
        // NATS unreachable for now (a restart): the change waits, in order with the key's next ones.
        await sleep(Math.min(2000, 100 * 2 ** attempt));
      }
    }
  };

  const enqueue = (key: string, job: () => Promise<void>): void => {
    // A write that failed for good is lost (an advance: delivered again after a restart, with the same event id).
    const queued = (queues.get(key) ?? Promise.resolve()).then(job).catch(() => undefined);
    queues.set(key, queued);
    void queued.then(() => {
      if (queues.get(key) === queued) queues.delete(key);
    });
  };

  /** Applies `change` here at once, and queues it for the bucket after the key's earlier writes. */
  const apply = (key: string, change: Change): void => {
    const next = change(entries.get(key));
    if (next === undefined) return;
    entries.set(key, next);
    enqueue(key, () => write(key, change));
  };

  const sorted = (filter: (s: Stored) => boolean): PushSubscription[] => [...entries.values()].filter(filter).sort(byCreated).map(copy);

  return {
    ready: () =>
      (loading ??= load().catch((e: unknown) => {
        loading = undefined;
        throw e;
      })),
    settled: async () => {
      while (queues.size > 0) await Promise.all([...queues.values()]);
    },
    save(s) {
      const created = Date.now();
      apply(keyOf(s.taskId, s.configId), (current) => ({
        ...s,
        cursor: current?.cursor ?? s.cursor,
        done: current ? current.done || s.done : s.done,
        created: current?.created ?? created,
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
      enqueue(key, async () => {
        await loading?.catch(() => undefined);
        // A delete wins over a racing advance: the advance reads the key again and finds nothing.
        await (await kv()).delete(key);
        stored.delete(key);
      });
      return true;
    },
    advance(taskId, configId, cursor, done) {
      apply(keyOf(taskId, configId), (current) => (current && cursor >= current.cursor ? { ...current, cursor, done } : undefined));
    },
    pending: () => sorted((s) => !s.done),
  };
}
