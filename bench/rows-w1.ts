/**
 * The W1 rows: the runtime in memory and on SQLite, sequential and concurrent, and the bare
 * XState reference. Each row builds its own runtime or machine and runs in its own process.
 * Every run checks the final answer and that each agent ran exactly once.
 *
 * @module
 */
import { join } from 'node:path';
import { memoryStore } from '../src/store/memory.js';
import { sqliteStore } from '../src/store/sqlite/store.js';
import type { SwarmStore } from '../src/index.js';
import { createBareW1, runBareW1 } from './bare-xstate.js';
import { createMachineW1 } from './machine-alone.js';
import { countCommits, openRawCommits, rawCommitUs, scratchDir } from './disk.js';
import { CONCURRENT_LATENCY_MS, CONCURRENT_RUNS, SEQUENTIAL_RUNS, type SequentialTiming, timeConcurrent, timeSequential, WARMUP_RUNS } from './measure.js';
import type { Figures } from './table.js';
import { type CallCounts, checkW1Result, createW1Runtime, newCounts, runW1, W1_AGENTS, W1_INPUT, W1_MODEL_CALLS, W1_SWARM_ID } from './w1.js';

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

const sequentialFigures = (t: SequentialTiming): Figures => ({ ...t, usPerModelCall: t.usPerRun / W1_MODEL_CALLS });

/** W1 on one runtime with the in-memory store, one run at a time, no model latency. */
export async function runtimeSequential(): Promise<Figures> {
  const w1 = createW1Runtime(0);
  try {
    return sequentialFigures(
      await timeSequential(async (i) => {
        await runW1(w1.runtime);
        checkCounts(w1.counts, i + 1);
      }),
    );
  } finally {
    await w1.runtime.close();
  }
}

/**
 * Warm-up for a concurrent row, on a throwaway in-memory runtime: the JIT state of the
 * sequential rows without their memory high-water mark (each row runs in its own process).
 */
async function warmRuntime(): Promise<void> {
  const w1 = createW1Runtime(0);
  for (let i = 0; i < WARMUP_RUNS; i++) await runW1(w1.runtime);
  await w1.runtime.close();
}

/** W1 on one runtime: {@link CONCURRENT_RUNS} runs started together, 20 ms per model call. */
export async function runtimeConcurrent(): Promise<Figures> {
  await warmRuntime();
  const w1 = createW1Runtime(CONCURRENT_LATENCY_MS);
  try {
    const m = await timeConcurrent(() => runW1(w1.runtime));
    checkCounts(w1.counts, CONCURRENT_RUNS);
    return m;
  } finally {
    await w1.runtime.close();
  }
}

/** Warm-up and timed runs of the durable sequential rows: fewer, as each run commits several times. */
const DURABLE_WARMUP = WARMUP_RUNS / 4;
const DURABLE_RUNS = SEQUENTIAL_RUNS / 4;

/**
 * For reading beside the SQLite FULL row and its floor: W1 on the in-memory store made
 * non-volatile (a snapshot at every step, as on SQLite), which at every commit also executes
 * the floor's own raw 4 KB commit on SQLite FULL. It is a store whose step costs exactly one raw
 * commit and nothing more, so its ratio to the floor is what the fsyncs alone do to the rest of
 * the run: the part of the FULL target's allowance that no store can win back.
 */
export async function rawCommitPerStep(): Promise<Figures> {
  const scratch = scratchDir();
  try {
    const before = rawCommitUs(scratch.dir, 'FULL', 150);
    const raw = openRawCommits(scratch.dir, 'FULL');
    const memory = memoryStore();
    let written = 0;
    const store: SwarmStore = {
      ...memory,
      volatile: false,
      commit(c) {
        const done = memory.commit(c);
        raw.commit(written++);
        return done;
      },
    };
    const counted = countCommits(store);
    const w1 = createW1Runtime(0, counted.store);
    let commits0 = 0;
    let timing: SequentialTiming;
    try {
      timing = await timeSequential(
        async (i) => {
          if (i === DURABLE_WARMUP) commits0 = counted.commits();
          await runW1(w1.runtime);
          checkCounts(w1.counts, i + 1);
        },
        DURABLE_WARMUP,
        DURABLE_RUNS,
      );
    } finally {
      await w1.runtime.close();
      raw.close();
    }
    const after = rawCommitUs(scratch.dir, 'FULL', 150);
    return { ...sequentialFigures(timing), commitsPerRun: (counted.commits() - commits0) / DURABLE_RUNS, rawCommitUs: (before + after) / 2 };
  } finally {
    scratch.remove();
  }
}

/**
 * W1 on the SQLite store (WAL, on the project's disk), one run at a time: every completed
 * step is durable before the next. The raw 4 KB commit is measured in the same process, half
 * before and half after the runs, for the row's floor; the raw 4 KB append beside it, for
 * information. The time the store's thread spent in its transactions (`stats().writeMs`, the
 * commits written at once) and its writer thread's (`writerMs`, the grouped commits) split the
 * row into store and runtime; the store's serialization and COMMIT timers split a commit
 * further.
 */
