/**
 * Crash injection with real processes: W1 runs in a child process on a SQLite store and is
 * `SIGKILL`ed right after each persisted commit in turn (one fresh database per boundary), then
 * a new process restores and finishes it. After every crash + restart:
 * - the final result is the clean run's;
 * - each agent tool's side effect (a line per idempotency key) happened exactly once, and no
 *   tool and no model call ran twice (a completed step never runs again);
 * - the stored events are seq 1..M without gap or duplicate, the same stream as a clean run,
 *   and `runtime.replay` reproduces them exactly.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { factOf, type SwarmEvent, type SwarmResult } from '../../src/index.js';
import {
  BOOKING_RESULT,
  childIdOf,
  COMPOSED_CALLS,
  COMPOSED_FIXTURE,
  type CommitEntry,
  composedDefinitions,
  composedMemoryEffects,
  TRIP_RESULT,
} from '../support/crash-composed.js';
import { type Exit, killAll, pool, runFixture, W1_FIXTURE } from '../support/crash-process.js';
import { memoryEffects, readBack, readLines, W1_CALLS, W1_RESULT, w1Definitions } from '../support/crash-w1.js';
import { oneToN } from '../support/seqs.js';
import { eventShape } from '../../src/testing/invariants.js';

const SWARM = 'w1-crash';
const dirs: string[] = [];

afterAll(async () => {
  await killAll();
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

interface Paths {
  dir: string;
  db: string;
  effects: string;
  raw: string;
  modelLog: string;
}

function paths(): Paths {
  const dir = mkdtempSync(join(tmpdir(), 'xswarm-crash-'));
  dirs.push(dir);
  return { dir, db: join(dir, 'state.db'), effects: join(dir, 'effects.txt'), raw: join(dir, 'raw.txt'), modelLog: join(dir, 'model.txt') };
}

interface Outcome {
  result: SwarmResult;
  commits: number;
}

async function fixture(p: Paths, mode: 'run' | 'resume', env: Record<string, string> = {}) {
  return runFixture(W1_FIXTURE, [p.db, p.effects, SWARM, mode], { RAW_EFFECTS: p.raw, MODEL_LOG: p.modelLog, ...env });
}

function outcome(exit: { code: number | null; stdout: string; stderr: string }): Outcome {
  expect(exit.code, exit.stderr).toBe(0);
  return JSON.parse(exit.stdout.trim().split('\n').at(-1)!) as Outcome;
}

/** What is stored once the swarm ended, and its replay (zero model calls, zero tool runs). */
async function inspect(db: string) {
  const effects = memoryEffects();
  const { planner, agents } = w1Definitions(effects);
  const stored = await readBack(db, { swarms: [planner], agents }, [SWARM]);
  return { ...stored.swarms[SWARM]!, modelCalls: stored.modelCalls, toolRuns: effects.keys().length };
}

/** An event without what legitimately differs between two runs: when, and how long a call took (xswarm/testing's comparison). */
const shape = eventShape;

const counts = (lines: string[]) => {
  const m = new Map<string, number>();
  for (const l of lines) m.set(l, (m.get(l) ?? 0) + 1);
  return m;
};

let clean: { commits: number; events: SwarmEvent[]; keys: string[] };

beforeAll(async () => {
  const p = paths();
  const exit = await fixture(p, 'run');
  const out = outcome(exit);
  expect(out.result).toEqual({ status: 'completed', result: W1_RESULT });
  const { events, replayed } = await inspect(p.db);
  expect(replayed).toEqual(events);
  clean = { commits: out.commits, events, keys: readLines(p.effects) };
}, 30_000);

/** Asserts everything a crash + restart must preserve. */
async function checkRecovered(p: Paths, resumed: Outcome) {
  expect(resumed.result).toEqual({ status: 'completed', result: W1_RESULT });

  // Side effects: the three agent tools' keys, each exactly once, and no tool ran twice.
  const keys = readLines(p.effects);
  expect(keys).toEqual(clean.keys);
  expect(new Set(keys).size).toBe(3);
  // Every model call once: no completed step ran again.
  expect(readLines(p.modelLog)).toEqual(W1_CALLS);

  const { events, replayed, record, modelCalls, toolRuns } = await inspect(p.db);
  expect(events.map((e) => e.seq)).toEqual(oneToN(events.length));
  expect(record?.lastSeq).toBe(events.length);
  expect(events.map(shape)).toEqual(clean.events.map(shape));
  expect(replayed).toEqual(events);
  expect(modelCalls).toBe(0);
  expect(toolRuns).toBe(0);
  return { raw: counts(readLines(p.raw)) };
}

