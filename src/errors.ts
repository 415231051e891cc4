/**
 * Every error class of the public API, each with a `code` for programs, so callers can tell
 * mistakes apart without parsing text: {@link DefinitionError} (definitions), {@link SwarmError}
 * (starting, commanding and reading swarms) and {@link TeamError} (team mode and the agent
 * registry).
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
 * New work refused by a draining runtime (`runtime.drain()`, or `xswarm serve` / `xswarm worker`
 * on SIGTERM): a run, a start, a hosted call from another runtime, an adoption. The swarms it
 * held are released to the other runtimes on the same store or NATS; send the work there.
 * Its `code` is `draining` (HTTP 503).
 */
export class RuntimeDrainingError extends SwarmError {
  constructor(what: string) {
    super(`This runtime is draining: it takes no new work (${what}); another runtime on the same store or NATS takes it`, 'draining');
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
 * was not applied; try again once it is back). `draining`: the runtime is draining
 * (`runtime.drain()`, SIGTERM): it takes no new work; send it to another runtime.
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
  | 'unavailable'
  | 'draining';

/**
 * What went wrong in team mode or the agent registry, machine-readably (the MCP and HTTP layers
 * map codes to their own error shapes). Each module adds its codes here.
 */
export type TeamErrorCode =
  // Team limits: a value that is not a limit, or a limit that would be exceeded.
  | 'invalid-limit'
  | 'limit'
  // Task board.
  | 'cycle'
  | 'unknown-dependency'
  | 'not-claimable'
  | 'not-owner'
  | 'stale-attempt'
  | 'wrong-state'
  | 'invalid-snapshot'
  // Inbox.
  | 'invalid-message'
  | 'not-a-member'
  | 'duplicate-member'
  // Agent registry.
  | 'invalid-card'
  | 'card-unreachable'
  | 'duplicate-agent'
  | 'unknown-agent'
  | 'no-agent'
  | 'agent-failed'
  | 'duplicate-task'
  | 'unknown-task'
  | 'invalid-task'
  | 'registry-closed'
  | 'registry-in-use'
  // Team runtime.
  | 'unknown-team'
  | 'team-in-use'
  | 'wrong-team-state';

/** An error of team mode or the agent registry, with a {@link TeamErrorCode}. */
export class TeamError extends Error {
  override readonly name = 'TeamError';
  constructor(
    message: string,
    readonly code: TeamErrorCode,
  ) {
    super(message);
  }
}
