/**
 * The delivery of A2A push notifications from the durable outbox (`../../store/push-outbox.ts`):
 * one loop per webhook that follows its task's stored events from the webhook's cursor and
 * POSTs each status and artifact update (`push-post.ts`), in order, retrying a failed delivery
 * with capped exponential backoff (with jitter) until it succeeds, the config is deleted or the
 * server closes. The cursor moves only after a 2xx answer, so a delivery interrupted by a crash
 * is sent again after the restart with the same event id (at least once; once for a receiver
 * that de-duplicates by `X-A2A-Event-Id`). A loop ends after the task's final update, or when the
 * receiver answers `410 Gone`.
 *
 * Several servers on one store share its outbox: a loop runs only while its server holds the
 * webhook's delivery lease (`PushOutbox.lease`), renewed every third of its time to live, so one
 * server delivers a webhook at a time. Every server looks over the outbox's pending webhooks now
 * and then (`scanMs`) and starts a loop for each it can lease: a webhook whose server died (its
 * lease expired), or one registered through another server that gave it up. A loop whose lease
 * was lost stops before its next attempt; the next holder starts from the durable cursor.
 *
 * Failed attempts are logged (warn: task, config, the webhook's host, the status or error, the
 * next try), and a subscription ended by `410 Gone` (info), through the runtime's logger.
 *
 * @module
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { StreamResponse } from '@a2a-js/sdk';
import { V1PushNotificationSerializer } from '@a2a-js/sdk/server';
import { V03PushNotificationSerializer } from '@a2a-js/sdk/compat/v0_3/server';
import { type AllowedHosts, checkAllowedHosts } from '../../a2a/endpoint-policy.js';
import { resultDetails, withDetails } from '../../a2a/details.js';
import { toStreamResponse } from '../../a2a/mapping.js';
import type { Runtime } from '../../runtime/types.js';
import type { Logger } from '../../util/logger.js';
import { memoryPushOutbox, type PushOutbox, type PushSubscription } from '../../store/push-outbox.js';
import { checkPushTarget, PushTargetError, type Resolver } from './push-policy.js';
import { PushGoneError, PushStatusError, postPush } from './push-post.js';

/** How deliveries are retried and bounded (`serve(runtime, { pushRetry })`). */
export interface PushRetryOptions {
  /** The wait after the first failed attempt, doubled after each further one. Default 1000 ms. */
  initialDelayMs?: number;
  /** The longest wait between attempts. Default 60 000 ms. */
  maxDelayMs?: number;
  /** How long one attempt waits for the receiver's answer. Default 10 000 ms. */
  timeoutMs?: number;
}

/** The delivery lease of each webhook (`serve(runtime, { pushLease })`). */
export interface PushLeaseOptions {
  /** How long a lease holds unless renewed (it is renewed every third of it). Default 30 000 ms. */
  ttlMs?: number;
  /** How often the pending webhooks are looked over for one to take over. Default a third of `ttlMs`. */
  scanMs?: number;
}

/** Options of {@link PushDelivery}. */
export interface PushDeliveryOptions {
  /** Hosts webhooks may be on although they are not public (see `push-policy.ts`). */
  allowedPushHosts?: AllowedHosts;
  retry?: PushRetryOptions;
  lease?: PushLeaseOptions;
  /** Where failed deliveries are logged (the runtime's logger); undefined: silent. */
  logger?: Logger;
  /** Replaces the system's DNS lookup (tests). */
  resolve?: Resolver;
}

const V1 = new V1PushNotificationSerializer();
const V03 = new V03PushNotificationSerializer();

/** The body of one update in the shape of the version its webhook was registered over. */
function serialize(wireVersion: string, response: StreamResponse): { body: string; contentType: string } {
  return (wireVersion === '0.3' ? V03 : V1).serialize(response);
}

/** The id of the update at `seq` of a task: the receiver's de-duplication key. */
export function pushEventId(taskId: string, seq: number): string {
  return `${taskId}:${seq}`;
}

/** How long a write still under way in the background is waited for when the server closes. */
const FLUSH_ON_CLOSE_MS = 2000;

/** A delivery lease held by a loop: its expiry as last renewed, and the signal that ends the loop (lease lost, server closing). */
interface Held {
  until: number;
  readonly signal: AbortSignal;
  /** Stops renewing and gives the lease up. */
  stop(): void;
}

/** The push notifications of one server: registration, and a delivery loop per webhook. */
export class PushDelivery {
  /** Where subscriptions and cursors are kept: the store's, else one of this process. */
  readonly outbox: PushOutbox;
  private readonly runtime: Runtime;
  private readonly allowed: AllowedHosts;
  private readonly resolve: Resolver | undefined;
  private readonly initialDelayMs: number;
  private readonly maxDelayMs: number;
  private readonly timeoutMs: number;
  private readonly leaseMs: number;
  private readonly scanMs: number;
  private readonly logger: Logger | undefined;
  /** This server's name in the leases it holds. */
  private readonly owner = crypto.randomUUID();
  private scan: NodeJS.Timeout | undefined;
  private readonly loops = new Map<string, Promise<void>>();
  private readonly closing = new AbortController();
  /** Resolves (false) once the server closes: what a wait for a lease races. */
  private readonly closed = new Promise<false>((resolve) => this.closing.signal.addEventListener('abort', () => resolve(false), { once: true }));
  private resumed = false;

