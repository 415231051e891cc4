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
import { createRuntime, type SwarmEvent, type SwarmResult, sqliteStore } from '../src/index.js';
import { killAll, pool, runFixture, W1_FIXTURE } from './support/crash-process.js';
import { forbiddenModel, memoryEffects, readLines, W1_CALLS, W1_RESULT, w1Definitions } from './support/crash-w1.js';
import { collect } from './support/script.js';

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
  const store = sqliteStore(db);
  const effects = memoryEffects();
  const { planner, agents } = w1Definitions(effects);
  const model = forbiddenModel();
  const runtime = createRuntime({ swarms: [planner], agents, model, store });
  try {
    const events = await store.readEvents(SWARM, 0);
    const replayed = await collect(runtime.replay(SWARM));
    const record = await store.load(SWARM);
    return { events, replayed, record, modelCalls: model.attempts, toolRuns: effects.keys().length };
  } finally {
    await runtime.close();
    await store.close();
  }
}

/** An event without what legitimately differs between two runs: when, and how long a call took. */
function shape(e: SwarmEvent): unknown {
  const { timestamp: _t, ...rest } = e;
  return rest.kind === 'internal:llm-call' ? { ...rest, durationMs: 0 } : rest;
}

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
  expect(events.map((e) => e.seq)).toEqual(Array.from({ length: events.length }, (_, i) => i + 1));
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
    const boundaries = Array.from({ length: clean.commits }, (_, i) => i + 1);
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
    expect(events.map((e) => e.seq)).toEqual(Array.from({ length: events.length }, (_, i) => i + 1));
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

  // ---- Two-level composed swarm ---------------------------------------------------------
  // TODO(child swarms): once a swarm can hand off to a child swarm, add a fixture
  // `test/fixtures/crash-composed.ts` (a parent swarm whose agent step runs a child swarm that
  // itself hands off to W1's agents) and run the same loop: kill after every commit of parent
  // and child, restart, assert the same result, each side effect once, no gap in either stream.
  it.todo('two-level composed swarm: kill -9 after every commit, restart, same guarantees');
});
