/**
 * The bench's passes: a repeated row's figures are the medians over the passes, and its ratio
 * line shows each pass's ratio and how many met the target.
 */
import { describe, expect, it } from 'vitest';
import { type BenchRow, formatTable, medianRows, withPasses } from '../../bench/table.js';
import { tableLines } from '../../bench/targets.js';

const memory = (usPerModelCall: number, p99Us = 1000): BenchRow => ({
  workload: 'W1 / memory',
  mode: 'sequential',
  figures: { usPerModelCall, p50Us: 400, p99Us, gcUsPerRun: 100, scavengesPer1000Runs: 25, scavengeMeanMs: 4 },
});
const bare = (usPerModelCall: number): BenchRow => ({ workload: 'W1 / bare XState', mode: 'sequential', figures: { usPerModelCall, p50Us: 200, p99Us: 4000 } });

describe('bench passes', () => {
  it('takes each figure’s median over the passes, leaving out a pass that could not take it', () => {
    const rows = medianRows([
      [memory(90), bare(50)],
      [memory(60), { ...bare(40), figures: { ...bare(40).figures, p99Us: null } }],
      [memory(80), bare(45)],
      [memory(70), bare(60)],
    ]);
    expect(rows.map((r) => r.workload)).toEqual(['W1 / memory', 'W1 / bare XState']);
    expect(rows[0]!.figures.usPerModelCall).toBe(75);
    expect(rows[1]!.figures.usPerModelCall).toBe(47.5);
    // Three passes measured it: the middle one.
    expect(rows[1]!.figures.p99Us).toBe(4000);
  });

  it('prints the ratio between medians, each pass’s range and how many passes met the target', () => {
    const passes = [
      [memory(90), bare(50)],
      [memory(70), bare(50)],
      [memory(80), bare(60)],
    ];
    const lines = tableLines(medianRows(passes));
    const between = lines.find((l) => l.figure === 'µs per model call')!;
    // Between the medians (80 and 50): missed.
    expect(between.ratio).toBeCloseTo(80 / 50);
    expect(between.ok).toBe(false);
    // Each pass's own ratio (1.8, 1.4, 1.33): the median of those is the verdict.
    const line = withPasses(
      between,
      passes.map((p) => tableLines(p).find((l) => l.figure === 'µs per model call')!.ratio ?? null),
    );
    expect(line.ratio).toBeCloseTo(70 / 50);
    expect(line.ok).toBe(true);
    const text = formatTable([line]);
    expect(text).toContain('1.33–1.80×, ok in 2 of 3');
    expect(text).toMatch(/1\.40×.*ok$/m);
    // A ratio without a target (the bare row's p99 beside its p50) keeps its verdict: none.
    const p99 = tableLines(medianRows(passes)).find((l) => l.workload === 'W1 / bare XState' && l.figure === 'p99 run')!;
    expect(withPasses(p99, [20, 10, 30]).ok).toBeNull();
    // The GC lines say what the p99 run is made of.
    expect(lines.map((l) => l.figure)).toEqual(expect.arrayContaining(['in GC / run', 'scavenges per 1000 runs', 'mean scavenge']));
  });

  it('holds the rows run without pretenuring against each other, for reading only', () => {
    const off = (row: BenchRow): BenchRow => ({ ...row, mode: 'sequential, no pretenuring' });
    const lines = tableLines([memory(90), bare(50), off(memory(70)), off(bare(35))]);
    const perCall = lines.filter((l) => l.figure === 'µs per model call' && l.workload === 'W1 / memory');
    // The default row against the default bare row, with its target; the other against its own pair, without one.
    expect(perCall.map((l) => [l.mode, l.reference?.label, l.ratio, l.ok])).toEqual([
      ['sequential', 'bare XState', 90 / 50, false],
      ['sequential', 'swarm machine alone', null, null],
      ['sequential, no pretenuring', 'bare XState, same option', 70 / 35, null],
    ]);
    const offGc = lines.filter((l) => l.mode === 'sequential, no pretenuring' && l.figure === 'mean scavenge');
    expect(offGc.map((l) => l.workload)).toEqual(['W1 / memory', 'W1 / bare XState']);
  });

  it('holds the FULL row and the raw-commit-per-step row to the same durable floor, the target on FULL only', () => {
    const mem: BenchRow = { workload: 'W1 / memory', mode: 'sequential', figures: { usPerRun: 500 } };
    const full: BenchRow = { workload: 'W1 / sqlite FULL', mode: 'sequential', figures: { usPerRun: 3600, commitsPerRun: 8, rawCommitUs: 250 } };
    const rawStep: BenchRow = { workload: 'W1 / memory + raw FULL commit per step', mode: 'sequential', figures: { usPerRun: 2750, commitsPerRun: 8, rawCommitUs: 240 } };
    const perRun = tableLines([mem, full, rawStep]).filter((l) => l.figure === 'µs per run');
    // Each row's floor is the memory row's run plus its own commits × its own raw commit.
    expect(perRun.map((l) => [l.workload, l.reference?.label, l.reference?.value, l.ratio, l.ok])).toEqual([
      ['W1 / sqlite FULL', 'memory + commits × raw', 2500, 3600 / 2500, false],
      ['W1 / sqlite FULL', 'raw commit per step', 2750, 3600 / 2750, null],
      ['W1 / memory + raw FULL commit per step', 'memory + commits × raw', 2420, 2750 / 2420, null],
    ]);
  });

  it('holds W1 on JetStream in one process to the same floor as with its agents in workers, the target on the latter only', () => {
    const mem: BenchRow = { workload: 'W1 / memory', mode: 'sequential', figures: { usPerRun: 500 } };
    const raw = { rawKvUpdateUs: 300, rawPublishUs: 200 };
    const workers: BenchRow = { workload: 'W1 / JetStream', mode: 'sequential', figures: { usPerRun: 20_000, commitsPerRun: 14, ...raw } };
    const alone: BenchRow = { workload: 'W1 / JetStream', mode: 'sequential, one process', figures: { usPerRun: 8000, commitsPerRun: 8, ...raw } };
    const floors = tableLines([mem, workers, alone]).filter((l) => l.figure === 'µs per run' && l.reference?.label === 'memory + commits × (KV update + publish)');
    // Each row's floor counts its own commits: 500 + 14 × 500, and 500 + 8 × 500.
    expect(floors.map((l) => [l.mode, l.reference?.value, l.ratio, l.ok])).toEqual([
      ['sequential', 7500, 20_000 / 7500, false],
      ['sequential, one process', 4500, 8000 / 4500, null],
    ]);
  });
});