export function sqliteSequential(synchronous: 'FULL' | 'NORMAL'): () => Promise<Figures> {
  return async () => {
    const scratch = scratchDir();
    const sqlite = sqliteStore(join(scratch.dir, 'state.db'), { synchronous });
    const counted = countCommits(sqlite);
    const w1 = createW1Runtime(0, counted.store);
    try {
      const before = rawCommitUs(scratch.dir, synchronous, 150);
      const [warmup, runs] = [DURABLE_WARMUP, DURABLE_RUNS];
      let commits0 = 0;
      let tx0: number | null = 0;
      let stats0 = sqlite.stats();
      const timing = await timeSequential(
        async (i) => {
          if (i === warmup) [commits0, tx0, stats0] = [counted.commits(), counted.transactions(), sqlite.stats()];
          await runW1(w1.runtime);
          checkCounts(w1.counts, i + 1);
        },
        warmup,
        runs,
      );
      const tx = counted.transactions();
      const stats = sqlite.stats();
      const commits = counted.commits() - commits0;
      /** µs per commit of one of the store's timers over the timed runs (per commit it wrote, as they count). */
      const perCommit = (ms: number, ms0: number) => ((ms - ms0) * 1000) / (stats.commits - stats0.commits);
      const after = rawCommitUs(scratch.dir, synchronous, 150);
      // Enough appends to fill the WAL a few times (~2 pages each): they pay their checkpoints.
      const rawAppendUs = rawCommitUs(scratch.dir, synchronous, 1500, 30, true);
      return {
        ...sequentialFigures(timing),
        commitsPerRun: commits / runs,
        transactionsPerRun: tx === null || tx0 === null ? null : (tx - tx0) / runs,
        rawCommitUs: (before + after) / 2,
        rawAppendUs,
        writeUsPerRun: ((stats.writeMs - stats0.writeMs) * 1000) / runs,
        writerUsPerRun: ((stats.writerMs - stats0.writerMs) * 1000) / runs,
        // Where a commit written on this thread spends its time (all of them are, one swarm at a time).
        serializeUsPerCommit: perCommit(stats.serializeMs, stats0.serializeMs),
        statementsUsPerCommit: perCommit(stats.writeMs - stats.serializeMs - stats.syncMs, stats0.writeMs - stats0.serializeMs - stats0.syncMs),
        syncUsPerCommit: perCommit(stats.syncMs, stats0.syncMs),
      };
    } finally {
      await w1.runtime.close();
      await sqlite.close();
      scratch.remove();
    }
  };
}

/**
 * W1 on the SQLite store with `synchronous: 'FULL'`: {@link CONCURRENT_RUNS} runs started
 * together, 20 ms per model call. Each swarm waits for its own durable commit before its next
 * step; commits arriving meanwhile may share a transaction (group commit), written by the
 * store's writer thread (`writerMs`) while this one runs swarms (`writeMs`: the time it was blocked).
 */
export async function sqliteConcurrent(): Promise<Figures> {
  await warmRuntime();
  const scratch = scratchDir();
  const sqlite = sqliteStore(join(scratch.dir, 'state.db'), { synchronous: 'FULL' });
  const counted = countCommits(sqlite);
  const w1 = createW1Runtime(CONCURRENT_LATENCY_MS, counted.store);
  try {
    const tx0 = counted.transactions();
    const stats0 = sqlite.stats();
    const m = await timeConcurrent(() => runW1(w1.runtime));
    checkCounts(w1.counts, CONCURRENT_RUNS);
    const tx = counted.transactions();
    const stats = sqlite.stats();
    return {
      ...m,
      writeMs: stats.writeMs - stats0.writeMs,
      writerMs: stats.writerMs - stats0.writerMs,
      serializeMs: stats.serializeMs - stats0.serializeMs,
      commitsPerRun: counted.commits() / CONCURRENT_RUNS,
      transactionsPerRun: tx === null || tx0 === null ? null : (tx - tx0) / CONCURRENT_RUNS,
    };
  } finally {
    await w1.runtime.close();
    await sqlite.close();
    scratch.remove();
  }
}

/** The bare XState reference, one run at a time, no model latency. */
export async function bareSequential(): Promise<Figures> {
  const counts = newCounts();
  const machine = createBareW1(counts, 0);
  return sequentialFigures(
    await timeSequential(async (i) => {
      checkW1Result({ status: 'completed', result: await runBareW1(machine, W1_INPUT) });
      checkCounts(counts, i + 1);
    }),
  );
}

/**
 * W1 on the swarm machine alone (bench/machine-alone.ts), one run at a time, no model latency:
 * between the bare row and the runtime row, for reading.
 */
export async function machineSequential(): Promise<Figures> {
  const counts = newCounts();
  const run = await createMachineW1(counts);
  return sequentialFigures(
    await timeSequential(async (i) => {
      checkW1Result(await run());
      checkCounts(counts, i + 1);
    }),
  );
}

/** W1 on the swarm machine alone: {@link CONCURRENT_RUNS} runs started together, 20 ms per call; for reading. */
export async function machineConcurrent(): Promise<Figures> {
  // Warm-up on a throwaway machine, as for the other concurrent rows.
  const warm = await createMachineW1(newCounts());
  for (let i = 0; i < WARMUP_RUNS; i++) checkW1Result(await warm());
  const counts = newCounts();
  const run = await createMachineW1(counts, CONCURRENT_LATENCY_MS);
  const m = await timeConcurrent(async () => checkW1Result(await run()));
  checkCounts(counts, CONCURRENT_RUNS);
  return m;
}

/** The bare XState reference: {@link CONCURRENT_RUNS} runs started together, 20 ms per call. */
export async function bareConcurrent(): Promise<Figures> {
  // Warm-up on a throwaway machine, as for the runtime row.
  const warm = createBareW1(newCounts(), 0);
  for (let i = 0; i < WARMUP_RUNS; i++) await runBareW1(warm, W1_INPUT);
  const counts = newCounts();
  const machine = createBareW1(counts, CONCURRENT_LATENCY_MS);
  const m = await timeConcurrent(async () => {
    checkW1Result({ status: 'completed', result: await runBareW1(machine, W1_INPUT) });
  });
  checkCounts(counts, CONCURRENT_RUNS);
  return m;
}
