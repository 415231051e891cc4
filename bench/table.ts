/**
 * Bench rows and how they are printed: a readable table, or one JSON object per row.
 *
 * @module
 */

/**
 * One measured row. Fields that do not apply to a row's mode are `null`: sequential rows have
 * no wall time or RSS, concurrent rows no per-run time (their runs overlap).
 */
export interface BenchRow {
  workload: string;
  mode: string;
  usPerRun: number | null;
  usPerModelCall: number | null;
  concurrentWallMs: number | null;
  peakRssMb: number | null;
  /** Store transactions per run (rows on a durable store; with synchronous=FULL each one fsyncs). */
  writesPerRun: number | null;
}

/** What a row function measures; the row spec adds `workload` and `mode`. */
export type RowFigures = Omit<BenchRow, 'workload' | 'mode'>;

/**
 * A row to run: adding a row (e.g. an SQLite store) means adding one of these.
 *
 * @example
 * const spec: RowSpec = { workload: 'W1 / memory', mode: 'sequential', measure: () => sequentialW1() };
 */
export interface RowSpec {
  workload: string;
  mode: string;
  measure(): Promise<RowFigures>;
}

/** The JSON line of a row: exactly the {@link BenchRow} fields, in a fixed order. */
export function jsonLine(row: BenchRow): string {
  const { workload, mode, usPerRun, usPerModelCall, concurrentWallMs, peakRssMb, writesPerRun } = row;
  return JSON.stringify({ workload, mode, usPerRun, usPerModelCall, concurrentWallMs, peakRssMb, writesPerRun });
}

const COLUMNS: { title: string; cell(r: BenchRow): string; right?: boolean }[] = [
  { title: 'workload', cell: (r) => r.workload },
  { title: 'mode', cell: (r) => r.mode },
  { title: 'µs/run', cell: (r) => num(r.usPerRun, 1), right: true },
  { title: 'µs/model call', cell: (r) => num(r.usPerModelCall, 1), right: true },
  { title: 'concurrent wall ms', cell: (r) => num(r.concurrentWallMs, 0), right: true },
  { title: 'peak RSS MB', cell: (r) => num(r.peakRssMb, 1), right: true },
  { title: 'writes/run', cell: (r) => num(r.writesPerRun, 1), right: true },
];

function num(value: number | null, digits: number): string {
  return value === null ? '–' : value.toFixed(digits);
}

/** The rows as an aligned text table. */
export function formatTable(rows: readonly BenchRow[]): string {
  const cells = rows.map((r) => COLUMNS.map((c) => c.cell(r)));
  const widths = COLUMNS.map((c, i) => Math.max(c.title.length, ...cells.map((row) => row[i]!.length)));
  const line = (values: string[]) =>
    values.map((v, i) => (COLUMNS[i]!.right ? v.padStart(widths[i]!) : v.padEnd(widths[i]!))).join('  ');
  return [line(COLUMNS.map((c) => c.title)), widths.map((w) => '-'.repeat(w)).join('  '), ...cells.map(line)].join('\n');
}
