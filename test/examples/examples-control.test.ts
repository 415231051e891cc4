/**
 * `examples/control.ts` through the command line, as its walkthrough has a user do it: `xswarm
 * run` a swarm that asks its human, leave it paused, `list`, and continue it with the `resume`
 * line the CLI printed (pasted into a shell as is: `npm run xswarm -- …`); then a long swarm
 * paused with Ctrl-C, resumed, paused again and stopped; and one whose `run` was killed,
 * paused by `pause` and stopped. Every command is a child process on a temporary database.
 */
import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DAY_QUESTION } from '../../examples/control.js';
import { guardCheckoutState } from '../support/checkout-guard.js';
import { type Done, killCliProcesses, printed, runCli, type Started, startCli } from '../support/cli-process.js';
import { REPO_ROOT } from '../support/repo-root.js';

const MODULE = 'examples/control.ts';
const TIMEOUT = { timeout: 90_000 };
let dir: string;

guardCheckoutState();
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'xswarm-control-'));
});
afterAll(async () => {
  killCliProcesses();
  await rm(dir, { recursive: true, force: true });
});

/** The CLI on a database of the test's own (as XSWARM_DB, so the suggested command lines carry no --db). */
function cliOn(name: string) {
  const env = { XSWARM_DB: join(dir, `${name}.db`) };
  return {
    env,
    xswarm: (args: string[]) => runCli(args, env),
    start: (args: string[]) => startCli(args, env),
  };
}

/** Runs a command line in a shell at the repository root, as a user pastes it. */
function shell(line: string, env: Record<string, string>): Promise<Done> {
  return new Promise((resolve, reject) => {
    const child = spawn('sh', ['-c', line], { cwd: REPO_ROOT, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

/** Ctrl-C in the run's terminal: the swarm pauses, the command exits 3. */
async function interrupt(run: Started): Promise<Done> {
  run.child.kill('SIGINT');
  const done = await run.done;
  expect(done.code, done.stderr).toBe(3);
  expect(done.stdout).toMatch(/paused \(EMERGENCY\): Interrupted from the terminal \(Ctrl-C\)\n$/);
  return done;
}

describe.concurrent('examples/control.ts on the command line', () => {
  it('day-trip: run asks, stays paused without an answer; list shows the question; the printed resume line books the answer', TIMEOUT, async () => {
    const { env, xswarm } = cliOn('trip');
    const asked = await xswarm(['run', MODULE, 'day-trip', 'the coast', '--id', 'trip-1']);
    expect(asked.code, asked.stderr).toBe(3);
    expect(asked.stdout).toMatch(/paused \(HITL\): Which day should I book the trip for: Saturday or Sunday\?\n$/);
    expect(`${asked.stdout}${asked.stderr}`.split(DAY_QUESTION)).toHaveLength(2);
    const suggested = /continue it with:\n {2}(.*)\n$/.exec(asked.stderr)?.[1];
    expect(suggested).toBe(`npm run xswarm -- resume trip-1 '<answer>' --module ${MODULE}`);

    const listed = await xswarm(['list']);
    expect(listed.code, listed.stderr).toBe(0);
    expect(listed.stdout).toMatch(new RegExp(`\\ntrip-1 +day-trip +paused +\\S+ +${DAY_QUESTION.replace(/[?:]/g, '\\$&')}\\n$`));

    const resumed = await shell(suggested!.replace('<answer>', 'Sunday'), env);
    expect(resumed.code, resumed.stderr).toBe(0);
    expect(resumed.stdout).toMatch(/resumed: Sunday\n(.*\n)*.*tool day-trip → book_trip\n(.*\n)*Booked a day trip to the coast on Sunday \(TRIP-\w{6}\)\n$/);
    expect((await xswarm(['list', '--status', 'completed'])).stdout).toMatch(/\ntrip-1 +day-trip +completed /);
  });

  it('countdown: Ctrl-C pauses it (pause from elsewhere names the live run), resume drives it on, stop ends it', TIMEOUT, async () => {
    const { xswarm, start } = cliOn('count');
    const run = start(['run', MODULE, 'countdown', '30', '--id', 'count-1']);
    await printed(run, /tool tick returned: 29…/);
    const [elsewhere, running] = await Promise.all([xswarm(['pause', 'count-1', '--module', MODULE]), xswarm(['list'])]);
    expect(elsewhere.code).toBe(5);
    expect(elsewhere.stderr).toContain(`a live process drives it (pid ${run.child.pid} on `);
    expect(running.stdout).toMatch(new RegExp(`\\ncount-1 +countdown +running +\\S+ +held by pid ${run.child.pid}\\n`));

    const paused = await interrupt(run);
    const suggested = /continue it with:\n {2}npm run xswarm -- (.*)\n$/.exec(paused.stderr)?.[1];
    expect(suggested).toBe(`resume count-1 --module ${MODULE}`);
    expect((await xswarm(['list', '--status', 'paused'])).stdout).toMatch(/\ncount-1 +countdown +paused +\S+ +Interrupted from the terminal \(Ctrl-C\)\n$/);

    const resumed = start(suggested!.split(' '));
    // On from where it was: the next number, not the countdown afresh.
    const next = Number((await printed(resumed, /resumed\n(?:.*\n)*?.*tool tick returned: (\d+)…/))[1]);
    expect(next).toBeLessThan(29);
    await interrupt(resumed);

    const stopped = await xswarm(['stop', 'count-1', 'enough', '--module', MODULE]);
    expect(stopped.code, stopped.stderr).toBe(0);
    expect(stopped.stdout).toBe('swarm count-1 stopped: enough\n');
    expect((await xswarm(['list'])).stdout).toMatch(/\ncount-1 +countdown +stopped +\S+ +enough\n$/);
  });

  it('countdown: after its run was killed, `pause` takes it over, `stop` ends it', TIMEOUT, async () => {
    const { xswarm, start } = cliOn('killed');
    const run = start(['run', MODULE, 'countdown', '--id', 'count-2']);
    // No input: the default of 30.
    await printed(run, /tool tick returned: 30…/);
    run.child.kill('SIGKILL');
    await run.done;
    const paused = await xswarm(['pause', 'count-2', 'lunch', '--module', MODULE]);
    expect(paused.code, paused.stderr).toBe(0);
    expect(paused.stdout).toBe('swarm count-2 paused: lunch\n');
    const stopped = await xswarm(['stop', 'count-2', '--module', MODULE]);
    expect(stopped.code, stopped.stderr).toBe(0);
    expect(stopped.stdout).toBe('swarm count-2 stopped: Stopped from the command line\n');
  });
});
