/**
 * Waiting for something in tests: {@link until} polls for a condition or a value, on
 * `vi.waitFor`. (To let time pass on purpose: `sleep` of `./sleep.ts`.)
 *
 * Use `vi.waitFor(() => expect(…))` where an assertion is what is awaited; `until` where the
 * test waits for a value (it returns it), or where a failure should say what was awaited.
 */
import { inspect } from 'node:util';
import { vi } from 'vitest';

/** How long {@link until} waits, and how often it looks. */
export interface WaitOptions {
  /** Milliseconds before it fails (5 s). */
  timeout?: number;
  /** Milliseconds between two looks (10). */
  interval?: number;
}

/**
 * Resolves once `read()` gives a value `ok` accepts (any truthy value when there is no `ok`),
 * with that value. Rejects when `read` or `ok` throws (at once, with that error), or when no
 * value is accepted within the timeout: then with `what` in the message, and the last value
 * read when there is an `ok`.
 *
 * @example
 *   await until('the swarm to passivate', () => runtime.stats().passivated === 1);
 *   const done = await until('run-1 to end', () => status(url, 'steps', 'run-1'), (r) => r.status !== 'running', { timeout: 10_000 });
 */
export function until<T>(what: string, read: () => T | Promise<T>, options?: WaitOptions): Promise<T>;
export function until<T>(what: string, read: () => T | Promise<T>, ok: (value: T) => boolean, options?: WaitOptions): Promise<T>;
export async function until<T>(what: string, read: () => T | Promise<T>, okOrOptions?: ((value: T) => boolean) | WaitOptions, maybeOptions?: WaitOptions): Promise<T> {
  const ok = typeof okOrOptions === 'function' ? okOrOptions : undefined;
  const { timeout = 5_000, interval = 10 } = (typeof okOrOptions === 'function' ? maybeOptions : okOrOptions) ?? {};
  // Made here, so that its stack points at the test that waited.
  const timedOut = new Error(`timed out after ${timeout} ms waiting for ${what}`);
  let last: { value: T } | undefined;
  // The callback throws only to be called again: an error of `read` or `ok` ends the wait as it is.
  const outcome = await vi
    .waitFor(
      async (): Promise<{ value: T } | { error: unknown }> => {
        try {
          const value = await read();
          if (ok ? ok(value) : value) return { value };
          last = { value };
        } catch (error) {
          return { error };
        }
        throw timedOut;
      },
      { timeout, interval },
    )
    .catch(() => {
      if (ok && last) timedOut.message += `; last value: ${inspect(last.value, { depth: 4, breakLength: Infinity })}`;
      throw timedOut;
    });
  if ('error' in outcome) throw outcome.error;
  return outcome.value;
}
