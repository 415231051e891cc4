/**
 * The host of one live swarm: it owns the actor, numbers the events the machine emits, writes
 * each completed step (snapshot + its events) to the store in one commit, and wakes readers.
 * How a body becomes an event (stamping, streamed chunks merged) is in `src/events/`.
 *
 * @module
 */
import { type Actor, createActor } from 'xstate';
import { errorText } from '../../machines/error-text.js';
import { failedUpdate } from '../../machines/event-builders.js';
import type { SwarmEvent, SwarmEventBody, SwarmFact } from '../../machines/events.js';
import { SWARM_MACHINE_VERSION, type SwarmCommand, type SwarmConfig, type SwarmContext, type SwarmInput } from '../../machines/swarm.js';
import type { createSwarmLogic } from '../../actors/index.js';
import type { Redactor } from '../util/redact.js';
import type { Logger } from '../util/logger.js';
import type { InspectObserver } from './types.js';
import { CHUNK_WINDOW_MS, isChunk, mergeChunks } from '../events/chunks.js';
import { isoTime, stampEvent } from '../events/stamp.js';
import { isFinal, resultOf, type SwarmResult, type SwarmStatus, topState } from '../store/result.js';
import { MessageLists, type MessageWrite } from '../store/messages.js';
import { summaryOf } from '../store/summary.js';
import { persistedSnapshot } from './persisted.js';
import { type Commit, type Lease, LeaseLostError, RevisionConflictError, type SwarmRecord, type SwarmStore } from '../store/types.js';

type SwarmLogic = ReturnType<typeof createSwarmLogic>;

/** Where a host starts from: a fresh input, or a stored record to restore. */
export type HostStart = { input: SwarmInput } | { record: SwarmRecord; lastSeq: number };

/**
 * The actor options of an inspected swarm: the observer, and the swarm id as the actor's id (the
 * name inspectors list it under). Nothing without an observer.
 */
function inspected(meta: { swarmId: string; inspect?: InspectObserver | undefined }): { inspect?: InspectObserver; id?: string } {
  return meta.inspect ? { inspect: meta.inspect, id: meta.swarmId } : {};
}

/** One live swarm. */
export class SwarmHost {
  readonly swarmId: string;
  readonly definitionId: string;
  /** The definition version the swarm runs on (stamped on its records). */
  readonly definitionVersion: number;
  /** The swarm's session, stamped on its events (kept in the machine's context, so it survives restarts). */
  readonly contextId: string;
  /**
   * Whether the host was restored from a stored record (a restart, an adoption, a passivated
   * swarm brought back) rather than started from a fresh input: only then may calls it has in
   * flight have begun before it existed (a child swarm started by an earlier holder).
   */
  readonly restored: boolean;
  private readonly actor: Actor<SwarmLogic>;
  private buffer: SwarmEventBody[] = [];
  private seq: number;
  private revision: number;

  /** The sequence number of the last event numbered so far (committed or about to be). */
  get lastSeq(): number {
    return this.seq;
  }
  private pending: Promise<void> | undefined;
  private wakers = new Set<() => void>();
  /** The promise waiters without an abort signal share until the next commit (see `nextCommit`). */
  private commitWait: Promise<void> | undefined;
  private chunkTimer: NodeJS.Timeout | undefined;
  private failure: Error | undefined;
  /** What the store holds of this swarm: the base of a failure record written after a failed step. */
  private inStore: { seq: number; revision: number; snapshot: unknown };
  /** What the store holds of the swarm's conversations: a step writes only its new messages. */
  private readonly lists = new MessageLists();
  /**
   * The failed status this host decided but the store has not taken yet (it is unusable):
   * answered from memory, and written once the store takes writes again.
   */
  private unrecorded: SwarmEvent | undefined;
  /** Why the swarm failed outside its machine (the actor crashed, the store failed). */
  private failedReason: string | undefined;
  /** When that failure was decided (ms since the epoch). */
  private failedAt = 0;
  private recordTimer: NodeJS.Timeout | undefined;
  /**
   * The events committed since the window opened, while readers of this process follow the
   * swarm (see {@link SwarmHost.keepCommitted}): `base` is the seq durable when it opened (or
   * the last one dropped from its front), `events` the durable ones after it, in order.
   */
  private window: { base: number; events: SwarmEvent[] } | undefined;
  /** How many readers keep {@link window} open. */
  private windowReaders = 0;
  private readonly ended: Promise<void>;
  private endResolve!: () => void;

