/**
 * The board row (issue 28, "boards and inboxes that scale"): one team run over a board of
 * {@link SMALL} tasks and one over a board of {@link LARGE}, on SQLite (a real file,
 * `synchronous: 'NORMAL'`), with a scripted model whose tasks complete at once. It reports the
 * wall time per completed task over the same number of completions on both boards (all of the
 * small one, the first {@link MEASURED} of the large one), the bytes the team's record commits
 * carried per completed task, and the longest event-loop block while tasks were completing
 * (`monitorEventLoopDelay`) over the board's whole life: from the caller's `run(tasks)` (the
 * tasks checked, added and written in slices, see `TaskBoard.createInSlices`) until it resolves
 * with the board durable, then from the first completion on. Between the two the creation's
 * garbage is collected (`gc()`, the bench's own call, outside both windows), so that the time per
 * task is the completions' only. The creation's figures are printed too (`createMs`, the
 * caller's wait; `createLoopMaxMs`; `createCommitMs`, the longest commit call of the creation),
 * and the large board's restore in a new runtime once the first closed (`restoreMs`, its client's
 * `ready()`; `restoreLoopMaxMs`, the longest event-loop block meanwhile).
 *
 * @module
 */
import { join } from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { createRuntime, defineSwarm, defineTeam, scriptedModel, sqliteStore, type SwarmStore } from '../src/index.js';
import type { Commit } from '../src/store/types.js';
import { scratchDir } from './disk.js';
import type { Figures } from './table.js';

/** The boards' sizes. */
export const SMALL = 100;
export const LARGE = 100_000;
/** Completions measured on each board: all of the small one's, as many of the large one's. */
const MEASURED = 2_000;
/** Workers of the team (one type). */
const WORKERS = 4;

const worker = defineSwarm({ id: 'board-worker', instructions: 'Do the task.' });
const team = defineTeam({ id: 'board-bench', workers: [{ type: 'any', swarm: worker, count: WORKERS }], limits: { maxTasksPerBoard: LARGE } });
/** Held until the row opens its window: no task completes while the board's creation is written. */
let gate: Promise<void> = Promise.resolve();
const model = scriptedModel(async () => {
  await gate;
  return { text: 'done' };
});

/**
 * Runs one board of `size` tasks until `measured` tasks completed: µs per completed task, the
 * bytes of the team's commits per completed task, and the longest event-loop block (ms).
 */
