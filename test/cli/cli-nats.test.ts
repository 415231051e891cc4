/**
 * The `xswarm` command line on NATS, as a user runs it: `node bin/xswarm.js …` child processes
 * (what `npx xswarm` runs in a checkout) against a real `nats-server -js` on 127.0.0.1 started by
 * this file. The three-terminal walkthroughs of docs/distributed.md and docs/teams.md are run
 * from the guides' own lines (the server's URL put in place of port 4222), so the guides stay
 * true; the steps of docs/cli.md's NATS walkthrough of examples/control.ts are run here too
 * (pause, resume and stop from another terminal). Tests that share the server keep apart with
 * `--nats-prefix`.
 */
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SwarmEvent } from '../../src/index.js';
import { guardCheckoutState } from '../support/checkout-guard.js';
import { type Done, killCliProcesses, printed, runCli, type Started, startCli } from '../support/cli-process.js';
import { type NatsServer, natsServerMissing, startNatsServer } from '../support/nats-server.js';
import { REPO_ROOT } from '../support/repo-root.js';
import { until } from '../support/wait.js';

const CLI_SWARMS = 'test/fixtures/cli-swarms.ts';
const TIMEOUT = { timeout: 90_000 };

let server: NatsServer;
let dir: string;
/** A module with `ticker`, a swarm that runs for a minute unless commanded (written by beforeAll). */
let tickerModule: string;

guardCheckoutState();

beforeAll(async () => {
  if (natsServerMissing) return;
  server = await startNatsServer();
  dir = await mkdtemp(join(tmpdir(), 'xswarm-cli-nats-'));
  tickerModule = join(dir, 'ticker.mts');
  // Imports by absolute path: the module lives outside the repository, as a user's would.
  await writeFile(
    tickerModule,
    `import { z } from '${REPO_ROOT}node_modules/zod/index.js';
import { defineSwarm, scriptedModel, tool } from '${REPO_ROOT}src/index.js';
const tick = tool({ name: 'tick', description: 'Counts', parameters: z.object({}), execute: async () => 'tick' });
export const swarms = [defineSwarm({ id: 'ticker', instructions: 'Tick.', tools: [tick], maxTurns: 500 })];
export const model = scriptedModel(async (req) => {
  await new Promise((resolve) => setTimeout(resolve, 250));
  const n = req.messages.filter((m) => m.role === 'tool').length;
  const call = n < 240 ? { id: 't' + n, name: 'tick', arguments: '{}' } : { id: 'c', name: 'complete', arguments: JSON.stringify({ result: 'ticked' }) };
  return { toolCalls: [call] };
}, 'ticker');
`,
  );
});

afterAll(async () => {
  killCliProcesses();
  if (natsServerMissing) return;
  await server.stop();
  await rm(dir, { recursive: true, force: true });
});

/** Stops a long-running command as a service manager would; resolves with its exit. */
function terminate(run: Started): Promise<Done> {
  run.child.kill('SIGTERM');
  return run.done;
}

/** The base URL a `serve` printed. */
async function servedAt(run: Started): Promise<string> {
  return (await printed(run, / at (http:\/\/\S+) \(state: NATS at /))[1]!;
}

/** A swarm's result over REST, polled until it is no longer running (for as long as the test runs). */
function settled(url: string, definitionId: string, swarmId: string): Promise<{ status: string; result?: unknown; reason?: unknown }> {
  return until(
    `${swarmId} to settle`,
    async () => {
      const res = await fetch(`${url}/swarms/${definitionId}/${swarmId}`);
      expect(res.status).toBe(200);
      return (await res.json()) as { status: string; result?: unknown; reason?: unknown };
    },
    (body) => body.status !== 'running' && body.status !== 'awaitingHandoff',
    { timeout: 300_000, interval: 100 },
  );
}

const ndjson = (text: string): SwarmEvent[] =>
  text
    .trimEnd()
    .split('\n')
    .map((line) => JSON.parse(line) as SwarmEvent);

/** Splits a shell command line into words: double and single quotes, `#` comments. */
function words(line: string): string[] {
  const out: string[] = [];
  const pattern = /\s*(?:"([^"]*)"|'([^']*)'|(#.*)|(\S+))/g;
  for (let m = pattern.exec(line); m && m[0].trim() !== ''; m = pattern.exec(line)) {
    if (m[3] !== undefined) break;
    out.push(m[1] ?? m[2] ?? m[4]!);
  }
  return out;
}

/**
 * A documented walkthrough: every `npx xswarm` and `curl` line of the section of `file` under
 * `heading`, up to the next heading of its level or above, in order.
 */