describe('crash injection: W1 killed after every commit', () => {
  it('the clean run commits once per completed step and records one side effect per agent tool', () => {
    // 14 commits for W1 with one tool call per agent: start, 3 × (handoff, tool start,
    // tool result, handoff result), final answer.
    expect(clean.commits).toBe(14);
    expect(clean.keys).toEqual([
      `${SWARM}:t1:h0:weather-agent:t1:t_weather`,
      `${SWARM}:t2:h1:calendar-agent:t1:t_calendar`,
      `${SWARM}:t3:h2:allergen-agent:t1:t_allergen`,
    ]);
    expect(clean.events.at(-1)).toMatchObject({ kind: 'status-update', final: true, metadata: { type: 'completed' } });
  });

  it('kill -9 after commit N, restart with the same owner id: same result, side effects once, no gap', async () => {
    const boundaries = oneToN(clean.commits);
    const failures: string[] = [];
    await pool(boundaries, 2, async (n) => {
      const p = paths();
      const env = { OWNER: 'crash-suite' };
      const killed = await fixture(p, 'run', { ...env, KILL_AFTER_COMMIT: String(n) });
      try {
        expect(killed.signal, `N=${n} should die by SIGKILL; stderr: ${killed.stderr}`).toBe('SIGKILL');
        const resumed = outcome(await fixture(p, 'resume', env));
        // Exactly one transaction per completed step, across both processes.
        expect(resumed.commits, `N=${n}`).toBe(clean.commits - n);
        const { raw } = await checkRecovered(p, resumed);
        expect([...raw.values()], `N=${n}: tool executions per key`).toEqual([1, 1, 1]);
      } catch (e) {
        failures.push(`N=${n}: ${(e as Error).message}`);
      }
    });
    expect(failures).toEqual([]);
  }, 120_000);

  it('a restart with another owner id adopts the swarm once the dead owner’s lease expired', async () => {
    const p = paths();
    // After the calendar tool's start was committed: the tool is the next step to run.
    const killed = await fixture(p, 'run', { LEASE_MS: '400', KILL_AFTER_COMMIT: '7' });
    expect(killed.signal).toBe('SIGKILL');
    const started = Date.now();
    const resumed = outcome(await fixture(p, 'resume', { LEASE_MS: '400' }));
    expect(resumed.commits).toBe(clean.commits - 7);
    const { raw } = await checkRecovered(p, resumed);
    expect([...raw.values()]).toEqual([1, 1, 1]);
    expect(Date.now() - started).toBeLessThan(10_000);
  });

  it('two processes restarting at once: exactly one of them drives the swarm', async () => {
    const p = paths();
    const killed = await fixture(p, 'run', { LEASE_MS: '300', KILL_AFTER_COMMIT: '4' });
    expect(killed.signal).toBe('SIGKILL');
    const before = readLines(p.modelLog);
    const logs = [join(p.dir, 'model-1.txt'), join(p.dir, 'model-2.txt')];
    const exits = await Promise.all(logs.map((log) => fixture(p, 'resume', { LEASE_MS: '1000', MODEL_LOG: log })));
    const results = exits.map(outcome);
    for (const r of results) expect(r.result).toEqual({ status: 'completed', result: W1_RESULT });
    // One process made every commit and every model call of the rest of the run; the other none.
    expect(results.map((r) => r.commits).sort((a, b) => a - b)).toEqual([0, clean.commits - 4]);
    const calls = logs.map(readLines);
    expect(calls.filter((c) => c.length > 0)).toHaveLength(1);
    expect([...before, ...calls.flat()]).toEqual(W1_CALLS);
    expect(readLines(p.effects)).toEqual(clean.keys);
    expect([...counts(readLines(p.raw)).values()]).toEqual([1, 1, 1]);
    const { events, replayed } = await inspect(p.db);
    expect(events.map((e) => e.seq)).toEqual(oneToN(events.length));
    expect(replayed).toEqual(events);
  });

  it('kill -9 inside a tool after its side effect: the step runs again with the same key, the effect is not repeated', async () => {
    const p = paths();
    const killed = await fixture(p, 'run', { OWNER: 'crash-suite', KILL_IN_TOOL: 'calendar' });
    expect(killed.signal).toBe('SIGKILL');
    expect(readLines(p.effects)).toEqual(clean.keys.slice(0, 2));
    const resumed = outcome(await fixture(p, 'resume', { OWNER: 'crash-suite' }));
    const { raw } = await checkRecovered(p, resumed);
    // The calendar tool was in flight at the crash: it ran twice, with one key, one effect.
    expect(Object.fromEntries(raw)).toEqual({ [clean.keys[0]!]: 1, [clean.keys[1]!]: 2, [clean.keys[2]!]: 1 });
  });
});

