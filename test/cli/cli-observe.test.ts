/**
 * `xswarm serve` as an operator runs it: JSON log lines on stderr at `--log-level` (a swarm's
 * start and end at info, its model calls at debug), Prometheus metrics at `GET /metrics` that
 * count the same model calls the log shows; a level it does not know is a usage error.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { guardCheckoutState } from '../support/checkout-guard.js';
import { killCliProcesses, printed, runCli, startCli } from '../support/cli-process.js';
import { parsePromText, sampleValue } from '../support/prom-text.js';
import { until } from '../support/wait.js';
import { createRuntime, scriptedModel, sqliteStore } from '../../src/index.js';

const MODULE = 'test/fixtures/cli-swarms.ts';
const TIMEOUT = { timeout: 60_000 };
let dir: string;

guardCheckoutState();

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'xswarm-cli-observe-'));
});
afterAll(async () => {
  killCliProcesses();
  await rm(dir, { recursive: true, force: true });
});

type LogLine = { level: string; time: number; msg: string; swarmId?: string; definitionId?: string };

describe('xswarm list of named runs', () => {
  it('shows a NAME column and filters by --name and --component', TIMEOUT, async () => {
    const db = join(dir, 'named.db');
    const store = sqliteStore(db);
    const runtime = createRuntime({ model: scriptedModel(() => ({ text: 'done' })), store });
    for (const [id, name, componentId] of [
      ['n1', 'digest', 'mailer'],
      ['n2', 'report', undefined],
    ] as const) {
      const c = runtime.adhoc(id);
      await c.run({ userMessage: 'Go', instructions: 'Answer.', name, ...(componentId ? { componentId } : {}) });
      await c.wait();
    }
    await runtime.close();
    await store.close();
    const all = await runCli(['list', '--db', db]);
    expect(all.code, all.stderr).toBe(0);
    const [header, ...rows] = all.stdout.trimEnd().split('\n');
    expect(header).toMatch(/^SWARM\s+DEFINITION\s+NAME\s+STATUS\s+UPDATED$/);
    expect(rows.map((r) => r.split(/\s{2,}/).slice(0, 4))).toEqual([
      ['n2', 'xswarm.adhoc', 'report', 'completed'],
      ['n1', 'xswarm.adhoc', 'digest [mailer]', 'completed'],
    ]);
    const byName = await runCli(['list', '--db', db, '--name', 'digest', '--json']);
    expect((JSON.parse(byName.stdout) as { swarmId: string; label: unknown }[]).map((s) => [s.swarmId, s.label])).toEqual([
      ['n1', { name: 'digest', componentId: 'mailer' }],
    ]);
    const byComponent = await runCli(['list', '--db', db, '--component', 'nobody']);
    expect(byComponent.stdout).toBe('');
  });
});

describe('xswarm serve logs and metrics', () => {
  it('logs JSON lines to stderr at --log-level and counts the same model calls at /metrics', TIMEOUT, async () => {
    const served = startCli(['serve', MODULE, '--port', '0', '--log-level', 'debug'], { XSWARM_DB: join(dir, 'serve.db') });
    let stderr = '';
    served.child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const url = (await printed(served, / at (http:\/\/\S+) \(state:/))[1]!;
    expect(served.stdout()).toContain(`METRICS ${url}/metrics`);
    const started = await fetch(`${url}/swarms/planner`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ input: 'plan my day', swarmId: 'logged' }),
    });
    expect(started.status).toBe(201);
    const lines = () =>
      stderr
        .split('\n')
        .filter((l) => l.startsWith('{'))
        .map((l) => JSON.parse(l) as LogLine);
    await until('the run to be logged as completed', () => lines().some((l) => l.msg === 'swarm completed' && l.swarmId === 'logged'));
    const mine = lines().filter((l) => l.swarmId === 'logged');
    expect(mine[0]).toMatchObject({ level: 'info', msg: 'swarm started', definitionId: 'planner' });
    expect(mine.at(-1)).toMatchObject({ level: 'info', msg: 'swarm completed', definitionId: 'planner' });
    const calls = mine.filter((l) => l.msg === 'model call');
    expect(calls.length).toBeGreaterThan(0);
    expect(calls.every((l) => l.level === 'debug' && typeof l.time === 'number')).toBe(true);

    const metrics = parsePromText(await (await fetch(`${url}/metrics`)).text());
    expect(sampleValue(metrics, 'xswarm_model_calls_total', { definition: 'planner', model: 'cli-script' })).toBe(calls.length);
    expect(sampleValue(metrics, 'xswarm_swarms_finished_total', { definition: 'planner', state: 'completed' })).toBe(1);
    served.child.kill('SIGTERM');
    expect((await served.done).code).toBe(0);
    expect(lines().at(-1)).toMatchObject({ level: 'info', msg: 'xswarm stopping' });
  });

  it('refuses a log level it does not know', TIMEOUT, async () => {
    const done = await runCli(['serve', MODULE, '--port', '0', '--log-level', 'loud'], { XSWARM_DB: join(dir, 'bad.db') });
    expect(done.code).toBe(2);
    expect(done.stderr).toContain('--log-level takes one of debug, info, warn, error, not "loud"');
  });
});
