/**
 * What the NATS rows share: a nats-server of the row's own (the tests' `startNatsServer`, on a
 * port of the kernel's choosing, its store under the system temp directory, on the same disk as
 * the SQLite rows' `.xswarm/`), worker child processes, the raw NATS and JetStream operations a
 * floor is made of, and a log of the JetStream writes and API calls every process makes.
 *
 * @module
 */
import { readFileSync } from 'node:fs';
import { jetstream, jetstreamManager, StorageType } from '@nats-io/jetstream';
import { Kvm } from '@nats-io/kv';
import { nanos, type NatsConnection, type Subscription } from '@nats-io/transport-node';
import { connectNats } from '../src/entries/nats.js';
import { type NatsServer, startNatsServer } from '../test/support/nats-server.js';
import { percentile } from './measure.js';
import { ECHO_SUBJECT, type WorkerSpec } from './nats-worker.js';
import { startChild } from './scale-children.js';
import type { Figures } from './table.js';
import type { CallCounts } from './w1.js';

/** A started worker process: its model calls per agent are known once it stopped. */
export interface Worker {
  readonly pid: number;
  stop(): Promise<CallCounts>;
}

/**
 * Starts a worker process (the bench bundle with `--fixture nats-worker`, or this script under
 * tsx when a row runs directly) and resolves once it serves. Its stdin is a pipe: when this
 * process ends, however it ends, the worker's stdin ends and it exits.
 */
export async function startWorker(spec: WorkerSpec): Promise<Worker> {
  const child = await startChild('nats-worker', spec);
  return { pid: child.pid, stop: async () => (await child.stop()) as CallCounts };
}

/** A row's server, its workers, and the end of both (the server's directory removed). */
export interface NatsSetup {
  server: NatsServer;
  workers: Worker[];
  /** Stops the workers (their counts summed) and the server. */
  stop(): Promise<CallCounts>;
}

/** Starts a nats-server and `workers` worker processes on it (all at once). */
export async function startSetup(workers: number, spec: Omit<WorkerSpec, 'url'>): Promise<NatsSetup> {
  const server = await startNatsServer();
  const started = await Promise.allSettled(Array.from({ length: workers }, () => startWorker({ ...spec, url: server.url })));
  const ok = started.flatMap((s) => (s.status === 'fulfilled' ? [s.value] : []));
  const failed = started.find((s) => s.status === 'rejected');
  const stop = async () => {
    const counts: CallCounts = {};
    try {
      for (const c of await Promise.all(ok.map((w) => w.stop()))) {
        for (const [agent, n] of Object.entries(c)) counts[agent] = (counts[agent] ?? 0) + n;
      }
    } finally {
      await server.stop();
    }
    return counts;
  };
  if (failed) {
    await stop().catch(() => undefined);
    throw (failed as PromiseRejectedResult).reason;
  }
  return { server, workers: ok, stop };
}

/**
 * CPU time (user + system) a process has used so far, in µs, from `/proc/<pid>/stat`
 * (clock ticks of 10 ms); null where there is no `/proc`.
 */
