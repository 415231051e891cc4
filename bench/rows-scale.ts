/**
 * The scale-out rows: how throughput grows with worker processes, and the distributed example
 * under a REST load against the same load on one process with SQLite.
 *
 * - W1 over NATS: the orchestrator in the row's process, the three agents in 1 or 2 worker
 *   processes (`nats-worker.ts`), state in JetStream; a batch of runs started at once, 20 ms
 *   per model call. It reports runs per second and, per process (orchestrator, each worker,
 *   nats-server), CPU per run and the cores it kept busy, beside the whole machine's: what
 *   limits the throughput (see docs/scale-out.md).
 * - REST 500: the distributed example served over REST (`scale-fixtures.ts`, set up as
 *   `xswarm serve` and `xswarm worker` set it up), 500 runs posted at once by a real HTTP
 *   client (this process, `fetch`), each followed to its end on its event stream (SSE): with
 *   the agents in 2 worker processes and state in JetStream, or in one process with SQLite.
 *
 * @module
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type NatsServer, startNatsServer } from '../test/support/nats-server.js';
import { CONCURRENT_LATENCY_MS, percentile } from './measure.js';
import { processMeter, setupPids, WriteLog, workersUs } from './nats-bench.js';
import { type Child, startChild } from './scale-children.js';
import type { Figures } from './table.js';
import { natsMissing, w1OverNats } from './w1-nats.js';
import { runW1 } from './w1.js';

/** Runs posted at once in the REST rows (the workload's name says it: rows.ts). */
const REST_RUNS = 500;
/** Sequential W1 runs before the batch (JIT, connections, streams and consumers in place). */
const W1_WARMUP = 20;
/** REST runs before the timed ones, started together (the same reasons). */
const REST_WARMUP = 10;
/** The served swarm definition of the REST rows (`examples/distributed/planner.ts`). */
const PLANNER = 'day-planner';
/** Model calls per REST run: the planner's 4 (three handoffs, then `complete`), each agent's 2 (its tool, then its answer). */
const PLANNER_CALLS = 4;
const AGENT_CALLS = 2;

const now = () => process.hrtime.bigint();
const msSince = (t: bigint) => Number(now() - t) / 1e6;

/** Completion times (ms) of runs started at once: p50, p90, max. */
function spread(doneMs: readonly number[]): Figures {
  return { p50Ms: percentile(doneMs, 0.5), p90Ms: percentile(doneMs, 0.9), maxMs: Math.max(...doneMs) };
}

/**
 * W1 over NATS with its agents in `workers` worker processes: {@link W1_WARMUP} runs one at a
 * time, then `runs` runs started at once; the figures are the batch's runs per second, its
 * completion times, and each process's CPU (see {@link processMeter}). Every agent must have
 * been called once per run, summed over the workers.
 */
export function w1NatsScale(workers: number, runs: number): () => Promise<Figures> {
  return async () => {
    if (natsMissing()) return {};
    return w1OverNats(workers, CONCURRENT_LATENCY_MS, async (setup, runtime) => {
      const once = () => runW1(runtime);
      for (let i = 0; i < W1_WARMUP; i++) await once();
      const meter = processMeter(setupPids(setup));
      const started = now();
      const done = await Promise.all(
        Array.from({ length: runs }, async () => {
          await once();
          return msSince(started);
        }),
      );
      const wallMs = msSince(started);
      const cpu = meter.figures(runs, wallMs);
      const figures = { runs, wallMs, runsPerSec: runs / (wallMs / 1000), ...spread(done), ...cpu, 'cpu workers µs/run': workersUs(cpu, setup.workers.length) };
      return { figures, runs: W1_WARMUP + runs };
    });
  };
}

