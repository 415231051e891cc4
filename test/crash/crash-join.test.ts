/**
 * Crash injection for a parallel join: one orchestrator response hands off to two agents and a
 * child swarm at once (see `support/crash-join.ts`). The run happens in a child process on
 * SQLite and is `SIGKILL`ed right after each of its commits in turn (whichever swarm made it),
 * then a new process restores and finishes it. After every crash + restart:
 * - both swarms end with the clean run's results;
 * - each tool's side effect is recorded exactly once (one line per idempotency key); a branch
 *   that was still running beside the committed one may run again, with the same key;
 * - every completed step of either swarm was committed exactly once across both processes;
 * - both streams are seq 1..M without gap or duplicate, hold the clean run's events (the hub's
 *   in any interleaving of its branches), and `runtime.replay` reproduces them exactly.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SwarmEvent, SwarmResult } from '../../src/index.js';
import type { CommitEntry } from '../support/crash-composed.js';
import { CREW_RESULT, JOIN_CALLS, JOIN_FIXTURE, JOIN_RESULT, joinChildIdOf, joinDefinitions } from '../support/crash-join.js';
import { type Exit, killAll, pool, runFixture } from '../support/crash-process.js';
import { memoryEffects, readBack, readLines } from '../support/crash-w1.js';
import { oneToN } from '../support/seqs.js';

const HUB = 'join-crash';
const CREW = joinChildIdOf(HUB);
/** The three side effects, by idempotency key: alpha's and beta's tools, the crew's own tool. */
const KEYS = [`${HUB}:t1:h_a:alpha:t1:t_alpha`, `${HUB}:t1:h_b:beta:t1:t_beta`, `${CREW}:t1:c0`];
/** Branches that may be in flight beside the one whose commit the kill followed. */
const OTHER_BRANCHES = 2;

