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
import { memoryPushOutbox, type PushOutbox, type PushSubscription } from '../../store/push-outbox.js';
import { checkPushTarget, type Resolver } from './push-policy.js';
import { PushGoneError, postPush } from './push-post.js';

/** How deliveries are retried and bounded (`serve(runtime, { pushRetry })`). */
export interface PushRetryOptions {
  /** The wait after the first failed attempt, doubled after each further one. Default 1000 ms. */
  initialDelayMs?: number;
  /** The longest wait between attempts. Default 60 000 ms. */
  maxDelayMs?: number;
  /** How long one attempt waits for the receiver's answer. Default 10 000 ms. */
  timeoutMs?: number;
}

/** Options of {@link PushDelivery}. */
export interface PushDeliveryOptions {
  /** Hosts webhooks may be on although they are not public (see `push-policy.ts`). */
  allowedPushHosts?: AllowedHosts;
  retry?: PushRetryOptions;
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
  private readonly loops = new Map<string, Promise<void>>();
  private readonly closing = new AbortController();
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
  }

  /** Starts the loops of every subscription not done (a restarted server's backlog); once. */
  resume(): void {
    if (this.resumed) return;
    this.resumed = true;
    // An outbox loaded over the network (JetStream) is read once loaded; one that cannot load is
    // tried again at the next config method (`ready`), the backlog with it.
    this.ready().then(
      () => {
        for (const s of this.outbox.pending()) this.ensureLoop(s.taskId, s.configId);
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

  /** Stops every loop (deliveries in flight are aborted, their cursors stay) and waits for them. */
  async close(): Promise<void> {
    this.closing.abort(new Error('The server is closing'));
    await Promise.allSettled([...this.loops.values()]);
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
    const start = this.outbox.get(taskId, configId);
    if (!start || start.done) return;
    const signal = this.closing.signal;
    const events = this.runtime.forSwarm(start.definitionId, taskId).events({ since: start.cursor, signal });
    // Pushed as streamed: the result artifact described, a failure's error in its status.
    const details = resultDetails(this.runtime.definitions(), start.definitionId);
    for await (const event of events) {
      const response = toStreamResponse(withDetails(event, details));
      const done = event.kind === 'status-update' && event.final;
      if (response && !(await this.deliver(taskId, configId, event.seq, response, signal))) return;
      // Only updates (and the end) move the stored cursor: the events between them are skipped again after a restart, cheaply.
      if (response || done) this.outbox.advance(taskId, configId, event.seq, done);
      if (done) return;
    }
  }

  /** Delivers one update until a receiver takes it; false when the config went away or the server closes. */
  private async deliver(taskId: string, configId: string, seq: number, response: StreamResponse, signal: AbortSignal): Promise<boolean> {
    for (let attempt = 0; ; attempt++) {
      if (signal.aborted) return false;
      // Read each time: a config replaced (same id) while retrying takes effect at the next attempt.
      const current = this.outbox.get(taskId, configId);
      if (!current) return false;
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
          this.timeoutMs,
          signal,
        );
        return true;
      } catch (e) {
        if (signal.aborted) return false;
        // The receiver wants nothing more (410 Gone): the subscription is over, kept as done.
        if (e instanceof PushGoneError) {
          this.outbox.advance(taskId, configId, current.cursor, true);
          return false;
        }
        const delay = Math.min(this.maxDelayMs, this.initialDelayMs * 2 ** Math.min(attempt, 30));
        // Jitter (±20%): receivers coming back are not hit by every server at the same instant.
        await sleep(delay * (0.8 + Math.random() * 0.4), undefined, { signal }).catch(() => undefined);
      }
    }
  }
}