export function cpuUs(pid: number): number | null {
  try {
    // The command name (field 2) may hold spaces: fields are counted after its closing parenthesis.
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return ((Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS) * 1e6;
  } catch {
    return null;
  }
}
/** `getconf CLK_TCK` on Linux. */
const CLOCK_TICKS = 100;

/** The processes of a setup by name, as {@link processMeter} counts them: `orchestrator` (this one), `nats-server`, `worker <n>`. */
export function setupPids(setup: NatsSetup): Record<string, number | 'self'> {
  const pids: Record<string, number | 'self'> = { orchestrator: 'self', 'nats-server': setup.server.pid };
  setup.workers.forEach((w, i) => {
    pids[`worker ${i + 1}`] = w.pid;
  });
  return pids;
}

/** The workers' CPU µs per run summed, from {@link processMeter}'s figures (null when one is unknown). */
export function workersUs(figures: Figures, workers: number): number | null {
  let sum = 0;
  for (let i = 1; i <= workers; i++) {
    const v = figures[`cpu worker ${i} µs/run`];
    if (v == null) return null;
    sum += v;
  }
  return sum;
}

/**
 * Starts counting the CPU time of this process (the orchestrator), the setup's workers and its
 * nats-server; `perRun(runs)` gives each one's µs per run since (null where unknown).
 */
export function cpuMeter(setup: NatsSetup): { perRun(runs: number): Figures } {
  const meter = processMeter(setupPids(setup));
  return {
    perRun(runs) {
      // The wall time only scales the `cores` figures, which these rows do not print.
      const f = meter.figures(runs, 1);
      return {
        cpuOrchestratorUs: f['cpu orchestrator µs/run'] ?? null,
        cpuWorkersUs: workersUs(f, setup.workers.length),
        cpuServerUs: f['cpu nats-server µs/run'] ?? null,
      };
    },
  };
}

/** The whole machine's busy CPU time so far (every process, neighbours included), in µs; null without `/proc`. */
function machineBusyUs(): number | null {
  try {
    const cpu = readFileSync('/proc/stat', 'utf8').split('\n')[0]!.trim().split(/\s+/).slice(1).map(Number);
    // user nice system idle iowait irq softirq steal: busy is all but idle and iowait.
    const busy = cpu.slice(0, 8).reduce((a, v, i) => (i === 3 || i === 4 ? a : a + v), 0);
    return (busy / 100) * 1e6;
  } catch {
    return null;
  }
}

/**
 * Counts, from now on, the CPU time of named processes (`self` is this one) and of the whole
 * machine; `figures(runs, wallMs)` gives each process's µs per run and the cores it kept busy
 * over the wall time (`<name>Cores`), and the machine's busy cores (`machineCores`).
 */
export function processMeter(pids: Record<string, number | 'self'>) {
  const read = (pid: number | 'self') => {
    if (pid !== 'self') return cpuUs(pid);
    const u = process.cpuUsage();
    return u.user + u.system;
  };
  const before = Object.fromEntries(Object.entries(pids).map(([name, pid]) => [name, read(pid)]));
  const machine0 = machineBusyUs();
  return {
    figures(runs: number, wallMs: number): Figures {
      const f: Figures = {};
      for (const [name, pid] of Object.entries(pids)) {
        const t0 = before[name];
        const t = read(pid);
        const used = t === null || t0 === null || t0 === undefined ? null : t - t0;
        f[`cpu ${name} µs/run`] = used === null ? null : used / runs;
        f[`cores ${name}`] = used === null ? null : used / 1000 / wallMs;
      }
      const m = machineBusyUs();
      f['cores machine'] = m === null || machine0 === null ? null : (m - machine0) / 1000 / wallMs;
      return f;
    },
  };
}

/** Mean and median of a sample, in µs. */
export interface Timing {
  meanUs: number;
  p50Us: number;
}

/** Times `n` sequential calls of `op` after `warmup` untimed ones. */
export async function timeOps(op: (i: number) => Promise<unknown>, n: number, warmup = Math.ceil(n / 5)): Promise<Timing> {
  for (let i = 0; i < warmup; i++) await op(i);
  const each: number[] = [];
  for (let i = 0; i < n; i++) {
    const t = process.hrtime.bigint();
    await op(warmup + i);
    each.push(Number(process.hrtime.bigint() - t) / 1000);
  }
  return { meanUs: each.reduce((a, b) => a + b, 0) / n, p50Us: percentile(each, 0.5) };
}

/**
 * The raw operations of a floor, on a connection of their own: a request/reply round trip to
 * the worker's echo responder (another process), a KV compare-and-set update on a bucket set up
 * as the store's (file storage, history 1, direct gets), and a stream publish with a message id
 * on a stream set up as the store's events stream — each sequential, with a payload of the size
 * the handoff's own operations had.
 */
export class RawOps {
  /** The revision of each raw key (the next update's compare-and-set). */
  private readonly revs = new Map<string, number>();

  private constructor(
    private readonly nc: NatsConnection,
    private readonly kv: Awaited<ReturnType<Kvm['create']>>,
    private readonly js: ReturnType<typeof jetstream>,
  ) {}

  static async open(url: string): Promise<RawOps> {
    const nc = await connectNats({ servers: url, name: 'bench-raw' });
    const js = jetstream(nc);
    const jsm = await jetstreamManager(nc);
    await jsm.streams.add({ name: 'bench_raw_events', subjects: ['bench.raw.ev.>'], storage: StorageType.File, allow_direct: true, duplicate_window: nanos(120_000) });
    const kv = await new Kvm(js).create('bench_raw', { history: 1, storage: StorageType.File });
    return new RawOps(nc, kv, js);
  }

  /** Request/reply round trips of `bytes`-byte payloads. */
  requestReply(bytes: number, n: number): Promise<Timing> {
    const payload = 'x'.repeat(Math.max(1, Math.round(bytes)));
    return timeOps(() => this.nc.request(ECHO_SUBJECT, payload, { timeout: 5_000 }), n);
  }

  /** KV compare-and-set updates of `bytes`-byte values, over 16 keys in turn (each a new value). */
  async kvUpdate(bytes: number, n: number): Promise<Timing> {
    const revs = this.revs;
    const value = (i: number) => JSON.stringify({ i, pad: 'x'.repeat(Math.max(0, Math.round(bytes) - 20)) });
    return timeOps(async (i) => {
      const key = `k${i % 16}`;
      const rev = revs.get(key);
      revs.set(key, rev === undefined ? await this.kv.create(key, value(i)) : await this.kv.update(key, value(i), rev));
    }, n);
  }

  /** Stream publishes of `bytes`-byte payloads, each with a message id (deduplication on). */
  publish(bytes: number, n: number): Promise<Timing> {
    const payload = (i: number) => JSON.stringify({ i, pad: 'x'.repeat(Math.max(0, Math.round(bytes) - 20)) });
    const run = Date.now();
    return timeOps((i) => this.js.publish(`bench.raw.ev.s${i % 16}`, payload(i), { msgID: `${run}:${i}` }), n);
  }

  async close(): Promise<void> {
    await this.nc.drain().catch(() => this.nc.close());
  }
}

/** One message seen on a subject of the store or of the JetStream API. */
export interface Seen {
  at: bigint;
  subject: string;
  bytes: number;
  /** For a write to the bucket, the record revision its value holds (undefined: none, or not JSON). */
  revision?: number;
}

/** The record revision a stored value holds, read by a cheap scan (the log must not cost the runs much). */
function revisionOf(data: Uint8Array): number | undefined {
  const m = /"record":\{[\s\S]*?"revision":(\d+)/.exec(new TextDecoder().decode(data));
  return m ? Number(m[1]) : undefined;
}

/**
 * Every write to the store's bucket and streams and every JetStream API request, as a core
 * subscriber of the same account sees them (JetStream writes are plain publishes on the stored
 * subjects; the API is requests on `$JS.API.>`), by whichever process made them, with the time
 * it arrived here: what a handoff actually cost in JetStream operations.
 */
export class WriteLog {
  readonly seen: Seen[] = [];
  private subscriptions: Subscription[] = [];
  private constructor(
    private readonly nc: NatsConnection,
    private readonly subjects: readonly string[],
  ) {}

  /** A log of `prefix`'s bucket, streams and the JetStream API, not yet recording (see {@link start}). */
  static async open(url: string, prefix: string): Promise<WriteLog> {
    const nc = await connectNats({ servers: url, name: 'bench-log' });
    return new WriteLog(nc, [`$KV.${prefix}_swarms.>`, `${prefix}.ev.>`, `${prefix}.msg.>`, '$JS.API.>']);
  }

  /**
   * A log of the JetStream API requests alone (reads: gets, consumers), by every process: few
   * enough to record during a timed batch without loading it.
   */
  static async apiOnly(url: string): Promise<WriteLog> {
    const nc = await connectNats({ servers: url, name: 'bench-api-log' });
    return new WriteLog(nc, ['$JS.API.>']);
  }

  /** Starts recording (subscribes; once the server has the subscriptions). */
  async start(): Promise<void> {
    for (const subject of this.subjects) {
      this.subscriptions.push(
        this.nc.subscribe(subject, {
          callback: (_e, m) => {
            const at = process.hrtime.bigint();
            const kv = m.subject.startsWith('$KV.');
            this.seen.push({ at, subject: m.subject, bytes: m.data.length, ...(kv ? { revision: revisionOf(m.data) } : {}) });
          },
        }),
      );
    }
    await this.nc.flush();
  }

  /**
   * Stops recording: while nothing is recorded the server sends this process no copies, so the
   * timed operations do not pay for the log.
   */
  async stop(): Promise<void> {
    for (const s of this.subscriptions.splice(0)) s.unsubscribe();
    await this.nc.flush();
  }

  /** What arrived in `[from, to]` (hrtime). */
  between(from: bigint, to: bigint): Seen[] {
    return this.seen.filter((s) => s.at >= from && s.at <= to);
  }

  async close(): Promise<void> {
    await this.nc.drain().catch(() => this.nc.close());
  }
}