  constructor(runtime: Runtime, options: PushDeliveryOptions = {}) {
    this.runtime = runtime;
    this.outbox = runtime.store.pushOutbox ?? memoryPushOutbox();
    this.allowed = options.allowedPushHosts ?? [];
    checkAllowedHosts(this.allowed, 'allowedPushHosts');
    this.resolve = options.resolve;
    this.initialDelayMs = options.retry?.initialDelayMs ?? 1000;
    this.maxDelayMs = options.retry?.maxDelayMs ?? 60_000;
    this.timeoutMs = options.retry?.timeoutMs ?? 10_000;
    this.leaseMs = options.lease?.ttlMs ?? 30_000;
    this.scanMs = options.lease?.scanMs ?? Math.max(50, Math.floor(this.leaseMs / 3));
    this.logger = options.logger;
  }

  /** Starts the loops of every subscription not done (a restarted server's backlog); once. */
  resume(): void {
    if (this.resumed) return;
    this.resumed = true;
    // An outbox loaded over the network (JetStream) is read once loaded; one that cannot load is
    // tried again at the next config method (`ready`), the backlog with it.
    this.ready().then(
      () => {
        this.sweep();
        // Webhooks whose server died (lease expired) or that another server registered and gave up.
        this.scan ??= setInterval(() => this.sweep(), this.scanMs).unref();
      },
      () => {
        this.resumed = false;
      },
    );
  }

  /** Resolves once the outbox can be read (see `PushOutbox.ready`); resumes the backlog when an earlier load failed. */
  async ready(): Promise<void> {
    await this.outbox.ready?.();
    if (!this.resumed) this.resume();
  }

  /** Throws a `PushTargetError` when no notification may go to `url`. */
  async check(url: string): Promise<void> {
    await checkPushTarget(url, this.allowed, this.resolve);
  }

  /** Keeps a checked subscription and starts (or continues) its delivery. */
  register(subscription: PushSubscription): PushSubscription {
    this.outbox.save(subscription);
    this.ensureLoop(subscription.taskId, subscription.configId);
    return this.outbox.get(subscription.taskId, subscription.configId) ?? subscription;
  }

  /**
   * Stops every loop (deliveries in flight are aborted, their cursors stay), waits for them, and
   * gives their leases up (another server takes over at once). Writes of an outbox kept over the
   * network still under way are waited for briefly; those that did not land are logged.
   */
  async close(): Promise<void> {
    clearInterval(this.scan);
    this.closing.abort(new Error('The server is closing'));
    await Promise.allSettled([...this.loops.values()]);
    const left = await this.outbox.flush?.(FLUSH_ON_CLOSE_MS).catch(() => 0);
    if (left) {
      this.logger?.warn(
        { webhooks: left, waitedMs: FLUSH_ON_CLOSE_MS },
        'push outbox writes still pending as the server closes: the store retries them until it closes; a cursor not written is delivered again (same event ids)',
      );
    }
  }

  /** Starts a loop for every pending webhook without one (it runs if it gets the lease). */
  private sweep(): void {
    if (this.closing.signal.aborted) return;
    let pending: PushSubscription[];
    try {
      pending = this.outbox.pending();
    } catch {
      return; // The store closed under the server: nothing more to deliver.
    }
    for (const s of pending) this.ensureLoop(s.taskId, s.configId);
  }

  /**
   * Takes the webhook's lease for this server and keeps renewing it; undefined when another
   * server holds it. An outbox without leases: held for as long as the server runs.
   */
  private async take(taskId: string, configId: string): Promise<Held | undefined> {
    const outbox = this.outbox;
    if (!outbox.lease) return { until: Number.POSITIVE_INFINITY, signal: this.closing.signal, stop: () => undefined };
    const until = Date.now() + this.leaseMs;
    const taking = Promise.resolve(outbox.lease(taskId, configId, this.owner, until));
    // A lease waiting behind writes held by an outage must not hold the server's close (taken late, it is given back).
    const took = await Promise.race([taking, this.closed]);
    if (this.closing.signal.aborted) {
      void taking.then(
        (ok) => ok && outbox.release?.(taskId, configId, this.owner),
        () => undefined,
      );
      return undefined;
    }
    if (!took) return undefined;
    const lost = new AbortController();
    let renewing = false;
    const renew = setInterval(() => {
      if (renewing) return;
      renewing = true;
      const next = Date.now() + this.leaseMs;
      Promise.resolve(outbox.lease!(taskId, configId, this.owner, next))
        .then(
          (ok) => {
            if (ok) held.until = next;
            else lost.abort(new Error('The delivery lease went to another server'));
          },
          // The store unreachable: the lease runs out unless a later renewal lands (checked before each attempt).
          () => undefined,
        )
        .finally(() => {
          renewing = false;
        });
    }, this.leaseMs / 3);
    renew.unref();
    const held: Held = {
      until,
      signal: AbortSignal.any([this.closing.signal, lost.signal]),
      stop: () => {
        clearInterval(renew);
        if (!lost.signal.aborted) outbox.release?.(taskId, configId, this.owner);
      },
    };
    return held;
  }

