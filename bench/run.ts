/**
 * `npm run bench [-- --json] [-- --only <text>]`: runs the bench rows and prints a table, or
 * with `--json` one JSON object per row and nothing else on stdout. `--only` keeps the rows
 * whose "workload / mode" contains the text.
 *
 * Each row runs in a fresh node process with `--expose-gc`: peak RSS never shrinks back after
 * a row, so in one shared process a concurrent row would report the high-water mark of whatever
 * ran before it. The children run an esbuild bundle of this script under plain node, as a
 * compiled service would, so the TypeScript loader's own memory and start-up are not measured
 * (the same for the runtime and the bare XState rows). `--row "<workload> / <mode>"` runs one
 * row in this process and prints its JSON line; that is what the children do, and how to
 * profile one: `node --cpu-prof --import tsx bench/run.ts --row "W1 / memory / sequential"`.
 *
 * @module
 */
import { execFileSync } from 'node:child_process';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build, stop } from 'esbuild';
import { BARE_XSTATE, ROWS, RUNTIME_MEMORY } from './rows.js';
import { type BenchRow, formatTable, jsonLine, type RowSpec } from './table.js';

const args = process.argv.slice(2);
const option = (name: string) => (args.includes(name) ? args[args.indexOf(name) + 1] : undefined);
const json = args.includes('--json');
const nameOf = (spec: RowSpec) => `${spec.workload} / ${spec.mode}`;

/** Measures one row in this process. */
async function measure(spec: RowSpec): Promise<BenchRow> {
  return { workload: spec.workload, mode: spec.mode, ...(await spec.measure()) };
}

/** Bundles this script for the child processes (better-sqlite3 stays a native import). */
async function bundle(): Promise<string> {
  const outfile = resolve('.xswarm/bench/run.mjs');
  await build({
    entryPoints: [fileURLToPath(import.meta.url)],
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    external: ['better-sqlite3'],
    outfile,
    logLevel: 'error',
    // CommonJS dependencies inside an ESM bundle still call `require`.
    banner: { js: "import { createRequire as __cr } from 'node:module'; const require = __cr(import.meta.url);" },
  });
  // esbuild keeps a service process alive after a build: end it before anything is measured.
  await stop();
  return outfile;
}

/** Measures one row in a child process running the bundled script with `--row`. */
function measureInChild(script: string, spec: RowSpec): BenchRow {
  const out = execFileSync(process.execPath, ['--expose-gc', script, '--row', nameOf(spec)], {
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  return JSON.parse(out.trim().split('\n').at(-1)!) as BenchRow;
}

const single = option('--row');
if (single !== undefined) {
  const spec = ROWS.find((r) => nameOf(r) === single);
  if (!spec) throw new Error(`No row "${single}"; rows: ${ROWS.map(nameOf).join(', ')}`);
  process.stdout.write(`${jsonLine(await measure(spec))}\n`);
} else {
  const only = option('--only');
  const script = await bundle();
  const rows: BenchRow[] = [];
  for (const spec of ROWS.filter((r) => !only || nameOf(r).includes(only))) {
    // Progress goes to stderr so that stdout stays machine-readable with --json.
    if (!json) process.stderr.write(`running ${nameOf(spec)}…\n`);
    const row = measureInChild(script, spec);
    rows.push(row);
    if (json) process.stdout.write(`${jsonLine(row)}\n`);
  }
  if (!json) {
    console.log(formatTable(rows));
    for (const line of [...ratios(rows), ...targets(rows)]) console.log(line);
  }
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

/** The design's targets for the in-memory runtime rows, checked against what was measured. */
function targets(all: readonly BenchRow[]): string[] {
  const find = (workload: string, mode: string) => all.find((r) => r.workload === workload && r.mode === mode);
  const seq = find(RUNTIME_MEMORY, 'sequential');
  const con = find(RUNTIME_MEMORY, 'concurrent');
  const bare = find(BARE_XSTATE, 'sequential');
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
