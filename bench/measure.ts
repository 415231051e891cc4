/**
 * Timing and memory helpers shared by every row.
 *
 * @module
 */
import { constants, type PerformanceEntry, PerformanceObserver } from 'node:perf_hooks';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

/** Runs per sequential row and warm-up runs before them. */
export const SEQUENTIAL_RUNS = 2000;
export const WARMUP_RUNS = 200;
/** Runs started together in a concurrent row, and the model latency they see. */
export const CONCURRENT_RUNS = 1000;
export const CONCURRENT_LATENCY_MS = 20;
/** How often the RSS sampler looks while a row runs. */
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
 * How long V8's background threads take to give the pages a full collection freed back to the
 * system: measured, an RSS read at once after `gc()` still counted ~3 KB per evicted swarm of
 * freed heap that 50 ms later was gone (and stayed gone for the next 2 s).
 */
const RELEASE_MS = 250;

/**
 * The process's memory at rest: after a full collection and the release of the pages it freed.
 * A before/after memory figure reads both ends through here, and a peak growth its baseline, so
 * neither counts garbage or freed pages on their way back to the system.
 */
export async function settledMemory(): Promise<NodeJS.MemoryUsage> {
  collectGarbage();
  await sleep(RELEASE_MS);
  return process.memoryUsage();
}

/** The value below which `p` (0–1) of the sorted `values` lie (nearest rank). */
export function percentile(values: readonly number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(p * sorted.length) - 1))]!;
}

/** The time of sequential runs: the mean and the run-time distribution, in µs; and V8's collections meanwhile. */
export interface SequentialTiming extends GcFigures {
  usPerRun: number;
  p50Us: number;
  p99Us: number;
}

/**
 * V8's garbage collections while runs were timed: the pause time per run, and the young
 * generation's collections (scavenges), which stop the thread in whichever run they land: how
 * many per 1000 runs and how long each takes.
 */
export interface GcFigures {
  gcUsPerRun: number;
  scavengesPer1000Runs: number;
  scavengeMeanMs: number;
}

/** Collects V8's `gc` performance entries until `stop(runs)`, which summarizes them per run. */
function watchGc(): { stop(runs: number): Promise<GcFigures> } {
  let pauseMs = 0;
  const scavenges: number[] = [];
  const take = (entries: readonly PerformanceEntry[]) => {
    for (const e of entries) {
      pauseMs += e.duration;
      if ((e as unknown as { detail?: { kind?: number } }).detail?.kind === constants.NODE_PERFORMANCE_GC_MINOR) scavenges.push(e.duration);
    }
  };
  const observer = new PerformanceObserver((list) => take(list.getEntries()));
  observer.observe({ entryTypes: ['gc'] });
  return {
    async stop(runs) {
      // Entries are delivered asynchronously: take the ones not delivered yet.
      await new Promise((resolve) => setTimeout(resolve, 20));
      take(observer.takeRecords());
      observer.disconnect();
      return {
        gcUsPerRun: (pauseMs * 1000) / runs,
        scavengesPer1000Runs: (scavenges.length * 1000) / runs,
        scavengeMeanMs: scavenges.length ? scavenges.reduce((a, b) => a + b, 0) / scavenges.length : 0,
      };
    },
  };
}

/** Times `runs` sequential calls of `once` after `warmup` untimed ones. */
export async function timeSequential(once: (i: number) => Promise<void>, warmup = WARMUP_RUNS, runs = SEQUENTIAL_RUNS): Promise<SequentialTiming> {
  for (let i = 0; i < warmup; i++) await once(i);
  collectGarbage();
  const each: number[] = new Array(runs);
  const gcs = watchGc();
  const start = process.hrtime.bigint();
  let last = start;
  for (let i = 0; i < runs; i++) {
    await once(warmup + i);
    const now = process.hrtime.bigint();
    each[i] = Number(now - last) / 1000;
    last = now;
  }
  const usPerRun = Number(last - start) / 1000 / runs;
  return { usPerRun, p50Us: percentile(each, 0.5), p99Us: percentile(each, 0.99), ...(await gcs.stop(runs)) };
}

/** A running RSS sampler: `peak()` is the highest RSS seen so far (bytes), `stop()` ends it. */
export interface RssSampler {
  sample(): void;
  peak(): number;
  stop(): number;
}

/** Samples RSS every {@link RSS_SAMPLE_MS} until stopped (and whenever `sample()` is called). */
export function sampleRss(): RssSampler {
  let peak = process.memoryUsage.rss();
  const sample = () => {
    peak = Math.max(peak, process.memoryUsage.rss());
  };
  const timer = setInterval(sample, RSS_SAMPLE_MS);
  return {
    sample,
    peak: () => peak,
    stop() {
      clearInterval(timer);
      sample();
      return peak;
    },
  };
}

/**
 * Starts `runs` calls of `once` together and waits for all of them, sampling RSS meanwhile.
 *
 * @returns wall milliseconds from start to the last completion, the highest RSS seen (MB), and
 * the milliseconds V8's collections paused this thread meanwhile
 */
export async function timeConcurrent(once: (i: number) => Promise<void>, runs = CONCURRENT_RUNS): Promise<{ wallMs: number; peakRssMb: number; gcMs: number }> {
  collectGarbage();
  const rss = sampleRss();
  const gcs = watchGc();
  const start = process.hrtime.bigint();
  let wallMs: number;
  try {
    await Promise.all(Array.from({ length: runs }, (_, i) => once(i)));
  } finally {
    wallMs = Number(process.hrtime.bigint() - start) / 1e6;
    rss.stop();
  }
  const { gcUsPerRun } = await gcs.stop(runs);
  return { wallMs, peakRssMb: rss.peak() / 2 ** 20, gcMs: (gcUsPerRun * runs) / 1000 };
}

/** Milliseconds elapsed since `start` (from `process.hrtime.bigint()`). */
export function msSince(start: bigint): number {
  return Number(process.hrtime.bigint() - start) / 1e6;
}

/** Resolves after `ms` milliseconds. */
export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
