/**
 * The NATS rows: a cross-process agent handoff against its floor, and W1 with its agents in two
 * worker processes and its state in JetStream (sequential, and 1000 runs at once). Each row
 * starts its own nats-server and worker processes (`nats-worker.ts`) and stops them at the end;
 * the orchestrator runs in the row's process.
 *
 * @module
 */
import type { NatsConnection } from '@nats-io/transport-node';
import { connectNats, jetstreamStore, natsTransport } from '../src/entries/nats.js';
import { createRuntime, defineSwarm, handoff, handoffToolName, type Runtime, scriptedModel, type SwarmStore, type Transport } from '../src/index.js';
import { subjectToken } from '../src/transport/types.js';
import { CONCURRENT_LATENCY_MS, CONCURRENT_RUNS, percentile, timeConcurrent, timeSequential, WARMUP_RUNS } from './measure.js';
import { cpuMeter, RawOps, type Seen, startSetup, type Timing, WriteLog } from './nats-bench.js';
import { ECHO_AGENT, echoAnswer } from './nats-worker.js';
import type { Figures } from './table.js';
import { W1_MODEL_CALLS } from './w1.js';
import { HOSTING, natsMissing, w1OverNats } from './w1-nats.js';
import { runW1 } from './w1.js';

/** The namespace the runtimes use (the default). */
const PREFIX = 'xswarm';
/** Handoffs timed, after the warm-up ones. */
const HANDOFFS = 200;
const HANDOFF_WARMUP = 30;
/** Handoffs made with the write log on, after the timed ones. */
const COUNTED = 50;
/** Raw operations per floor figure (half before the timed handoffs, half after). */
const RAW_OPS = 300;
/** Sequential W1 runs over JetStream, after the warm-up ones (each run makes three cross-process handoffs). */
const W1_RUNS = 200;
/**
 * As many as the memory row's, whose figure the floor is made of: the same steady state of the
 * JIT. After 20, a run still paid for compiling (the one-process row was 10–15 % slower).
 */
const W1_WARMUP = WARMUP_RUNS;
/** Sequential W1 runs made with the write log on, after the timed ones. */
const W1_COUNTED = 20;
/** What the handoff row's parent asks its agent. */
const REQUEST = 'ping';

