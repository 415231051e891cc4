/**
 * `npm run bench [-- --json] [-- --only <text>]`: runs the bench rows and prints the table of
 * figures, floors or references, ratios and targets (ok or MISSED). With `--json`, stdout holds
 * JSON lines only: one `{ kind: 'row' }` object per row as it finishes, then one
 * `{ kind: 'check' }` object per table line. `--only` keeps the rows whose "workload / mode"
 * contains the text, plus the rows their targets are measured against.
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
import { ROWS } from './rows.js';
import { writeStream } from './rows-stream.js';
import { type BenchRow, formatTable, lineJson, medianRows, type RowSpec, rowJson, rowName, type TableLine, withPasses } from './table.js';
import { tableLines } from './targets.js';

const args = process.argv.slice(2);
/** How many passes measure the repeated rows (`--passes N` overrides): their medians are printed. */
const PASSES = 3;
const option = (name: string) => (args.includes(name) ? args[args.indexOf(name) + 1] : undefined);
const json = args.includes('--json');

/** Measures one row in this process. */
async function measure(spec: RowSpec): Promise<BenchRow> {
  return { workload: spec.workload, mode: spec.mode, figures: await spec.measure() };
}

/** Bundles this script for the child processes (better-sqlite3 stays a native import). */
async function bundle(): Promise<string> {
  const outfile = resolve('.xswarm/bench/run.mjs');
  const bundleOf = (entry: string, out: string) =>
    build({
      entryPoints: [fileURLToPath(new URL(entry, import.meta.url))],
      bundle: true,
      platform: 'node',
      format: 'esm',
      target: 'node20',
      external: ['better-sqlite3'],
      outfile: out,
      logLevel: 'error',
      // CommonJS dependencies inside an ESM bundle still call `require`.
      banner: { js: "import { createRequire as __cr } from 'node:module'; const require = __cr(import.meta.url);" },
    });
  await bundleOf(import.meta.url, outfile);
  // The SQLite store starts its writer thread from the compiled module beside its own code:
  // beside the bundle, here.
  await bundleOf('../src/store/sqlite/writer.ts', resolve('.xswarm/bench/writer.js'));
  // esbuild keeps a service process alive after a build: end it before anything is measured.
  await stop();
  return outfile;
}

/** Measures one row in a child process running the bundled script with `--row`. */
function measureInChild(script: string, spec: RowSpec): BenchRow {
  const out = execFileSync(process.execPath, [...(spec.nodeOptions ?? []), '--expose-gc', script, '--row', rowName(spec)], {
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'inherit'],
    maxBuffer: 1 << 24,
  });
  const { workload, mode, figures } = JSON.parse(out.trim().split('\n').at(-1)!) as BenchRow;
  return { workload, mode, figures };
}

/** The rows `--only` selects, with the rows they are compared with, in bench order. */
function selected(only: string | undefined): RowSpec[] {
  if (!only) return ROWS;
  const wanted = new Set(ROWS.filter((r) => rowName(r).includes(only)).map(rowName));
  // Until nothing is added: what a needed row needs is needed too.
  for (let size = -1; size !== wanted.size; ) {
    size = wanted.size;
    for (const r of ROWS) if (wanted.has(rowName(r))) for (const n of r.needs ?? []) wanted.add(n);
  }
  return ROWS.filter((r) => wanted.has(rowName(r)));
}

/**
 * What a row may have a child process prepare (`--fixture <name> <path>`), printing a line; or
 * run (`nats-worker`: a worker process serving the NATS rows until its stdin ends; loaded on
 * demand, so that no other row's process loads the NATS client).
 */
const FIXTURES: Record<string, (path: string) => Promise<string>> = {
  stream: writeStream,
  'nats-worker': async (spec) => (await import('./nats-worker.js')).natsWorker(spec),
  // The scale-out rows' REST server and activity workers (rows-scale.ts).
  'rest-server': async (spec) => (await import('./scale-fixtures.js')).restServer(spec),
  'activity-worker': async (spec) => (await import('./scale-fixtures.js')).activityWorker(spec),
};

const single = option('--row');
const fixture = option('--fixture');
if (fixture !== undefined) {
  const make = FIXTURES[fixture];
  if (!make) throw new Error(`No fixture "${fixture}"`);
  process.stdout.write(`${await make(args[args.indexOf('--fixture') + 2]!)}\n`);
} else if (single !== undefined) {
  const spec = ROWS.find((r) => rowName(r) === single);
  if (!spec) throw new Error(`No row "${single}"; rows: ${ROWS.map(rowName).join(', ')}`);
  const missing = (spec.nodeOptions ?? []).filter((o) => !process.execArgv.includes(o));
  if (missing.length > 0) throw new Error(`Row "${single}" runs in a node started with ${missing.join(' ')}`);
  process.stdout.write(`${rowJson(await measure(spec))}\n`);
} else {
  const specs = selected(option('--only'));
  const passCount = Math.max(1, Number(option('--passes') ?? PASSES));
  const script = await bundle();
  const started = process.hrtime.bigint();
  // Pass 1 measures every row; later passes the repeated ones again, in the same order, so
  // that rows compared with each other are measured side by side in every pass.
  const passes: BenchRow[][] = [];
  for (let pass = 1; pass <= passCount; pass++) {
    const rows: BenchRow[] = [];
    for (const spec of specs) {
      if (pass > 1 && !spec.repeated) {
        rows.push(passes[0]!.find((r) => rowName(r) === rowName(spec))!);
        continue;
      }
      // Progress goes to stderr so that stdout stays machine-readable with --json.
      process.stderr.write(`running ${rowName(spec)}${passCount > 1 ? ` (pass ${pass} of ${passCount})` : ''}…\n`);
      const row = measureInChild(script, spec);
      rows.push(row);
      if (json) process.stdout.write(`${rowJson(row, pass)}\n`);
    }
    passes.push(rows);
  }
  let lines = tableLines(medianRows(passes));
  if (passCount > 1) {
    // A repeated row's ratio lines: each pass's own ratio, and their median as the verdict. A
    // figure may be held against more than one reference: the reference is part of the key.
    const key = (l: TableLine) => `${l.workload}|${l.mode}|${l.figure}|${l.reference?.label ?? ''}`;
    const perPass = passes.map((rows) => new Map(tableLines(rows).map((l) => [key(l), l.ratio ?? null])));
    const repeated = new Set(specs.filter((s) => s.repeated).map(rowName));
    lines = lines.map((line) =>
      line.ratio !== undefined && repeated.has(rowName(line))
        ? withPasses(
            line,
            perPass.map((p) => p.get(key(line)) ?? null),
          )
        : line,
    );
  }
  if (json) for (const line of lines) process.stdout.write(`${lineJson(line)}\n`);
  else console.log(formatTable(lines));
  process.stderr.write(`bench took ${(Number(process.hrtime.bigint() - started) / 1e9).toFixed(0)} s\n`);
}
