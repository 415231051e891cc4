/**
 * The scale-out rows' table lines: the REST target (distributed completion p50 within 2× of one
 * process with SQLite) and the per-process CPU lines that say where a batch's time went.
 */
import { describe, expect, it } from 'vitest';
import type { BenchRow } from '../../bench/table.js';
import { tableLines } from '../../bench/targets.js';

const rest = (mode: string, p50Ms: number, extra: Record<string, number> = {}): BenchRow => ({
  workload: 'REST 500',
  mode,
  figures: { runs: 500, p50Ms, p90Ms: p50Ms * 1.1, maxMs: p50Ms * 1.2, postP50Ms: 100, runsPerSec: 50, modelCallsPerRun: 10, expectedModelCallsPerRun: 10, ...extra },
});

describe('scale-out rows', () => {
  it('holds the distributed REST p50 to 2× the one-process SQLite row', () => {
    const target = (distributedP50: number) =>
      tableLines([rest('one process, SQLite', 4000), rest('distributed, 2 workers', distributedP50)]).find(
        (l) => l.mode === 'distributed, 2 workers' && l.figure === 'completion p50',
      )!;
    expect(target(7900)).toMatchObject({ ratio: 7900 / 4000, target: '≤ 2×', ok: true });
    expect(target(24000)).toMatchObject({ ratio: 6, ok: false });
    // The distributed row says how many store reads a run made.
    const lines = tableLines([rest('one process, SQLite', 4000), rest('distributed, 2 workers', 7900, { apiPerRun: 4.5 })]);
    expect(lines.find((l) => l.mode === 'distributed, 2 workers' && l.figure === 'JetStream API requests per run')).toMatchObject({ value: 4.5 });
    expect(lines.some((l) => l.mode === 'one process, SQLite' && l.figure === 'JetStream API requests per run')).toBe(false);
    // Without the reference row the target cannot be checked: n/a, not ok.
    expect(tableLines([rest('distributed, 2 workers', 7900)]).find((l) => l.figure === 'completion p50')!.ok).toBeNull();
  });

  it('lists each process’s CPU per run and busy cores, and the runs per second beside fewer workers', () => {
    const w1 = (mode: string, runsPerSec: number): BenchRow => ({
      workload: 'W1 / NATS',
      mode,
      figures: {
        runs: 300,
        runsPerSec,
        wallMs: 3000,
        p50Ms: 2900,
        p90Ms: 3000,
        'cpu orchestrator µs/run': 8000,
        'cpu worker 1 µs/run': 3000,
        'cores orchestrator': 0.8,
        'cores worker 1': 0.3,
        'cores machine': 1.9,
      },
    });
    const lines = tableLines([w1('1 worker, 300 at once', 80), w1('2 workers, 300 at once', 100)]);
    const two = lines.filter((l) => l.mode === '2 workers, 300 at once');
    expect(two.find((l) => l.figure === 'runs per second')).toMatchObject({ value: 100, ratio: 1.25, ok: null });
    expect(two.map((l) => [l.figure, l.value])).toEqual(
      expect.arrayContaining([
        ['CPU per run: orchestrator', 8000],
        ['CPU per run: worker 1', 3000],
        ['cores busy: orchestrator', 0.8],
        ['cores busy: whole machine (all processes)', 1.9],
      ]),
    );
  });
});
