/**
 * The W1 rows: the runtime on its default in-memory store, and the bare XState reference.
 * Each row builds its own runtime or machine, so rows do not share state.
 *
 * @module
 */
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { sqliteStore } from '../src/store/sqlite.js';
import { createBareW1, runBareW1 } from './bare-xstate.js';
import { CONCURRENT_LATENCY_MS, CONCURRENT_RUNS, SEQUENTIAL_RUNS, timeConcurrent, timeSequential, WARMUP_RUNS } from './measure.js';
import type { RowFigures, RowSpec } from './table.js';
import { type CallCounts, createW1Runtime, type W1Runtime, newCounts, W1_AGENTS, W1_INPUT, W1_MODEL_CALLS, W1_RESULT, W1_SWARM_ID } from './w1.js';

/**
 * Throws unless the script saw exactly one call per agent and four orchestrator calls for each
 * of `runs` completed runs (checked after every sequential run, so a miscount is caught at once).
 */
function checkCounts(counts: CallCounts, runs: number): void {
  for (const agent of W1_AGENTS) {
    if (counts[agent] !== runs) throw new Error(`${agent} was called ${counts[agent]} times in ${runs} runs, expected ${runs}`);
  }
  const expected = (W1_MODEL_CALLS - W1_AGENTS.length) * runs;
  if (counts[W1_SWARM_ID] !== expected) throw new Error(`orchestrator was called ${counts[W1_SWARM_ID]} times, expected ${expected}`);
}

function checkResult(result: unknown): void {
  const r = result as { status?: unknown; result?: unknown };
  if (r.status !== 'completed' || r.result !== W1_RESULT) throw new Error(`unexpected W1 result: ${JSON.stringify(result)}`);
}

/** One W1 run through the public client API: start, wait until final, check the result. */
async function runOnce({ runtime, swarm }: W1Runtime): Promise<void> {
  const client = runtime.forSwarm(swarm);
  await client.run(W1_INPUT);
  checkResult(await client.wait());
}

const sequentialFigures = (usPerRun: number, writesPerRun: number | null = null): RowFigures => ({
  usPerRun,
  usPerModelCall: usPerRun / W1_MODEL_CALLS,
  concurrentWallMs: null,
  peakRssMb: null,
  writesPerRun,
});

const concurrentFigures = (m: { concurrentWallMs: number; peakRssMb: number }): RowFigures => ({
  usPerRun: null,
  usPerModelCall: null,
  ...m,
  writesPerRun: null,
});

/** W1 on one runtime with the in-memory store, one run at a time, no model latency. */
export async function runtimeSequential(): Promise<RowFigures> {
  const w1 = createW1Runtime(0);
  try {
    const usPerRun = await timeSequential(async (i) => {
      await runOnce(w1);
      checkCounts(w1.counts, i + 1);
    });
    return sequentialFigures(usPerRun);
  } finally {
    await w1.runtime.close();
  }
}

/**
 * Warm-up for a concurrent row, on a throwaway runtime: the JIT state of the sequential rows
 * without their memory high-water mark (each row runs in its own process).
 */
async function warmRuntime(): Promise<void> {
  const w1 = createW1Runtime(0);
  for (let i = 0; i < WARMUP_RUNS; i++) await runOnce(w1);
  await w1.runtime.close();
}

/** W1 on one runtime: {@link CONCURRENT_RUNS} runs started together, 20 ms per model call. */
export async function runtimeConcurrent(): Promise<RowFigures> {
  await warmRuntime();
  const w1 = createW1Runtime(CONCURRENT_LATENCY_MS);
  try {
    const m = await timeConcurrent(() => runOnce(w1));
    checkCounts(w1.counts, CONCURRENT_RUNS);
    return concurrentFigures(m);
  } finally {
    await w1.runtime.close();
  }
}

/**
 * W1 on the SQLite store (WAL, on the project's disk, not a RAM disk), one run at a time:
 * every completed step is one transaction, fsynced with `synchronous: 'FULL'`.
 */
function sqliteSequential(synchronous: 'FULL' | 'NORMAL'): () => Promise<RowFigures> {
  return async () => {
    mkdirSync('.xswarm', { recursive: true });
    const dir = mkdtempSync(join('.xswarm', 'bench-'));
    const store = sqliteStore(join(dir, 'state.db'), { synchronous });
    const w1 = createW1Runtime(0, store);
    try {
      let runs = 0;
      const usPerRun = await timeSequential(
        async (i) => {
          await runOnce(w1);
          runs++;
          checkCounts(w1.counts, i + 1);
        },
        // Fewer runs: each one fsyncs several times.
        WARMUP_RUNS / 4,
        SEQUENTIAL_RUNS / 4,
      );
      return sequentialFigures(usPerRun, store.writes / runs);
    } finally {
      await w1.runtime.close();
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    }
  };
}

/** The bare XState reference, one run at a time, no model latency. */
export async function bareSequential(): Promise<RowFigures> {
  const counts = newCounts();
  const machine = createBareW1(counts, 0);
  const usPerRun = await timeSequential(async (i) => {
    checkResult({ status: 'completed', result: await runBareW1(machine, W1_INPUT) });
    checkCounts(counts, i + 1);
  });
  return sequentialFigures(usPerRun);
}

/** The bare XState reference: {@link CONCURRENT_RUNS} runs started together, 20 ms per call. */
export async function bareConcurrent(): Promise<RowFigures> {
  // Warm-up on a throwaway machine, as for the runtime row.
  const warm = createBareW1(newCounts(), 0);
  for (let i = 0; i < WARMUP_RUNS; i++) await runBareW1(warm, W1_INPUT);
  const counts = newCounts();
  const machine = createBareW1(counts, CONCURRENT_LATENCY_MS);
  const m = await timeConcurrent(async () => {
    checkResult({ status: 'completed', result: await runBareW1(machine, W1_INPUT) });
  });
  checkCounts(counts, CONCURRENT_RUNS);
  return concurrentFigures(m);
}

/** Workload names of the rows, used for the runtime/bare ratio. */
export const RUNTIME_MEMORY = 'W1 / memory';
export const BARE_XSTATE = 'W1 / bare XState';
export const RUNTIME_SQLITE_FULL = 'W1 / sqlite FULL';
export const RUNTIME_SQLITE_NORMAL = 'W1 / sqlite NORMAL';

/** Every row, in the order they run and print. */
export const ROWS: RowSpec[] = [
  { workload: RUNTIME_MEMORY, mode: 'sequential', measure: runtimeSequential },
  { workload: RUNTIME_MEMORY, mode: 'concurrent', measure: runtimeConcurrent },
  { workload: BARE_XSTATE, mode: 'sequential', measure: bareSequential },
  { workload: BARE_XSTATE, mode: 'concurrent', measure: bareConcurrent },
  { workload: RUNTIME_SQLITE_FULL, mode: 'sequential', measure: sqliteSequential('FULL') },
  { workload: RUNTIME_SQLITE_NORMAL, mode: 'sequential', measure: sqliteSequential('NORMAL') },
];

