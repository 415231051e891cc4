/**
 * The board row (issue 28, "boards and inboxes that scale"): one team run over a board of
 * {@link SMALL} tasks and one over a board of {@link LARGE}, on SQLite (a real file,
 * `synchronous: 'NORMAL'`), with a scripted model whose tasks complete at once. It reports the
 * wall time per completed task over the same number of completions on both boards (all of the
 * small one, the first {@link MEASURED} of the large one), the bytes the team's record commits
 * carried per completed task, and the longest event-loop block while tasks were completing
 * (`monitorEventLoopDelay`). The window opens at the first completion once the board's creation
 * is written and its garbage collected: creating the board (`run(tasks)` checks every task, the
 * first commit writes every task once) is the caller's one call, O(board), not per-task work;
 * its figures are printed for reading (`createMs`, `firstCommitMs`).
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
): Promise<{ usPerTask: number; bytesPerTask: number; loopMaxMs: number; createMs: number; firstCommitMs: number }> {
  const scratch = scratchDir();
  const sqlite = sqliteStore(join(scratch.dir, 'board.db'), { synchronous: 'NORMAL' });
  const teamId = `board-${size}`;
  let bytes = 0;
  let counting = false;
  let firstCommitMs = 0;
  let created: () => void = () => {};
  const written = new Promise<void>((resolve) => (created = resolve));
  // The team record's commits, sized as the store serializes them (record, events, rows).
  const store: SwarmStore = {
    ...sqlite,
    commit: (c: Commit) => {
      if (counting && c.swarmId === teamId) bytes += JSON.stringify(c).length;
      if (c.swarmId !== teamId || !c.messages?.some((w) => w.from === 0)) return sqlite.commit(c);
      // The creation's commit: every task, once.
      const began = process.hrtime.bigint();
      const done = sqlite.commit(c);
      firstCommitMs = Number(process.hrtime.bigint() - began) / 1e6;
      void Promise.resolve(done).then(created, created);
      return done;
    },
  };
  let open: () => void = () => {};
  gate = new Promise((resolve) => (open = resolve));
  const runtime = createRuntime({ model, store, teams: [team] });
  const loop = monitorEventLoopDelay({ resolution: 5 });
  try {
    const client = runtime.forTeam(team, teamId);
    const tasks = Array.from({ length: size }, (_, i) => ({ id: `t${i + 1}`, subject: `task ${i + 1}` }));
    const began = process.hrtime.bigint();
    await client.run(tasks);
    // (The creation's events are skipped below: the run's start is after them.)
    const createMs = Number(process.hrtime.bigint() - began) / 1e6;
    await written;
    // The creation's garbage (its tasks' specs, the first commit's text) is collected before the window opens.
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
    return { usPerTask: Number(end - start) / 1000 / counted, bytesPerTask: bytes / counted, loopMaxMs: loop.max / 1e6, createMs, firstCommitMs };
  } finally {
    await runtime.close();
    await sqlite.close();
    scratch.remove();
  }
}

/** The row: both boards in this process, the small one first. */
export async function boardScale(): Promise<Figures> {
  // A warm-up board, so neither measured board pays for the first compilations.
  await runBoard(SMALL, SMALL);
  const small = await runBoard(SMALL, SMALL);
  const large = await runBoard(LARGE, MEASURED);
  return {
    smallUsPerTask: small.usPerTask,
    largeUsPerTask: large.usPerTask,
    smallBytesPerTask: small.bytesPerTask,
    largeBytesPerTask: large.bytesPerTask,
    smallLoopMaxMs: small.loopMaxMs,
    largeLoopMaxMs: large.loopMaxMs,
    largeCreateMs: large.createMs,
    largeFirstCommitMs: large.firstCommitMs,
  };
}
