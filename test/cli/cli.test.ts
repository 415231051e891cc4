/**
 * The `xswarm` command line as a user runs it: `node bin/xswarm.js …` as a child process, on a
 * temporary SQLite file (one per test, so the tests run at once), with the scripted swarms of
 * `test/fixtures/cli-swarms.ts`. Its stdout is a pipe, so progress comes as plain lines; stdin
 * is a pipe the test writes the human's answer to, or closes.
 */
import { mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SwarmEvent } from '../../src/index.js';
import { guardCheckoutState } from '../support/checkout-guard.js';
import { killCliProcesses, printed, runCli, startCli } from '../support/cli-process.js';
import { REPO_ROOT } from '../support/repo-root.js';

const MODULE = 'test/fixtures/cli-swarms.ts';
let dir: string;
let dbs = 0;

guardCheckoutState();

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'xswarm-cli-'));
});
afterAll(async () => {
  killCliProcesses();
  await rm(dir, { recursive: true, force: true });
});

/**
 * A database of its own for a test, and the CLI on it: the file is given as XSWARM_DB, as a
 * user's environment would (commands may still pass --db).
 */
function cliOn(db = join(dir, `state-${++dbs}.db`)) {
  const start = (args: string[], env: Record<string, string> = {}) => startCli(args, { XSWARM_DB: db, ...env });
  /** Runs a command to its end; `stdin` is written and then closed (closed at once by default). */
  const xswarm = (args: string[], stdin = '', env: Record<string, string> = {}) => runCli(args, { XSWARM_DB: db, ...env }, stdin);
  return { db, start, xswarm };
}

const ndjson = (text: string): SwarmEvent[] =>
  text
    .trimEnd()
    .split('\n')
    .map((line) => JSON.parse(line) as SwarmEvent);
const isFinal = (e: SwarmEvent | undefined) => e?.kind === 'status-update' && e.final;
const TIMEOUT = { timeout: 60_000 };

