/**
 * `xswarm serve` on SIGTERM: it drains (the swarm it drives parks at a step boundary, its lease
 * released) and exits 0 within `--drain-ms`; another process on the same file finishes the swarm.
 * A second signal during the drain exits at once. `xswarm worker` on SIGTERM: the swarm it hosts
 * for another runtime parks (its tool call finishing there) and another worker finishes it.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createRuntime, type Runtime, sqliteStore } from '../../src/index.js';
import { model, swarms } from '../fixtures/cli-swarms.js';
import { model as longModel, swarms as longSwarms } from '../fixtures/drain-module.js';
import { natsFaultFixtures } from '../support/nats-faults.js';
import { natsServerMissing } from '../support/nats-server.js';
import { killCliProcesses, printed, startCli } from '../support/cli-process.js';
import { request } from '../support/server-clients.js';
import { peek } from '../support/sqlite-raw.js';
import { tempDirs } from '../support/temp-dirs.js';
import { until } from '../support/wait.js';

const tempDir = tempDirs();
afterAll(killCliProcesses);

/** `xswarm serve` of the CLI fixture on a new file, with `slow` (0.2 s per model call) running as `s1`. */
async function servingSlowRun(extra: string[] = []) {
  const db = join(tempDir('xswarm-cli-drain-'), 'state.db');
  const served = startCli(['serve', 'test/fixtures/cli-swarms.ts', '--port', '0', ...extra], { XSWARM_DB: db });
  const [, url] = await printed(served, / at (http:\/\/\S+) \(state:/);
  expect((await request(url!, 'POST', '/swarms/slow', { input: 'Tick', swarmId: 's1' })).status).toBe(201);
  // A step or two in: the swarm is mid-run when the signal comes.
  await until('s1 to have ticked', () => (peek<{ last_seq: number }>(db, `SELECT last_seq FROM swarms WHERE swarm_id = 's1'`)[0]?.last_seq ?? 0) >= 4, {
    timeout: 10_000,
  });
  return { db, served, url: url! };
}

describe('xswarm serve on SIGTERM', () => {
  it('drains: exits 0 within --drain-ms, the swarm parked unfinished with its lease released; another process finishes it', async () => {
    const { db, served } = await servingSlowRun(['--drain-ms', '3000']);
    const at = Date.now();
    served.child.kill('SIGTERM');
    const done = await served.done;
    const exitMs = Date.now() - at;
    expect(done.code).toBe(0);
    expect(exitMs).toBeLessThan(3_000);
    const [row] = peek(db, `SELECT status, owner FROM swarms WHERE swarm_id = 's1'`);
    expect(row).toEqual({ status: 'running', owner: null });

    const store = sqliteStore(db);
    const other = createRuntime({ swarms, model, store });
    try {
      await other.start();
      expect(await other.forSwarm('slow', 's1').wait()).toEqual({ status: 'completed', result: 'ticked 6 times' });
    } finally {
      await other.close();
      await store.close();
    }
  }, 60_000);

  it('exits at once on a second signal during the drain', async () => {
    const db = join(tempDir('xswarm-cli-drain-'), 'state.db');
    const served = startCli(['serve', 'test/fixtures/drain-module.ts', '--port', '0', '--drain-ms', '30000'], { XSWARM_DB: db, LONG_MS: '20000' });
    const [, url] = await printed(served, / at (http:\/\/\S+) \(state:/);
    expect((await request(url!, 'POST', '/swarms/long', { input: 'Wait', swarmId: 'l1' })).status).toBe(201);
    await until('the long call to be at work', () => peek<{ status: string }>(db, `SELECT status FROM swarms WHERE swarm_id = 'l1'`)[0]?.status === 'running', {
      timeout: 10_000,
    });
    // The drain waits for the 20 s call (its deadline is 30 s) …
    served.child.kill('SIGTERM');
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(served.child.exitCode).toBe(null);
    // … and a second signal ends it at once.
    const at = Date.now();
    served.child.kill('SIGTERM');
    const done = await served.done;
    expect(Date.now() - at).toBeLessThan(1_000);
    expect(done.code).toBe(143);
    expect(done.stderr).toContain('SIGTERM again, exiting now');
  }, 60_000);

  it('refuses a bad --drain-ms', async () => {
    const bad = startCli(['serve', 'test/fixtures/cli-swarms.ts', '--port', '0', '--drain-ms', 'soon'], { XSWARM_DB: join(tempDir('xswarm-cli-drain-'), 'state.db') });
    const done = await bad.done;
    expect(done.code).toBe(2);
    expect(done.stderr).toContain('--drain-ms takes a whole number of ms, not "soon"');
  }, 60_000);
});

const nats = natsFaultFixtures('xswarm-cli-drain-nats-');

describe.skipIf(natsServerMissing)('xswarm worker on SIGTERM', () => {
  it('drains: exits 0, and the swarm it hosted mid tool call is finished by another worker, the call made once', async () => {
    const executions = join(nats.dir, 'executions.log');
    writeFileSync(executions, '');
    const worker = startCli(['worker', 'test/fixtures/drain-module.ts', '--nats', nats.server.url, '--drain-ms', '5000'], { LONG_MS: '600', EXECUTIONS: executions });
    await printed(worker, /xswarm worker hosting swarms long/);
    // A runtime without the definition: its run goes to the worker.
    const home = createRuntime({ model: longModel, nats: { servers: nats.server.url } });
    nats.runtimes.push(home);
    await home.start();
    await home.forSwarm('long', 'l1').run('Wait');
    await until('the tool to be at work in the worker', () => readFileSync(executions, 'utf8').length > 0, { timeout: 10_000 });
    // The other worker, started after the run went to the first one.
    const other: Runtime = createRuntime({ swarms: longSwarms, model: longModel, nats: { servers: nats.server.url } });
    nats.runtimes.push(other);
    await other.start();

    const at = Date.now();
    worker.child.kill('SIGTERM');
    const done = await worker.done;
    expect(done.code, done.stderr).toBe(0);
    expect(Date.now() - at).toBeLessThan(5_000);
    expect(await home.forSwarm('long', 'l1').wait()).toEqual({ status: 'completed', result: 'Waited.' });
    expect(readFileSync(executions, 'utf8').split('\n').filter(Boolean)).toHaveLength(1);
  }, 60_000);
});
