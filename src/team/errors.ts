/**
 * The one error type of team mode and the agent registry: a message for people and a `code`
 * for programs (and for the MCP and API layers that map codes to their own error shapes).
 *
 * @module
 */

/** What went wrong, machine-readably. Each module adds its codes here. */
export type TeamErrorCode =
  // Limits (src/team/limits.ts): a value that is not a limit, or a limit that would be exceeded.
  | 'invalid-limit'
  | 'limit'
  // Task board (src/team/board.ts).
  | 'cycle'
  | 'unknown-dependency'
  | 'not-claimable'
  | 'not-owner'
  | 'stale-attempt'
  | 'wrong-state'
  | 'invalid-snapshot'
  // Inbox (src/team/inbox.ts).
  | 'invalid-message'
  | 'not-a-member'
  | 'duplicate-member'
  // Agent registry (src/registry/).
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
  // Team runtime (src/team/host.ts, teams.ts, client.ts).
  | 'unknown-team'
  | 'team-in-use'
  | 'wrong-team-state';

/** An error of team mode or the agent registry, with a {@link TeamErrorCode}. */
export class TeamError extends Error {
  override readonly name = 'TeamError';
  constructor(message: string, readonly code: TeamErrorCode) {
    super(message);
  }
}
