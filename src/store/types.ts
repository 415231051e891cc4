/**
 * The store interface: one snapshot record and one event log per swarm, written together.
 *
 * @module
 */
import type { SwarmEvent, SwarmLabel } from '../../machines/events.js';
import { SwarmError } from '../errors.js';
import type { BudgetLedger } from './budgets.js';
import type { MessageWrite } from './messages.js';
import type { StoreNotices } from './notices.js';
import type { PushOutbox } from './push-outbox.js';
import type { SwarmResult, SwarmStatus } from './result.js';

/**
 * What a store keeps per swarm besides its events. `revision` grows by one with every
 * snapshot write; stores reject a write whose revision does not follow the stored one, so two
 * runtimes can never both advance the same swarm.
 */
export interface SwarmRecord {
  swarmId: string;
  definitionId: string;
  definitionVersion: number;
  machineVersion: number;
  status: SwarmStatus;
  revision: number;
  /**
   * The machine's persisted snapshot (`actor.getPersistedSnapshot()`). In a commit its message
   * lists are references written as rows (`Commit.messages`); `load` returns it whole.
   */
  snapshot: unknown;
  /** What `getResult()` answers for this swarm. */
  result: SwarmResult;
  /** Sequence number of the last event written with or before this record. */
  lastSeq: number;
  updatedAt: number;
  /**
   * Set by a store that could not read this record's snapshot or result; the data stays as
   * stored. When the swarm's state depends on it (an unfinished swarm's snapshot, any result),
   * the record reads `status: 'failed'` with a result whose reason names the problem, in
   * `load` and in `list` alike (listings check the snapshots of unfinished swarms only).
   */
  problem?: string;
  /**
   * Who holds the lease on this swarm and until when (absent when nobody): in listings, and in
   * `load` of stores shared by processes, so a command can be sent to the holder.
   */
  lease?: Lease;
  /**
   * What the caller named the run (an ad-hoc swarm's `name`, `description`, `componentId`).
   * Absent for runs without one, and in records written before runs had names.
   */
  label?: SwarmLabel;
}

/** A record without its snapshot: what listings return. */
export type SwarmSummary = Omit<SwarmRecord, 'snapshot'>;

/** Which swarms a listing returns. */
export interface SwarmFilter {
  definitionId?: string;
  status?: readonly SwarmRecord['status'][];
  limit?: number;
  /** Only the runs with this name (`label.name`, see `AdhocParameters.name`). */
  name?: string;
  /** Only the runs with this component id (`label.componentId`). */
  componentId?: string;
  /**
   * Leaves out the swarms whose lease `owner` holds past `at` (ms since epoch): what an
   * adoption scan need not see, the swarms its own runtime drives. A store that ignores it
   * lists them, which costs time, not correctness.
   */
  notHeldBy?: { owner: string; at: number };
}

/** Whether a record's label passes a filter's `name` and `componentId` (for stores filtering in memory). */
export function labelMatches(filter: SwarmFilter, label: SwarmLabel | undefined): boolean {
  return (filter.name === undefined || label?.name === filter.name) && (filter.componentId === undefined || label?.componentId === filter.componentId);
}

/** Whether a listing filtered with `notHeldBy` leaves out a swarm whose lease is `lease`. */
export function leftOutBy(notHeldBy: SwarmFilter['notHeldBy'], lease: Lease | undefined): boolean {
  return notHeldBy !== undefined && lease?.owner === notHeldBy.owner && lease.until > notHeldBy.at;
}

/**
 * An owner's claim on a swarm: only the owner writes, until `until` (ms since epoch). `host`
 * and `pid` name the process that holds it, so a runtime restarted on the same host can see
 * that its predecessor died and take its swarms over at once instead of waiting the lease out.
 */
export interface Lease {
  owner: string;
  until: number;
  /** The holder's host (its name and process namespace): a pid means something only there. */
  host?: string;
  /** The holder's process id on `host`. */
  pid?: number;
}

/**
 * One atomic write: events (numbered, contiguous after the stored ones) and, when a step
 * completed, the new record.
 */