  constructor(
    logic: SwarmLogic,
    private readonly store: SwarmStore,
    private readonly meta: {
      swarmId: string;
      definitionId: string;
      definitionVersion: number;
      lease: () => Lease;
      /** Told about every batch of events once it is durable (and about an unrecorded failure). */
      committed: (events: SwarmEvent[]) => void;
      /** Removes known secrets from everything this host writes or answers. */
      redact?: Redactor | undefined;
      /** The runtime's inspection observer (`createRuntime({ inspect })`), told of this swarm's actor and its children. */
      inspect?: InspectObserver | undefined;
      /** The runtime's logger: store retries and failures, a lost lease. */
      logger?: Logger | undefined;
    },
    from: HostStart,
    private readonly onEnd: (host: SwarmHost) => void,
  ) {
    this.swarmId = meta.swarmId;
    this.definitionId = meta.definitionId;
    this.definitionVersion = meta.definitionVersion;
    this.ended = new Promise((resolve) => (this.endResolve = resolve));
    this.restored = 'record' in from;
    if ('record' in from) {
      const snap = from.record.snapshot as { value?: unknown; context?: unknown } | null | undefined;
      if (!snap || typeof snap !== 'object' || snap.value === undefined || !snap.context || typeof snap.context !== 'object') {
        throw new Error('stored snapshot is not a swarm machine snapshot (no state value or context)');
      }
      // Events-only commits (streamed chunks) may have gone past the record's lastSeq.
      this.seq = Math.max(from.record.lastSeq, from.lastSeq);
      this.revision = from.record.revision;
      this.inStore = { seq: this.seq, revision: this.revision, snapshot: from.record.snapshot };
      this.lists.prime(from.record.snapshot);
      // XState requires `input` in the options type even when restoring (#4915).
      this.actor = createActor(logic, {
        snapshot: from.record.snapshot as never,
        input: undefined as never,
        systemId: meta.swarmId,
        // Only when given: without an observer the actor is made exactly as before.
        ...inspected(meta),
      });
      const restored = this.actor.getSnapshot();
      // XState reports a snapshot it cannot restore as an error snapshot instead of throwing.
      if (restored.status === 'error') {
        throw new Error(`snapshot cannot be restored: ${errorText(restored.error)}`);
      }
    } else {
      this.seq = 0;
      this.revision = 0;
      this.inStore = { seq: 0, revision: 0, snapshot: undefined };
      this.actor = createActor(logic, { input: from.input, systemId: meta.swarmId, ...inspected(meta) });
    }
    this.contextId = this.actor.getSnapshot().context.contextId;
    this.actor.on('swarm.events', (e) => {
      for (const body of e.events) this.buffer.push(body);
    });
    this.actor.subscribe({
      next: () => this.flush(),
      // A throwing action is a bug in xswarm, not in the swarm: record it as a failure so
      // clients see a final state instead of a swarm that never moves again.
      error: (err) => this.recordCrash(err),
    });
  }

  /**
   * Starts (or resumes) the actor. The first commit happens synchronously inside. `first` is
   * applied before anything of the swarm does its work: a swarm restored only to be stopped
   * makes no model, tool or remote call, and starts no child swarm (each waits a tick for
   * `durable()`, and finds itself stopped by then; a child swarm that exists is stopped with it).
   */
  start(first?: SwarmCommand): void {
    // Queued until the actor starts, then taken at the end of `start()`, in the same turn.
    if (first) this.actor.send(first);
    this.actor.start();
  }

  /** The machine's top-level state (`failed` once a failure the store could not take was decided). */
  status(): SwarmStatus {
    return this.failedReason !== undefined ? 'failed' : topState(this.actor.getSnapshot().value);
  }

  /** The client-facing result, without known secrets. */
  result(): SwarmResult {
    if (this.failedReason !== undefined) return { status: 'failed', reason: this.failedReason };
    const snapshot = this.actor.getSnapshot();
    const result = resultOf(snapshot.value, snapshot.context);
    return this.meta.redact ? this.meta.redact(result) : result;
  }

  /**
   * The final failed event this host decided but could not record yet (the store fails): it
   * follows the stored events for readers, and is written with that `seq` once the store
   * recovers.
   */
  unrecordedEnd(): SwarmEvent | undefined {
    return this.unrecorded;
  }

