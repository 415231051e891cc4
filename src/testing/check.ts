/**
 * Runs one path of a swarm on real runtimes and checks the invariants ({@link INVARIANTS}):
 * a clean run (its outcome, one final event, ordered valid events, nothing delivered before it
 * is durable, its replay), then one run per crash point — the process "dies" right after commit
 * N (its store freezes) and a new runtime on the same store continues the swarm — each of which
 * must reach the clean run's end with the same events and no side effect made again.
 * Framework-neutral: it returns the failures; `describeSwarm` turns them into failing tests.
 *
 * @module
 */
import type { SwarmEvent } from '../../machines/events.js';
import type { SwarmDefinition } from '../define/swarm.js';
import type { SwarmClient } from '../client/client.js';
import { createRuntime } from '../runtime/index.js';
import type { Runtime, RuntimeOptions } from '../runtime/types.js';
import { type SwarmResult, topState } from '../store/result.js';
import type { InspectionEvent } from 'xstate';
import { memoryStore } from '../store/memory.js';
import type { SwarmStore } from '../store/types.js';
import { PathRun, type ToolOverride } from './control.js';
import { drive, testRemote } from './drive.js';
import { EffectLedger } from './effects.js';
import { Instrumented } from './instrument.js';
import { effectsOnce, INVARIANTS, type Invariant, oneFinal, ordered, sameReplay, sameStream } from './invariants.js';
import { type ModelSamples, pathModel } from './model.js';
import type { SwarmPath } from './paths.js';
import { type ShapeLookup, type SwarmShape, shapeOf } from './shape.js';
import { checkedStore } from './store.js';

/** Options of {@link checkSwarmPath} (and of `describeSwarm`, which adds its own). */
export interface CheckOptions extends ShapeLookup, ModelSamples {
  /** The run's input; default: a sample of the swarm's input schema. */
  input?: unknown;
  /**
   * Replacements of tools' `execute`, by tool name: `(args, ctx) => result`, where `ctx` also has
   * `effect(key?)` to record a side effect (see `TestToolContext`). A tool without one runs its
   * own `execute`. Either way the path decides whether a call fails.
   */
  tools?: Readonly<Record<string, ToolOverride>>;
  /** A new, empty store per run (default: `memoryStore()`); e.g. `() => sqliteStore(tempFile())`. */
  store?: () => SwarmStore;
  /**
   * Crash points per path: `'every'` (the default) restarts after each commit of the clean run in
   * turn; a number restarts at that many commits, spread evenly; 0 makes no crash run.
   */
  crashes?: 'every' | number;
  /** More options of each runtime (tools and guardrails known by name, key budgets, prices…). */
  runtime?: Omit<RuntimeOptions, 'swarms' | 'agents' | 'model' | 'store' | 'owner' | 'remote'>;
  /** How long one run of a path may take before it fails the path (default 10 000 ms). */
  timeoutMs?: number;
}

/** A failed invariant of a path. */
export interface PathFailure {
  /** The path's name. */
  path: string;
  invariant: Invariant;
  /** What broke; for a crash run, after which commit. */
  message: string;
}

/** What checking a path found. */
export interface PathReport {
  path: string;
  /** Commits of the clean run (every swarm of it). */
  commits: number;
  /** Crash points run. */
  crashes: number;
  failures: PathFailure[];
  /** How the clean run ended. */
  result?: SwarmResult;
  /** The top-level states of the swarm machine the clean run went through (read by inspection). */
  reached: string[];
}

/** The swarm id every run of a path uses (each run has a store of its own). */
const SWARM_ID = 'swarm-under-test';
/** The owner id of every runtime of a path: a restart with its predecessor's id takes its swarms back at once. */
const OWNER = 'xswarm-testing';

/** Formats a failure as a test's message: the path and the invariant first. */
export function describeFailure(f: PathFailure): string {
  return `path "${f.path}": invariant "${INVARIANTS[f.invariant]}" failed: ${f.message}`;
}

