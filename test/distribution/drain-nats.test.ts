/**
 * SIGTERM during 50 concurrent runs: the holding process drains (its tool calls in flight finish
 * and commit, the next calls wait) and exits within its deadline; another process — over a real
 * nats-server, and on a shared SQLite file without NATS — adopts at once (its leases last 30 s:
 * adoption well before that shows the release was heard, not waited out) and finishes all 50,
 * every side effect once. Over NATS also: a draining worker stops hosting (new calls go to the
 * other worker, and the call it held is finished there), and a stop by id reaches a holder busy
 * in a slow tool call.
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createRuntime, defineAgent, defineSwarm, handoff, type RuntimeOptions, scriptedModel, tool } from '../../src/index.js';
import { exited, firstLine, killAll, startFixture } from '../support/crash-process.js';
import { natsFaultFixtures } from '../support/nats-faults.js';
import { natsServerMissing } from '../support/nats-server.js';
import { until } from '../support/wait.js';

const FIXTURE = fileURLToPath(new URL('../fixtures/drain-node.ts', import.meta.url));
const RUNS = 50;
const DRAIN_MS = 5_000;

const dirs: string[] = [];
afterAll(async () => {
  await killAll();
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

/** Runs the scenario on `where` (the fixture's DB or NATS_URL); returns what it measured. */
async function sigtermDuringRuns(where: Record<string, string>) {
  const dir = mkdtempSync(join(tmpdir(), 'xswarm-drain-'));
  dirs.push(dir);
  const executions = join(dir, 'executions.log');
  const effectsDir = mkdtempSync(join(dir, 'effects-'));
  writeFileSync(executions, '');
  const env = { ...where, RUNS: String(RUNS), EFFECTS: effectsDir, EXECUTIONS: executions, DRAIN_MS: String(DRAIN_MS), TOOL_MS: '400', BUSY: '10' };

  const adopter = startFixture(FIXTURE, ['adopter'], env);
  await firstLine(adopter, 20_000);
  const holder = startFixture(FIXTURE, ['holder'], env);
  await firstLine<{ ready: number; working: number }>(holder, 20_000);
  let holderOut = '';
  holder.stdout!.on('data', (d: Buffer) => (holderOut += d.toString()));
  const adopterLines: string[] = [];
  adopter.stdout!.on('data', (d: Buffer) => adopterLines.push(...d.toString().split('\n').filter(Boolean)));

  const termAt = Date.now();
  holder.kill('SIGTERM');
  await exited(holder);
  const exitMs = Date.now() - termAt;
  await exited(adopter);
  const done = JSON.parse(adopterLines.at(-1)!) as { results: string[]; firstEventAt: number; doneAt: number };
  const keys = readFileSync(executions, 'utf8').split('\n').filter(Boolean);
  return {
    holderCode: holder.exitCode,
    exitMs,
    drained: (JSON.parse(holderOut.trim().split('\n').at(-1)!) as { drained: number }).drained,
    adoptMs: done.firstEventAt - termAt,
    doneMs: done.doneAt - termAt,
    results: done.results,
    executions: keys,
    effects: readdirSync(effectsDir).map(decodeURIComponent),
  };
}

function expectAllOnce(r: Awaited<ReturnType<typeof sigtermDuringRuns>>) {
  expect(r.holderCode).toBe(0);
  expect(r.exitMs).toBeLessThan(DRAIN_MS);
  expect(r.results).toEqual(Array(RUNS).fill('completed'));
  // One side effect per run, each once.
  expect(r.effects).toHaveLength(RUNS);
  expect(new Set(r.effects).size).toBe(RUNS);
  // The calls in flight at SIGTERM finished and committed: no call was made twice.
  expect(r.executions.sort()).toEqual([...r.effects].sort());
  // Adopted at once once released: not after the 30 s lease, nor at the adopter's scan every 15 s.
  expect(r.adoptMs - r.exitMs).toBeLessThan(3_000);
  expect(r.doneMs - r.exitMs).toBeLessThan(8_000);
}

describe('SIGTERM during 50 concurrent runs, on a shared SQLite file', () => {
  it('the holder exits within its deadline; another process finishes all 50, each side effect once', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'xswarm-drain-db-'));
    dirs.push(dir);
    const r = await sigtermDuringRuns({ DB: join(dir, 'state.db') });
    console.log(
      `[drain sqlite] holder exited ${r.exitMs} ms after SIGTERM (drain ${r.drained} ms); adopter's first event ${r.adoptMs} ms, all 50 done ${r.doneMs} ms after SIGTERM`,
    );
    expectAllOnce(r);
  }, 60_000);
});

const nats = natsFaultFixtures('xswarm-drain-nats-');
const HOSTING = { deadlineMs: 5_000, heartbeatMs: 250, heartbeatTimeoutMs: 2_000 };

