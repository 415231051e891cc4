/**
 * Waiting with an `AbortSignal`: the one set of helpers every part of the runtime uses, so an
 * abort means the same thing everywhere and leaves no listener or timer behind.
 *
 * @module
 */

/**
 * Settles like `promise`, or rejects with the signal's reason as soon as `signal` aborts (at
 * once when it already has). The promise itself runs on; only the wait for it ends.
 */
export function abortable<T>(promise: Promise<T>, signal: AbortSignal | undefined): Promise<T> {
  if (!signal) return promise;
  if (signal.aborted) return Promise.reject(signal.reason);
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
  });
}

/**
 * Resolves after `ms`, or at once when `signal` aborts (the timer is cleared then). It never
 * rejects: a caller that must fail on abort wraps it in {@link abortable}.
 */
export function delay(ms: number, signal?: AbortSignal, options: { unref?: boolean } = {}): Promise<void> {
  if (signal?.aborted) return Promise.resolve();
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    if (options.unref) timer.unref();
    signal?.addEventListener('abort', done, { once: true });
  });
}

/**
 * Yields `source`'s items until it ends or `signal` aborts; on abort it simply ends (whoever
 * would read the rest is gone) and lets the source finish on its own time.
 */
export async function* untilAborted<T>(source: AsyncIterable<T>, signal: AbortSignal | undefined): AsyncGenerator<T> {
  const it = source[Symbol.asyncIterator]();
  let stop: (() => void) | undefined;
  const stopped = new Promise<'aborted'>((resolve) => {
    stop = () => resolve('aborted');
    if (signal?.aborted) stop();
    else signal?.addEventListener('abort', stop, { once: true });
  });
  try {
    for (;;) {
      const next = await Promise.race([it.next(), stopped]);
      if (next === 'aborted' || next.done) return;
      yield next.value;
    }
  } finally {
    if (stop) signal?.removeEventListener('abort', stop);
    // An async generator suspended in an await handles return() when it resumes; do not wait.
    it.return?.().catch(() => undefined);
  }
}