  /**
   * How many events this host has numbered so far, durable or not: the swarm's activity as it
   * happens, ahead of its commits (a team's watchdog reads it, so a slow store does not make a
   * working swarm look silent). A field read: nothing is counted on the hot path for it.
   */
  get numbered(): number {
    return this.seq;
  }

  /** Whether a commit of this host is in flight (written but not acknowledged yet): it is still working. */
  get committing(): boolean {
    return this.pending !== undefined;
  }

  /** The machine's context (read-only). */
  context(): SwarmContext {
    return this.actor.getSnapshot().context;
  }

  /** The swarm's resolved configuration. */
  config(): SwarmConfig {
    return this.actor.getSnapshot().context.config;
  }

  /** The validated input the swarm started with. */
  input(): unknown {
    return this.actor.getSnapshot().context.input;
  }

  /** Sends a command to the machine. */
  send(command: SwarmCommand): void {
    this.actor.send(command);
  }

  /**
   * Publishes an event that comes from outside a machine step (a streamed text chunk, a child
   * swarm's lifecycle). Chunks arriving within {@link CHUNK_WINDOW_MS} are merged into one
   * event and committed together, so a streaming model costs a write per window, not per
   * token; every event a reader sees is still durable. A child's last lifecycle step is
   * committed with the swarm's next commit, the step recording the call's result (which follows
   * at once), so a handoff does not cost a write of its own for it: a parent that dies before
   * relays it again once restored (the relay goes on from what its stored stream holds). Its
   * other steps (`started`, a pause, …) wait as chunks do: a child that ends within the window,
   * as a quick agent in another process does, costs its parent no events-only commit at all
   * (one broker round trip per handoff fewer).
   */
  publish(body: SwarmEventBody): void {
    if (this.isEnded() || this.failure) return;
    const last = this.buffer.at(-1);
    if (isChunk(body) && body.append && last && isChunk(last) && last.artifact.artifactId === body.artifact.artifactId) {
      this.buffer[this.buffer.length - 1] = mergeChunks(last, body);
    } else {
      this.buffer.push(body);
    }
    // A child's last lifecycle step goes with the parent's next commit: the step recording the
    // call's result, which follows at once; its other steps within the window, or with it.
    if (endsChildCall(body)) return;
    if (!isChunk(body) && !childStep(body)) return this.flush(false);
    this.chunkTimer ??= setTimeout(() => {
      this.chunkTimer = undefined;
      this.flush(false);
    }, CHUNK_WINDOW_MS);
  }

  /**
   * Commits `body` with a snapshot record at once (a migrated swarm's record, stamped with its new
   * definition version, and the fact saying so): written after any commit in flight, in order.
   */
  recordFact(body: SwarmEventBody): void {
    // A swarm that ended at once (restored to be stopped) recorded its end already: nothing follows it.
    if (this.isEnded() || this.failure || this.actor.getSnapshot().status !== 'active') return;
    this.buffer.push(body);
    this.flush(true, true);
  }

  /**
   * Keeps the events this host commits from now on in memory, for a reader in this process that
   * follows the swarm (its event stream): it is answered from them ({@link committedAfter})
   * instead of reading them back from the store at every commit. Returns the function that lets
   * go (the window closes with its last reader). At most {@link COMMITTED_WINDOW} events are
   * kept: a reader further behind reads the store.
   */
  keepCommitted(): () => void {
    if (this.windowReaders++ === 0) this.window = { base: this.inStore.seq, events: [] };
    let kept = true;
    return () => {
      if (!kept) return;
      kept = false;
      if (--this.windowReaders === 0) this.window = undefined;
    };
  }

  /**
   * The durable events after `cursor`, in order, the first `limit` of them, exactly as written
   * (redacted) to the store, which holds them: what `readEvents(cursor, limit)` returns, answered
   * from memory. Undefined when they are not all known here (no reader keeps the window open,
   * or `cursor` is older than its first event): the store answers then. None when nothing after
   * `cursor` is durable yet.
   */
  committedAfter(cursor: number, limit: number): SwarmEvent[] | undefined {
    const w = this.window;
    if (!w || cursor < w.base) return undefined;
    const from = cursor - w.base;
    return w.events.slice(from, from + limit);
  }