/** Checks `path` of `definition` (see the module comment); never throws for a failed invariant. */
export async function checkSwarmPath(definition: SwarmDefinition<any, any>, path: SwarmPath, options: CheckOptions = {}): Promise<PathReport> {
  const shape = shapeOf(definition, options.input, options);
  const failures: PathFailure[] = [];
  const fail = (invariant: Invariant, messages: string[], prefix = '') => {
    for (const message of messages) failures.push({ path: path.name, invariant, message: prefix + message });
  };
  const report: PathReport = { path: path.name, commits: 0, crashes: 0, failures, reached: [] };

  const base = (options.store ?? memoryStore)();
  let clean: { events: SwarmEvent[]; result: SwarmResult; effects: Map<string, number> };
  try {
    const ledger = new EffectLedger();
    const checked = checkedStore(base);
    const reached = new Set<string>();
    const session = open(shape, path, options, checked.store, ledger, reached);
    const early: string[] = [];
    // Every event a subscriber or a client's stream sees must already be in the store.
    const seen = (e: SwarmEvent) => {
      if (checked.durableSeq(e.swarmId) < e.seq) early.push(`seq ${e.seq} (${e.kind}) of ${e.swarmId} was delivered before it was durable`);
    };
    session.runtime.subscribe(seen);
    try {
      await session.runtime.start();
      const client = session.client;
      await client.run(shape.input);
      const streamed = (async () => {
        for await (const e of client.events()) seen(e);
      })();
      const limits: string[] = [];
      const result = await within(drive(client, path, limits), options.timeoutMs, 'the clean run');
      await within(streamed, options.timeoutMs, "the client's event stream");
      report.result = result;
      report.commits = checked.commits();
      report.reached = [...reached];
      const events = await base.readEvents(SWARM_ID, 0);
      if (result.status !== path.expect) fail('outcome', [`it ended ${describeResult(result)}, the path expects ${path.expect}`]);
      const limit = path.control.loop;
      const tripped = limit === 'maxTurns' ? limits.includes('maxTurns') : limits.some((l) => l !== 'maxTurns' && l !== 'struggling');
      if (limit && !tripped)
        fail('outcome', [`the ${limit === 'budget' ? 'budget' : 'maxTurns limit'} never paused the swarm (limits seen: ${limits.join(', ') || 'none'})`]);
      fail('final', oneFinal(events, true));
      fail('ordered', ordered(SWARM_ID, events));
      for (const s of await base.list()) {
        if (s.swarmId === SWARM_ID) continue;
        const child = await base.readEvents(s.swarmId, 0);
        fail('final', oneFinal(child, false), `child ${s.swarmId}: `);
        fail('ordered', ordered(s.swarmId, child), `child ${s.swarmId}: `);
      }
      fail('durable', early.slice(0, 5));
      fail('replay', sameReplay(events, await collect(session.runtime.replay(SWARM_ID)).catch((e: unknown) => e as Error)));
      clean = { events, result, effects: ledger.effects() };
    } finally {
      await session.runtime.close();
    }
  } catch (e) {
    fail('outcome', [`the clean run did not end: ${(e as Error).message}`]);
    return report;
  } finally {
    await base.close();
  }

  for (const n of crashPoints(report.commits, options.crashes)) {
    report.crashes++;
    const problems = await crashRun(shape, path, options, n, clean);
    for (const [invariant, message] of problems) fail(invariant, [message], `crash after commit ${n} of ${report.commits}: `);
    // One crash point failing says enough; the others would mostly repeat it.
    if (problems.length > 0) break;
  }
  return report;
}

/** One crash run: the swarm runs until commit `n`, its runtime dies there, a new one finishes it. */
async function crashRun(
  shape: SwarmShape,
  path: SwarmPath,
  options: CheckOptions,
  n: number,
  clean: { events: SwarmEvent[]; result: SwarmResult; effects: Map<string, number> },
): Promise<[Invariant, string][]> {
  const base = (options.store ?? memoryStore)();
  const ledger = new EffectLedger();
  const problems: [Invariant, string][] = [];
  try {
    const dying = checkedStore(base, n);
    const first = open(shape, path, options, dying.store, ledger);
    await first.runtime.start();
    const client = first.client;
    await client.run(shape.input);
    const ended = drive(client, path).catch(() => undefined);
    await within(Promise.race([dying.frozen, ended]), options.timeoutMs, 'the run up to the crash');
    // The process is dead: nothing of it may be written any more (its store is frozen), and its
    // calls in flight are abandoned. Its close never completes (its writes hang): not awaited.
    void first.runtime.close().catch(() => undefined);

    const second = open(shape, path, options, checkedStore(base).store, ledger);
    try {
      await second.runtime.start();
      const result = await within(drive(second.client, path), options.timeoutMs, 'the run after the restart');
      const events = await base.readEvents(SWARM_ID, 0);
      if (JSON.stringify(result) !== JSON.stringify(clean.result))
        problems.push(['crash', `it ended ${describeResult(result)}, the clean run ${describeResult(clean.result)}`]);
      for (const m of [...oneFinal(events, true), ...ordered(SWARM_ID, events)]) problems.push(['crash', m]);
      for (const m of sameStream(clean.events, events)) problems.push(['crash', m]);
      for (const m of effectsOnce(clean.effects, ledger.effects())) problems.push(['effects', m]);
    } finally {
      await second.runtime.close();
    }
  } catch (e) {
    problems.push(['crash', `the swarm did not end: ${(e as Error).message}`]);
  } finally {
    await base.close();
  }
  return problems;
}