export interface Commit {
  swarmId: string;
  events: SwarmEvent[];
  record?: SwarmRecord;
  /**
   * Writes to the swarm's stored message lists, applied with `record` (only with one): the
   * record's snapshot names its lists by reference instead of holding them (see
   * `src/store/messages.ts`), and `load` returns the snapshot with the lists put back.
   */
  messages?: MessageWrite[];
  /**
   * The writer's lease. A record write is refused unless the stored owner is this one (or the
   * swarm is new); the lease is extended to `until`.
   */
  lease?: Lease;
}

/**
 * A store for swarm state. `commit` may return synchronously (in-memory, SQLite) or a promise
 * (network stores); the runtime holds the next step until it settles.
 */
export interface SwarmStore {
  /**
   * True for a store that does not outlive the process (in-memory): nothing in it survives a
   * crash, so the runtime writes a swarm's snapshot only when the swarm ends or its runtime
   * closes, instead of after every step; records in between carry no snapshot.
   */
  readonly volatile?: boolean;
  /**
   * True for a store that refuses the first record of a swarm that exists (revision 1) with a
   * {@link RevisionConflictError} or {@link LeaseLostError} before writing anything of the
   * commit: the runtime then starts a swarm without reading the store first (the first commit
   * is the check), which saves a network store a round trip per start. Optional: without it,
   * the runtime reads the swarm's summary before starting it.
   */
  readonly refusesExisting?: boolean;
  /**
   * The budget accounts of every swarm on this store (see `budgets.ts`), shared by the runtimes
   * that use it. Optional: a runtime on a store without one keeps its accounts in memory (not
   * shared with other processes, lost on restart).
   */
  readonly budgets?: BudgetLedger;
  /**
   * Stop requests and lease-release counts shared by the processes on this store, for stores
   * shared without a transport (a SQLite file): a stop reaches the swarm's holder, and a drained
   * runtime's swarms are adopted at once (see `notices.ts`). Optional: runtimes on NATS say
   * both over NATS, and a store of one process needs neither.
   */
  readonly notices?: StoreNotices;
  /**
   * The durable outbox of A2A push notifications (`./push-outbox.ts`), when the store keeps one
   * (memory, SQLite, JetStream). Optional: a store without it gets a process-local outbox from the server.
   */
  readonly pushOutbox?: PushOutbox;
  load(swarmId: string): Promise<SwarmRecord | undefined>;
  commit(commit: Commit): void | Promise<void>;
  /**
   * Events with `seq > since`, in order: the first `limit` of them when given (a reader of a
   * long stream pages through it). A stored event that cannot be read (not JSON, or not an
   * event of this swarm) ends the read with a {@link CorruptEventError} naming it, which
   * carries the events before it.
   */
  readEvents(swarmId: string, since: number, limit?: number): Promise<SwarmEvent[]>;
  /**
   * A swarm's summary (its record without the snapshot), for readers that need only its status
   * and result: cheaper than `load` where the snapshot's message lists are stored apart (a
   * network store). Optional: `load` answers otherwise.
   */
  summary?(swarmId: string): Promise<SwarmSummary | undefined>;
  /** Summaries (no snapshot) of swarms, most recently updated first. */
  list(filter?: SwarmFilter): Promise<SwarmSummary[]>;
  /**
   * Takes ownership of an unfinished swarm when nobody holds a live lease on it (or `lease.owner`
   * already does). Returns false when another owner's lease is still running at `now`, unless
   * that owner is `takeover` (a holder the caller knows to be dead): compare-and-set on its name,
   * so a live runtime that took the swarm meanwhile keeps it.
   */
  claim(swarmId: string, lease: Lease, now: number, takeover?: string): Promise<boolean>;
  /**
   * For a store shared by several processes (JetStream): calls `onChange` whenever another
   * process may have written the swarm (new events, a new record), so readers of a swarm that is
   * not live here wake at once instead of polling. Returns the function that stops the calls.
   * Optional: readers of a store without it poll. `onChange` is told, when the store knows it,
   * the seq of the last event the change holds (a new value's record, a commit message's last
   * event): a reader at or past it, or given the events by {@link SwarmStore.knownEvents}, needs
   * no read; undefined: the change may hold anything, the reader reads.
   */
  watch?(swarmId: string, onChange: (lastSeq?: number) => void): () => void;
  /**
   * For a store with `watch`: the events after `since` this process already holds and knows to
   * be committed (what the latest values of the swarm it saw hold), contiguous from `since + 1`,
   * without a round trip; empty when it holds none that continue from `since`. Never more than
   * `readEvents` would give; possibly fewer (the events after them are read as usual). A follower
   * woken by a change takes them instead of reading the store.
   */
  knownEvents?(swarmId: string, since: number): readonly SwarmEvent[];
  /**
   * For a store with `watch`: true when every event of `swarmId` after `lastSeq`, stored now or
   * later, is announced to its watchers (`onChange` with its seq). A reader given the events up
   * to `lastSeq` by {@link SwarmStore.knownEvents} then needs no read to learn of later ones.
   * Optional: without it (or false), a reader reads the store once before it waits.
   */
  announcesAfter?(swarmId: string, lastSeq: number): boolean;
  /**
   * For a network store: false while it cannot reach its server (commits then wait and retry),
   * so the runtime refuses new work at once instead of holding the caller. Optional: a store
   * without it is always reachable.
   */
  connected?(): boolean;
  /** Extends `owner`'s leases on these swarms. */
  renew(owner: string, swarmIds: readonly string[], until: number): Promise<void>;
  /** Gives up `owner`'s leases (graceful shutdown) so another runtime can adopt at once. */
  release(owner: string, swarmIds: readonly string[]): Promise<void>;
  /**
   * How many commits this store has written and in how many transactions (a store that groups
   * commits writes fewer transactions than commits). Optional: for benchmarks and tests.
   */
  stats?(): StoreStats;
  /** Deletes finished swarms (record and events) last updated before `olderThan`; returns how many. */
  prune(olderThan: number): Promise<number>;
  /**
   * Deletes these swarms (record, events, message lists) when they are finished; those running,
   * paused or unknown are left. Returns how many were deleted. Optional: a store without it
   * cannot delete a team (`teamClient.delete()` refuses).
   */
  remove?(swarmIds: readonly string[]): Promise<number>;
  close(): Promise<void>;
}