  /** Resolves once every commit issued so far is durable; actors await it before working. */
  durable(): Promise<void> {
    // One tick first: the commit of the step that started the caller is issued synchronously
    // after the caller began, inside the same actor macrostep. A promise chain on functions
    // made once per host: every model call and tool call passes here.
    return TICK.then(this.afterTick);
  }

  /** What `durable()` waits for after its tick: the commit in flight, if any, then this host's failure. */
  private readonly afterTick = (): void | Promise<void> => (this.pending ? this.pending.then(this.checkFailure) : this.checkFailure());

  private readonly checkFailure = (): void => {
    if (this.failure) throw this.failure;
  };

  /**
   * A promise that resolves at the next commit (or when the swarm ends), or at once when
   * `signal` aborts: then nothing of the wait stays registered here or on the signal, so a
   * reader that went away costs nothing until the swarm's next commit.
   */
  nextCommit(signal?: AbortSignal): Promise<void> {
    if (this.isEnded() || signal?.aborted) return Promise.resolve();
    // Waiters that cannot leave share one promise (a wait() on every step of a run).
    if (!signal) return (this.commitWait ??= new Promise((resolve) => this.wakers.add(resolve)));
    return new Promise((resolve) => {
      const wake = () => {
        signal?.removeEventListener('abort', leave);
        resolve();
      };
      const leave = () => {
        this.wakers.delete(wake);
        resolve();
      };
      this.wakers.add(wake);
      signal?.addEventListener('abort', leave, { once: true });
    });
  }

  /** Resolves when the swarm reached a final state (or its host stopped). */
  whenEnded(): Promise<void> {
    return this.ended;
  }

  /**
   * The store record for the current state, with the writes that store the messages added to
   * the swarm's conversations since the last snapshot (the record's snapshot names the lists
   * instead of holding them: see src/store/messages.ts). `withSnapshot` false (a volatile store
   * between steps) leaves the snapshot out: computing it is most of a step's bookkeeping.
   */
  private record(snapshot: ReturnType<Actor<SwarmLogic>['getSnapshot']>, now: number, withSnapshot: boolean): { record: SwarmRecord; messages?: MessageWrite[] } {
    const persisted = withSnapshot ? this.lists.split(persistedSnapshot(this.actor)) : undefined;
    const record: SwarmRecord = {
      swarmId: this.swarmId,
      definitionId: this.meta.definitionId,
      definitionVersion: this.meta.definitionVersion,
      machineVersion: SWARM_MACHINE_VERSION,
      status: topState(snapshot.value),
      revision: ++this.revision,
      snapshot: persisted?.snapshot,
      result: resultOf(snapshot.value, snapshot.context),
      lastSeq: this.seq,
      updatedAt: now,
    };
    const label = snapshot.context.config.label;
    if (label) record.label = label;
    return persisted && persisted.writes.length > 0 ? { record, messages: persisted.writes } : { record };
  }

  /** Drops a host that was never started (a restore dry run); nothing is written. */
  discard(): void {
    this.endedFlag = true;
  }

  /**
   * Stops the actor (runtime shutdown). Its stored state stays; a volatile store, which only
   * had snapshots of ended swarms, gets the current one so another runtime can continue.
   */
  detach(): void {
    if (this.store.volatile && !this.failure && !this.endedFlag && !this.pending) {
      const snapshot = this.actor.getSnapshot();
      if (snapshot.status === 'active') {
        try {
          void this.store.commit(this.redacted({ swarmId: this.swarmId, events: [], ...this.record(snapshot, Date.now(), true), lease: this.meta.lease() }));
        } catch {
          // Nothing to do at shutdown; the swarm is reported as not restorable later.
        }
      }
    }
    // An unrecorded failure stays unrecorded: the stored swarm is unfinished, its lease is
    // released, and the next runtime continues it from its last durable step.
    clearTimeout(this.recordTimer);
    this.actor.stop();
    this.end();
  }

  private endedFlag = false;
  private isEnded(): boolean {
    return this.endedFlag;
  }

  private end(): void {
    if (this.endedFlag) return;
    this.endedFlag = true;
    clearTimeout(this.recordTimer);
    clearTimeout(this.chunkTimer);
    this.chunkTimer = undefined;
    this.wake();
    this.endResolve();
    this.onEnd(this);
  }