  private ensureLoop(taskId: string, configId: string): void {
    const key = `${taskId}\0${configId}`;
    if (this.loops.has(key) || this.closing.signal.aborted) return;
    const loop = this.run(taskId, configId)
      .catch(() => undefined)
      .finally(() => this.loops.delete(key));
    this.loops.set(key, loop);
  }

  private async run(taskId: string, configId: string): Promise<void> {
    const before = this.outbox.get(taskId, configId);
    if (!before || before.done) return;
    const held = await this.take(taskId, configId);
    if (!held) return;
    try {
      // Read once leased: the cursor the previous holder left.
      const start = this.outbox.get(taskId, configId);
      if (!start || start.done) return;
      const signal = held.signal;
      const events = this.runtime.forSwarm(start.definitionId, taskId).events({ since: start.cursor, signal });
      // Pushed as streamed: the result artifact described, a failure's error in its status.
      const details = resultDetails(this.runtime.definitions(), start.definitionId);
      for await (const event of events) {
        const response = toStreamResponse(withDetails(event, details));
        const done = event.kind === 'status-update' && event.final;
        if (response && !(await this.deliver(taskId, configId, event.seq, response, held))) return;
        // Only updates (and the end) move the stored cursor: the events between them are skipped again after a restart, cheaply.
        if (response || done) this.outbox.advance(taskId, configId, event.seq, done);
        if (done) return;
      }
    } finally {
      held.stop();
    }
  }

  /** Delivers one update until a receiver takes it; false when the config went away or the server closes. */
  private async deliver(taskId: string, configId: string, seq: number, response: StreamResponse, held: Held): Promise<boolean> {
    const signal = held.signal;
    for (let attempt = 0; ; attempt++) {
      if (signal.aborted) return false;
      // Read each time: a config replaced (same id) while retrying takes effect at the next attempt.
      const current = this.outbox.get(taskId, configId);
      if (!current) return false;
      // The lease ran out without a renewal (the store unreachable): another server may deliver now.
      // An attempt ends before the lease does, so two servers never post the same webhook at once.
      const leaseLeft = held.until - Date.now();
      if (leaseLeft <= 0) return false;
      try {
        const { body, contentType } = serialize(current.wireVersion, response);
        const target = await checkPushTarget(current.url, this.allowed, this.resolve);
        await postPush(
          target,
          {
            eventId: pushEventId(taskId, seq),
            body,
            contentType,
            ...(current.token ? { token: current.token } : {}),
            ...(current.authentication ? { authentication: current.authentication } : {}),
          },
          Math.min(this.timeoutMs, leaseLeft),
          signal,
        );
        return true;
      } catch (e) {
        if (signal.aborted) return false;
        // The receiver wants nothing more (410 Gone): the subscription is over, kept as done.
        if (e instanceof PushGoneError) {
          this.outbox.advance(taskId, configId, current.cursor, true);
          this.logger?.info({ taskId, configId, host: hostOf(current.url) }, 'push subscription ended: the receiver answered 410 Gone');
          return false;
        }
        const delay = Math.min(this.maxDelayMs, this.initialDelayMs * 2 ** Math.min(attempt, 30));
        // Jitter (±20%): receivers coming back are not hit by every server at the same instant.
        const wait = Math.round(delay * (0.8 + Math.random() * 0.4));
        this.logger?.warn(
          { taskId, configId, host: hostOf(current.url), eventId: pushEventId(taskId, seq), attempt: attempt + 1, ...failure(e), retryInMs: wait },
          'push delivery failed; retrying',
        );
        await sleep(wait, undefined, { signal }).catch(() => undefined);
      }
    }
  }
}

/** The webhook's host (and port), never its path or query, which may hold a secret. */
function hostOf(url: string): string {
  try {
    return new URL(url).host;
  } catch {
    return '(not a URL)';
  }
}

/** What a failed attempt is logged with: the receiver's status, or the error. */
function failure(e: unknown): { status: number } | { error: string } {
  if (e instanceof PushStatusError) return { status: e.status };
  // The policy's message names the whole URL: the reason alone is logged.
  if (e instanceof PushTargetError) return { error: 'the push policy refused the webhook (see allowedPushHosts)' };
  return { error: e instanceof Error ? e.message : String(e) };
}
