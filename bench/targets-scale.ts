/**
 * The table lines of the scale-out rows (rows-scale.ts), called from `targets.ts`: throughput
 * as workers are added, per-process CPU (what limits it), and the REST target: 500 concurrent
 * distributed runs complete at p50 within 2× of the same load on one process with SQLite.
 *
 * @module
 */
import { ONE_WORKER, REST_500, REST_DISTRIBUTED, REST_SQLITE, TWO_WORKERS, TWO_WORKERS_LARGE, W1_NATS } from './rows.js';
import type { Figures } from './table.js';

/** The line makers of `tableLines` a scale-out row uses. */
export interface LineMakers {
  info(figure: string, value: number | null | undefined, unit: string): void;
  ratio(figure: string, value: number | null | undefined, unit: string, label: string, reference: number | null | undefined, limit: number): void;
  beside(figure: string, value: number | null | undefined, unit: string, label: string, reference: number | null | undefined): void;
}

/** The REST target: distributed completion p50 ≤ this × one process with SQLite. */
export const REST_P50_LIMIT = 2;

/**
 * Each process's CPU per run and the cores it kept busy over the batch (`cpu <name> µs/run`,
 * `cores <name>`, in the order measured), then the whole machine's busy cores, neighbours included.
 */
function processLines(f: Figures, at: LineMakers): void {
  for (const [key, value] of Object.entries(f)) {
    const cpu = /^cpu (.+) µs\/run$/.exec(key);
    if (cpu) at.info(`CPU per run: ${cpu[1]}`, value, 'µs');
  }
  for (const [key, value] of Object.entries(f)) {
    const cores = /^cores (.+)$/.exec(key);
    if (cores && cores[1] !== 'machine') at.info(`cores busy: ${cores[1]}`, value, '');
  }
  at.info('cores busy: whole machine (all processes)', f['cores machine'], '');
}

/** Adds the lines of the scale-out row `workload / mode`; false when it is not one. */
export function scaleLines(workload: string, mode: string, f: Figures, figures: (workload: string, mode: string) => Figures | undefined, at: LineMakers): boolean {
  const name = `${workload}|${mode}`;
  switch (name) {
    case `${W1_NATS}|${ONE_WORKER}`:
    case `${W1_NATS}|${TWO_WORKERS}`:
    case `${W1_NATS}|${TWO_WORKERS_LARGE}`: {
      const reference =
        mode === TWO_WORKERS ? { label: '1 worker', mode: ONE_WORKER } : mode === TWO_WORKERS_LARGE ? { label: '300 at once', mode: TWO_WORKERS } : undefined;
      if (reference) at.beside('runs per second', f.runsPerSec, '/s', reference.label, figures(W1_NATS, reference.mode)?.runsPerSec);
      else at.info('runs per second', f.runsPerSec, '/s');
      at.info(`wall, ${num(f.runs)} runs`, f.wallMs, 'ms');
      at.info('completion p50', f.p50Ms, 'ms');
      at.info('completion p90', f.p90Ms, 'ms');
      processLines(f, at);
      return true;
    }
    case `${REST_500}|${REST_SQLITE}`:
    case `${REST_500}|${REST_DISTRIBUTED}`: {
      if (mode === REST_DISTRIBUTED) {
        const one = figures(REST_500, REST_SQLITE);
        at.ratio('completion p50', f.p50Ms, 'ms', 'one process, SQLite', one?.p50Ms, REST_P50_LIMIT);
        at.beside('completion p90', f.p90Ms, 'ms', 'one process, SQLite', one?.p90Ms);
      } else {
        at.info('completion p50', f.p50Ms, 'ms');
        at.info('completion p90', f.p90Ms, 'ms');
      }
      at.info('completion max', f.maxMs, 'ms');
      at.info('POST answered p50', f.postP50Ms, 'ms');
      at.info('runs per second', f.runsPerSec, '/s');
      at.info('model calls per run', f.modelCallsPerRun, `(script: ${num(f.expectedModelCallsPerRun)})`);
      if (mode === REST_DISTRIBUTED) at.info('JetStream API requests per run', f.apiPerRun, '');
      processLines(f, at);
      return true;
    }
    default:
      return false;
  }
}

/** A count as printed in a figure's name. */
function num(n: number | null | undefined): string {
  return n == null ? 'n/a' : String(Math.round(n));
}