async function runBoard(
  size: number,
  measured: number,
  restore = false,
): Promise<{
  usPerTask: number;
  bytesPerTask: number;
  loopMaxMs: number;
  createMs: number;
  createLoopMaxMs: number;
  createCommitMs: number;
  restoreMs?: number;
  restoreLoopMaxMs?: number;
}> {
  const scratch = scratchDir();
  const sqlite = sqliteStore(join(scratch.dir, 'board.db'), { synchronous: 'NORMAL' });
  const teamId = `board-${size}`;
  let bytes = 0;
  let counting = false;
  let creating = false;
  let createCommitMs = 0;
  // The team record's commits, sized as the store serializes them (record, events, rows).
  const store: SwarmStore = {
    ...sqlite,
    commit: (c: Commit) => {
      if (counting && c.swarmId === teamId) bytes += JSON.stringify(c).length;
      if (c.swarmId !== teamId || !creating) return sqlite.commit(c);
      // A commit of the creation (a slice of its tasks): the longest call is printed.
      const began = process.hrtime.bigint();
      const done = sqlite.commit(c);
      createCommitMs = Math.max(createCommitMs, Number(process.hrtime.bigint() - began) / 1e6);
      return done;
    },
  };
  let open: () => void = () => {};
  gate = new Promise((resolve) => (open = resolve));
  const runtime = createRuntime({ model, store, teams: [team] });
  const loop = monitorEventLoopDelay({ resolution: 5 });
  const createLoop = monitorEventLoopDelay({ resolution: 5 });
  try {
    const client = runtime.forTeam(team, teamId);
    await client.ready();
    const tasks = Array.from({ length: size }, (_, i) => ({ id: `t${i + 1}`, subject: `task ${i + 1}` }));
    // The window opens with the creation: run(tasks) resolves once every task is written. (Two
    // histograms: one enabled again would count the time it was disabled as one long delay.)
    createLoop.enable();
    creating = true;
    const began = process.hrtime.bigint();
    await client.run(tasks);
    // (The creation's events are skipped below: the run's start is after them.)
    const createMs = Number(process.hrtime.bigint() - began) / 1e6;
    creating = false;
    createLoop.disable();
    // The creation's garbage (its tasks' specs, its commits' text) is collected between the two windows.
    (globalThis as { gc?: () => void }).gc?.();
    open();
    let completed = 0;
    let start = 0n;
    let end = 0n;
    for await (const event of client.events({ since: client.summary().counts.total })) {
      if (event.metadata.type !== 'team-task-completed') continue;
      completed++;
      if (completed === 1) {
        start = process.hrtime.bigint();
        counting = true;
        loop.enable();
      }
      if (completed === measured + 1) {
        end = process.hrtime.bigint();
        loop.disable();
        counting = false;
        break;
      }
      if (completed === size) {
        end = process.hrtime.bigint();
        loop.disable();
        counting = false;
        break;
      }
    }
    const counted = completed === size ? completed - 1 : measured;
    if (client.summary().status === 'idle') await client.stop().catch(() => undefined);
    const restored = restore ? await restoreBoard(runtime, sqlite, teamId) : {};
    return {
      ...restored,
      usPerTask: Number(end - start) / 1000 / counted,
      bytesPerTask: bytes / counted,
      loopMaxMs: Math.max(loop.max, createLoop.max) / 1e6,
      createMs,
      createLoopMaxMs: createLoop.max / 1e6,
      createCommitMs,
    };
  } finally {
    await runtime.close();
    await sqlite.close();
    scratch.remove();
  }
}

/**
 * Closes `runtime` (its team's state written, its lease given up) and restores the team in a new
 * runtime on the same store, as after a restart: how long its client waits (`ready()`) and the
 * longest event-loop block meanwhile, as the longest gap between two runs of a 1 ms interval
 * (monitorEventLoopDelay misses a block that begins in the tick it is enabled in). No task
 * completes meanwhile (the model is held).
 */
async function restoreBoard(runtime: ReturnType<typeof createRuntime>, store: SwarmStore, teamId: string): Promise<{ restoreMs: number; restoreLoopMaxMs: number }> {
  await runtime.close();
  (globalThis as { gc?: () => void }).gc?.();
  let open: () => void = () => {};
  gate = new Promise((resolve) => (open = resolve));
  const again = createRuntime({ model, store, teams: [team] });
  let last = performance.now();
  let worst = 0;
  const probe = setInterval(() => {
    const now = performance.now();
    worst = Math.max(worst, now - last);
    last = now;
  }, 1);
  try {
    const began = process.hrtime.bigint();
    await again.forTeam(team, teamId).ready();
    const restoreMs = Number(process.hrtime.bigint() - began) / 1e6;
    return { restoreMs, restoreLoopMaxMs: Math.max(worst, performance.now() - last) };
  } finally {
    clearInterval(probe);
    open();
    await again.close();
  }
}

/** The row: both boards in this process, the small one first. */
export async function boardScale(): Promise<Figures> {
  // A warm-up board, so neither measured board pays for the first compilations.
  await runBoard(SMALL, SMALL);
  const small = await runBoard(SMALL, SMALL);
  const large = await runBoard(LARGE, MEASURED, true);
  return {
    smallUsPerTask: small.usPerTask,
    largeUsPerTask: large.usPerTask,
    smallBytesPerTask: small.bytesPerTask,
    largeBytesPerTask: large.bytesPerTask,
    smallLoopMaxMs: small.loopMaxMs,
    largeLoopMaxMs: large.loopMaxMs,
    largeCreateMs: large.createMs,
    largeCreateLoopMaxMs: large.createLoopMaxMs,
    largeCreateCommitMs: large.createCommitMs,
    largeRestoreMs: large.restoreMs ?? Number.NaN,
    largeRestoreLoopMaxMs: large.restoreLoopMaxMs ?? Number.NaN,
  };
}
