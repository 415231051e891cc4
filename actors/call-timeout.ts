/**
 * Calls bounded by their stored deadline (`CallTimeout`, see `machines/calls/kind.ts`): the work
 * gets a signal that also aborts when the deadline passes, with a {@link CallTimeoutError} as
 * its reason, and the call answers with what a timeout gives, without waiting for work that
 * ignores its signal. A call restored after its deadline has passed does not run at all.
 *
 * @module
 */
import type { CallTimeout } from '../machines/calls/kind.js';

/** The reason a call's signal aborts at its deadline. */
export class CallTimeoutError extends Error {
  override readonly name = 'CallTimeoutError';
  constructor(readonly timeoutMs: number) {
    super(`timed out after ${timeoutMs} ms (timeoutMs)`);
  }
}

/** Whether `reason` (a signal's) is a call's deadline passing. */
export function isCallTimeout(reason: unknown): reason is CallTimeoutError {
  return reason instanceof CallTimeoutError;
}

/**
 * `work` run with `signal` and, when `timeout` is given, aborted at its deadline: then (or at
 * once, when the deadline has already passed) the answer is `onTimeout(error)` (which may
 * throw: the call then fails). Without a timeout, `work(signal)` as it is.
 */
export async function withinDeadline<T>(
  timeout: CallTimeout | undefined,
  signal: AbortSignal,
  work: (signal: AbortSignal) => Promise<T>,
  onTimeout: (error: CallTimeoutError) => T,
): Promise<T> {
  if (!timeout) return work(signal);
  const error = new CallTimeoutError(timeout.ms);
  const remaining = timeout.deadline - Date.now();
  if (remaining <= 0) return onTimeout(error);
  const bounded = new AbortController();
  let timer: NodeJS.Timeout | undefined;
  const expired = new Promise<T>((resolve, reject) => {
    timer = setTimeout(() => {
      bounded.abort(error);
      try {
        resolve(onTimeout(error));
      } catch (e) {
        reject(e);
      }
    }, remaining);
  });
  // The caller's abort (a stop, a shutdown) reaches the work and frees the timer.
  const forward = () => {
    clearTimeout(timer);
    bounded.abort(signal.reason);
  };
  signal.addEventListener('abort', forward, { once: true });
  if (signal.aborted) forward();
  try {
    return await Promise.race([work(bounded.signal), expired]);
  } finally {
    clearTimeout(timer);
    signal.removeEventListener('abort', forward);
  }
}