  private wake(): void {
    if (this.wakers.size === 0) return;
    const wakers = this.wakers;
    this.wakers = new Set();
    this.commitWait = undefined;
    for (const w of wakers) w();
  }

  /**
   * Writes buffered events, with a snapshot record when they include a checkpoint or the
   * swarm reached a final state (or `force`): one commit per completed step.
   */
  private flush(withSnapshot = true, force = false): void {
    if (this.chunkTimer) {
      clearTimeout(this.chunkTimer);
      this.chunkTimer = undefined;
    }
    const snapshot = this.actor.getSnapshot();
    const done = snapshot.status !== 'active';
    if (this.buffer.length === 0 && !done) return;
    if (this.failure) return;
    const now = Date.now();
    // The buffer becomes the batch: each body is replaced by its stamped event.
    const events = this.buffer as unknown as SwarmEvent[];
    this.buffer = [];
    const iso = isoTime(now);
    let checkpoint = (withSnapshot && done) || force;
    for (let i = 0; i < events.length; i++) {
      const e = stampEvent(events[i] as unknown as SwarmEventBody, ++this.seq, this, now, iso);
      if (e.kind === 'internal:checkpoint') checkpoint = withSnapshot;
      events[i] = e;
    }
    const step = checkpoint ? this.record(snapshot, now, done || force || !this.store.volatile) : undefined;
    if (events.length === 0 && !step) return;
    if (!step) return this.write({ swarmId: this.swarmId, events }, false);
    const { record, messages } = step;
    const lease = this.meta.lease();
    this.write(messages ? { swarmId: this.swarmId, events, record, messages, lease } : { swarmId: this.swarmId, events, record, lease }, isFinal(record.status));
  }

  /**
   * Every commit of a step goes through here: secrets are redacted, the commit is written after
   * any still unsettled one (in order), and a failed write is retried with backoff before the
   * swarm fails. A synchronous store that takes the write at once is done with it at once.
   */
  private write(commit: Commit, finished: boolean): void {
    const c = this.redacted(commit);
    if (this.pending) return this.track(this.pending.then(() => this.attempt(c)).then(() => this.committed(c, finished)));
    let written: void | Promise<void>;
    try {
      written = this.store.commit(c);
    } catch (err) {
      return this.track(this.retry(c, err, 0).then(() => this.committed(c, finished)));
    }
    if (written) return this.track(written.catch((err: unknown) => this.retry(c, err, 0)).then(() => this.committed(c, finished)));
    this.committed(c, finished);
  }

  /** One write, retried on failure. */
  private async attempt(c: Commit): Promise<void> {
    try {
      await this.store.commit(c);
    } catch (err) {
      await this.retry(c, err, 0);
    }
  }

  /**
   * Retries a commit that failed with `err` (a busy or full database, an I/O error) after each
   * delay of {@link COMMIT_RETRY_DELAYS_MS} in turn; rethrows the last error when it never
   * went through. A lost lease or revision is not retried: another owner has the swarm.
   *
   * A failed attempt may still have landed: its acknowledgement was lost (the SQLite writer
   * thread died after its COMMIT, a network store timed out on a write it kept). The retry is
   * then refused as a conflict with the very commit it repeats; when the store holds exactly
   * that commit and the swarm is still under this host's lease, the commit went through.
   */
  private async retry(c: Commit, err: unknown, attempt: number): Promise<void> {
    const delay = COMMIT_RETRY_DELAYS_MS[attempt];
    if (delay === undefined || this.endedFlag || ownerLost(err)) throw err;
    this.meta.logger?.warn(
      { swarmId: this.swarmId, definitionId: this.definitionId, attempt: attempt + 1, delayMs: delay, error: errorText(err) },
      'store commit failed; retrying',
    );
    await new Promise((resolve) => setTimeout(resolve, delay));
    if (this.endedFlag) throw err;
    try {
      await this.store.commit(c);
    } catch (next) {
      if (ownerLost(next) && (await this.holds(c).catch(() => false))) return;
      await this.retry(c, next, attempt + 1);
    }
  }

