/**
 * `npm run bench [-- --json] [-- --only <text>]`: runs the bench rows and prints a table, or
 * with `--json` one JSON object per row and nothing else on stdout. `--only` keeps the rows
 * whose "workload / mode" contains the text (for profiling one row).
 *
 * @module
 */
import { BARE_XSTATE, ROWS, RUNTIME_MEMORY } from './rows.js';
import { type BenchRow, formatTable, jsonLine } from './table.js';

const args = process.argv.slice(2);
const json = args.includes('--json');
const onlyAt = args.indexOf('--only');
const only = onlyAt >= 0 ? args[onlyAt + 1] : undefined;

const specs = ROWS.filter((r) => !only || `${r.workload} / ${r.mode}`.includes(only));
const rows: BenchRow[] = [];
for (const spec of specs) {
  // Progress goes to stderr so that stdout stays machine-readable with --json.
  if (!json) process.stderr.write(`running ${spec.workload} / ${spec.mode}…\n`);
  const row = { workload: spec.workload, mode: spec.mode, ...(await spec.measure()) };
  rows.push(row);
  if (json) process.stdout.write(`${jsonLine(row)}\n`);
}

if (!json) {
  console.log(formatTable(rows));
  for (const line of [...ratios(rows), ...targets(rows)]) console.log(line);
}

/** The design's targets for the in-memory runtime rows, checked against what was measured. */
function targets(all: readonly BenchRow[]): string[] {
  const seq = all.find((r) => r.workload === RUNTIME_MEMORY && r.mode === 'sequential');
  const con = all.find((r) => r.workload === RUNTIME_MEMORY && r.mode === 'concurrent');
  const bare = all.find((r) => r.workload === BARE_XSTATE && r.mode === 'sequential');
  const check = (label: string, value: number | null | undefined, limit: number, unit: string) =>
    value == null ? [] : [`target ${label} ≤ ${limit}${unit}: ${value.toFixed(value < 10 ? 2 : 0)}${unit} ${value <= limit ? 'ok' : 'MISSED'}`];
  const ratio = seq?.usPerModelCall && bare?.usPerModelCall ? seq.usPerModelCall / bare.usPerModelCall : undefined;
  return [
    ...check('µs per model call', seq?.usPerModelCall, 130, ' µs'),
    ...check('runtime/bare', ratio, 1.5, '×'),
    ...check('concurrent wall', con?.concurrentWallMs, 1000, ' ms'),
    ...check('concurrent peak RSS', con?.peakRssMb, 200, ' MB'),
  ];
}

/** runtime/bare ratios for every mode in which both rows ran. */
function ratios(all: readonly BenchRow[]): string[] {
  const find = (workload: string, mode: string) => all.find((r) => r.workload === workload && r.mode === mode);
  const lines: string[] = [];
  const seqRt = find(RUNTIME_MEMORY, 'sequential')?.usPerModelCall;
  const seqBare = find(BARE_XSTATE, 'sequential')?.usPerModelCall;
  if (seqRt && seqBare) lines.push(`runtime/bare per model call (sequential): ${(seqRt / seqBare).toFixed(2)}×`);
  const conRt = find(RUNTIME_MEMORY, 'concurrent')?.concurrentWallMs;
  const conBare = find(BARE_XSTATE, 'concurrent')?.concurrentWallMs;
  if (conRt && conBare) lines.push(`runtime/bare concurrent wall: ${(conRt / conBare).toFixed(2)}×`);
  return lines;
}
