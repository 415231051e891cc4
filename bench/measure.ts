/**
 * Timing and memory helpers shared by every row.
 *
 * @module
 */
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

/** Runs per sequential row and warm-up runs before them. */
export const SEQUENTIAL_RUNS = 2000;
export const WARMUP_RUNS = 200;
/** Runs started together in a concurrent row, and the model latency they see. */
export const CONCURRENT_RUNS = 1000;
export const CONCURRENT_LATENCY_MS = 20;
/** How often the RSS sampler looks during a concurrent row. */
const RSS_SAMPLE_MS = 2;

/**
 * `global.gc` when node runs with `--expose-gc`; otherwise the same function obtained by
 * turning the flag on at run time (so `npm run bench` gets comparable RSS figures without
 * extra node flags). Undefined only if both fail.
 */
function findGc(): (() => void) | undefined {
  const exposed = (globalThis as { gc?: () => void }).gc;
  if (exposed) return exposed;
  try {
    setFlagsFromString('--expose-gc');
    return runInNewContext('gc') as () => void;
  } catch {
    return undefined;
  }
}
const gc = findGc();

/** Full garbage collection (twice, so objects freed by finalizers go too), if available. */
export function collectGarbage(): void {
  gc?.();
  gc?.();
}

/**
 * Times `runs` sequential calls of `once` after `warmup` untimed ones.
 *
 * @returns microseconds per run
 */
export async function timeSequential(once: (i: number) => Promise<void>, warmup = WARMUP_RUNS, runs = SEQUENTIAL_RUNS): Promise<number> {
  for (let i = 0; i < warmup; i++) await once(i);
  collectGarbage();
  const start = process.hrtime.bigint();
  for (let i = 0; i < runs; i++) await once(warmup + i);
  return Number(process.hrtime.bigint() - start) / 1000 / runs;
}

/**
 * Starts `runs` calls of `once` together and waits for all of them, sampling RSS meanwhile.
 *
 * @returns wall milliseconds from start to the last completion, and the highest RSS seen (MB)
 */
export async function timeConcurrent(
  once: (i: number) => Promise<void>,
  runs = CONCURRENT_RUNS,
): Promise<{ concurrentWallMs: number; peakRssMb: number }> {
  collectGarbage();
  let peak = process.memoryUsage.rss();
  const sampler = setInterval(() => {
    peak = Math.max(peak, process.memoryUsage.rss());
  }, RSS_SAMPLE_MS);
  const start = process.hrtime.bigint();
  try {
    await Promise.all(Array.from({ length: runs }, (_, i) => once(i)));
  } finally {
    clearInterval(sampler);
  }
  const concurrentWallMs = Number(process.hrtime.bigint() - start) / 1e6;
  peak = Math.max(peak, process.memoryUsage.rss());
  return { concurrentWallMs, peakRssMb: peak / 2 ** 20 };
}
