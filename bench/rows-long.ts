/**
 * The long-conversation row: one swarm of {@link TURNS} turns, each one tool call whose result
 * is 2 KB, on SQLite (`synchronous: 'NORMAL'`). It measures how the cost of a turn grows with
 * the conversation: µs per turn and bytes written per completed step near turn 10 and near
 * turn 200. A store that rewrites the whole conversation at every step grows linearly per
 * turn (quadratically per run); one that appends stays flat.
 *
 * @module
 */
import { join } from 'node:path';
import { z } from 'zod';
import { createRuntime, defineSwarm, scriptedModel, sqliteStore, tool } from '../src/index.js';
import { countCommits, dbBytes, pinWal, scratchDir } from './disk.js';
import { percentile } from './measure.js';
import type { Figures } from './table.js';

/** Turns per conversation. */
export const TURNS = 200;
/** Size of each tool result. */
const RESULT_BYTES = 2048;
/** Timed conversations (the per-turn figure is the median over them). */
const TIMED_RUNS = 9;
/** Turns averaged around each measured point, so one slow commit does not decide the figure. */
const EARLY = [6, 15] as const;
const LATE = [TURNS - 9, TURNS] as const;

/** Page `n` of a document: {@link RESULT_BYTES} characters that differ from page to page. */
function pageText(n: number): string {
  const line = `page ${n}: the quick brown fox jumps over the lazy dog. `;
  return line.repeat(Math.ceil(RESULT_BYTES / line.length)).slice(0, RESULT_BYTES);
}

/** What is observed at each turn boundary (index = tool results seen by the model). */
interface Marks {
  at: bigint[];
  bytes: number[];
  commits: number[];
}

/** The average per-turn delta of `values` over turns `from..to` (turn k = boundary k-1 → k). */
function perTurn(values: readonly number[], [from, to]: readonly [number, number]): number {
  return (values[to]! - values[from - 1]!) / (to - from + 1);
}

/** Runs the row: one conversation with the WAL pinned (bytes), then the timed ones. */
export async function longConversation(): Promise<Figures> {
  const scratch = scratchDir();
  const path = join(scratch.dir, 'state.db');
  const sqlite = sqliteStore(path, { synchronous: 'NORMAL' });
  const counted = countCommits(sqlite);
  let marks: Marks = { at: [], bytes: [], commits: [] };
  let measureBytes = false;
  const readPage = tool({
    name: 'read_page',
    description: 'Reads one page of the document',
    parameters: z.object({ page: z.number() }),
    execute: ({ page }) => pageText(page),
  });
  const swarm = defineSwarm({ id: 'reader', instructions: 'Read the document page by page, then summarize it.', tools: [readPage], maxTurns: TURNS + 10 });
  const model = scriptedModel((req) => {
    let n = 0;
    for (const m of req.messages) if (m.role === 'tool') n++;
    marks.at[n] = process.hrtime.bigint();
    marks.commits[n] = counted.commits();
    if (measureBytes) marks.bytes[n] = dbBytes(path);
    if (n < TURNS) return { toolCalls: [{ id: `p${n}`, name: 'read_page', arguments: JSON.stringify({ page: n }) }] };
    return { text: `Read ${n} pages.` };
  });
  const runtime = createRuntime({ swarms: [swarm], model, store: counted.store });
  const converse = async () => {
    marks = { at: [], bytes: [], commits: [] };
    const client = runtime.forSwarm(swarm);
    await client.run('Read the document.');
    const r = await client.wait();
    if (r.status !== 'completed' || r.result !== `Read ${TURNS} pages.`) throw new Error(`unexpected result: ${JSON.stringify(r)}`);
    if (marks.at.length !== TURNS + 1) throw new Error(`the model saw ${marks.at.length - 1} turns, expected ${TURNS}`);
    return marks;
  };
  try {
    await converse(); // warm-up
    measureBytes = true;
    const pin = pinWal(path);
    let bytes: Marks;
    try {
      bytes = await converse();
    } finally {
      pin.release();
    }
    measureBytes = false;
    const timed: Marks[] = [];
    for (let i = 0; i < TIMED_RUNS; i++) timed.push(await converse());
    const us = (range: readonly [number, number]) =>
      percentile(
        timed.map((m) =>
          perTurn(
            m.at.map((t) => Number(t - m.at[0]!) / 1000),
            range,
          ),
        ),
        0.5,
      );
    const bytesPerStep = (range: readonly [number, number]) => perTurn(bytes.bytes, range) / perTurn(bytes.commits, range);
    return {
      usPerTurnAt10: us(EARLY),
      usPerTurnAt200: us(LATE),
      bytesPerStepAt10: bytesPerStep(EARLY),
      bytesPerStepAt200: bytesPerStep(LATE),
      commitsPerTurn: perTurn(bytes.commits, [1, TURNS]),
    };
  } finally {
    await runtime.close();
    await sqlite.close();
    scratch.remove();
  }
}