describe.concurrent('xswarm', () => {
  it('run prints plain progress lines and the result, NDJSON events with --json, and exits 1 for a failed swarm', TIMEOUT, async () => {
    const { xswarm } = cliOn();
    const [plain, json, broken] = await Promise.all([
      xswarm(['run', MODULE, 'planner', 'plan my day', '--id', 'p1']),
      xswarm(['run', MODULE, 'planner', 'plan my day', '--id', 'p2', '--json']),
      xswarm(['run', MODULE, 'broken', 'anything']),
    ]);
    expect(plain.code, plain.stderr).toBe(0);
    const lines = plain.stdout.trimEnd().split('\n');
    expect(lines.at(-1)).toBe('Hike on Saturday: sunny');
    // One line per step, in order, each with its event number; no colors outside a terminal.
    const steps = [
      /^\s+\d+ {2}started planner \(p1\)$/,
      /^\s+\d+ {2}handoff planner → weather-agent: Weather on Saturday\?$/,
      /^\s+\d+ {2}tool weather-agent → get_forecast$/,
      /^\s+\d+ {2}tool get_forecast returned: Saturday: sunny, 22°C$/,
      /^\s+\d+ {2}weather-agent answered planner: Sunny, 22°C on Saturday$/,
      /^\s+\d+ {2}turn 1\/10 done \(planner\)$/,
      /^\s+\d+ {2}handoff planner → swarm summary \(p1:t2:0\)$/,
      /^\s+\d+ {2}child swarm summary \(p1:t2:0\) started$/,
      /^\s+\d+ {2}child swarm summary \(p1:t2:0\) completed$/,
      /^\s+\d+ {2}completed$/,
    ];
    let at = 0;
    for (const step of steps) {
      const found = lines.findIndex((l, i) => i >= at && step.test(l));
      expect(found, `${step} after line ${at} in:\n${plain.stdout}`).toBeGreaterThanOrEqual(at);
      at = found + 1;
    }
    // ESC [ starts an ANSI colour: plain output has none.
    expect(plain.stdout).not.toMatch(new RegExp(`${String.fromCharCode(27)}\\[|internal:|checkpoint`));

    expect(json.code, json.stderr).toBe(0);
    const events = ndjson(json.stdout);
    expect(events.map((e) => e.seq)).toEqual(events.map((_, i) => i + 1));
    expect(events.every((e) => e.swarmId === 'p2')).toBe(true);
    expect(events.filter(isFinal)).toEqual([events.at(-1)]);
    expect(events.at(-1)).toMatchObject({ kind: 'status-update', metadata: { type: 'completed', result: 'Hike on Saturday: sunny' } });

    expect(broken.code).toBe(1);
    expect(broken.stdout).toMatch(/failed: No forecast is available\n$/);
  });

  it('a pause takes the answer from stdin; with stdin closed run exits 3 leaving it paused, and `resume` completes it', TIMEOUT, async () => {
    const { xswarm } = cliOn();
    const [answered, unanswered] = await Promise.all([
      xswarm(['run', MODULE, 'asker', 'book a day', '--id', 'a1'], 'Sunday\n'),
      xswarm(['run', MODULE, 'asker', 'book a day', '--id', 'a2']),
    ]);
    expect(answered.code, answered.stderr).toBe(0);
    expect(answered.stdout).toMatch(/paused \(HITL\): Which day suits you\?\n.*resumed: Sunday\n/s);
    expect(answered.stdout).toMatch(/Booked for Sunday\n$/);
    expect(answered.stderr).toBe('xswarm: reading the answer to swarm a1 from stdin\n');

    expect(unanswered.code).toBe(3);
    expect(unanswered.stdout).toMatch(/paused \(HITL\): Which day suits you\?\n$/);
    // The question once (the progress line), then how to answer it in a checkout: the npm script.
    expect(unanswered.stderr).toBe(
      `xswarm: reading the answer to swarm a2 from stdin\nxswarm: swarm a2 stays paused; continue it with:\n  npm run xswarm -- resume a2 '<answer>' --module ${MODULE}\n`,
    );

    const [paused, pausedJson, withoutModule] = await Promise.all([
      xswarm(['list', '--status', 'paused']),
      xswarm(['list', '--status', 'paused', '--json']),
      xswarm(['resume', 'a2', 'Sunday']),
    ]);
    expect(paused.code).toBe(0);
    expect(paused.stdout).toMatch(/^SWARM +DEFINITION +STATUS +UPDATED\na2 +asker +paused +\S+ +Which day suits you\?\n$/);
    expect((JSON.parse(pausedJson.stdout) as { swarmId: string; status: string }[]).map((s) => [s.swarmId, s.status])).toEqual([['a2', 'paused']]);
    expect(withoutModule.code).toBe(2);
    expect(withoutModule.stderr).toMatch(/swarm "a2" has no live owner.*--module PATH/);

    const resumed = await xswarm(['resume', 'a2', 'Sunday', '--module', MODULE]);
    expect(resumed.code, resumed.stderr).toBe(0);
    expect(resumed.stdout).toMatch(/^\s+\d+ {2}resumed: Sunday\n(.*\n)*\s+\d+ {2}completed\nBooked for Sunday\n$/);

    const [tail, tailJson, completed] = await Promise.all([
      xswarm(['events', 'a2', '--since', '3']),
      xswarm(['events', 'a2', '--since', '3', '--json']),
      xswarm(['list', '--status', 'completed', '--definition', 'asker', '--json']),
    ]);
    expect(tail.code).toBe(0);
    // Every event after the third, bookkeeping included: the listing shows the whole stream.
    const seqs = tail.stdout
      .trimEnd()
      .split('\n')
      .map((l) => Number(/^\s*(\d+) /.exec(l)?.[1]));
    expect(seqs).toEqual(seqs.map((_, i) => i + 4));
    expect(tail.stdout).toMatch(/paused \(HITL\): Which day suits you\?\n(.*\n)*.*resumed: Sunday\n(.*\n)*.*completed\n$/);
    const events = ndjson(tailJson.stdout);
    expect(events.map((e) => e.seq)).toEqual(seqs);
    expect(isFinal(events.at(-1))).toBe(true);
    expect((JSON.parse(completed.stdout) as { swarmId: string }[]).map((s) => s.swarmId).sort()).toEqual(['a1', 'a2']);
  });

  it('`stop` ends a paused swarm no process holds; a second stop is refused', TIMEOUT, async () => {
    const { xswarm } = cliOn();
    expect((await xswarm(['run', MODULE, 'asker', 'book a day', '--id', 'a3'])).code).toBe(3);
    const stopped = await xswarm(['stop', 'a3', 'changed my mind', '--module', MODULE]);
    expect(stopped.code, stopped.stderr).toBe(0);
    expect(stopped.stdout).toBe('swarm a3 stopped: changed my mind\n');
    const [again, listed] = await Promise.all([xswarm(['stop', 'a3', '--module', MODULE]), xswarm(['list', '--status', 'stopped'])]);
    expect(again.code).toBe(5);
    expect(again.stderr).toBe('xswarm stop: cannot stop swarm "a3": it has ended (stopped)\n');
    expect(listed.stdout).toMatch(/\na3 +asker +stopped +\S+ +changed my mind\n$/);
  });

  it('`events --follow` on a swarm another process drives ends at its final event; `pause` there names that process', TIMEOUT, async () => {
    const { start, xswarm } = cliOn();
    // A run waiting at its prompt holds the swarm, alive, for as long as the test wants.
    const run = start(['run', MODULE, 'asker', 'book a day', '--id', 'live']);
    await printed(run, /paused \(HITL\)/);
    const follow = start(['events', 'live', '--follow', '--json']);
    follow.child.stdin.end();
    const [refused] = await Promise.all([xswarm(['pause', 'live', '--module', MODULE]), printed(follow, /"type":"paused"/)]);
    expect(refused.code).toBe(5);
    expect(refused.stderr).toContain(`cannot pause swarm "live" here: a live process drives it (pid ${run.child.pid} on `);
    expect(refused.stderr).toContain('--url http://127.0.0.1:<port>');
    // Answered only now: the follower reads what is committed after it started, to the end.
    run.child.stdin.end('Monday\n');
    expect((await run.done).code).toBe(0);
    const followed = await follow.done;
    expect(followed.code, followed.stderr).toBe(0);
    const events = ndjson(followed.stdout);
    expect(events.map((e) => e.seq)).toEqual(events.map((_, i) => i + 1));
    expect(events.filter(isFinal)).toEqual([events.at(-1)]);
    expect(events.at(-1)).toMatchObject({ kind: 'status-update', metadata: { type: 'completed', result: 'Booked for Monday' } });
  });

  it('`stop` of a swarm another process drives on the same database file reaches that process', TIMEOUT, async () => {
    const { start, xswarm } = cliOn();
    const run = start(['run', MODULE, 'asker', 'book a day', '--id', 'held']);
    await printed(run, /paused \(HITL\)/);
    const stopped = await xswarm(['stop', 'held', 'not needed']);
    expect(stopped.stderr).toBe('');
    expect(stopped.code).toBe(0);
    expect(stopped.stdout).toBe('swarm held stopped: not needed\n');
    // The process that drove it, waiting at its prompt, saw its swarm stopped and ended as a stopped run ends.
    const ended = await run.done;
    expect(ended.code).toBe(1);
    expect(ended.stdout).toMatch(/\n +\d+ +stopped: not needed\n$/);
    expect(ended.stderr).toContain('went on without this answer (resumed or stopped elsewhere)');
  });

  it('after its `xswarm run` was killed, `pause` takes a running swarm over and `resume` finishes it', TIMEOUT, async () => {
    const { start, xswarm } = cliOn();
    const crashed = start(['run', MODULE, 'slow', 'tick', '--id', 's1']);
    crashed.child.stdin.end();
    await printed(crashed, /tool tick returned/);
    crashed.child.kill('SIGKILL');
    await crashed.done;
    // The lease names a dead process of this host: no waiting for it to run out.
    const pause = await xswarm(['pause', 's1', 'lunch', '--module', MODULE]);
    expect(pause.code, pause.stderr).toBe(0);
    expect(pause.stdout).toBe('swarm s1 paused: lunch\n');
    const resumed = await xswarm(['resume', 's1', '--module', MODULE]);
    expect(resumed.code, resumed.stderr).toBe(0);
    expect(resumed.stdout).toMatch(/^\s+\d+ {2}resumed\n(.*\n)*ticked 6 times\n$/);
  });

  it('sends commands to `xswarm serve` with --url and its token', TIMEOUT, async () => {
    const { start, xswarm } = cliOn();
    const tokenFile = join(dir, 'token');
    await writeFile(tokenFile, 'cli-secret\n', { mode: 0o600 });
    const served = start(['serve', MODULE, '--port', '0', '--token-file', tokenFile]);
    const url = (await printed(served, / at (http:\/\/\S+) \(state:/))[1]!;
    const started = await fetch(`${url}/swarms/asker`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: 'Bearer cli-secret' },
      body: JSON.stringify({ input: 'book a day', swarmId: 'r1' }),
    });
    expect(started.status).toBe(201);
    const [here, noToken] = await Promise.all([xswarm(['resume', 'r1', 'Sunday', '--module', MODULE]), xswarm(['resume', 'r1', 'Sunday', '--url', url])]);
    expect(here.code).toBe(5);
    expect(here.stderr).toContain(`a live process drives it (pid ${served.child.pid} on `);
    expect(noToken.code).toBe(1);
    expect(noToken.stderr).toMatch(/answered 401: .*--token-file or XSWARM_TOKEN/);
    const [resumed, unknown] = await Promise.all([
      xswarm(['resume', 'r1', 'Sunday', '--url', url, '--token-file', tokenFile]),
      xswarm(['stop', 'nope', '--url', url], '', { XSWARM_TOKEN: 'cli-secret' }),
    ]);
    expect(resumed.code, resumed.stderr).toBe(0);
    expect(resumed.stdout).toMatch(/^swarm r1 (running|completed)\n$/);
    expect(unknown.code).toBe(4);
    expect(unknown.stderr).toBe(`xswarm stop: unknown swarm "nope" at ${url}\n`);
    served.child.kill('SIGTERM');
    expect((await served.done).code).toBe(0);
  });

  it('a swarm paused at its turn limit: `extend` raises the limit, `resume` finishes it; a bad limit is a usage error', TIMEOUT, async () => {
    const { xswarm } = cliOn();
    const ran = await xswarm(['run', MODULE, 'capped', 'go', '--id', 'c1']);
    expect(ran.code, ran.stderr).toBe(3);
    expect(`${ran.stdout}${ran.stderr}`).toContain('maxTurns (2) reached without a result');
    const [refused, bad] = await Promise.all([xswarm(['resume', 'c1', '--module', MODULE]), xswarm(['extend', 'c1', 'lots', '--module', MODULE])]);
    expect(refused.code).toBe(5);
    expect(refused.stderr).toContain('paused at its limit of 2 turns: extend it');
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('xswarm extend <id> <maxTurns>');
    const extended = await xswarm(['extend', 'c1', '4', '--module', MODULE]);
    expect(extended.code, extended.stderr).toBe(0);
    expect(extended.stdout).toMatch(/^swarm c1 paused: maxTurns \(2\) reached/);
    const resumed = await xswarm(['resume', 'c1', '--module', MODULE]);
    expect(resumed.code, resumed.stderr).toBe(0);
    expect(resumed.stdout).toContain('ticked 3 times');
  });

  it('`xswarm serve` serves the teams its module exports', TIMEOUT, async () => {
    const { start } = cliOn();
    const served = start(['serve', MODULE, '--port', '0']);
    const url = (await printed(served, / at (http:\/\/\S+) \(state:/))[1]!;
    const json = { 'content-type': 'application/json' };
    const tasks = [
      { id: 'draft', subject: 'Draft the plan' },
      { id: 'edit', subject: 'Edit the plan', dependencies: ['draft'] },
    ];
    const run = await fetch(`${url}/teams/crew/sprint/run`, { method: 'POST', headers: json, body: JSON.stringify({ tasks }) });
    expect(run.status).toBe(201);
    // The SSE stream ends after the run's final event.
    const events = await (await fetch(`${url}/teams/crew/sprint/events`)).text();
    expect(events).toContain('team-ended');
    const summary = (await (await fetch(`${url}/teams/crew/sprint`)).json()) as { status: string; counts: { completed: number } };
    expect(summary).toMatchObject({ status: 'completed', counts: { completed: 2 } });
    served.child.kill('SIGTERM');
    expect((await served.done).code).toBe(0);
  });

  it('a pause shows its question once: on the progress line, or on stderr when progress is JSON', TIMEOUT, async () => {
    const { xswarm } = cliOn();
    const [plain, json] = await Promise.all([
      xswarm(['run', MODULE, 'asker', 'book a day', '--id', 'q1']),
      xswarm(['run', MODULE, 'asker', 'book a day', '--id', 'q2', '--json']),
    ]);
    const question = 'Which day suits you?';
    expect(plain.code).toBe(3);
    expect(`${plain.stdout}${plain.stderr}`.split(question)).toHaveLength(2);
    expect(plain.stdout).toContain(`paused (HITL): ${question}`);
    expect(json.code).toBe(3);
    expect(json.stderr.split(question)).toHaveLength(2);
    expect(json.stderr).toContain(`xswarm: swarm q2 asks: ${question}\n`);
    expect(json.stderr).toContain(`  npm run xswarm -- resume q2 '<answer>' --module ${MODULE}\n`);
  });

  it('suggests `xswarm resume` where the package is installed (its binary inside node_modules), with the options that name the state', TIMEOUT, async () => {
    const { db } = cliOn();
    // The checkout seen as an installed package: a project whose node_modules/xswarm is it.
    const project = join(dir, 'project');
    await mkdir(join(project, 'node_modules'), { recursive: true });
    await symlink(REPO_ROOT, join(project, 'node_modules', 'xswarm'), 'dir');
    const module = join(REPO_ROOT, MODULE);
    const installed = await runCli(['run', module, 'asker', 'book a day', '--id', 'i1', '--db', db], {}, '', join(project, 'node_modules/xswarm/bin/xswarm.js'));
    expect(installed.code, installed.stderr).toBe(3);
    expect(installed.stderr).toContain(`continue it with:\n  xswarm resume i1 '<answer>' --module ${module} --db ${db}\n`);
    // Paused by Ctrl-C (an emergency, not a question): nothing to answer.
    const { xswarm, start } = cliOn();
    const interrupted = start(['run', MODULE, 'slow', 'tick', '--id', 'i2']);
    await printed(interrupted, /tool tick returned/);
    interrupted.child.kill('SIGINT');
    const stopped = await interrupted.done;
    expect(stopped.code).toBe(3);
    expect(stopped.stdout).toMatch(/paused \(EMERGENCY\): Interrupted from the terminal \(Ctrl-C\)\n$/);
    expect(stopped.stderr).toBe(`xswarm: swarm i2 stays paused; continue it with:\n  npm run xswarm -- resume i2 --module ${MODULE}\n`);
    expect((await xswarm(['list', '--status', 'paused'])).stdout).toMatch(/\ni2 +slow +paused /);
  });

  it('errors exit with the documented codes and say what is wrong', TIMEOUT, async () => {
    const { db, xswarm } = cliOn();
    const results = await Promise.all(
      [
        ['events', 'nope'],
        ['run', MODULE, 'nosuch'],
        ['frobnicate'],
        ['run'],
        ['list', '--bogus'],
        ['events', 'a/b'],
        ['list', '--status', 'sleeping'],
        ['run', 'no/such/module.ts', 'planner'],
      ].map((args) => xswarm(args)),
    );
    expect(results.map((r) => [r.code, r.stderr])).toEqual([
      [4, `xswarm events: unknown swarm "nope" in ${db}\n`],
      [4, `xswarm run: ${MODULE} defines no swarm "nosuch"; it defines: planner, summary, asker, broken, slow, capped\n`],
      [
        2,
        'xswarm: unknown command "frobnicate"; one of run, list, events, pause, resume, stop, extend, approve, reject, serve, replay, worker, inspect, fork (xswarm --help)\n',
      ],
      [2, 'xswarm run: which module and swarm? xswarm run <module> <definition> [input]\n'],
      [2, expect.stringMatching(/^xswarm list: Unknown option '--bogus'/)],
      [2, expect.stringMatching(/^xswarm events: Invalid swarm id: a swarm id may not contain "\/"/)],
      [2, 'xswarm list: unknown status "sleeping"; one of running, awaitingHandoff, paused, completed, failed, stopped\n'],
      [2, 'xswarm run: no module at no/such/module.ts\n'],
    ]);
    const help = await xswarm(['--help']);
    expect(help.code).toBe(0);
    expect(help.stdout).toMatch(/Exit codes: 0 done.*3 the swarm is paused/s);
  });
});
