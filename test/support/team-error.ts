/**
 * Asserting the TeamError a synchronous team call throws, for the board and inbox tests.
 */
import { expect } from 'vitest';
import { TeamError, type TeamErrorCode } from '../../src/errors.js';

/** Runs `fn` and returns the TeamError with `code` it throws (failing the test when it throws nothing else). */
export function teamError(fn: () => unknown, code: TeamErrorCode): TeamError {
  try {
    fn();
  } catch (error) {
    expect(error).toBeInstanceOf(TeamError);
    expect((error as TeamError).code).toBe(code);
    return error as TeamError;
  }
  throw new Error(`expected a TeamError ${code}`);
}
