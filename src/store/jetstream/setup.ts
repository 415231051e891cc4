/**
 * Opening the JetStream store on its connection: the events and message lists streams and the
 * KV bucket are created on first use when missing, or used as they are when another process
 * created them (first, or racing this one). {@link Setup} opens them once for every caller, and
 * again on the next call after an attempt failed (NATS down at start).
 *
 * @module
 */
import { jetstream, JetStreamApiError, jetstreamManager, StorageType } from '@nats-io/jetstream';
import { type KV, Kvm } from '@nats-io/kv';
import { nanos, type NatsConnection } from '@nats-io/transport-node';
import { SwarmError } from '../../errors.js';
import { lightRequests } from '../../nats/requests.js';
import { EventReader, type StreamContext } from './events.js';
import type { Names } from './names.js';

/** The open store's handles on NATS: what every operation on the broker goes through. */
export interface Broker {
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

/** Creates the streams and the bucket on `nc` when missing, and opens them. */
export async function openBroker(nc: NatsConnection, names: Names, timeoutMs: number): Promise<Broker> {
  // The JetStream client's requests go through a cheaper request/reply of ours (see src/nats/requests.ts).
  const view = lightRequests(nc);
  const js = jetstream(view, { timeout: timeoutMs });
  const jsm = await jetstreamManager(view, { timeout: timeoutMs });
  for (const [name, subjects, extra] of [
    [names.eventStream, [names.eventSubjects], { duplicate_window: nanos(120_000) }],
    [names.messageStream, [names.messageSubjects], {}],
  ] as const) {
    try {
      await jsm.streams.add({ name, subjects: [...subjects], storage: StorageType.File, allow_direct: true, ...extra });
    } catch (e) {
      // Another process created it first (with another config: it is used as it is). Racing
      // creations fail as "name in use" or as "subjects overlap", depending on timing: what
      // counts is that the stream exists now.
      if (
        !(e instanceof JetStreamApiError) ||
        !(await jsm.streams.info(name).then(
          () => true,
          () => false,
        ))
      )
        throw e;
    }
  }
  const kvm = new Kvm(js);
  let kv: KV;
  try {
    kv = await kvm.create(names.bucket, { history: 1, storage: StorageType.File, timeout: timeoutMs });
  } catch (e) {
    if (!(e instanceof JetStreamApiError)) throw e;
    // Created by another process meanwhile (the same race as above). Direct gets: see
    // ../shared/notes/nats.md (Kvm.open defaults to allow_direct false).
    kv = await kvm.open(names.bucket, { allow_direct: true, timeout: timeoutMs }).catch(() => {
      throw e;
    });
  }
  const ctx: StreamContext = { js, jsm, timeoutMs };
  const recentMs = (await jsm.streams.info(names.eventStream)).config.duplicate_window / 4e6;
  return { nc, kv, ctx, events: new EventReader(ctx, names.eventStream), recentMs };
}

/**
 * The store's broker, opened on first use by `open` and shared by every caller; a failed
 * opening is forgotten, so the next call tries again. Once `closed`, calls fail with a
 * `SwarmError` code `closed`.
 */
export class Setup {
  /** Set by the store's `close()`. */
  closed = false;
  private opening: Promise<Broker> | undefined;
  private broker: Broker | undefined;

  constructor(private readonly open: () => Promise<Broker>) {}

  /** The open broker, opening it when no opening is under way or done. */
  ready(): Promise<Broker> {
    if (this.closed) return Promise.reject(new SwarmError('The JetStream store is closed', 'closed'));
    this.opening ??= this.open().then(
      (b) => (this.broker = b),
      (e: unknown) => {
        this.opening = undefined;
        throw e;
      },
    );
    return this.opening;
  }

  /**
   * The broker once opened, while the store is open (an opening that succeeded is kept): what a
   * hot path takes without awaiting {@link Setup.ready} again.
   */
  get opened(): Broker | undefined {
    return this.closed ? undefined : this.broker;
  }

  /** The opening under way or done, if any (without starting one). */
  get pending(): Promise<Broker> | undefined {
    return this.opening;
  }
}
