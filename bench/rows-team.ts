/**
 * The team example's rows: its PRD board (examples/team) run as `npm start -- team` runs it —
 * the team of five, then the same board by a team of one, on one store, the speedup being the
 * one-worker run's `durationMs` over the team's — on SQLite (FULL, a fresh file on the project
 * disk each time, as a first `npm start -- team` has) and in memory.
 *
 * The example stalls one story's first attempt on purpose, so each board respawns exactly one
 * worker; any respawn beyond it is a working worker declared silent (a false positive).
 *
 * @module
 */
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { type PrdBuildReport, runPrdBuild } from '../examples/team/index.js';
import { memoryStore, type SwarmStore, sqliteStore } from '../src/index.js';
import { scratchDir } from './disk.js';
import { percentile } from './measure.js';
import type { Figures } from './table.js';

/** Board runs of each store in the speedup row, alternating SQLite and memory. */
export const SPEEDUP_RUNS = 7;
/** Board runs on SQLite under a concurrent CPU load. */
export const LOADED_RUNS = 10;

/** Runs the example's two boards on a fresh store of `kind`; throws when a board did not complete. */
async function prdBuild(kind: 'sqlite' | 'memory'): Promise<PrdBuildReport> {
  const scratch = kind === 'sqlite' ? scratchDir() : undefined;
  const store: SwarmStore = scratch ? sqliteStore(join(scratch.dir, 'state.db')) : memoryStore();
  try {
    const report = await runPrdBuild({ store });
    if (report.team.status !== 'completed' || report.solo.status !== 'completed') {
      throw new Error(`the PRD board did not complete on ${kind}: team ${report.team.status}, one worker ${report.solo.status}`);
    }
    return report;
  } finally {
    await store.close();
    scratch?.remove();
  }
}

/**
 * The workers of both boards respawned beyond the one whose story stalls on purpose. A board
 * that did not respawn that one fails the row: its stall went unnoticed.
 */
function falseRespawns(report: PrdBuildReport): number {
  const respawns = [report.team.metrics.respawns, report.solo.metrics.respawns];
  if (respawns.some((n) => n < 1)) throw new Error(`the stalled worker was not respawned (respawns: team ${respawns[0]}, one worker ${respawns[1]})`);
  return respawns[0]! - 1 + (respawns[1]! - 1);
}

/**
 * The speedup row: {@link SPEEDUP_RUNS} runs of the boards on SQLite and as many in memory,
 * alternating (a neighbour's load moves both), after one warm-up of each; the medians.
 */
export async function teamSpeedup(): Promise<Figures> {
  await prdBuild('memory');
  await prdBuild('sqlite');
  const runs: Record<'sqlite' | 'memory', PrdBuildReport[]> = { sqlite: [], memory: [] };
  for (let i = 0; i < SPEEDUP_RUNS; i++) {
    for (const kind of i % 2 ? (['memory', 'sqlite'] as const) : (['sqlite', 'memory'] as const)) runs[kind].push(await prdBuild(kind));
  }
  const median = (kind: 'sqlite' | 'memory', of: (r: PrdBuildReport) => number) => percentile(runs[kind].map(of), 0.5);
  return {
    speedupSqlite: median('sqlite', (r) => r.speedup),
    speedupMemory: median('memory', (r) => r.speedup),
    teamMsSqlite: median('sqlite', (r) => r.team.metrics.durationMs),
    teamMsMemory: median('memory', (r) => r.team.metrics.durationMs),
    soloMsSqlite: median('sqlite', (r) => r.solo.metrics.durationMs),
    soloMsMemory: median('memory', (r) => r.solo.metrics.durationMs),
    falseRespawns: [...runs.sqlite, ...runs.memory].reduce((n, r) => n + falseRespawns(r), 0),
    runs: SPEEDUP_RUNS,
  };
}

/**
 * The loaded row: {@link LOADED_RUNS} runs of the boards on SQLite while a child process spins
 * a core (on a 2-core machine, half of it), counting the working workers declared silent.
 */
export async function teamUnderLoad(): Promise<Figures> {
  const spinner = spawn(process.execPath, ['-e', 'for (;;);'], { stdio: 'ignore' });
  try {
    await new Promise<void>((resolve, reject) => spinner.once('spawn', resolve).once('error', reject));
    const reports: PrdBuildReport[] = [];
    for (let i = 0; i < LOADED_RUNS; i++) reports.push(await prdBuild('sqlite'));
    const speedups = reports.map((r) => r.speedup);
    return {
      falseRespawns: reports.reduce((n, r) => n + falseRespawns(r), 0),
      runs: LOADED_RUNS,
      speedupMedian: percentile(speedups, 0.5),
      speedupMin: Math.min(...speedups),
    };
  } finally {
    spinner.kill();
  }
}