// ---- Two-level composed swarm -----------------------------------------------------------
// Parent `trip` → agent `scout` (tool), then child swarm `booking` (its own store record and
// event stream, id `<parent>:t2:0`) → agent `clerk` (tool), tool `reserve`, typed result; the
// parent answers with text including the child's result. Both swarms run in one process and
// share its commits: the process is killed after the N-th commit, whichever swarm made it.

const PARENT = 'trip-crash';
const CHILD = childIdOf(PARENT);
/** The three side effects, by idempotency key: scout's tool, clerk's tool, booking's `reserve`. */
const COMPOSED_KEYS = [`${PARENT}:t1:h0:scout:t1:t_scout`, `${CHILD}:t1:b0:clerk:t1:t_clerk`, `${CHILD}:t2:b1`];

interface ComposedPaths extends Paths {
  runCommits: string;
  resumeCommits: string;
}

function composedPaths(): ComposedPaths {
  const p = paths();
  return { ...p, runCommits: join(p.dir, 'commits-run.txt'), resumeCommits: join(p.dir, 'commits-resume.txt') };
}

interface ComposedOutcome {
  result: SwarmResult;
  child: SwarmResult;
  commits: number;
}

function composedFixture(p: ComposedPaths, mode: 'run' | 'resume', env: Record<string, string> = {}) {
  return runFixture(COMPOSED_FIXTURE, [p.db, p.effects, PARENT, mode], {
    RAW_EFFECTS: p.raw,
    MODEL_LOG: p.modelLog,
    COMMIT_LOG: mode === 'run' ? p.runCommits : p.resumeCommits,
    ...env,
  });
}

function composedOutcome(exit: { code: number | null; stdout: string; stderr: string }): ComposedOutcome {
  expect(exit.code, exit.stderr).toBe(0);
  return JSON.parse(exit.stdout.trim().split('\n').at(-1)!) as ComposedOutcome;
}

const commitEntries = (file: string) => readLines(file).map((l) => JSON.parse(l) as CommitEntry);
/**
 * The step commits (snapshot records) of one swarm, each as its events but a child's relayed
 * lifecycle: its `started` goes with the parent's next step or in a commit of its own, by timing
 * (the chunk window). The parent's event shapes check that each relay happened once.
 */
const stepCommits = (entries: CommitEntry[], swarmId: string) =>
  entries.filter((e) => e.step && e.swarmId === swarmId).map((e) => e.events.filter((k) => k !== 'status:child-swarm').join(','));
/** A child's lifecycle relayed into its parent's stream (published from outside the parent's steps). */
const isRelay = (e: SwarmEvent) => e.kind === 'status-update' && e.metadata.type === 'child-swarm';

/** Both swarms as stored once they ended, and their replays (zero model calls, zero tool runs). */
async function inspectComposed(db: string) {
  const effects = composedMemoryEffects();
  const stored = await readBack(db, composedDefinitions(effects), [PARENT, CHILD]);
  const { unfinished, all, modelCalls } = stored;
  return { parent: stored.swarms[PARENT]!, child: stored.swarms[CHILD]!, unfinished, all, modelCalls, toolRuns: effects.runs.size };
}

let composed: {
  commits: number;
  result: SwarmResult;
  child: SwarmResult;
  entries: CommitEntry[];
  parentEvents: SwarmEvent[];
  childEvents: SwarmEvent[];
};

/** What one kill + restart at commit `n` left behind. */
interface ComposedCrash {
  n: number;
  killed: Exit;
  boundary: CommitEntry | undefined;
  resumed: Exit;
  p: ComposedPaths;
}