async function walkthrough(file: string, heading: string): Promise<string[][]> {
  const readme = await readFile(join(REPO_ROOT, file), 'utf8');
  const from = readme.indexOf(`\n${heading}`);
  expect(from, `${file} has a "${heading}" section`).toBeGreaterThan(0);
  const level = heading.slice(0, heading.indexOf(' ') + 1);
  // Headings are `##` or deeper here (a `# …` line is a shell comment inside a code block).
  const next = [...readme.slice(from + 1).matchAll(/\n(#{2,}) /g)].find((m) => m[1]!.length <= level.length - 1);
  const section = readme.slice(from, next ? from + 1 + next.index : undefined);
  const lines = [...section.matchAll(/```sh\n([\s\S]*?)```/g)].flatMap((m) => m[1]!.split('\n'));
  return lines.filter((l) => l.startsWith('npx xswarm ') || l.startsWith('curl ')).map(words);
}

describe.skipIf(natsServerMissing).concurrent('xswarm on NATS', () => {
  it(
    'the Distribution walkthrough: a worker hosts the agents, `run` hands off to it, `list` and `serve` see every swarm; the worker exits 0 on SIGTERM',
    TIMEOUT,
    async () => {
      const file = 'docs/distributed.md';
      const commands = await walkthrough(file, '## Three terminals');
      // As the guide writes them; the test's server stands in for 127.0.0.1:4222, a free port for 4000.
      const find = (verb: string) => {
        const found = commands.find((c) => c[0] === 'npx' && c[2] === verb);
        expect(found, `${file} has an \`npx xswarm ${verb}\` line`).toBeDefined();
        return found!.slice(2).map((w) => (w === 'nats://127.0.0.1:4222' ? server.url : w === '4000' ? '0' : w));
      };
      const [workerArgs, runArgs, listArgs, serveArgs] = [find('worker'), find('run'), find('list'), find('serve')];
      expect(workerArgs).toEqual(['worker', 'examples/distributed/worker.ts', '--nats', server.url]);
      expect(runArgs).toEqual(['run', 'examples/distributed/planner.ts', 'day-planner', 'Plan my Saturday', '--nats', server.url]);

      const worker = startCli(workerArgs);
      await printed(worker, /^xswarm worker hosting agents weather-agent, calendar-agent, allergen-agent on NATS at nats:\/\/127\.0\.0\.1:\d+ /);
      const [plain, json] = await Promise.all([runCli(runArgs), runCli([...runArgs, '--id', 'walk-json', '--json'])]);

      // The planner's module has no agents: every answer came from the worker's tools.
      expect(plain.code, plain.stderr).toBe(0);
      expect(plain.stdout).toMatch(/^\s+\d+ {2}handoff day-planner → agent weather-agent \(\S+:t1:0\)$/m);
      expect(plain.stdout).toMatch(/^\s+\d+ {2}weather-agent answered day-planner: Saturday: sunny, 13–24°C/m);
      expect(plain.stdout).toMatch(/^\s+\d+ {2}allergen-agent answered day-planner: Saturday in city centre: grass pollen high/m);
      const plan = JSON.parse(plain.stdout.slice(plain.stdout.indexOf('\n{') + 1)) as { day: string; reasoning: string; warnings: string[] };
      expect(plan.day).toBe('Saturday');
      expect(plan.reasoning).toContain('Dentist appointment');
      expect(plan.warnings.some((w) => /grass pollen/i.test(w))).toBe(true);

      expect(json.code, json.stderr).toBe(0);
      const events = ndjson(json.stdout);
      expect(events.map((e) => e.seq)).toEqual(events.map((_, i) => i + 1));
      expect(events.every((e) => e.swarmId === 'walk-json')).toBe(true);
      expect(events.filter((e) => e.kind === 'status-update' && e.final)).toEqual([events.at(-1)]);
      expect(events.at(-1)).toMatchObject({ kind: 'status-update', metadata: { type: 'completed', result: { day: 'Saturday' } } });
      const children = events.flatMap((e) =>
        e.kind === 'status-update' && e.metadata.type === 'child-swarm' && e.metadata.lifecycle === 'completed' ? [e.metadata.definitionId] : [],
      );
      expect(children).toEqual(['xswarm.agent.weather-agent', 'xswarm.agent.calendar-agent', 'xswarm.agent.allergen-agent']);

      const listed = await runCli(listArgs);
      expect(listed.code, listed.stderr).toBe(0);
      expect(listed.stdout).toMatch(/^walk-json +day-planner +completed /m);
      expect(listed.stdout).toMatch(/^walk-json:t1:0 +xswarm\.agent\.weather-agent +completed /m);
      expect(listed.stdout.match(/ day-planner +completed /g)).toHaveLength(2);

      // `serve` on the same NATS: it reads the swarm `run` drove in another process, and starts new ones.
      const served = startCli(serveArgs);
      const url = await servedAt(served);
      const fromRun = await settled(url, 'day-planner', 'walk-json');
      expect(fromRun).toMatchObject({ status: 'completed', result: { day: 'Saturday' } });
      const curl = commands.find((c) => c[0] === 'curl')!;
      expect(curl.slice(0, 3)).toEqual(['curl', '-X', 'POST']);
      const body = curl[curl.indexOf('-d') + 1]!;
      const created = await fetch(`${url}${curl[3]!.replace(/^localhost:4000/, '')}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
      expect(created.status).toBe(201);
      const { swarmId } = (await created.json()) as { swarmId: string };
      expect(await settled(url, 'day-planner', swarmId)).toMatchObject({ status: 'completed', result: { day: 'Sunday' } });

      const [servedExit, workerExit] = await Promise.all([terminate(served), terminate(worker)]);
      expect(servedExit.code, servedExit.stderr).toBe(0);
      expect(workerExit.code, workerExit.stderr).toBe(0);
      // Its stderr holds its log (JSON lines at info, see docs/observability.md): nothing went wrong.
      const logged = workerExit.stderr.split('\n').filter((l) => l !== '');
      expect(logged.map((l) => (JSON.parse(l) as { level: string }).level).filter((level) => level !== 'info')).toEqual([]);
      expect(logged.at(-1)).toContain('"msg":"xswarm worker stopping"');
    },
  );

  it('the Teams walkthrough: two worker processes run the attempts, the leader serves the team; the stream ends with the team completed', TIMEOUT, async () => {
    const file = 'docs/teams.md';
    const commands = await walkthrough(file, '## Team workers in other processes');
    // As the guide writes them, on a prefix of this test's own; a free port for 4000.
    const prefix = ['--nats-prefix', 'teamwalk'];
    const find = (verb: string) => {
      const found = commands.find((c) => c[0] === 'npx' && c[2] === verb);
      expect(found, `${file} has an \`npx xswarm ${verb}\` line`).toBeDefined();
      return [...found!.slice(2).map((w) => (w === 'nats://127.0.0.1:4222' ? server.url : w === '4000' ? '0' : w)), ...prefix];
    };
    const [workerArgs, serveArgs] = [find('worker'), find('serve')];
    expect(workerArgs.slice(0, 2)).toEqual(['worker', 'examples/team/workers.ts']);
    expect(serveArgs.slice(0, 2)).toEqual(['serve', 'examples/team/leader.ts']);
    const workers = [startCli(workerArgs), startCli(workerArgs)];
    for (const w of workers) await printed(w, /^xswarm worker hosting /);
    const served = startCli(serveArgs);
    const url = await servedAt(served);
    const [run, follow] = commands.filter((c) => c[0] === 'curl');
    const path = (words: string[]) => words.find((w) => w.startsWith('localhost:4000'))!.replace(/^localhost:4000/, '');
    const body = run![run!.indexOf('-d') + 1]!;
    const started = await fetch(`${url}${path(run!)}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
    expect(started.status, await started.clone().text()).toBe(201);
    const stream = await (await fetch(`${url}${path(follow!)}`)).text();
    expect(stream).toContain('team-ended');
    const summary = (await (await fetch(`${url}${path(follow!).replace(/\/events$/, '')}`)).json()) as { status: string; counts: { completed: number } };
    const stories = (JSON.parse(body) as { tasks: unknown[] }).tasks.length;
    expect(summary).toMatchObject({ status: 'completed', counts: { completed: stories } });
    // The leader has no worker definition: every attempt ran in a worker process.
    const listed = await runCli(['list', '--nats', server.url, ...prefix]);
    expect(listed.code, listed.stderr).toBe(0);
    expect(listed.stdout).toMatch(/^sprint-1:schema:1 +database-worker +completed /m);
    expect(listed.stdout).toMatch(/^sprint-1:login:1 +frontend-worker +completed /m);
    const exits = await Promise.all([terminate(served), ...workers.map(terminate)]);
    for (const exit of exits) expect(exit.code, exit.stderr).toBe(0);
  });

  it('pause, resume and stop reach the live process holding the swarm (a `serve`, a `run` at its prompt) over NATS', TIMEOUT, async () => {
    const nats = ['--nats', server.url, '--nats-prefix', 'relay'];
    const served = startCli(['serve', tickerModule, '--port', '0', ...nats]);
    const url = await servedAt(served);
    const created = await fetch(`${url}/swarms/ticker`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ input: 'go', swarmId: 't1' }),
    });
    expect(created.status).toBe(201);
    // No --module: these processes cannot take the swarm over, only relay to its holder.
    const paused = await runCli(['pause', 't1', 'lunch', ...nats]);
    expect(paused.code, paused.stderr).toBe(0);
    expect(paused.stdout).toBe('swarm t1 paused: lunch\n');
    expect(await (await fetch(`${url}/swarms/ticker/t1`)).json()).toMatchObject({ status: 'paused', reason: { type: 'HITL', message: 'lunch' } });
    const resumed = await runCli(['resume', 't1', ...nats]);
    expect(resumed.code, resumed.stderr).toBe(0);
    expect(resumed.stdout).toBe('swarm t1 running\n');
    const stopped = await runCli(['stop', 't1', 'enough', ...nats]);
    expect(stopped.code, stopped.stderr).toBe(0);
    expect(stopped.stdout).toBe('swarm t1 stopped: enough\n');
    const again = await runCli(['stop', 't1', ...nats]);
    expect(again.code).toBe(5);
    expect(again.stderr).toBe('xswarm stop: cannot stop swarm "t1": it has ended (stopped)\n');

    // A run waiting at its prompt holds its swarm: answered from another process, it goes on.
    const asking = startCli(['run', CLI_SWARMS, 'asker', 'book a day', '--id', 'a1', ...nats]);
    await printed(asking, /paused \(HITL\): Which day suits you\?/);
    const answered = await runCli(['resume', 'a1', 'Sunday', ...nats]);
    expect(answered.code, answered.stderr).toBe(0);
    expect(answered.stdout).toMatch(/^swarm a1 (running|completed)\n$/);
    const ran = await asking.done;
    expect(ran.code, ran.stderr).toBe(0);
    expect(ran.stdout).toMatch(/resumed: Sunday\n(.*\n)*Booked for Sunday\n$/);
    expect(ran.stderr).toContain('swarm a1 went on without this answer (resumed or stopped elsewhere)');

    // Left paused with nobody holding it (stdin ended): the command it suggests takes it over here.
    const left = await runCli(['run', CLI_SWARMS, 'asker', 'book a day', '--id', 'a2', ...nats]);
    expect(left.code, left.stderr).toBe(3);
    expect(left.stderr).toContain(`continue it with:\n  npm run xswarm -- resume a2 '<answer>' --module ${CLI_SWARMS} --nats ${server.url} --nats-prefix relay\n`);
    const continued = await runCli(['resume', 'a2', 'Monday', '--module', CLI_SWARMS, ...nats]);
    expect(continued.code, continued.stderr).toBe(0);
    expect(continued.stdout).toMatch(/resumed: Monday\n(.*\n)*Booked for Monday\n$/);

    const [listed, events] = await Promise.all([runCli(['list', '--json', ...nats]), runCli(['events', 't1', '--json', ...nats])]);
    expect(listed.code, listed.stderr).toBe(0);
    expect((JSON.parse(listed.stdout) as { swarmId: string; status: string }[]).map((s) => [s.swarmId, s.status]).sort()).toEqual([
      ['a1', 'completed'],
      ['a2', 'completed'],
      ['t1', 'stopped'],
    ]);
    expect(events.code, events.stderr).toBe(0);
    const facts = ndjson(events.stdout).flatMap((e) => (e.kind === 'status-update' ? [e.metadata.type] : []));
    expect(facts.filter((t) => ['paused', 'resumed', 'stopped'].includes(t))).toEqual(['paused', 'resumed', 'stopped']);
    expect((await terminate(served)).code).toBe(0);
  });

  it('examples/control.ts: a live `xswarm run` of countdown is paused, resumed and stopped from another terminal over NATS', TIMEOUT, async () => {
    const nats = ['--nats', server.url, '--nats-prefix', 'control'];
    const run = startCli(['run', 'examples/control.ts', 'countdown', '30', '--id', 'count-n', ...nats]);
    await printed(run, /tool tick returned: 29…/);
    const listed = await runCli(['list', ...nats]);
    expect(listed.stdout).toMatch(new RegExp(`\\ncount-n +countdown +running +\\S+ +held by pid ${run.child.pid}\\n`));
    // No --module: the commands go to the run that holds the swarm.
    const paused = await runCli(['pause', 'count-n', 'coffee', ...nats]);
    expect(paused.code, paused.stderr).toBe(0);
    expect(paused.stdout).toBe('swarm count-n paused: coffee\n');
    await printed(run, /paused \(HITL\): coffee\n/);
    const resumed = await runCli(['resume', 'count-n', ...nats]);
    expect(resumed.code, resumed.stderr).toBe(0);
    await printed(run, /resumed\n(.*\n)*.*tool tick returned/);
    const stopped = await runCli(['stop', 'count-n', 'enough', ...nats]);
    expect(stopped.code, stopped.stderr).toBe(0);
    expect(stopped.stdout).toBe('swarm count-n stopped: enough\n');
    const ran = await run.done;
    expect(ran.code).toBe(1);
    expect(ran.stdout).toMatch(/stopped: enough\n$/);
    expect(ran.stderr).toContain('swarm count-n went on without this answer (resumed or stopped elsewhere)');
  });

  it('credentials come from files or the environment, never from the command line; a wrong one is a clear error', TIMEOUT, async () => {
    const secured = await startNatsServer({
      config: 'accounts {\n  TEAM: { jetstream: { max_mem: 64MB, max_file: 256MB }, users: [ { user: team, password: "s3cret-nats-pass" } ] }\n}\n',
    });
    try {
      const passFile = join(dir, 'nats-pass');
      const wrongFile = join(dir, 'nats-wrong');
      await writeFile(passFile, 's3cret-nats-pass\n', { mode: 0o600 });
      await writeFile(wrongFile, 'not-the-password\n', { mode: 0o600 });
      const nats = ['--nats', secured.url, '--nats-user', 'team'];
      const [fromFile, fromEnv, wrong, noPass, inUrl, onArgv] = await Promise.all([
        runCli(['list', ...nats, '--nats-pass-file', passFile]),
        runCli(['list', ...nats], { XSWARM_NATS_PASS: 's3cret-nats-pass' }),
        runCli(['list', ...nats, '--nats-pass-file', wrongFile]),
        runCli(['list', ...nats]),
        runCli(['list', '--nats', secured.url.replace('nats://', 'nats://team:s3cret-nats-pass@')]),
        runCli(['list', ...nats, '--nats-pass', 's3cret-nats-pass']),
      ]);
      expect([fromFile.code, fromFile.stderr, fromEnv.code, fromEnv.stderr]).toEqual([0, '', 0, '']);
      expect(wrong.code).toBe(1);
      expect(wrong.stderr).toMatch(/^xswarm list: Could not connect to NATS at nats:\/\/127\.0\.0\.1:\d+: .*authorization/i);
      expect(noPass.code).toBe(2);
      expect(noPass.stderr).toBe('xswarm list: --nats-user needs the password: --nats-pass-file PATH or XSWARM_NATS_PASS\n');
      expect(inUrl.code).toBe(2);
      expect(inUrl.stderr).toMatch(/no credentials in the URL/);
      expect(inUrl.stderr).not.toContain('s3cret');
      expect(onArgv.code).toBe(2);
      expect(onArgv.stderr).toMatch(/^xswarm list: Unknown option '--nats-pass'/);
    } finally {
      await secured.stop();
    }
  });

  it('NATS unreachable, or options that do not fit: a clear error and the documented exit code', TIMEOUT, async () => {
    const down = 'nats://127.0.0.1:1';
    const results = await Promise.all(
      [
        ['run', 'examples/distributed/planner.ts', 'day-planner', 'Plan my Saturday', '--nats', down],
        ['worker', 'examples/distributed/worker.ts', '--nats', down],
        ['list', '--nats', down],
        ['worker', 'examples/distributed/worker.ts'],
        ['list', '--nats-prefix', 'p'],
        ['list', '--db', join(dir, 'x.db'), '--nats', server.url],
        ['list', '--nats', server.url, '--nats-prefix', 'no.dots'],
        ['events', 'nope', '--nats', server.url, '--nats-prefix', 'errors'],
      ].map((args) => runCli(args)),
    );
    const refused = (command: string) => [1, expect.stringMatching(new RegExp(`^xswarm ${command}: Could not connect to NATS at nats://127\\.0\\.0\\.1:1: `))];
    expect(results.map((r) => [r.code, r.stderr])).toEqual([
      refused('run'),
      refused('worker'),
      refused('list'),
      [2, 'xswarm worker: a worker serves other runtimes over NATS: xswarm worker <module> --nats <url>\n'],
      [2, 'xswarm list: --nats-prefix needs --nats <url>\n'],
      [2, 'xswarm list: give one place for the swarms: --db or --nats\n'],
      [2, expect.stringMatching(/^xswarm list: --nats-prefix: nats\.prefix must be 1-32 letters/)],
      [4, `xswarm events: unknown swarm "nope" in NATS at ${server.url} (prefix errors)\n`],
    ]);
  });
});
