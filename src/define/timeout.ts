/**
 * `timeoutMs`, as tools, child swarms and handoffs declare it: how long one call may take,
 * counted from the model response that asked for it. The deadline this makes is stored with the
 * call's round, so a swarm restored after a crash enforces the same deadline, not a fresh one.
 *
 * @module
 */
import type { OnTimeout } from '../../machines/calls/kind.js';
import { DefinitionError } from '../errors.js';

export type { OnTimeout } from '../../machines/calls/kind.js';

/** The longest timeout accepted: about 24.8 days, what `setTimeout` can wait. */
export const MAX_TIMEOUT_MS = 2 ** 31 - 1;

/**
 * `value` when it is a valid `timeoutMs` (a whole number of milliseconds from 1 to
 * {@link MAX_TIMEOUT_MS}) or absent; otherwise a {@link DefinitionError} naming `owner`.
 */
export function checkTimeoutMs(value: unknown, owner: string): number | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 1 || value > MAX_TIMEOUT_MS) {
    throw new DefinitionError(`${owner}: timeoutMs must be a whole number of milliseconds from 1 to ${MAX_TIMEOUT_MS}, got ${JSON.stringify(value) ?? String(value)}`);
  }
  return value;
}

/**
 * `value` when it is an {@link OnTimeout} (`'result'`: the model reads the timeout, the default;
 * `'fail'`: the swarm that made the call fails) or absent; otherwise a {@link DefinitionError}.
 */
export function checkOnTimeout(value: unknown, owner: string): OnTimeout | undefined {
  if (value === undefined || value === 'result' || value === 'fail') return value;
  throw new DefinitionError(`${owner}: onTimeout must be 'result' or 'fail', got ${JSON.stringify(value) ?? String(value)}`);
}
