/**
 * `xswarm fork` as a user runs it (a child process on a temporary SQLite file, the scripted
 * swarms of `test/fixtures/cli-swarms.ts`): the plan with `--dry-run` (plain and `--json`), a
 * fork driven to its end, and refusals with their exit codes.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { guardCheckoutState } from '../support/checkout-guard.js';
import { killCliProcesses, runCli } from '../support/cli-process.js';

const MODULE = 'test/fixtures/cli-swarms.ts';
let dir: string;

guardCheckoutState();

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'xswarm-cli-fork-'));
});
afterAll(async () => {
  killCliProcesses();
  await rm(dir, { recursive: true, force: true });
});

describe('xswarm fork', () => {
  it('plans a fork (--dry-run, plain and --json), drives one to its result, and refuses bad points', { timeout: 60_000 }, async () => {
    const env = { XSWARM_DB: join(dir, 'state.db') };
    const xswarm = (args: string[]) => runCli(args, env);
    const run = await xswarm(['run', MODULE, 'planner', 'plan my day', '--id', 'src']);
    expect(run.code, run.stderr).toBe(0);

    const [json, plain, bad, noModule] = await Promise.all([
      xswarm(['fork', 'src', '--at-turn', '2', '--dry-run', '--json']),
      xswarm(['fork', 'src', '--at-turn', '1', '--dry-run']),
      xswarm(['fork', 'src', '--at-seq', '9999', '--dry-run']),
      xswarm(['fork', 'src', '--at-turn', '2']),
    ]);
    expect(json.code, json.stderr).toBe(0);
    const plan = JSON.parse(json.stdout) as { seq: number; turn: number; sideEffects: { kind: string; name: string; callId: string }[]; dryRun: boolean };
    expect(plan).toMatchObject({ sourceId: 'src', turn: 1, dryRun: true, sideEffects: [{ kind: 'swarm', name: 'summary', callId: 's1', agent: 'planner' }] });
    expect(plain.code, plain.stderr).toBe(0);
    const lines = plain.stdout.trimEnd().split('\n');
    expect(lines[0]).toMatch(/^src would fork at seq \d+ \(after turn 0\); 2 recorded call\(s\) with side effects after it may run again:$/);
    expect(lines.slice(1)).toEqual([
      expect.stringMatching(/^ {2}seq \d+\ttool get_forecast\tf1\t\{"day":"Saturday"\}\t\(weather-agent\)$/),
      expect.stringMatching(/^ {2}seq \d+\tswarm summary\ts1\t"Summarize: hike on Saturday"\t\(planner\)$/),
    ]);
    expect(bad.code).toBe(5);
    expect(bad.stderr).toMatch(/Cannot fork swarm "src": it has no event 9999 .*\(unknown-seq\)/);
    expect(noModule.code).toBe(2);
    expect(noModule.stderr).toMatch(/--module/);

    const fork = await xswarm(['fork', 'src', '--at-turn', '2', '--id', 'branch', '--module', MODULE]);
    expect(fork.code, fork.stderr).toBe(0);
    const out = fork.stdout.trimEnd().split('\n');
    expect(out[0]).toBe(`src forked as branch: at seq ${plan.seq} (after turn 1); 1 recorded call(s) with side effects after it may run again:`);
    expect(out).toContainEqual(expect.stringMatching(/forked from src at seq \d+/));
    expect(out).toContainEqual(expect.stringMatching(/child swarm summary \(branch:t2:0\) completed$/));
    expect(out.at(-1)).toBe('Hike on Saturday: sunny');
    // The fork is a swarm of the database like any other.
    const list = await xswarm(['list', '--json']);
    expect((JSON.parse(list.stdout) as { swarmId: string; status: string }[]).find((s) => s.swarmId === 'branch')).toMatchObject({ status: 'completed' });
  });
});
