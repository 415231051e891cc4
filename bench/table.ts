/**
 * Bench rows and how they are printed: what each row process measured, the lines of the
 * result table (a figure, its floor or reference, the ratio and the target), as text or JSON.
 *
 * @module
 */

/** What one row measured: named figures (null when a figure could not be taken). */
export type Figures = Record<string, number | null>;

/** One measured row, as its process reports it. */
export interface BenchRow {
  workload: string;
  mode: string;
  figures: Figures;
}

/**
 * A row to run: its measurement, and the other rows its targets compare it with (run with it
 * under `--only`, since ratios are taken within one bench run).
 */
export interface RowSpec {
  workload: string;
  mode: string;
  needs?: readonly string[];
  measure(): Promise<Figures>;
}

/** `workload / mode`: how rows are named on the command line and in `needs`. */
export function rowName(row: { workload: string; mode: string }): string {
  return `${row.workload} / ${row.mode}`;
}

/**
 * One line of the result table: a figure of a row, the floor or reference it is held against,
 * their ratio, the target and whether it was met (`ok` null: a figure reported for reading,
 * or a target that could not be checked because a figure is missing).
 */
export interface TableLine {
  workload: string;
  mode: string;
  figure: string;
  value: number | null;
  unit: string;
  reference?: { label: string; value: number | null };
  ratio?: number | null;
  target?: string;
  ok: boolean | null;
}

/** The JSON line of a row. */
export function rowJson(row: BenchRow): string {
  return JSON.stringify({ kind: 'row', workload: row.workload, mode: row.mode, figures: row.figures });
}

/** The JSON line of a table line. */
export function lineJson(line: TableLine): string {
  return JSON.stringify({ kind: 'check', ...line });
}

/** A number with a precision that suits its size. */
export function num(value: number | null | undefined): string {
  if (value === null || value === undefined || !Number.isFinite(value)) return 'n/a';
  const abs = Math.abs(value);
  return value.toFixed(abs >= 100 ? 0 : abs >= 10 ? 1 : 2);
}

const COLUMNS: { title: string; cell(l: TableLine): string; right?: boolean }[] = [
  { title: 'workload', cell: (l) => l.workload },
  { title: 'mode', cell: (l) => l.mode },
  { title: 'figure', cell: (l) => l.figure },
  { title: 'value', cell: (l) => `${num(l.value)} ${l.unit}`.trim(), right: true },
  { title: 'floor / reference', cell: (l) => (l.reference ? `${l.reference.label} ${num(l.reference.value)}` : '–') },
  { title: 'ratio', cell: (l) => (l.ratio === undefined ? '–' : l.ratio === null ? 'n/a' : `${l.ratio.toFixed(2)}×`), right: true },
  { title: 'target', cell: (l) => l.target ?? '–' },
  { title: 'result', cell: (l) => (l.target === undefined ? '' : l.ok === null ? 'n/a' : l.ok ? 'ok' : 'MISSED') },
];

/** The lines as an aligned text table. */
export function formatTable(lines: readonly TableLine[]): string {
  const cells = lines.map((l) => COLUMNS.map((c) => c.cell(l)));
  const widths = COLUMNS.map((c, i) => Math.max(c.title.length, ...cells.map((row) => row[i]!.length)));
  const line = (values: string[]) =>
    values
      .map((v, i) => (COLUMNS[i]!.right ? v.padStart(widths[i]!) : v.padEnd(widths[i]!)))
      .join('  ')
      .trimEnd();
  return [line(COLUMNS.map((c) => c.title)), widths.map((w) => '-'.repeat(w)).join('  '), ...cells.map(line)].join('\n');
}