const dirs: string[] = [];
afterAll(async () => {
  await killAll();
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

interface Paths {
  db: string;
  effects: string;
  raw: string;
  modelLog: string;
  runCommits: string;
  resumeCommits: string;
}

function paths(): Paths {
  const dir = mkdtempSync(join(tmpdir(), 'xswarm-crash-join-'));
  dirs.push(dir);
  const at = (name: string) => join(dir, name);
  return {
    db: at('state.db'),
    effects: at('effects.txt'),
    raw: at('raw.txt'),
    modelLog: at('model.txt'),
    runCommits: at('commits-run.txt'),
    resumeCommits: at('commits-resume.txt'),
  };
}

interface Outcome {
  result: SwarmResult;
  child: SwarmResult;
  commits: number;
}

function fixture(p: Paths, mode: 'run' | 'resume', env: Record<string, string> = {}): Promise<Exit> {
  return runFixture(JOIN_FIXTURE, [p.db, p.effects, HUB, mode], {
    RAW_EFFECTS: p.raw,
    MODEL_LOG: p.modelLog,
    COMMIT_LOG: mode === 'run' ? p.runCommits : p.resumeCommits,
    OWNER: 'crash-suite',
    ...env,
  });
}

function outcome(exit: Exit): Outcome {
  expect(exit.code, exit.stderr).toBe(0);
  return JSON.parse(exit.stdout.trim().split('\n').at(-1)!) as Outcome;
}

const commitEntries = (file: string) => readLines(file).map((l) => JSON.parse(l) as CommitEntry);
/** The step commits (snapshot records) of one swarm, each as its events, sorted: branches interleave. */
// The turn ends with whichever branch's result is committed last (timing: commits are
// acknowledged per group), so the commit carrying `turn-completed` may differ between runs;
// so does the one carrying the crew's relayed end (the hub's next commit: another branch's
// result may come before the crew's). The hub's event shapes check that each happened once.
const stepCommits = (entries: CommitEntry[], swarmId: string) =>
  entries
    .filter((e) => e.step && e.swarmId === swarmId)
    .map((e) => e.events.filter((k) => k !== 'status:turn-completed' && k !== 'status:child-swarm').join(','))
    .sort();

/**
 * An event without what legitimately differs between two runs: its number (parallel branches
 * interleave), when it happened, how long a call took, the session id.
 */
function shape(e: SwarmEvent): string {
  return JSON.stringify(e, (key, value: unknown) => (key === 'seq' || key === 'timestamp' || key === 'durationMs' || key === 'contextId' ? undefined : value));
}
const shapes = (events: SwarmEvent[]) => events.map(shape).sort();
const counts = (lines: string[]) => {
  const m = new Map<string, number>();
  for (const l of lines) m.set(l, (m.get(l) ?? 0) + 1);
  return m;
};

/** Both swarms as stored, and their replays (zero model calls, zero tool runs). */
async function inspect(db: string) {
  const effects = memoryEffects();
  const stored = await readBack(db, joinDefinitions(effects), [HUB, CREW]);
  const { unfinished, modelCalls } = stored;
  return { hub: stored.swarms[HUB]!, crew: stored.swarms[CREW]!, unfinished, modelCalls, toolRuns: effects.keys().length };
}

let clean: { commits: number; entries: CommitEntry[]; hubEvents: SwarmEvent[]; crewEvents: SwarmEvent[] };

beforeAll(async () => {
  const p = paths();
  const out = outcome(await fixture(p, 'run'));
  expect(out.result).toEqual({ status: 'completed', result: JOIN_RESULT });
  expect(out.child).toEqual({ status: 'completed', result: CREW_RESULT });
  // Parallel branches: each side effect once, in no particular order (commits are acknowledged per group).
  expect(readLines(p.effects).sort()).toEqual([...KEYS].sort());
  const { hub, crew } = await inspect(p.db);
  expect(hub.replayed).toEqual(hub.events);
  expect(crew.replayed).toEqual(crew.events);
  clean = { commits: out.commits, entries: commitEntries(p.runCommits), hubEvents: hub.events, crewEvents: crew.events };
}, 30_000);

describe('crash injection: a parallel join (two agents and a child swarm in one response) killed after every commit', () => {
  it('the clean run: one commit per completed step of either swarm, plus the relayed child lifecycle', () => {
    // 14 commits: the hub's 10 steps (start, the response with three handoffs, each agent's
    // tool call and tool result, the three handoff results, the final answer) and the crew's 4
    // (start, tool call, tool result, final answer). The crew's `completed` is relayed into the
    // hub's stream with the hub's step that records the crew's result; its `started` within the
    // chunk window: with that step when the crew ends first, else in an events-only commit.
    const relays = clean.entries.filter((e) => !e.step);
    expect(relays).toEqual(relays.length > 0 ? [{ swarmId: HUB, step: false, events: ['status:child-swarm'] }] : []);
    expect(clean.commits).toBe(14 + relays.length);
    expect(clean.entries).toHaveLength(clean.commits);
    // The three handoffs were planned together: one response, three handoff facts.
    expect(clean.entries[1]!.events.filter((e) => e.endsWith('-handoff'))).toEqual(['status:agent-handoff', 'status:agent-handoff', 'status:swarm-handoff']);
  });

  it('kill -9 after commit N, restart: same results, side effects once, every step committed once, no gap, replay equal', async () => {
    const boundaries = Array.from({ length: clean.commits }, (_, i) => i + 1);
    const failures: string[] = [];
    await pool(boundaries, 2, async (n) => {
      const p = paths();
      const killed = await fixture(p, 'run', { KILL_AFTER_COMMIT: String(n) });
      try {
        expect(killed.signal, `should die by SIGKILL; stderr: ${killed.stderr}`).toBe('SIGKILL');
        // Commit N and those written in the same transaction (group commit) are durable.
        const durable = commitEntries(p.runCommits).length;
        expect(durable).toBeGreaterThanOrEqual(n);
        const resumed = outcome(await fixture(p, 'resume'));
        expect(resumed.result).toEqual({ status: 'completed', result: JOIN_RESULT });
        expect(resumed.child).toEqual({ status: 'completed', result: CREW_RESULT });
        // Exactly one commit per completed step (and per relay), across both processes.
        expect(resumed.commits).toBe(clean.commits - durable);
        const entries = [...commitEntries(p.runCommits), ...commitEntries(p.resumeCommits)];
        expect(stepCommits(entries, HUB)).toEqual(stepCommits(clean.entries, HUB));
        expect(stepCommits(entries, CREW)).toEqual(stepCommits(clean.entries, CREW));

        // Side effects: each key recorded once; only branches in flight at the kill ran again.
        expect(readLines(p.effects).sort()).toEqual([...KEYS].sort());
        const runs = [...counts(readLines(p.raw)).values()];
        expect(runs).toHaveLength(3);
        expect(runs.reduce((a, b) => a + b, 0) - 3, 'tool executions beyond one per key').toBeLessThanOrEqual(OTHER_BRANCHES);
        const calls = readLines(p.modelLog);
        expect([...new Set(calls)].sort()).toEqual([...JOIN_CALLS].sort());
        expect(calls.length - JOIN_CALLS.length, `model calls: ${calls.join(' ')}`).toBeLessThanOrEqual(OTHER_BRANCHES);

        const { hub, crew, unfinished, modelCalls, toolRuns } = await inspect(p.db);
        for (const [name, s] of [
          ['hub', hub],
          ['crew', crew],
        ] as const) {
          expect(
            s.events.map((e) => e.seq),
            `${name} seqs`,
          ).toEqual(oneToN(s.events.length));
          expect(s.record?.lastSeq, `${name} lastSeq`).toBe(s.events.length);
          expect(s.record?.status, `${name} status`).toBe('completed');
          expect(s.replayed, `${name} replay`).toEqual(s.events);
        }
        // The crew runs one step at a time: its stream is the clean one, in order. The hub's
        // holds the same events (each handoff result, tool result and relay once), interleaved.
        expect(crew.events.map(shape)).toEqual(clean.crewEvents.map(shape));
        expect(shapes(hub.events)).toEqual(shapes(clean.hubEvents));
        expect(unfinished).toEqual([]);
        expect(modelCalls).toBe(0);
        expect(toolRuns).toBe(0);
      } catch (e) {
        failures.push(`N=${n}: ${(e as Error).message}`);
      }
    });
    expect(failures.sort((a, b) => parseInt(a.slice(2), 10) - parseInt(b.slice(2), 10))).toEqual([]);
  }, 120_000);
});
