/**
 * Error classes of the public API, so callers can tell mistakes apart without parsing text.
 *
 * @module
 */

/**
 * A definition mistake found when the runtime is created or a run is resolved: duplicate ids,
 * a handoff to an unknown agent, an invalid tool name.
 */
export class DefinitionError extends Error {
  override readonly name = 'DefinitionError';
}

/**
 * A swarm could not be started or commanded: unknown definition, invalid input, id in use,
 * a command that does not fit the swarm's state.
 */
export class SwarmError extends Error {
  override readonly name = 'SwarmError';
  constructor(
    message: string,
    /** What went wrong, for callers that map errors (an HTTP status, a protocol error). */
    readonly code: SwarmErrorCode = 'wrong-state',
  ) {
    super(message);
  }
}

/**
 * The kinds of {@link SwarmError}. `not-live`: the swarm is unfinished but driven by another
 * runtime (or not adopted yet); `store`: the store refused or failed the write; `invalid-id`:
 * not a valid swarm id (see `swarmIdProblem`); `invalid-cursor`: an event cursor (`since`)
 * beyond the last event of a swarm that has ended, so no event can ever follow it.
 * `corrupt`: stored data of the swarm cannot be read (the message names the swarm and the row).
 * `incompatible-version`: stored data was written in a format this runtime does not read (an
 * event of an older event format). `unavailable`: the connection to NATS is down (the command
 * was not applied; try again once it is back).
 */
export type SwarmErrorCode =
  | 'unknown-definition'
  | 'invalid-input'
  | 'invalid-id'
  | 'invalid-cursor'
  | 'id-in-use'
  | 'unknown-swarm'
  | 'wrong-state'
  | 'not-live'
  | 'closed'
  | 'store'
  | 'corrupt'
  | 'incompatible-version'
  | 'unavailable';