  /**
   * Whether the store holds commit `c` as this host wrote it, with the swarm still under this
   * host's lease owner: a record commit's revision and last seq; an events-only commit's events,
   * byte for byte, on top of the revision this host last committed (another owner re-running the
   * same turn could stream the same chunks, but it would have committed a record first).
   */
  private async holds(c: Commit): Promise<boolean> {
    const summary = await summaryOf(this.store, this.swarmId);
    if (!summary || summary.lease?.owner !== this.meta.lease().owner) return false;
    const { record, events } = c;
    if (record) return summary.revision === record.revision && summary.lastSeq === record.lastSeq;
    const first = events[0];
    if (!first || summary.revision !== this.inStore.revision) return false;
    const stored = await this.store.readEvents(this.swarmId, first.seq - 1, events.length);
    return stored.length === events.length && stored.every((e, i) => JSON.stringify(e) === JSON.stringify(events[i]));
  }

  /** Makes `p` the commit the next ones (and every `durable()`) wait for. */
  private track(p: Promise<void>): void {
    this.pending = p;
    p.then(
      () => {
        if (this.pending === p) this.pending = undefined;
      },
      (err: unknown) => this.fail(err),
    );
  }

  /** A commit is durable: tell readers and listeners. */
  private committed(c: Commit, finished: boolean): void {
    const last = c.events.at(-1);
    if (last) {
      this.inStore.seq = last.seq;
      this.keep(c.events);
    }
    if (c.record) {
      this.inStore.revision = c.record.revision;
      if (c.record.snapshot !== undefined) this.inStore.snapshot = c.record.snapshot;
    }
    this.meta.committed(c.events);
    this.wake();
    if (finished) this.end();
  }

  /** Adds the events of a durable commit to the readers' window, if one is open. */
  private keep(events: readonly SwarmEvent[]): void {
    const w = this.window;
    if (!w) return;
    // Commits are durable in order, so they follow on; should one not, the window starts over
    // after it (the events before are in the store).
    if (events[0]!.seq !== w.base + w.events.length + 1) {
      this.window = { base: events.at(-1)!.seq, events: [] };
      return;
    }
    for (const e of events) w.events.push(e);
    const over = w.events.length - COMMITTED_WINDOW;
    if (over > 0) {
      w.events.splice(0, over);
      w.base += over;
    }
  }

  /** The commit as it may be persisted: without known secrets. */
  private redacted(c: Commit): Commit {
    const redact = this.meta.redact;
    if (!redact) return c;
    const events = redact(c.events);
    if (!c.record) return { ...c, events };
    // Only the new messages: the stored ones were redacted when they were written.
    const messages = c.messages?.map((w) => ({ ...w, items: redact(w.items) }));
    return { ...c, events, record: redact(c.record), ...(messages ? { messages } : {}) };
  }

  private recordCrash(err: unknown): void {
    this.failWith(`Internal error: ${errorText(err)}`, err);
  }

  /**
   * A write did not go through. A lost lease or revision: another owner drives the swarm now,
   * so this host just stops. A failed store: the swarm fails with the storage error as its
   * reason (the step whose write failed is dropped, nothing of it was acknowledged).
   */
  private fail(err: unknown): void {
    if (this.failure) return;
    if (ownerLost(err) || this.inStore.revision === 0 || this.endedFlag) {
      if (ownerLost(err) && this.inStore.revision > 0)
        this.meta.logger?.warn(
          { swarmId: this.swarmId, definitionId: this.definitionId, error: errorText(err) },
          'lease lost: another runtime drives this swarm now; stopped here',
        );
      else if (!ownerLost(err) && !this.endedFlag)
        this.meta.logger?.warn(
          { swarmId: this.swarmId, definitionId: this.definitionId, error: errorText(err) },
          'store failed on the first write; the swarm did not start',
        );
      this.failure = toError(err);
      // The store no longer follows this swarm: stop driving it so nothing runs un-recorded.
      this.actor.stop();
      this.end();
      return;
    }
    this.meta.logger?.error({ swarmId: this.swarmId, definitionId: this.definitionId, error: errorText(err) }, 'store failed: the swarm fails');
    this.failWith(`Storage failure, the swarm's last step could not be recorded: ${errorText(err)}`, err);
  }

