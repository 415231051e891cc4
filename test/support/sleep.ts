/**
 * Letting time pass on purpose: a delay a test or a scripted model takes (to wait for a
 * condition, see `until` in `./wait.ts`). Free of vitest, so the fixture processes may use it.
 */

/** Resolves after `ms`, rejecting when `signal` aborts. */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    const t = setTimeout(resolve, ms);
    signal?.addEventListener(
      'abort',
      () => {
        clearTimeout(t);
        reject(signal.reason);
      },
      { once: true },
    );
  });
}