const composedCrashes = new Map<number, Promise<ComposedCrash>>();

/** Kills the run after commit `n`, then restarts it with the same owner id (memoized per `n`). */
function crashComposedAt(n: number): Promise<ComposedCrash> {
  let crash = composedCrashes.get(n);
  if (!crash) {
    crash = (async () => {
      const p = composedPaths();
      const env = { OWNER: 'crash-suite' };
      const killed = await composedFixture(p, 'run', { ...env, KILL_AFTER_COMMIT: String(n) });
      const boundary = commitEntries(p.runCommits)[n - 1];
      const resumed = await composedFixture(p, 'resume', env);
      return { n, killed, boundary, resumed, p };
    })();
    composedCrashes.set(n, crash);
  }
  return crash;
}

/** Runs `check` for every boundary 1..K (two processes at a time); returns the failures. */
async function everyBoundary(check: (crash: ComposedCrash) => Promise<void>): Promise<string[]> {
  const failures: string[] = [];
  const boundaries = oneToN(composed.commits);
  await pool(boundaries, 2, async (n) => {
    const crash = await crashComposedAt(n);
    try {
      await check(crash);
    } catch (e) {
      failures.push(`N=${n} (after ${JSON.stringify(crash.boundary)}): ${(e as Error).message}`);
    }
  });
  return failures.sort((a, b) => Number(a.slice(2, a.indexOf(' '))) - Number(b.slice(2, b.indexOf(' '))));
}