  /**
   * Ends the swarm as failed for a reason outside its machine (the actor crashed, the store
   * failed): the machine stops, and a failed record is written on top of the last durable
   * snapshot, after the stored events. Until the store takes it, the failure is answered from
   * memory (`result`, `status`, `unrecordedEnd`) and retried with a growing delay.
   */
  private failWith(message: string, err: unknown): void {
    if (this.unrecorded || this.endedFlag) return;
    const reason = this.meta.redact ? this.meta.redact(message) : message;
    this.failure = new Error(reason, { cause: err });
    this.actor.stop();
    this.buffer = [];
    clearTimeout(this.chunkTimer);
    this.chunkTimer = undefined;
    // After a commit still in flight (a retry, a network store): the failure follows it.
    if (this.pending) void this.pending.catch(() => undefined).then(() => this.decideFailure(reason));
    else this.decideFailure(reason);
  }

  /** Publishes the failure from memory and starts writing it. */
  private decideFailure(reason: string): void {
    if (this.endedFlag) return;
    this.failedReason = reason;
    this.seq = this.inStore.seq + 1;
    this.failedAt = Date.now();
    this.unrecorded = stampEvent(failedUpdate(reason, 'runtime'), this.seq, this, this.failedAt);
    this.meta.committed([this.unrecorded]);
    this.wake();
    this.recordFailure(FAILURE_RETRY_FIRST_MS);
  }

  /** Tries to write the unrecorded failure; on error, again after `delay` (doubling). */
  private recordFailure(delay: number): void {
    const event = this.unrecorded;
    if (!event || this.endedFlag) return;
    const retry = (err: unknown) => {
      // Another owner took the swarm meanwhile: the store's version is the swarm's now.
      if (ownerLost(err)) return this.end();
      this.recordTimer = setTimeout(() => this.recordFailure(Math.min(delay * 2, FAILURE_RETRY_MAX_MS)), delay);
      this.recordTimer.unref();
    };
    const recorded = () => {
      this.unrecorded = undefined;
      this.end();
    };
    const c: Commit = {
      swarmId: this.swarmId,
      lease: this.meta.lease(),
      events: [event],
      record: {
        swarmId: this.swarmId,
        definitionId: this.meta.definitionId,
        definitionVersion: this.meta.definitionVersion,
        machineVersion: SWARM_MACHINE_VERSION,
        status: 'failed',
        revision: this.inStore.revision + 1,
        // The machine stopped mid-step (or errored): keep its last durable snapshot.
        snapshot: this.inStore.snapshot,
        result: this.result(),
        lastSeq: event.seq,
        updatedAt: this.failedAt,
      },
    };
    try {
      const written = this.store.commit(this.redacted(c));
      if (written) written.then(recorded, retry);
      else recorded();
    } catch (err) {
      retry(err);
    }
  }

  /** Why the host stopped driving its swarm, if it failed. */
  get error(): Error | undefined {
    return this.failure;
  }
}

/** A settled promise: what {@link SwarmHost.durable} waits a tick on. */
const TICK = Promise.resolve();

function toError(error: unknown): Error {
  return error instanceof Error ? error : new Error(errorText(error));
}

/** A lost lease or revision means another owner drives the swarm; anything else may be transient. */
export function ownerLost(error: unknown): error is LeaseLostError | RevisionConflictError {
  return error instanceof LeaseLostError || error instanceof RevisionConflictError;
}

/**
 * The delays before each retry of a commit that failed (a busy or full database, an I/O
 * error): about 1.5 s in all, then the swarm fails with the storage error.
 */
export const COMMIT_RETRY_DELAYS_MS: readonly number[] = [25, 100, 400, 1000];

/**
 * How many of its latest committed events a host keeps while readers of its process follow it
 * (see `SwarmHost.keepCommitted`): a page of the store (`PAGE_SIZE`), so a reader behind by
 * less than a page never reads the store.
 */
const COMMITTED_WINDOW = 500;

/** First and longest delay between attempts to record a failure the store refused. */
const FAILURE_RETRY_FIRST_MS = 500;
const FAILURE_RETRY_MAX_MS = 10_000;

/** The step of a child swarm's lifecycle that `body` relays, if it relays one. */
function childStep(body: SwarmEventBody): Extract<SwarmFact, { type: 'child-swarm' }> | undefined {
  return body.kind === 'status-update' && body.metadata.type === 'child-swarm' ? body.metadata : undefined;
}

/** Whether `body` relays the end of a child swarm (its call's result comes next). */
function endsChildCall(body: SwarmEventBody): boolean {
  const lifecycle = childStep(body)?.lifecycle;
  return lifecycle === 'completed' || lifecycle === 'failed' || lifecycle === 'stopped';
}
