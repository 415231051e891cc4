/**
 * The team example's bench lines: its speedup on SQLite held to at least 0.9 × the one in
 * memory (a floor, where the other ratio targets are ceilings), and its respawns under a CPU
 * load held to none beyond the stalled worker's.
 */
import { describe, expect, it } from 'vitest';
import { type BenchRow, formatTable } from '../../bench/table.js';
import { tableLines } from '../../bench/targets.js';

const speedup = (speedupSqlite: number | null, speedupMemory: number): BenchRow => ({
  workload: 'team example (PRD board)',
  mode: 'sqlite FULL and memory, alternating',
  figures: { speedupSqlite, speedupMemory, teamMsSqlite: 800, teamMsMemory: 750, soloMsSqlite: 1400, soloMsMemory: 1350, falseRespawns: 0, runs: 7 },
});
const loaded = (falseRespawns: number): BenchRow => ({
  workload: 'team example (PRD board)',
  mode: 'sqlite FULL, 10 runs under a CPU load',
  figures: { falseRespawns, runs: 10, speedupMedian: 1.6, speedupMin: 1.2 },
});

describe('the team example’s bench lines', () => {
  it('holds the speedup on SQLite to at least 0.9 × the one in memory', () => {
    const line = (sqlite: number | null, memory: number) => tableLines([speedup(sqlite, memory)]).find((l) => l.figure === 'speedup on SQLite (median)')!;
    expect([line(1.62, 1.8).ok, line(1.6, 1.8).ok, line(1.9, 1.8).ok]).toEqual([true, false, true]);
    expect(line(1.62, 1.8).ratio).toBeCloseTo(0.9);
    expect(line(null, 1.8).ok).toBeNull();
    expect(formatTable([line(1.3, 1.8)])).toMatch(/1\.30 ×\s+speedup in memory 1\.80\s+0\.72×\s+≥ 0\.9×\s+MISSED$/m);
  });

  it('holds the respawns under load to none beyond the stalled worker’s', () => {
    const line = (n: number) => tableLines([loaded(n)]).find((l) => l.figure === 'workers respawned beyond the stalled one')!;
    expect([line(0).ok, line(1).ok]).toEqual([true, false]);
    expect(formatTable([line(2)])).toMatch(/2\.00 in 10 runs.*= 0\s+MISSED$/m);
  });
});
