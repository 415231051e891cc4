/**
 * `npx tsx bench/pages.ts [runs] [concurrent]`: how many pages a W1 commit appends to the WAL,
 * and to which tables and indexes they belong — the deterministic side of the durable rows (time varies
 * with the machine's load; pages do not). Runs W1 sequentially on a SQLite store whose WAL is
 * pinned (see {@link pinWal}) — or, with `concurrent`, all runs at once with the concurrent
 * rows' model latency, so group commit puts many commits in each transaction — reads the page number of every frame from the `-wal` file, and
 * names each page's B-tree with `dbstat`.
 *
 * @module
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { sqliteStore } from '../src/store/sqlite/store.js';
import { countCommits, pinWal, scratchDir } from './disk.js';
import { CONCURRENT_LATENCY_MS } from './measure.js';
import { createW1Runtime, W1_INPUT } from './w1.js';

const WAL_HEADER = 32;
const FRAME_HEADER = 24;

/** Page numbers of the frames in the `-wal` file at `path` (all of them, in order). */
function walPages(path: string, pageSize: number): number[] {
  const wal = readFileSync(`${path}-wal`);
  const pages: number[] = [];
  for (let at = WAL_HEADER; at + FRAME_HEADER + pageSize <= wal.length; at += FRAME_HEADER + pageSize) pages.push(wal.readUInt32BE(at));
  return pages;
}

async function main(): Promise<void> {
  const runs = Number(process.argv[2] ?? 200);
  const concurrent = process.argv[3] === 'concurrent';
  const warmup = 50;
  const scratch = scratchDir();
  const path = join(scratch.dir, 'state.db');
  const sqlite = sqliteStore(path, { synchronous: 'NORMAL' });
  const counted = countCommits(sqlite);
  const { runtime, swarm } = createW1Runtime(concurrent ? CONCURRENT_LATENCY_MS : 0, counted.store);
  const runOnce = async () => {
    const client = runtime.forSwarm(swarm);
    await client.run(W1_INPUT);
    await client.wait();
  };
  try {
    for (let i = 0; i < warmup; i++) await runOnce();
    const pin = pinWal(path);
    const commits0 = counted.commits();
    const tx0 = counted.transactions() ?? 0;
    if (concurrent) await Promise.all(Array.from({ length: runs }, runOnce));
    else for (let i = 0; i < runs; i++) await runOnce();
    const commits = counted.commits() - commits0;
    const transactions = (counted.transactions() ?? 0) - tx0;
    const db = new Database(path, { readonly: true });
    const pageSize = db.pragma('page_size', { simple: true }) as number;
    const frames = walPages(path, pageSize);
    const owner = new Map<number, string>();
    for (const row of db.prepare<[], { name: string; pageno: number }>(`SELECT name, pageno FROM dbstat`).all()) owner.set(row.pageno, row.name);
    db.close();
    pin.release();
    const byName = new Map<string, number>();
    for (const p of frames) {
      const name = p === 1 ? 'page 1' : (owner.get(p) ?? 'free/other');
      byName.set(name, (byName.get(name) ?? 0) + 1);
    }
    const per = (n: number) => (n / transactions).toFixed(2);
    console.log(
      `${runs} runs, ${commits} commits, ${transactions} transactions, ${frames.length} WAL frames: ${per(frames.length)} pages per transaction, ${(frames.length / commits).toFixed(2)} per commit`,
    );
    for (const [name, n] of [...byName].sort((a, b) => b[1] - a[1])) console.log(`  ${name.padEnd(28)} ${per(n)}`);
  } finally {
    await runtime.close();
    await sqlite.close();
    scratch.remove();
  }
}

await main();
