/**
 * Notices between the runtimes sharing one store without a transport between them (processes on
 * one SQLite file): stop requests for swarms another runtime holds, and a count of lease
 * releases, so a runtime adopts what a draining one let go at once instead of at its next scan.
 *
 * @module
 */

/** A request to stop a swarm, left in the store for the runtime that holds it. */
export interface StopRequest {
  swarmId: string;
  reason: string;
  /** When it was made (ms since the epoch). */
  at: number;
}

/**
 * The notices of a store shared by processes (see {@link SwarmStore.notices}). Every call is one
 * small read or write of the store; the runtimes on it poll {@link stopRequests} and
 * {@link releases} a few times a second while they run.
 */
export interface StoreNotices {
  /** Leaves a request to stop `swarmId` (one per swarm: a newer one replaces it). */
  requestStop(request: StopRequest): void;
  /** The stop requests not handled yet, oldest first. */
  stopRequests(): StopRequest[];
  /** Removes the request for `swarmId` once handled (the swarm stopped, or ended anyway). */
  clearStop(swarmId: string): void;
  /** How many times runtimes released leases on this store: it changes when there is something to adopt. */
  releases(): number;
  /** Counts a release of leases (the releasing runtime calls it after `release`). */
  released(): void;
}