describe('crash injection: a two-level composed swarm killed after every commit', () => {
  beforeAll(async () => {
    const p = composedPaths();
    const out = composedOutcome(await composedFixture(p, 'run'));
    const { parent, child } = await inspectComposed(p.db);
    expect(parent.replayed).toEqual(parent.events);
    expect(child.replayed).toEqual(child.events);
    composed = {
      commits: out.commits,
      result: out.result,
      child: out.child,
      entries: commitEntries(p.runCommits),
      parentEvents: parent.events,
      childEvents: child.events,
    };
    expect(readLines(p.effects)).toEqual(COMPOSED_KEYS);
    expect(readLines(p.modelLog)).toEqual(COMPOSED_CALLS);
  }, 30_000);

  it('the clean run: both swarms complete, one commit per completed step of each, plus the relayed child lifecycle', () => {
    expect(composed.result).toEqual({ status: 'completed', result: TRIP_RESULT });
    expect(composed.child).toEqual({ status: 'completed', result: BOOKING_RESULT });
    // 16 commits: the parent's 8 steps (start, scout handoff, tool start, tool result, handoff
    // result, booking handoff, child's handoff result, final answer) and the child's 8 (start,
    // clerk handoff, tool start, tool result, handoff result, reserve call, reserve result,
    // final answer). The child's `completed` is relayed into the parent's stream with the
    // parent's step that records the child's result; its `started` within the chunk window:
    // with that step when the child ends first, else in an events-only commit of its own.
    const relays = composed.entries.filter((e) => !e.step);
    expect(relays).toEqual(relays.length > 0 ? [{ swarmId: PARENT, step: false, events: ['status:child-swarm'] }] : []);
    expect(composed.commits).toBe(16 + relays.length);
    expect(composed.entries).toHaveLength(composed.commits);
    expect(stepCommits(composed.entries, PARENT)).toHaveLength(8);
    expect(stepCommits(composed.entries, CHILD)).toHaveLength(8);
    expect(composed.parentEvents.filter(isRelay).map((e) => factOf(e, 'child-swarm')?.lifecycle)).toEqual(['started', 'completed']);
  });

  it('kill -9 after commit N of either swarm, restart: same results, side effects once, no gap in either stream', async () => {
    const failures = await everyBoundary(async ({ n, killed, boundary, resumed: exit, p }) => {
      expect(killed.signal, `should die by SIGKILL; stderr: ${killed.stderr}`).toBe('SIGKILL');
      expect(boundary, 'the killed process logged its last commit').toBeDefined();
      const resumed = composedOutcome(exit);
      expect(resumed.result).toEqual(composed.result);
      expect(resumed.child).toEqual(composed.child);

      // A step commit is the only thing in flight when the next step starts; an events-only
      // commit (a child's lifecycle relayed into its parent) may land while the other swarm's
      // step is in flight: that step runs again after the restart (same idempotency key).
      const inFlightAllowed = boundary!.step ? 0 : 1;

      // Side effects: the three keys, each recorded once; executions per key.
      expect(readLines(p.effects)).toEqual(COMPOSED_KEYS);
      const runs = [...counts(readLines(p.raw)).values()];
      expect(runs).toHaveLength(3);
      expect(runs.reduce((a, b) => a + b, 0) - 3, 'tool executions beyond one per key').toBeLessThanOrEqual(inFlightAllowed);

      // Model calls: each once, bar a step in flight at an events-only boundary.
      const calls = readLines(p.modelLog);
      expect([...new Set(calls)]).toEqual(COMPOSED_CALLS);
      expect(calls.length - COMPOSED_CALLS.length, `model calls: ${calls.join(' ')}`).toBeLessThanOrEqual(inFlightAllowed);

      // Exactly one transaction per completed step of each swarm, across both processes.
      const entries = [...commitEntries(p.runCommits), ...commitEntries(p.resumeCommits)];
      expect(commitEntries(p.runCommits).length).toBeGreaterThanOrEqual(n);
      expect(stepCommits(entries, PARENT)).toEqual(stepCommits(composed.entries, PARENT));
      expect(stepCommits(entries, CHILD)).toEqual(stepCommits(composed.entries, CHILD));

      const { parent, child, unfinished, all, modelCalls, toolRuns } = await inspectComposed(p.db);
      for (const [name, s] of [
        ['parent', parent],
        ['child', child],
      ] as const) {
        expect(
          s.events.map((e) => e.seq),
          `${name} seqs`,
        ).toEqual(oneToN(s.events.length));
        expect(s.record?.lastSeq, `${name} lastSeq`).toBe(s.events.length);
        expect(s.record?.status, `${name} status`).toBe('completed');
        expect(s.replayed, `${name} replay`).toEqual(s.events);
      }
      expect(child.events.map(shape)).toEqual(composed.childEvents.map(shape));
      // The parent's own steps are the clean run's; its relayed child lifecycle is checked by
      // the skipped test below (runtime bug).
      // (Without seq: a relay recorded twice or lost shifts the numbers of the steps after it.)
      const ownSteps = (events: SwarmEvent[]) => events.filter((e) => !isRelay(e)).map((e) => ({ ...(shape(e) as object), seq: 0 }));
      expect(ownSteps(parent.events)).toEqual(ownSteps(composed.parentEvents));
      expect(unfinished).toEqual([]);
      expect(all.map((s) => [s.swarmId, s.status]).sort()).toEqual([
        [PARENT, 'completed'],
        [CHILD, 'completed'],
      ]);
      expect(modelCalls).toBe(0);
      expect(toolRuns).toBe(0);
    });
    expect(failures).toEqual([]);
  }, 120_000);

  // RUNTIME BUG (src/runners/child-swarm.ts, `run`, re-attaching to an existing child after a
  // restart): the child's lifecycle is relayed into the parent's stream from seq 0 when the
  // child was already adopted by `start()` (so a `child-swarm started` the parent had already
  // recorded is recorded again: kills between that relay and the child's end), and only "from
  // now on" when it was not (so a lifecycle step the child committed but the parent had not
  // relayed yet is lost: a kill right after the child's final commit drops `child-swarm
  // completed`; one right after the child's start commit drops `started` when the parent is
  // adopted first). Seqs stay gap-free and replay reproduces the stored stream, but the parent's
  // stream differs from a clean run's. Un-skip once the relay resumes from what the parent
  // already recorded for that child.
  it('kill -9 after commit N: the parent relays each child lifecycle step exactly once, as in a clean run', async () => {
    const failures = await everyBoundary(async ({ p }) => {
      const { parent } = await inspectComposed(p.db);
      const lifecycle = (events: SwarmEvent[]) => events.filter(isRelay).map((e) => factOf(e, 'child-swarm')?.lifecycle);
      expect(lifecycle(parent.events)).toEqual(['started', 'completed']);
      expect(parent.events.map(shape)).toEqual(composed.parentEvents.map(shape));
    });
    expect(failures).toEqual([]);
  }, 120_000);
});