const now = () => process.hrtime.bigint();
const us = (from: bigint, to: bigint) => Number(to - from) / 1000;
const mean = (xs: readonly number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;

/** The marks of one handoff, in this process's clock. */
interface Marks {
  /** The run began (the parent's `run`): what the whole run's round trips are counted from. */
  begun?: bigint;
  childId?: string;
  requestBytes?: number;
  /** The parent sent its host request for the child (the handoff leaves the parent). */
  sent?: bigint;
  /** The worker's answer arrived: the child's first step is durable there. */
  answered?: bigint;
  /** The last read of the child's record resolved: the parent holds the child's result. */
  held?: bigint;
  /** The parent's model was called again, with the handoff's result. */
  resumed?: bigint;
}

/** JetStream API request kinds, from `$JS.API.<KIND>…` (a KV get is a `DIRECT.GET` of the bucket's stream). */
function apiKind(subject: string): string {
  const parts = subject.split('.');
  // A direct get names its stream: the bucket's (a KV get) or the events stream.
  if (parts[2] === 'DIRECT') return `${parts[2]}.${parts[3]} ${parts[4]}`;
  if (parts[2] === 'STREAM' || parts[2] === 'CONSUMER') return `${parts[2]}.${parts[3]}${parts[4] === 'NEXT' ? '.NEXT' : ''}`;
  return parts[2] ?? subject;
}

/**
 * One agent handoff across processes: the orchestrator (a swarm whose one handoff goes to an
 * agent it does not have) runs here, the agent in a worker process, both on the row's
 * nats-server with their state in JetStream. Each run makes one handoff, sequentially.
 *
 * What is timed: from the moment the parent sends its host request for the child (the
 * transport's `request` on `xswarm.host.…`, wrapped here) to the moment the parent holds the
 * child's result (the last read of the child's record resolves, in the store's `load`, wrapped
 * here; the parent's next model call comes right after it and marks the end of the handoff).
 * So it covers the request and its answer (the worker started the child and made its first step
 * durable), the child's remaining steps and commits in the worker, and the parent following the
 * child's events through the store until it reads the result. It leaves out the parent's own
 * steps (the commit of the step that asked for the handoff, before, and of the step that records
 * its result, after) and the one-time fetch of the agent's card.
 *
 * The floor, measured in this run: one raw request/reply round trip to the worker process (of
 * the host request's size), plus, one after the other, as many raw KV updates and stream
 * publishes (of the same mean sizes) as the handoff needs: every KV update of the child (its
 * commits, up to its final one), every publish on its subjects before its final KV update (a
 * publish it waited for before that commit), and the final commit's message after it (a value
 * delivered on the key's subject may be one the bucket refused: the parent takes it as stored
 * only once that message names its revision), counted by a core subscriber on the bucket's
 * and streams' subjects, so whatever the worker wrote for the child is counted, whichever code
 * path wrote it (and however the log's and the parent's deliveries race). That log runs during the
 * warm-up (for the sizes) and during {@link COUNTED} handoffs after the timed ones (for the
 * counts, the JetStream API calls by kind, and where the time went), never during the timed
 * ones; the broker round trips per handoff are the host request plus every store write (KV
 * update, stream publish) and JetStream API request any process made in the handoff's window.
 * CPU time per run of each process (orchestrator, worker, nats-server) is reported too:
 * on a shared 2-core machine it tells load from work.
 */
export async function handoffCrossProcess(): Promise<Figures> {
  if (natsMissing()) return {};
  const setup = await startSetup(1, { kind: 'echo' });
  const url = setup.server.url;
  const opened: { close(): Promise<unknown> }[] = [];
  let runtime: Runtime | undefined;
  try {
    const log = await WriteLog.open(url, PREFIX);
    opened.push(log);
    const raw = await RawOps.open(url);
    opened.push(raw);
    const nc: NatsConnection = await connectNats({ servers: url, name: 'bench-parent' });
    opened.push({ close: () => nc.drain().catch(() => nc.close()) });

    let marks: Marks = {};
    const base = natsTransport(nc);
    const hostPrefix = `${PREFIX}.host.`;
    const transport: Transport = {
      ...base,
      request(subject, data, options) {
        if (!subject.startsWith(hostPrefix)) return base.request(subject, data, options);
        const m = marks;
        m.sent ??= now();
        m.requestBytes = data.length;
        m.childId = (JSON.parse(data) as { swarmId: string }).swarmId;
        return base.request(subject, data, options).then((reply) => {
          m.answered ??= now();
          return reply;
        });
      },
    };
    const js = jetstreamStore({ connection: nc });
    opened.push(js);
    // The parent holds the child's result once its last read of the child's record resolves
    // (`summary` where the runtime reads the result alone, `load` otherwise).
    const held = <T>(swarmId: string, read: T): T => {
      const m = marks;
      if (swarmId === m.childId && m.sent !== undefined && m.resumed === undefined) m.held = now();
      return read;
    };
    const store: SwarmStore = {
      ...js,
      load: async (swarmId) => held(swarmId, await js.load(swarmId)),
      summary: async (swarmId) => held(swarmId, await js.summary(swarmId)),
    };
    const parent = defineSwarm({ id: 'hop', instructions: 'Ask the echo agent, then answer with what it said.', handoffs: [handoff.toAgent(ECHO_AGENT)] });
    const model = scriptedModel((req) => {
      const answer = req.messages.find((m) => m.role === 'tool');
      if (!answer) return { toolCalls: [{ id: 'h1', name: handoffToolName(ECHO_AGENT), arguments: JSON.stringify({ request: REQUEST }) }] };
      marks.resumed ??= now();
      return { text: answer.content };
    });
    runtime = createRuntime({ swarms: [parent], model, transport, store, hosting: HOSTING });
    await runtime.start();

    const done: Marks[] = [];
    const once = async () => {
      marks = { begun: now() };
      const client = runtime!.forSwarm(parent);
      await client.run('Ask.');
      const result = await client.wait();
      if (result.status !== 'completed' || result.result !== echoAnswer(REQUEST)) throw new Error(`unexpected handoff result: ${JSON.stringify(result)}`);
      const m = marks;
      if (m.sent === undefined || m.answered === undefined || m.held === undefined || m.resumed === undefined) {
        throw new Error(`a handoff left marks missing: ${JSON.stringify(m, (_k, v: unknown) => (typeof v === 'bigint' ? String(v) : v))}`);
      }
      done.push(m);
    };
    // The warm-up is logged: the sizes of the handoff's own operations, for the raw ones.
    await log.start();
    for (let i = 0; i < HANDOFF_WARMUP; i++) await once();
    const warm = writesOf(log, done);
    const requestBytes = mean(done.map((m) => m.requestBytes!));
    await log.stop();
    const floorRaw = async (n: number) => ({
      rtt: await raw.requestReply(requestBytes, n),
      kv: await raw.kvUpdate(warm.kvBytes, n),
      pub: await raw.publish(warm.pubBytes, n),
    });
    const before = await floorRaw(RAW_OPS / 2);
    done.length = 0;
    const cpu = cpuMeter(setup);
    const started = now();
    for (let i = 0; i < HANDOFFS; i++) await once();
    const runUs = us(started, now()) / HANDOFFS;
    const cpuPerRun = cpu.perRun(HANDOFFS);
    const timed = done.splice(0);
    const after = await floorRaw(RAW_OPS / 2);
    // Counted apart from the timed ones, so that those do not pay for the log: what the
    // handoffs wrote and where their time went.
    await log.start();
    for (let i = 0; i < COUNTED; i++) await once();
    const w = writesOf(log, done);
    const avg = (pick: (t: typeof before) => Timing, f: keyof Timing) => (pick(before)[f] + pick(after)[f]) / 2;
    const floorOf = (f: keyof Timing) => avg((t) => t.rtt, f) + w.kvUpdates * avg((t) => t.kv, f) + w.publishes * avg((t) => t.pub, f);
    const spans = timed.map((m) => us(m.sent!, m.held!));
    const figures: Figures = {
      p50Us: percentile(spans, 0.5),
      meanUs: mean(spans),
      floorP50Us: floorOf('p50Us'),
      floorMeanUs: floorOf('meanUs'),
      rttP50Us: avg((t) => t.rtt, 'p50Us'),
      kvUpdateP50Us: avg((t) => t.kv, 'p50Us'),
      publishP50Us: avg((t) => t.pub, 'p50Us'),
      kvUpdates: w.kvUpdates,
      publishes: w.publishes,
      kvBytes: w.kvBytes,
      pubBytes: w.pubBytes,
      childWritesAfter: w.after,
      parentRelays: w.relays,
      brokerRoundTrips: w.roundTrips,
      runRoundTrips: w.runRoundTrips,
      hostAnswerP50Us: percentile(
        timed.map((m) => us(m.sent!, m.answered!)),
        0.5,
      ),
      childDoneP50Us: percentile(
        w.lastWrites.map((t, i) => us(done[i]!.answered!, t)),
        0.5,
      ),
      followP50Us: percentile(
        w.lastWrites.map((t, i) => us(t, done[i]!.held!)),
        0.5,
      ),
      p90Us: percentile(spans, 0.9),
      maxUs: Math.max(...spans),
      runUs,
      ...cpuPerRun,
    };
    for (const [kind, n] of Object.entries(w.api)) figures[`api ${kind}`] = n;
    return figures;
  } finally {
    await runtime?.close();
    for (const o of opened.reverse()) await o.close().catch(() => undefined);
    await setup.stop();
  }
}

/**
 * What the handoffs of `done` made JetStream do, per handoff: the writes of the child the
 * handoff needs (every KV update of its key, the publishes on its event and message subjects
 * before its last KV update, and its final commit's message: see the floor at
 * {@link handoffCrossProcess}), their mean sizes, the
 * child's writes after the parent held its result, the parent's relay publishes, the time of the
 * child's final commit (its last KV update), the broker round trips while the handoff was timed,
 * and the JetStream API requests of every process by kind.
 */
function writesOf(log: WriteLog, done: readonly Marks[]) {
  let kvUpdates = 0;
  let publishes = 0;
  let kvBytes = 0;
  let pubBytes = 0;
  let after = 0;
  let relays = 0;
  let roundTrips = 0;
  let runRoundTrips = 0;
  const api: Record<string, number> = {};
  const lastWrites: bigint[] = [];
  done.forEach((m, i) => {
    const tok = subjectToken(m.childId!);
    const kvSubject = `$KV.${PREFIX}_swarms.${tok}`;
    const child = (s: Seen) => s.subject === kvSubject || s.subject === `${PREFIX}.ev.${tok}` || s.subject.startsWith(`${PREFIX}.msg.${tok}.`);
    const window = log.between(m.sent!, m.held!);
    // The host request, then every acknowledged store write and JetStream API request.
    roundTrips++;
    for (const s of window) {
      roundTrips++;
      if (s.subject.startsWith('$JS.API.')) {
        const kind = apiKind(s.subject);
        api[kind] = (api[kind] ?? 0) + 1;
      } else if (!child(s) && s.subject.startsWith(`${PREFIX}.ev.`)) relays++;
    }
    const next = done[i + 1]?.sent ?? process.hrtime.bigint();
    // The child's writes from the request to the next handoff: it has ended by then. The log is
    // delivered them beside the parent, so which of them came before \`held\` is a race; what the
    // handoff needs is not: its commits, and the publishes they waited for.
    const life = log.between(m.sent!, next - 1n).filter(child);
    const final = life.findLast((s) => s.subject === kvSubject);
    // The final commit's message: the parent takes the final value as stored only once it comes.
    const told = final && life.find((s) => s.at > final.at && s.subject === `${PREFIX}.ev.${tok}`);
    for (const s of life) {
      if (s.subject === kvSubject) {
        kvUpdates++;
        kvBytes += s.bytes;
      } else if ((final && s.at < final.at) || s === told) {
        publishes++;
        pubBytes += s.bytes;
      }
    }
    lastWrites.push(final?.at ?? m.answered!);
    after += life.filter((s) => s.at > m.held!).length;
    // The whole run, up to the next one's start: its host request and everything logged (the
    // parent's own steps' writes too, and the last one's pipelined publish).
    runRoundTrips += 1 + log.between(m.begun!, (done[i + 1]?.begun ?? process.hrtime.bigint()) - 1n).length;
  });
  const n = done.length;
  for (const k of Object.keys(api)) api[k]! /= n;
  return {
    kvUpdates: kvUpdates / n,
    publishes: publishes / n,
    kvBytes: kvUpdates ? kvBytes / kvUpdates : 0,
    pubBytes: publishes ? pubBytes / publishes : 0,
    after: after / n,
    relays: relays / n,
    roundTrips: roundTrips / n,
    runRoundTrips: runRoundTrips / n,
    api,
    lastWrites,
  };
}

/**
 * W1 over NATS, one run at a time, no model latency: the orchestrator here, the three agents
 * hosted by two worker processes (each hosts all three; the queue group spreads the handoffs),
 * all state in JetStream. Every run makes three cross-process handoffs.
 */
export function w1JetStreamSequential(): Promise<Figures> {
  return w1SequentialOver(2);
}

/**
 * The same with the agents in the orchestrator's own runtime: one process, its state in
 * JetStream, so the row holds what the store costs against the same floor with no process hop
 * (its handoffs are in-process child swarms, each committing to JetStream).
 */
export function w1JetStreamOneProcess(): Promise<Figures> {
  return w1SequentialOver(0);
}

/** W1 over NATS one run at a time with its agents in `workers` worker processes (none: here). */
async function w1SequentialOver(workers: number): Promise<Figures> {
  if (natsMissing()) return {};
  return w1OverNats(workers, 0, async (setup, runtime) => {
    const opened: { close(): Promise<unknown> }[] = [];
    try {
      const cpu = cpuMeter(setup);
      const t = await timeSequential(() => runW1(runtime), W1_WARMUP, W1_RUNS);
      const cpuPerRun = cpu.perRun(W1_WARMUP + W1_RUNS);
      // Counted apart from the timed runs (they do not pay for the log): the store's writes per
      // run, by every process, and their mean sizes, for the floor's raw operations.
      const log = await WriteLog.open(setup.server.url, PREFIX);
      opened.push(log);
      await log.start();
      const from = now();
      for (let i = 0; i < W1_COUNTED; i++) await runW1(runtime);
      await log.stop();
      const w = storeWrites(log.between(from, now()), W1_COUNTED);
      const raw = await RawOps.open(setup.server.url);
      opened.push(raw);
      const kv = await raw.kvUpdate(w.kvBytes, RAW_OPS);
      const pub = await raw.publish(w.pubBytes, RAW_OPS);
      const figures = {
        ...t,
        usPerModelCall: t.usPerRun / W1_MODEL_CALLS,
        commitsPerRun: w.commits,
        kvUpdatesPerRun: w.kvUpdates,
        publishesPerRun: w.publishes,
        apiPerRun: w.api,
        kvBytes: w.kvBytes,
        pubBytes: w.pubBytes,
        rawKvUpdateUs: kv.meanUs,
        rawPublishUs: pub.meanUs,
        ...cpuPerRun,
      };
      return { figures, runs: W1_WARMUP + W1_RUNS + W1_COUNTED };
    } finally {
      for (const o of opened.reverse()) await o.close().catch(() => undefined);
    }
  });
}

/**
 * The store's writes among `seen`, per run: commits (bucket writes holding a record revision
 * its key did not hold before), all bucket writes (lease writes too), stream publishes, JetStream
 * API requests, and the mean sizes of the bucket writes and publishes.
 */
function storeWrites(seen: readonly Seen[], runs: number) {
  const revisions = new Map<string, number>();
  let commits = 0;
  let kvUpdates = 0;
  let publishes = 0;
  let api = 0;
  let kvBytes = 0;
  let pubBytes = 0;
  for (const s of seen) {
    if (s.subject.startsWith('$JS.API.')) api++;
    else if (s.subject.startsWith('$KV.')) {
      kvUpdates++;
      kvBytes += s.bytes;
      if (s.revision !== undefined && s.revision !== revisions.get(s.subject)) commits++;
      if (s.revision !== undefined) revisions.set(s.subject, s.revision);
    } else {
      publishes++;
      pubBytes += s.bytes;
    }
  }
  return {
    commits: commits / runs,
    kvUpdates: kvUpdates / runs,
    publishes: publishes / runs,
    api: api / runs,
    kvBytes: kvUpdates ? kvBytes / kvUpdates : 0,
    pubBytes: publishes ? pubBytes / publishes : 0,
  };
}

/**
 * W1 over NATS as above: {@link CONCURRENT_RUNS} runs started together, 20 ms per model call
 * (orchestrator and agents), after a few sequential warm-up runs on the same processes.
 */
export async function w1JetStreamConcurrent(): Promise<Figures> {
  if (natsMissing()) return {};
  return w1OverNats(2, CONCURRENT_LATENCY_MS, async (setup, runtime) => {
    for (let i = 0; i < W1_WARMUP; i++) await runW1(runtime);
    const cpu = cpuMeter(setup);
    const m = await timeConcurrent(() => runW1(runtime));
    return { figures: { ...m, ...cpu.perRun(CONCURRENT_RUNS) }, runs: W1_WARMUP + CONCURRENT_RUNS };
  });
}
