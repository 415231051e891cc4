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
import type { SwarmResult, SwarmStatus } from './result.js';
import type { Lease, SwarmRecord, SwarmStore } from './types.js';

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

/** The state a commit writes: the snapshot and the events so far. */
interface RecordState<S> {
  snapshot: S;
  events: readonly { seq: number }[];
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

  constructor(
    private readonly port: RecordStorePort,
    private readonly recordId: string,
    private readonly shape: RecordShape<S>,
    private readonly state: () => RecordState<S>,
    /** Called once when a write fails for good (another runtime took the record, or the store refuses). */
    private readonly lost: (reason: string) => void,
    from: { revision: number; seq: number } = { revision: 0, seq: 0 },
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
    if (this.#scheduled && !this.#failure) {
      const { snapshot, events } = this.state();
      // A copy of the list: events appended later (the teardown's) are not this state's.
      this.#pending = { snapshot, events: [...events] };
    }
  }

  /** Resolves once everything scheduled so far is written (or failed). */
  flush(): Promise<void> {
    return this.#writing;
  }

  async #commit(): Promise<void> {
    if (this.#failure) return;
    const { snapshot, events } = this.#pending ?? this.state();
    this.#pending = undefined;
    const fresh = events.filter((e) => e.seq > this.#seq);
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
      await this.port.store.commit({ swarmId: this.recordId, events: fresh as unknown as SwarmEvent[], record, lease: this.port.lease() });
      this.#revision = record.revision;
      this.#seq = lastSeq;
    } catch (error) {
      this.#failure = errorText(error);
      this.lost(this.#failure);
    }
  }
}
