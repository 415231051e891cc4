/**
 * The limits of team mode (seed 004): how many workers, teams and tasks, how long a worker may
 * stay silent and how long inbox messages are kept. Every limit is configurable; a value that
 * is not a limit is refused when the team is defined, and exceeding a limit is a
 * {@link TeamError} `limit`, never a silent drop.
 *
 * @module
 */
import { TeamError } from '../errors.js';

/** The limits of one team. Durations are milliseconds. */
export interface TeamLimits {
  /** Workers one team may run at once (respawns replace, they do not add). */
  readonly maxWorkers: number;
  /** Teams one runtime may run at once. */
  readonly maxTeams: number;
  /** Tasks one board may hold, whatever their status. */
  readonly maxTasksPerBoard: number;
  /** How long a worker may stay silent (no heartbeat) before its tasks are released. */
  readonly workerTimeoutMs: number;
  /** How long an inbox keeps a message; older ones are dropped and never read. */
  readonly inboxRetentionMs: number;
  /** Failed attempts after which a task escalates to a human instead of being retried. */
  readonly maxAttempts: number;
}

/** The seed's values, used for every limit a team does not set. */
export const DEFAULT_TEAM_LIMITS: TeamLimits = Object.freeze({
  maxWorkers: 10,
  maxTeams: 5,
  maxTasksPerBoard: 100,
  workerTimeoutMs: 10 * 60_000,
  inboxRetentionMs: 60 * 60_000,
  maxAttempts: 3,
});

const NAMES = Object.keys(DEFAULT_TEAM_LIMITS) as (keyof TeamLimits)[];

/**
 * The full limits of a team: the given values over {@link DEFAULT_TEAM_LIMITS}. Throws a
 * {@link TeamError} `invalid-limit` naming the field for an unknown name (a typo would
 * otherwise leave the default in force unnoticed) or a value that is not a positive safe
 * integer.
 */
export function resolveTeamLimits(given: Partial<TeamLimits> = {}): TeamLimits {
  if (typeof given !== 'object' || given === null || Array.isArray(given)) {
    throw new TeamError(`team limits must be an object, not ${describe(given)}`, 'invalid-limit');
  }
  for (const name of Object.keys(given)) {
    if (!(NAMES as string[]).includes(name)) {
      throw new TeamError(`unknown team limit "${name}" (known: ${NAMES.join(', ')})`, 'invalid-limit');
    }
  }
  const limits: { -readonly [K in keyof TeamLimits]: number } = { ...DEFAULT_TEAM_LIMITS };
  for (const name of NAMES) {
    const value: unknown = given[name];
    if (value === undefined) continue;
    if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 1) {
      throw new TeamError(`team limit ${name} must be a positive integer, not ${describe(value)}`, 'invalid-limit');
    }
    limits[name] = value;
  }
  return Object.freeze(limits);
}

/** The limits that bound a count (those that {@link checkLimit} can check). */
export type CountLimit = 'maxWorkers' | 'maxTeams' | 'maxTasksPerBoard';

/**
 * Refuses to grow a count past its limit: `current` things exist and `adding` more are asked
 * for. Throws a {@link TeamError} `limit` whose message names the limit, its value and the
 * count the change would reach; exactly at the limit is allowed. Call it before changing
 * anything, so a refused change leaves nothing half done.
 */
export function checkLimit(limits: TeamLimits, name: CountLimit, current: number, adding = 1): void {
  const limit = limits[name];
  if (current + adding > limit) {
    throw new TeamError(`${name} is ${limit}: ${current} exist, adding ${adding} would make ${current + adding}`, 'limit');
  }
}

function describe(value: unknown): string {
  if (typeof value === 'string') return JSON.stringify(value);
  if (typeof value === 'number' || typeof value === 'boolean' || value === null || value === undefined) return String(value);
  return Array.isArray(value) ? 'an array' : `a ${typeof value}`;
}
