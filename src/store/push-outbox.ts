/**
 * The durable outbox of A2A push notifications: which webhook each task's updates go to, and how
 * far each webhook got. The updates themselves are the task's stored events (its numbered,
 * durable event log), so an outbox entry is a subscription with a cursor: the sequence number
 * of the last event delivered. A delivery that fails leaves the cursor where it was; after a
 * restart the server resumes every entry that is not done from its cursor, so nothing is lost,
 * and a receiver that de-duplicates by event id (`<taskId>:<seq>`, stable across restarts) sees
 * each update once.
 *
 * A store keeps one when it can ({@link SwarmStore.pushOutbox}: memory, SQLite, JetStream); the server
 * falls back to a process-local one otherwise.
 *
 * Several servers on one store (one SQLite file, one NATS) share the outbox: each subscription
 * has a delivery lease ({@link PushOutbox.lease}) that one server holds at a time, renewed while
 * it delivers; a server that dies loses it when it expires and another resumes from the cursor.
 *
 * @module
 */

/** How a webhook authenticates a delivery (the A2A `AuthenticationInfo`). */
export interface PushAuthentication {
  /** `Bearer`, `HMAC-SHA256` (a signature over the body), or another HTTP auth scheme. */
  scheme: string;
  credentials: string;
}

/** One webhook of one task, as the outbox keeps it. */
export interface PushSubscription {
  taskId: string;
  /** The config id (the client's, or one given by the server). */
  configId: string;
  /** The swarm definition the task runs. */
  definitionId: string;
  url: string;
  /** The A2A `token`, sent back as `X-A2A-Notification-Token`. */
  token?: string;
  authentication?: PushAuthentication;
  /** The A2A version the config was registered over (`1.0` or `0.3`): the payload's shape. */
  wireVersion: string;
  /** Sequence number of the last event of the task handled (delivered, or not an update). */
  cursor: number;
  /** Every update of the ended task was delivered: nothing more will come. */
  done: boolean;
}

/** Where push subscriptions and their cursors are kept (see the module doc). Every call is one small read or write. */
export interface PushOutbox {
  /** Adds or replaces a subscription (a replaced one keeps its cursor, and stays done once done). */
  save(subscription: PushSubscription): void;
  get(taskId: string, configId: string): PushSubscription | undefined;
  /** The subscriptions of a task, oldest first. */
  list(taskId: string): PushSubscription[];
  /** Removes a subscription; false when there was none. */
  delete(taskId: string, configId: string): boolean;
  /** Moves a subscription's cursor (never back), marking it done when the task ended. */
  advance(taskId: string, configId: string, cursor: number, done: boolean): void;
  /** The subscriptions not done, oldest first: what a starting server resumes. */
  pending(): PushSubscription[];
  /**
   * Resolves once the outbox can be read: an outbox kept over the network (JetStream) loads its
   * copy first. The server awaits it before it resumes deliveries or answers a config method;
   * absent, the outbox is readable at once. Rejects when the load failed (tried again on the next call).
   */
  ready?(): Promise<void>;
  /**
   * Takes or renews the delivery lease of a subscription for `owner` until `until` (ms since the
   * epoch): true when `owner` holds it now (it was free, expired, or already `owner`'s); false
   * when another owner holds an unexpired one, or the subscription is gone. Absent: no lease
   * (every server on the store delivers each subscription).
   */
  lease?(taskId: string, configId: string, owner: string, until: number): boolean | Promise<boolean>;
  /** Gives up `owner`'s lease of a subscription (a loop that ended, a server closing); nothing when another holds it. */
  release?(taskId: string, configId: string, owner: string): void;
  /**
   * Waits up to `timeoutMs` for the writes still under way in the background (an outbox kept
   * over the network); resolves with how many subscriptions still have one (0: all landed).
   */
  flush?(timeoutMs: number): Promise<number>;
}

/** An outbox in memory (the memory store's, and the fallback of stores without one). */
export function memoryPushOutbox(): PushOutbox {
  const entries = new Map<string, PushSubscription>();
  /** The lease of each subscription: owner and expiry (servers sharing one memory store, in tests). */
  const leases = new Map<string, { owner: string; until: number }>();
  const key = (taskId: string, configId: string) => `${taskId}\0${configId}`;
  return {
    save(s) {
      const existing = entries.get(key(s.taskId, s.configId));
      entries.set(key(s.taskId, s.configId), { ...s, cursor: existing?.cursor ?? s.cursor, done: existing ? existing.done || s.done : s.done });
    },
    get: (taskId, configId) => {
      const s = entries.get(key(taskId, configId));
      return s && { ...s };
    },
    list: (taskId) => [...entries.values()].filter((s) => s.taskId === taskId).map((s) => ({ ...s })),
    delete: (taskId, configId) => {
      leases.delete(key(taskId, configId));
      return entries.delete(key(taskId, configId));
    },
    advance(taskId, configId, cursor, done) {
      const s = entries.get(key(taskId, configId));
      if (s && cursor >= s.cursor) entries.set(key(taskId, configId), { ...s, cursor, done });
    },
    pending: () => [...entries.values()].filter((s) => !s.done).map((s) => ({ ...s })),
    lease(taskId, configId, owner, until) {
      const k = key(taskId, configId);
      const held = leases.get(k);
      if (!entries.has(k) || (held && held.owner !== owner && held.until > Date.now())) return false;
      leases.set(k, { owner, until });
      return true;
    },
    release(taskId, configId, owner) {
      if (leases.get(key(taskId, configId))?.owner === owner) leases.delete(key(taskId, configId));
    },
  };
}
