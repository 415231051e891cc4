/**
 * The board row (issue 28, "boards and inboxes that scale"): one team run over a board of
 * {@link SMALL} tasks and one over a board of {@link LARGE}, on SQLite (a real file,
 * `synchronous: 'NORMAL'`), with a scripted model whose tasks complete at once. It reports the
 * wall time per completed task over the same number of completions on both boards (all of the
 * small one, the first {@link MEASURED} of the large one), the bytes the team's record commits
 * carried per completed task, and the longest event-loop block while tasks were completing
 * (`monitorEventLoopDelay`). The window opens at the first completion: creating the board
 * (`run(tasks)` checks and stores every task once, a call of the caller's) is not per-task work.
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
const model = scriptedModel(() => ({ text: 'done' }));

/**
 * Runs one board of `size` tasks until `measured` tasks completed: µs per completed task, the
 * bytes of the team's commits per completed task, and the longest event-loop block (ms).
 */
async function runBoard(size: number, measured: number): Promise<{ usPerTask: number; bytesPerTask: number; loopMaxMs: number }> {
  const scratch = scratchDir();
  const sqlite = sqliteStore(join(scratch.dir, 'board.db'), { synchronous: 'NORMAL' });
  const teamId = `board-${size}`;
  let bytes = 0;
  let counting = false;
  // The team record's commits, sized as the store serializes them (record, events, rows).
  const store: SwarmStore = {
    ...sqlite,
    commit: (c: Commit) => {
      if (counting && c.swarmId === teamId) bytes += JSON.stringify(c).length;
      return sqlite.commit(c);
    },
  };
  const runtime = createRuntime({ model, store, teams: [team] });
  const loop = monitorEventLoopDelay({ resolution: 5 });
  try {
    const client = runtime.forTeam(team, teamId);
    const tasks = Array.from({ length: size }, (_, i) => ({ id: `t${i + 1}`, subject: `task ${i + 1}` }));
    await client.run(tasks);
    let completed = 0;
    let start = 0n;
    let end = 0n;
    for await (const event of client.events()) {
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
    return { usPerTask: Number(end - start) / 1000 / counted, bytesPerTask: bytes / counted, loopMaxMs: loop.max / 1e6 };
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
  };
}