/** A runtime for one run of `path` on `store`, with the definitions instrumented for it. */
function open(shape: SwarmShape, path: SwarmPath, options: CheckOptions, store: SwarmStore, ledger: EffectLedger, reached?: Set<string>) {
  const run = new PathRun(path, shape, SWARM_ID, ledger, options.tools ?? {});
  const inst = new Instrumented(run);
  const root = inst.swarm(shape.definition, true);
  const swarms = uniqueById([root, ...(options.swarms ?? []).map((s) => inst.swarm(s))]);
  const agents = uniqueById((options.agents ?? []).map((a) => inst.agent(a)));
  const tools = (options.runtime?.tools ?? []).map((t) => inst.tool(t, 'runtime'));
  const runtime: Runtime = createRuntime({
    ...options.runtime,
    swarms,
    agents,
    tools,
    model: pathModel(run, options),
    store,
    owner: OWNER,
    remote: testRemote(run),
    ...(reached ? { inspect: statesOf(reached, options.runtime?.inspect) } : {}),
  });
  // Set before the runtime starts: a restarted runtime runs an interrupted call again at once.
  run.store = store;
  run.client = runtime.forSwarm(root, SWARM_ID) as SwarmClient;
  return { runtime, client: run.client };
}

/** An inspection observer adding to `reached` each top-level state of the swarm under test (and passing events on to `user`'s). */
function statesOf(reached: Set<string>, user: RuntimeOptions['inspect']): NonNullable<RuntimeOptions['inspect']> {
  return (e: InspectionEvent) => {
    if (typeof user === 'function') user(e);
    else user?.next?.(e);
    if (e.type !== '@xstate.snapshot' || (e.actorRef as { id?: string }).id !== SWARM_ID) return;
    const snapshot = e.snapshot as { machine?: { id?: string }; value?: unknown };
    if (snapshot.machine?.id === 'swarm' && snapshot.value !== undefined) reached.add(topState(snapshot.value));
  };
}

/** The commits after which a crash run restarts (never after the last: the swarm had ended). */
export function crashPoints(commits: number, crashes: 'every' | number = 'every'): number[] {
  const all = Array.from({ length: Math.max(0, commits - 1) }, (_, i) => i + 1);
  if (crashes === 'every' || crashes >= all.length) return all;
  if (crashes <= 0) return [];
  const step = all.length / crashes;
  return Array.from({ length: crashes }, (_, i) => all[Math.floor(i * step + step / 2)]!);
}

function uniqueById<T extends { id: string }>(list: T[]): T[] {
  const seen = new Set<string>();
  return list.filter((x) => !seen.has(x.id) && seen.add(x.id) !== undefined);
}

function describeResult(r: SwarmResult): string {
  if (r.status === 'failed' || r.status === 'stopped') return `${r.status} (${r.reason})`;
  if (r.status === 'paused') return `paused (${r.reason.type}: ${r.reason.message})`;
  return r.status;
}

async function collect<T>(it: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const x of it) out.push(x);
  return out;
}

/** `p`, or a rejection naming `what` once `ms` (default 10 s) passed. */
function within<T>(p: Promise<T>, ms = 10_000, what = 'the run'): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} did not end within ${ms} ms`)), ms);
  });
  return Promise.race([p, timeout]).finally(() => clearTimeout(timer));
}