/** A runtime on the test's NATS, closed after the test. */
async function natsRuntime(options: Omit<RuntimeOptions, 'nats'>) {
  const rt = createRuntime({ ...options, nats: { servers: nats.server.url }, hosting: HOSTING, leaseMs: 30_000 });
  nats.runtimes.push(rt);
  await rt.start();
  return rt;
}

describe.skipIf(natsServerMissing)('over NATS', () => {
  it('the holder exits within its deadline; another process finishes all 50, each side effect once', async () => {
    const r = await sigtermDuringRuns({ NATS_URL: nats.server.url, NATS_PREFIX: 'drain' });
    console.log(
      `[drain nats] holder exited ${r.exitMs} ms after SIGTERM (drain ${r.drained} ms); adopter's first event ${r.adoptMs} ms, all 50 done ${r.doneMs} ms after SIGTERM`,
    );
    expectAllOnce(r);
  }, 60_000);

  it('a draining worker stops hosting: the call it held is finished by the other worker, and new calls go there', async () => {
    const forecasts: string[] = [];
    /** The weather agent as worker `w` hosts it: the first forecast is slow (in flight at the drain). */
    const weatherOf = (w: string) =>
      defineAgent({
        id: 'weather',
        description: 'Weather forecasts',
        instructions: 'Forecast.',
        tools: [
          tool({
            name: 'get_forecast',
            description: 'The forecast for a day',
            parameters: z.object({ day: z.string() }),
            execute: async (_args, { idempotencyKey }) => {
              forecasts.push(`${w}:${idempotencyKey}`);
              if (forecasts.length === 1) await new Promise((r) => setTimeout(r, 400));
              return { sky: 'sunny' };
            },
          }),
        ],
      });
    const model = scriptedModel((req) => {
      const last = req.messages.filter((m) => m.role === 'tool').at(-1)?.content;
      if (req.agentId === 'weather') return last === undefined ? { toolCalls: [{ id: 'f1', name: 'get_forecast', arguments: '{"day":"Sat"}' }] } : { text: 'sunny' };
      return last === undefined ? { toolCalls: [{ id: 'h1', name: 'handoff_to_weather', arguments: '{"request":"Sat?"}' }] } : { text: `Plan: ${last}` };
    });
    const planner = defineSwarm({ id: 'planner', instructions: 'Plan.', handoffs: [handoff.toAgent('weather')] });
    const w1 = await natsRuntime({ agents: [weatherOf('w1')], model });
    const home = await natsRuntime({ swarms: [planner], model });

    // The first call lands on w1 (the only worker yet); w1 drains while its forecast is at work.
    await home.forSwarm(planner, 'p1').run('Plan Saturday');
    await until('the forecast to be at work on w1', () => forecasts.length === 1, { timeout: 10_000 });
    const w2 = await natsRuntime({ agents: [weatherOf('w2')], model });
    await w1.drain({ deadlineMs: 5_000 });
    expect(await home.forSwarm(planner, 'p1').wait()).toEqual({ status: 'completed', result: 'Plan: sunny' });
    // Its forecast finished and was committed on w1: w2 went on from there without making it again.
    expect(forecasts).toHaveLength(1);

    // New calls: all to w2 (w1's queue-group subscription is gone).
    for (const id of ['p2', 'p3', 'p4']) {
      await home.forSwarm(planner, id).run('Plan Saturday');
      expect(await home.forSwarm(planner, id).wait()).toMatchObject({ status: 'completed' });
    }
    expect(forecasts.slice(1).map((f) => f.split(':')[0])).toEqual(['w2', 'w2', 'w2']);
    expect(w2.stats().live).toBe(0);
  }, 30_000);

  it('a stop by id from another process reaches the holder busy in a slow tool call, and aborts that call at once', async () => {
    const aborted: string[] = [];
    let started = 0;
    const slow = tool({
      name: 'slow',
      description: 'A long call',
      parameters: z.object({}),
      execute: (_args, { signal }) =>
        new Promise((_resolve, reject) => {
          started++;
          signal.addEventListener('abort', () => {
            aborted.push(String(signal.reason));
            reject(signal.reason);
          });
        }),
    });
    const chore = defineSwarm({ id: 'chore', instructions: 'Work.', tools: [slow] });
    const model = scriptedModel(() => ({ toolCalls: [{ id: 's1', name: 'slow', arguments: '{}' }] }));
    const holder = await natsRuntime({ swarms: [chore], model });
    const other = await natsRuntime({ swarms: [chore], model });
    await holder.forSwarm(chore, 'c1').run('Work');
    await until('the slow call to be at work', () => started === 1, { timeout: 10_000 });

    const at = Date.now();
    await other.forSwarm(chore, 'c1').stop('stopped by ops');
    expect(Date.now() - at).toBeLessThan(2_000);
    expect(aborted).toHaveLength(1);
    expect(await other.forSwarm(chore, 'c1').getResult()).toMatchObject({ status: 'stopped', reason: 'stopped by ops' });
  }, 30_000);
});
