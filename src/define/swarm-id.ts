/**
 * What a swarm id is. An id names its swarm in the store, in every URL of `serve()` (one path
 * segment), in A2A (the task id) and MCP, so it must survive all of them unchanged: well-formed
 * Unicode (a lone surrogate does not survive UTF-8, so the stored id would differ from the one
 * the caller holds), bounded in length, and free of what ends, escapes or hides a path segment.
 *
 * @module
 */
import { SwarmError } from '../errors.js';

/** The longest id a caller may choose (UTF-16 code units; a generated UUID has 36). */
export const MAX_SWARM_ID_LENGTH = 128;

/**
 * The longest id of any swarm, child swarms included. A child's id is its parent's plus
 * `:t<turn>:<index>`, so this leaves room for dozens of nesting levels below a caller's
 * longest id; a deeper child fails to start (its parent's call reports why).
 */
export const MAX_DERIVED_SWARM_ID_LENGTH = 512;

/**
 * Characters an id may not contain: `/` `\` `?` `#` `%` (they split, end or escape a URL path
 * segment), control and invisible format characters, whitespace, and lone surrogates
 * (in a `u` regex a lone surrogate is a code point of category Cs; a pair is not).
 */
const FORBIDDEN = /[/\\?#%\p{Cc}\p{Cf}\p{White_Space}\p{Cs}]/u;

/**
 * Why `id` is not a valid swarm id, or undefined when it is. `maxLength` is
 * {@link MAX_SWARM_ID_LENGTH} for an id a caller chooses; ids that may name a child swarm
 * (lookups) allow {@link MAX_DERIVED_SWARM_ID_LENGTH}.
 */
export function swarmIdProblem(id: unknown, maxLength: number = MAX_SWARM_ID_LENGTH): string | undefined {
  if (typeof id !== 'string') return `a swarm id must be a string, not ${id === null ? 'null' : typeof id}`;
  if (id === '') return 'a swarm id must not be empty';
  if (id.length > maxLength) return `a swarm id may have at most ${maxLength} characters, this one has ${id.length}`;
  if (id === '.' || id === '..') return `a swarm id may not be "${id}"`;
  const bad = FORBIDDEN.exec(id)?.[0];
  if (bad === undefined) return undefined;
  const printable = /^[/\\?#%]$/.test(bad) ? `"${bad}"` : `U+${bad.codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0')}`;
  return `a swarm id may not contain ${printable} (allowed: up to ${maxLength} characters of well-formed text without whitespace, control characters, / \\ ? # %)`;
}

/** Whether `id` is a valid swarm id (see {@link swarmIdProblem}). */
export function isSwarmId(id: unknown, maxLength: number = MAX_SWARM_ID_LENGTH): id is string {
  return swarmIdProblem(id, maxLength) === undefined;
}

/**
 * Throws a `SwarmError` with code `invalid-id` unless `id` is a valid swarm id: every door
 * calls it before a swarm is started or looked up by a caller's id.
 */
export function assertSwarmId(id: unknown, maxLength: number = MAX_SWARM_ID_LENGTH): asserts id is string {
  const problem = swarmIdProblem(id, maxLength);
  if (problem) throw new SwarmError(`Invalid swarm id: ${problem}`, 'invalid-id');
}
