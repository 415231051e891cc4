/**
 * The W1 rows: the runtime on its default in-memory store, and the bare XState reference.
 * Each row builds its own runtime or machine, so rows do not share state.
 *
 * @module
 */
import { createBareW1, runBareW1 } from './bare-xstate.js';
import { CONCURRENT_LATENCY_MS, CONCURRENT_RUNS, timeConcurrent, timeSequential, WARMUP_RUNS } from './measure.js';
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

const sequentialFigures = (usPerRun: number): RowFigures => ({
  usPerRun,
  usPerModelCall: usPerRun / W1_MODEL_CALLS,
  concurrentWallMs: null,
  peakRssMb: null,
});

const concurrentFigures = (m: { concurrentWallMs: number; peakRssMb: number }): RowFigures => ({
  usPerRun: null,
  usPerModelCall: null,
  ...m,
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

/** Every row, in the order they run and print. */
export const ROWS: RowSpec[] = [
  { workload: RUNTIME_MEMORY, mode: 'sequential', measure: runtimeSequential },
  { workload: RUNTIME_MEMORY, mode: 'concurrent', measure: runtimeConcurrent },
  { workload: BARE_XSTATE, mode: 'sequential', measure: bareSequential },
  { workload: BARE_XSTATE, mode: 'concurrent', measure: bareConcurrent },
];

