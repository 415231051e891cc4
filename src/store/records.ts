/**
 * The store's records that are not swarms: a team's state (`xswarm.team.<definition>`) and the
 * agent registry's (`xswarm.registry`). They share the swarms' store (one commit protocol, one
 * lease), but are restored by their own owners, never adopted or listed as swarms; the
 * {@link RecordJournal} writes them.
 *
 * @module
 */
import { errorText } from '../../machines/error-text.js';
import type { SwarmEvent } from '../../machines/events.js';
import { REGISTRY_RECORD_DEFINITION, TEAM_RECORD_PREFIX } from '../define/ids.js';
import { isUnavailable, pauseForStore, untilReachable } from './reachable.js';
import type { MessageWrite } from './messages.js';
import type { SwarmResult, SwarmStatus } from './result.js';
import { type Lease, RevisionConflictError, type SwarmRecord, type SwarmStore } from './types.js';

/** Whether a stored record of this definition id is a team's or the registry's, not a swarm. */
export function isRuntimeRecord(definitionId: string): boolean {
  return definitionId.startsWith(TEAM_RECORD_PREFIX) || definitionId === REGISTRY_RECORD_DEFINITION;
}

/** What a record journal needs from the runtime: its store, and the lease its commits hold. */
export interface RecordStorePort {
  store: SwarmStore;
  /** The lease a commit made now holds (this runtime's owner). */
  lease(): Lease;
}

/**
 * How a {@link RecordJournal} stores its state: the record's definition id (one no swarm
 * definition has, so the runtime never adopts the record as a swarm), the version of the
 * snapshot's shape, and the status and result a listing shows.
 */
export interface RecordShape<S> {
  definitionId: string;
  machineVersion: number;
  status(snapshot: S): SwarmStatus;
  result(snapshot: S): SwarmResult;
}

/** Options of a {@link RecordJournal}. */
export interface RecordJournalOptions {
  /**
   * Whether a commit the store could not make because it cannot reach its server (a `SwarmError`
   * code `unavailable`: NATS down for longer than the store's own retries) is waited out instead
   * of ending the journal: once the store is connected again, the commit is made again, with the
   * state as it is by then. A failed attempt may have landed all the same (a write that timed
   * out): when the store then refuses the revision as written, the record is read back, and the
   * journal goes on from it when it is that write (this revision, this runtime's lease); it stops
   * (`lost`) when another runtime wrote the record. After {@link RecordJournal.seal} the outage
   * gets one more attempt, so a close does not wait for NATS. Default false: every failed commit
   * is final.
   */
  waitForStore?: boolean;
  /**
   * Called when the journal goes on from a stored record it finds its own write made (an
   * attempt that may have landed, see `waitForStore`): the message rows that attempt wrote are
   * then in the store, so an owner writing rows ({@link RecordState.messages}) rewrites its
   * lists whole with the next commit instead of appending at a length it no longer knows.
   */
  resync?: () => void;
}

/**
 * The state a commit writes: the snapshot and the events so far (in seq order; only those after
 * the last commit are written, found in O(log n)). With `messages`, the writes to the record's
 * stored lists that go with this snapshot (see `Commit.messages`): what changed since the state
 * before, for a state too large to write whole each time (a team's board). Such an owner counts
 * the rows as written when it hands them out (commits go one at a time, in order); `failed` is
 * called when an attempt with them fails, so that the owner's next state rewrites its lists whole.
 */
export interface RecordState<S> {
  snapshot: S;
  events: readonly { seq: number }[];
  messages?: MessageWrite[];
  failed?: () => void;
}

/**
 * Writes a state kept as one record of the runtime's store (a team's, the agent registry's)
 * after its changes, one commit at a time, with the events appended since the previous commit.
 *
 * A commit reads the state when it begins, not when it is scheduled: every change of a tick
 * (and every change made while the previous commit is in flight) goes into one commit, and the
 * state is read once per commit instead of once per change. The price is that a commit still
 * to come writes whatever the state is by then, so an owner about to tear its state down (a
 * team host stopping its leader and workers at close) calls {@link seal} first: the commit
 * still to come then writes the state as it was before the teardown.
 */
export class RecordJournal<S> {
  #revision: number;
  #seq: number;
  #scheduled = false;
  #writing: Promise<void> = Promise.resolve();
  #failure: string | undefined;
  #sealed = false;
  /** The state the commit still to come writes, read by {@link seal} (else read when it begins). */
  #pending: RecordState<S> | undefined;
  /** Aborted by {@link seal}: a commit waiting for the store makes its last attempt (see `waitForStore`). */
  readonly #sealing = new AbortController();

  constructor(
    private readonly port: RecordStorePort,
    private readonly recordId: string,
    private readonly shape: RecordShape<S>,
    private readonly state: () => RecordState<S>,
    /** Called once when a write fails for good (another runtime took the record, or the store refuses). */
    private readonly lost: (reason: string) => void,
    from: { revision: number; seq: number } = { revision: 0, seq: 0 },
    private readonly options: RecordJournalOptions = {},
  ) {
    this.#revision = from.revision;
    this.#seq = from.seq;
  }

  /** Why writing stopped, if it did. */
  get failure(): string | undefined {
    return this.#failure;
  }