/** One REST run as a client makes it: the POST, then its event stream read to the end. */
async function restRun(url: string, started: bigint): Promise<{ swarmId: string; postedMs: number; doneMs: number }> {
  const posted = await fetch(`${url}/swarms/${PLANNER}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ input: 'Plan my Saturday' }),
  });
  if (posted.status !== 201) throw new Error(`POST answered ${posted.status}: ${await posted.text()}`);
  const { swarmId } = (await posted.json()) as { swarmId: string };
  const postedMs = msSince(started);
  // The stream ends after the swarm's final event.
  const stream = await fetch(`${url}/swarms/${PLANNER}/${encodeURIComponent(swarmId)}/events`);
  const text = await stream.text();
  const doneMs = msSince(started);
  if (!text.includes('"final":true')) throw new Error(`the event stream of ${swarmId} ended without a final event`);
  return { swarmId, postedMs, doneMs };
}

/**
 * {@link REST_RUNS} runs of the distributed example posted at once over REST (see the module
 * comment): on `'nats'`, the REST server (the orchestrator) and two workers in processes of
 * their own on the row's nats-server; on `'sqlite'`, one server process with the agents and a
 * SQLite file. The figures: completion times (from the batch's start to the end of each run's
 * event stream), the POSTs' answer times, each process's CPU, and model calls per run (more
 * than 10 means calls were made again, e.g. a hosted call resent after a silent heartbeat).
 * Every run must end completed.
 */
export function restScale(kind: 'nats' | 'sqlite'): () => Promise<Figures> {
  return async () => {
    if (kind === 'nats' && natsMissing()) return {};
    const children: Child[] = [];
    let nats: NatsServer | undefined;
    let api: WriteLog | undefined;
    const dir = kind === 'sqlite' ? mkdtempSync(join(tmpdir(), 'xswarm-bench-rest-')) : undefined;
    try {
      const pids: Record<string, number | 'self'> = {};
      if (kind === 'nats') {
        nats = await startNatsServer();
        const workers = await Promise.all([1, 2].map(() => startChild('activity-worker', { nats: nats!.url })));
        children.push(...workers);
        pids['nats-server'] = nats.pid;
        workers.forEach((w, i) => {
          pids[`worker ${i + 1}`] = w.pid;
        });
      }
      const server = await startChild('rest-server', kind === 'nats' ? { nats: nats!.url } : { dir });
      children.push(server);
      pids.server = server.pid;
      pids.client = 'self';
      const url = server.ready.url as string;
      const warm = now();
      await Promise.all(Array.from({ length: REST_WARMUP }, () => restRun(url, warm)));

      // The reads every process makes of the store while the batch runs (its writes are too
      // many to log without loading it).
      if (nats) {
        api = await WriteLog.apiOnly(nats.url);
        await api.start();
      }
      const meter = processMeter(pids);
      const started = now();
      const runs = await Promise.all(Array.from({ length: REST_RUNS }, () => restRun(url, started)));
      const wallMs = msSince(started);
      const cpu = meter.figures(REST_RUNS, wallMs);
      await api?.stop();
      // Every run's result, read as a client would once its stream ended.
      for (let i = 0; i < runs.length; i += 50) {
        await Promise.all(
          runs.slice(i, i + 50).map(async ({ swarmId }) => {
            const r = (await (await fetch(`${url}/swarms/${PLANNER}/${encodeURIComponent(swarmId)}`)).json()) as { status: string };
            if (r.status !== 'completed') throw new Error(`run ${swarmId} ended ${r.status}`);
          }),
        );
      }
      const counts: Record<string, number> = {};
      for (const c of await Promise.all(children.splice(0).map((c) => c.stop()))) {
        for (const [speaker, n] of Object.entries(c)) counts[speaker] = (counts[speaker] ?? 0) + n;
      }
      const total = REST_WARMUP + REST_RUNS;
      const calls = Object.values(counts).reduce((a, n) => a + n, 0);
      return {
        runs: REST_RUNS,
        ...spread(runs.map((r) => r.doneMs)),
        postP50Ms: percentile(
          runs.map((r) => r.postedMs),
          0.5,
        ),
        wallMs,
        runsPerSec: REST_RUNS / (wallMs / 1000),
        modelCallsPerRun: calls / total,
        expectedModelCallsPerRun: PLANNER_CALLS + 3 * AGENT_CALLS,
        ...(api ? { apiPerRun: api.seen.length / REST_RUNS } : {}),
        ...cpu,
      };
    } finally {
      for (const c of children) await c.stop().catch(() => undefined);
      await api?.close();
      await nats?.stop();
      if (dir) rmSync(dir, { recursive: true, force: true });
    }
  };
}
