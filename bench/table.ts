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
  /**
   * Measured in every pass of the bench, not only the first: the rows whose targets compare
   * rows measured in different processes, so that each pass measures them side by side and
   * the table holds medians (a neighbour's load moves one process, not the median); and rows
   * whose own ratio a neighbour's load can tip, for the same medians.
   */
  repeated?: true;
  /**
   * Node options the row's process starts with. A row that needs them is measured only in a
   * process that has them: the bench starts its children so, and `--row` refuses to run it in a
   * process without them.
   */
  nodeOptions?: readonly string[];
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
  /** The same ratio in each pass of a repeated row (`ratio` is then their median; see {@link withPasses}). */
  ratios?: (number | null)[];
  target?: string;
  /** The most `ratio` may be, when `target` is a ratio target (`≤ 1.5×`). */
  ratioLimit?: number;
  ok: boolean | null;
}

/** The JSON line of a row (with the pass that measured it, when the bench runs several). */
export function rowJson(row: BenchRow, pass?: number): string {
  return JSON.stringify({ kind: 'row', workload: row.workload, mode: row.mode, ...(pass === undefined ? {} : { pass }), figures: row.figures });
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
  { title: 'passes', cell: passesCell },
  { title: 'target', cell: (l) => l.target ?? '–' },
  { title: 'result', cell: (l) => (l.target === undefined ? '' : l.ok === null ? 'n/a' : l.ok ? 'ok' : 'MISSED') },
];

/** The range of a repeated row's ratio over the passes, and how many passes met the target. */
function passesCell(l: TableLine): string {
  const rs = (l.ratios ?? []).filter((r): r is number => r !== null);
  if (rs.length < 2) return '';
  const range = `${Math.min(...rs).toFixed(2)}–${Math.max(...rs).toFixed(2)}×`;
  const limit = l.ratioLimit;
  return limit === undefined ? range : `${range}, ok in ${rs.filter((r) => r <= limit).length} of ${rs.length}`;
}

/**
 * `line` (taken between median figures) with the same ratio in each pass: its ratio and verdict
 * become the median of the passes' ratios. A pass measures the two rows side by side, so its
 * ratio cancels what the machine's load did between passes, which medians of each row's
 * figures taken apart do not.
 */
export function withPasses(line: TableLine, ratios: (number | null)[]): TableLine {
  const rs = ratios.filter((r): r is number => r !== null);
  if (rs.length === 0) return { ...line, ratios };
  const ratio = median(rs);
  return { ...line, ratios, ratio, ok: line.ratioLimit === undefined ? line.ok : ratio <= line.ratioLimit };
}

/**
 * Each row's figures as the median over the passes that measured it (rows measured once keep
 * their figures); a figure missing from a pass is left out of its median.
 */
export function medianRows(passes: readonly (readonly BenchRow[])[]): BenchRow[] {
  const first = passes[0] ?? [];
  return first.map((row) => {
    const runs = passes.map((p) => p.find((r) => r.workload === row.workload && r.mode === row.mode)).filter((r): r is BenchRow => r !== undefined);
    const figures: Figures = {};
    for (const key of Object.keys(row.figures)) {
      const values = runs.map((r) => r.figures[key]).filter((v): v is number => typeof v === 'number');
      figures[key] = values.length === 0 ? null : median(values);
    }
    return { ...row, figures };
  });
}

/** The median of `values` (non-empty): the middle one, or the mean of the two middle ones. */
function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

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
