/**
 * Long reads run in steps: work written as a generator that yields after each small unit (a
 * stored row parsed, a chunk of rows replayed) is run either at once or with the event loop
 * running between steps of at most {@link STEP_MS}, so the same code (and the same errors) serve
 * the caller that needs the answer now and the one that must not block (a large team restored).
 *
 * @module
 */

/**
 * How long one step may hold the event loop before it runs: far below the 50 ms a large team's
 * restore may block it, so a loaded machine's slower units and a garbage collection still fit.
 */
export const STEP_MS = 5;

/** Work in units: each `yield` ends one; the generator's return value is the result. */
export type Steps<T> = Generator<void, T, void>;

/** Runs `steps` to its end at once (the event loop waits): for callers that need the answer now. */
export function runAtOnce<T>(steps: Steps<T>): T {
  for (;;) {
    const step = steps.next();
    if (step.done) return step.value;
  }
}

/**
 * Runs `steps` to its end, letting the event loop run (one macrotask) whenever `budgetMs` has
 * passed since it last did. Work that ends within the budget costs no macrotask: the answer
 * comes as soon as {@link runAtOnce} would give it. The first step runs synchronously, before
 * this returns its promise (a caller may rely on what that step reads being read at once).
 */
export async function runInSteps<T>(steps: Steps<T>, budgetMs = STEP_MS): Promise<T> {
  let due = performance.now() + budgetMs;
  for (;;) {
    const step = steps.next();
    if (step.done) return step.value;
    if (performance.now() >= due) {
      await new Promise((resolve) => setImmediate(resolve));
      due = performance.now() + budgetMs;
    }
  }
}