  /** Schedules a commit of the state as it will be once the current step is over (nothing once sealed). */
  changed(): void {
    if (this.#scheduled || this.#failure || this.#sealed) return;
    this.#scheduled = true;
    this.#writing = this.#writing.then(() => {
      this.#scheduled = false;
      return this.#commit();
    });
  }

  /**
   * Takes the state now for the commit still to come, if one is scheduled, and schedules no
   * more: what is written from here on is the state as it is at this call, whatever happens to
   * it afterwards. For an owner that stops writing and then tears its state down (see the class
   * doc); {@link flush} then resolves once that last commit is written.
   */
  seal(): void {
    if (this.#sealed) return;
    this.#sealed = true;
    this.#sealing.abort();
    if (this.#scheduled && !this.#failure) {
      const state = this.state();
      // A copy of the fresh part of the list: events appended later (the teardown's) are not this state's.
      this.#pending = { ...state, events: state.events.slice(firstAfter(state.events, this.#seq)) };
    }
  }

  /** Resolves once everything scheduled so far is written (or failed). */
  flush(): Promise<void> {
    return this.#writing;
  }

  async #commit(): Promise<void> {
    if (this.#failure) return;
    let state = this.#pending ?? this.state();
    this.#pending = undefined;
    /** Attempts of this commit that failed with the store unreachable (each may have landed all the same). */
    let uncertain = 0;
    for (;;) {
      // An attempt begun once sealed is the last one the store's outage gets (see #afterFailure).
      const last = this.#sealed;
      const { snapshot, events, messages } = state;
      const fresh = events.slice(firstAfter(events, this.#seq));
      const lastSeq = events.at(-1)?.seq ?? this.#seq;
      const record: SwarmRecord = {
        swarmId: this.recordId,
        definitionId: this.shape.definitionId,
        definitionVersion: 1,
        machineVersion: this.shape.machineVersion,
        status: this.shape.status(snapshot),
        revision: this.#revision + 1,
        snapshot,
        result: this.shape.result(snapshot),
        lastSeq,
        updatedAt: Date.now(),
      };
      try {
        await this.port.store.commit({
          swarmId: this.recordId,
          events: fresh as unknown as SwarmEvent[],
          record,
          lease: this.port.lease(),
          ...(messages && messages.length > 0 ? { messages } : {}),
        });
        this.#revision = record.revision;
        this.#seq = lastSeq;
        return;
      } catch (error) {
        state.failed?.();
        const next = this.options.waitForStore ? await this.#afterFailure(error, record.revision, uncertain, last) : undefined;
        if (next === 'again') {
          if (isUnavailable(error)) uncertain++;
          // Made again with the state as it is now; once sealed, with the state the seal took (a
          // commit still scheduled writes it too: a commit more, never a state after the teardown).
          state = this.#sealed ? (this.#pending ?? state) : this.state();
          continue;
        }
        if (next === 'sealed') {
          // Sealed while the store could not be reached: the record keeps what it held, as when
          // the store is down at close; nothing more is written, and no runtime took the record.
          this.#failure = errorText(error);
          return;
        }
        this.#failure = errorText(error);
        this.lost(this.#failure);
        return;
      }
    }
  }

  /**
   * What follows a failed commit of `revision` when the journal waits for its store (see
   * {@link RecordJournalOptions.waitForStore}): `again` once the store may take it (it could not
   * be reached: after a pause until it can; or it refused the revision as written, and an earlier
   * attempt that may have landed turns out to have: the record is at `revision` under this
   * runtime's lease, and the state is written once more on top of it). `sealed` when the attempt
   * was the `last` one (begun once sealed: the owner is closing) or the store could not tell.
   * Undefined when the failure is final: the store refused the record (another runtime wrote it).
   */
  async #afterFailure(error: unknown, revision: number, uncertain: number, last: boolean): Promise<'again' | 'sealed' | undefined> {
    const { store } = this.port;
    if (isUnavailable(error)) {
      // Once sealed, one more attempt, whose commit the store retries for as long as it retries
      // any: NATS may be back by then. Before, the pause ends at the seal.
      if (last) return 'sealed';
      await pauseForStore(store, uncertain, this.#sealing.signal);
      return 'again';
    }
    // Refused: when an earlier attempt may have landed, this may be that attempt's own write.
    if (uncertain === 0 || !(error instanceof RevisionConflictError)) return undefined;
    let stored: SwarmRecord | undefined;
    try {
      stored = await untilReachable(store, () => store.load(this.recordId), this.#sealing.signal);
    } catch (e) {
      return isUnavailable(e) || this.#sealing.signal.aborted ? 'sealed' : undefined;
    }
    if (stored?.revision !== revision || stored.lease?.owner !== this.port.lease().owner) return undefined;
    this.#revision = revision;
    this.#seq = stored.lastSeq;
    this.options.resync?.();
    return 'again';
  }
}

/** The index of the first of `events` (in seq order) whose seq is above `seq`. */
function firstAfter(events: readonly { seq: number }[], seq: number): number {
  let lo = 0;
  let hi = events.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (events[mid]!.seq > seq) hi = mid;
    else lo = mid + 1;
  }
  return lo;
}