/** Write counters of a store (see {@link SwarmStore.stats}). */
export interface StoreStats {
  /** Commits written (acknowledged). */
  commits: number;
  /** Transactions that wrote them. */
  transactions: number;
}

/** A write lost a race: the stored revision is not the one the writer started from. */
export class RevisionConflictError extends Error {
  override readonly name = 'RevisionConflictError';
  constructor(
    readonly swarmId: string,
    readonly expected: number,
    readonly actual: number,
  ) {
    super(`Swarm "${swarmId}" was written by someone else (expected revision ${expected}, found ${actual})`);
  }
}

/**
 * A write by an owner whose lease another runtime has taken over: it must stop driving the
 * swarm.
 */
export class LeaseLostError extends Error {
  override readonly name = 'LeaseLostError';
  constructor(
    readonly swarmId: string,
    readonly holder: string,
  ) {
    super(`Swarm "${swarmId}" is now owned by another runtime (${holder})`);
  }
}

/**
 * A stored event that cannot be read: reading a swarm's events stops at it. `readable` holds
 * the events read before it (after the cursor), so a stream can deliver them and then fail.
 */
export class CorruptEventError extends SwarmError {
  constructor(
    readonly swarmId: string,
    readonly seq: number,
    detail: string,
    readonly readable: SwarmEvent[] = [],
    /** `incompatible-version`: the event is readable, but in a format this runtime does not read (`detail` says which). */
    code: 'corrupt' | 'incompatible-version' = 'corrupt',
  ) {
    super(`Cannot read event ${seq} of swarm "${swarmId}": ${code === 'corrupt' ? `the stored event is corrupt (${detail})` : detail}`, code);
  }
}
