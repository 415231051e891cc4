/**
 * Team runs through broker outages, on a real `nats-server -js` (started per test on
 * 127.0.0.1) that the test kills and starts again on the same port and store directory, about
 * 3 s later, at several points of the run: right as attempts start, while attempts are completing
 * (a side effect done, its result not recorded yet), and during the leader's own writes.
 *
 * While NATS is unreachable a team attempt waits and retries, like a swarm's steps; its outcome is
 * looked up by its idempotency key before it could be declared failed. So every task's side
 * effect happens exactly once (counted per idempotency key), every task completes in its first
 * attempt, and no attempt fails, is released or is counted against the task's attempts because
 * of an outage. Once on one runtime (the team and its task swarms in this process), once with
 * the task swarms in two worker processes (test/fixtures/team-nats-node.ts) and the leader here.
 */
import type { ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createRuntime, defineSwarm, type Runtime, scriptedModel, type TeamClient, type TeamFact, tool } from '../../src/index.js';
import { exited, startFixture } from '../support/crash-process.js';
import { faultPoints } from '../support/fault-points.js';
import { jsonLine, natsFaultFixtures } from '../support/nats-faults.js';
import { natsServerMissing } from '../support/nats-server.js';
import { sleep } from '../support/sleep.js';
import { until } from '../support/wait.js';
import { crewTeam } from '../fixtures/team-nats-team.js';

const NODE = fileURLToPath(new URL('../fixtures/team-nats-node.ts', import.meta.url));

const nats = natsFaultFixtures('xswarm-team-outage-');

/** How long each outage lasts: what a server restart costs (issue 28's was about 3 s). */
const DOWN_MS = 3_000;

/** Eight tasks of type `dev`: four at the start, each followed by one that depends on it. */
const BOARD = ['a', 'b', 'c', 'd'].flatMap((id) => [
  { id, subject: id, metadata: { type: 'dev' } },
  { id: `${id}2`, subject: `${id}2`, metadata: { type: 'dev' }, dependencies: [id] },
]);
const TASKS = BOARD.map((t) => t.id).sort();

/**
 * The outages of one test, one after the other: outage `n` begins only once the previous one is
 * over, and only once. Each kills nats-server (SIGKILL), waits {@link DOWN_MS}, and starts it
 * again on the same port and store directory.
 */
function outages() {
  const started: Promise<void>[] = [];
  let down = false;
  return {
    started,
    /**
     * Begins outage `n` if it is the next and none is under way. `now`: the kill is sent before
     * this returns, from inside the caller's callback, so that nothing else of this process runs
     * before it (the requests the callback's caller makes next meet a dead server).
     */
    begin(n: number, now = false): void {
      if (down || started.length !== n - 1) return;
      down = true;
      if (now) process.kill(nats.server.pid, 'SIGKILL');
      started.push(
        (async () => {
          await nats.server.kill();
          await sleep(DOWN_MS);
          await nats.server.start();
          down = false;
        })(),
      );
    },
    /** Whether outage `n` is over. */
    over: (n: number) => started.length >= n && !down,
  };
}

/**
 * Calls `onFact` with each fact of the team's stream as it is read (start it once the run is
 * under way: the stream of a team that is not running ends at once).
 */
function onFacts(client: TeamClient, onFact: (fact: TeamFact) => void): void {
  void (async () => {
    for await (const event of client.events()) onFact(event.metadata);
  })();
}

/**
 * What an outage must not have cost: the run completed, each task in its first attempt (its key
 * `<team>:<task>:1`), with its side effect done once under that key; no attempt failed, was
 * released or ran again, no worker respawned.
 */
async function expectExactlyOnce(client: TeamClient, teamId: string, effects: Map<string, number>): Promise<void> {
  const summary = await client.wait();
  expect(summary.status).toBe('completed');
  expect(summary.counts).toMatchObject({ total: TASKS.length, completed: TASKS.length, failed: 0 });
  expect(client.board().tasks.map((t) => [t.id, t.attempts, t.failures])).toEqual(BOARD.map((t) => [t.id, 1, 0]));
  expect(Object.fromEntries(effects)).toEqual(Object.fromEntries(TASKS.map((id) => [`${teamId}:${id}:1`, 1])));
  const facts: TeamFact[] = [];
  for await (const event of client.events()) facts.push(event.metadata);
  const troubles = facts.filter((f) => ['team-task-failed', 'team-task-released', 'team-worker-respawned', 'team-released-attempt-completed'].includes(f.type));
  expect(troubles).toEqual([]);
  const completed = facts.filter((f): f is Extract<TeamFact, { type: 'team-task-completed' }> => f.type === 'team-task-completed');
  expect(completed.map((f) => [f.taskId, f.attempt]).sort()).toEqual(TASKS.map((id) => [id, 1]));
}

/** The lines of a file of this test's directory (none when it does not exist yet). */
function lines(file: string): string[] {
  try {
    return readFileSync(join(nats.dir, file), 'utf8').split('\n').filter(Boolean);
  } catch {
    return [];
  }
}

describe.skipIf(natsServerMissing)('team attempts through NATS outages', () => {
  it('on one runtime: the team completes through three outages, each task done once, in its first attempt', async () => {
    const down = outages();
    // The side effects, by idempotency key (the attempt's swarm id).
    const effects = new Map<string, number>();
    const recordWork = tool({
      name: 'record_work',
      description: 'Records the work done for the task',
      parameters: z.object({ task: z.string() }),
      execute: async ({ task }, ctx) => {
        effects.set(ctx.swarmId, (effects.get(ctx.swarmId) ?? 0) + 1);
        // Outage 2, while attempts are completing: c's work is done, its result not recorded yet.
        if (ctx.swarmId === 'solo:c:1') down.begin(2, true);
        return { recorded: task };
      },
    });
    const builder = defineSwarm({ id: 'builder', instructions: 'Build the task.', tools: [recordWork] });
    const model = scriptedModel(async (req) => {
      const n = 1 + req.messages.filter((m) => m.role === 'tool').length;
      await sleep(100, req.signal);
      const taskId = req.swarmId.split(':')[1]!;
      return n === 1 ? { toolCalls: [{ id: `w${n}`, name: 'record_work', arguments: JSON.stringify({ task: taskId }) }] } : { text: `built ${taskId}` };
    });
    // The worker timeout is shorter than an outage: an outage is nobody's silence.
    const runtime: Runtime = createRuntime({ swarms: [builder], teams: [crewTeam(2_000)], model, nats: { servers: nats.server.url }, leaseMs: 60_000 });
    nats.runtimes.push(runtime);
    await runtime.start();
    // Outage 1, as attempts start: a's final event is durable, and the attempt of a2 (which
    // depends on a) starts right after it: its look-up and its start meet a dead server.
    runtime.subscribe((event) => {
      if (event.swarmId === 'solo:a:1' && event.kind === 'status-update' && event.final) down.begin(1, true);
    });
    const client = runtime.forTeam('crew', 'solo');
    await client.run(BOARD);
    // Outage 3, during the leader's own writes: the first completion after outage 2, which the
    // leader is writing down as it is read here.
    onFacts(client, (f) => {
      if (f.type === 'team-task-completed' && down.over(2)) down.begin(3, true);
    });
    // A run that ends (or pauses) before the third outage has gone wrong: checked below.
    await until('three outages, or the run over', () => down.started.length === 3 || client.status !== 'running', { timeout: 60_000 });
    await Promise.all(down.started);

    await expectExactlyOnce(client, 'solo', effects);
    expect(down.started).toHaveLength(3);
    expect((await runtime.list()).map((s) => [s.swarmId, s.status]).sort()).toEqual(TASKS.map((id) => [`solo:${id}:1`, 'completed']).sort());
  }, 90_000);

  it('on one runtime, the server killed at two random points of the run: each task done once, in its first attempt', async () => {
    const down = outages();
    // The run's moments: each task's two model calls and its side effect (24). The faults are
    // drawn among the first 20, so both fall inside the run.
    const points = faultPoints('team run', 20, 2);
    const moment = () => {
      if (points.moment(down.over(down.started.length))) down.begin(down.started.length + 1, true);
    };
    const effects = new Map<string, number>();
    const recordWork = tool({
      name: 'record_work',
      description: 'Records the work done for the task',
      parameters: z.object({ task: z.string() }),
      execute: async ({ task }, ctx) => {
        effects.set(ctx.swarmId, (effects.get(ctx.swarmId) ?? 0) + 1);
        moment();
        return { recorded: task };
      },
    });
    const builder = defineSwarm({ id: 'builder', instructions: 'Build the task.', tools: [recordWork] });
    const model = scriptedModel(async (req) => {
      const n = 1 + req.messages.filter((m) => m.role === 'tool').length;
      moment();
      await sleep(100, req.signal);
      const taskId = req.swarmId.split(':')[1]!;
      return n === 1 ? { toolCalls: [{ id: `w${n}`, name: 'record_work', arguments: JSON.stringify({ task: taskId }) }] } : { text: `built ${taskId}` };
    });
    const runtime: Runtime = createRuntime({ swarms: [builder], teams: [crewTeam(2_000)], model, nats: { servers: nats.server.url }, leaseMs: 60_000 });
    nats.runtimes.push(runtime);
    await runtime.start();
    const client = runtime.forTeam('crew', 'random');
    await client.run(BOARD);
    await until('two outages, or the run over', () => down.started.length === 2 || client.status !== 'running', { timeout: 60_000 });
    await Promise.all(down.started);

    expect(down.started.length, points.label).toBe(2);
    await expectExactlyOnce(client, 'random', effects);
  }, 90_000);

  it('with the task swarms in worker processes: the team completes through three outages, each task done once, in its first attempt', async () => {
    const down = outages();
    const workers: ChildProcess[] = [0, 1].map(() =>
      startFixture(NODE, ['worker'], {
        NATS_URL: nats.server.url,
        SIDE_EFFECTS: join(nats.dir, 'side-effects'),
        MODEL_LOG: join(nats.dir, 'model-log'),
        KILL_MARKER: join(nats.dir, 'killed'),
        MODEL_DELAY_MS: '200',
      }),
    );
    await Promise.all(workers.map((w) => jsonLine(w, (l) => 'ready' in l)));
    // The leader has the team, not the `builder` swarm its workers run: every attempt is a hosted
    // call. Its worker timeout is shorter than an outage: an outage is nobody's silence.
    const leader = createRuntime({
      teams: [crewTeam(2_000)],
      model: scriptedModel(() => {
        throw new Error('the leader runs no model');
      }),
      nats: { servers: nats.server.url },
      leaseMs: 60_000,
      hosting: { heartbeatMs: 200, heartbeatTimeoutMs: 10_000, deadlineMs: 10_000 },
    });
    nats.runtimes.push(leader);
    await leader.start();
    const client = leader.forTeam('crew', 'fleet');
    await client.run(BOARD);
    // Outage 3, during the leader's own writes: the first completion after outage 2.
    onFacts(client, (f) => {
      if (f.type === 'team-task-completed' && down.over(2)) down.begin(3, true);
    });
    // Outage 1, right after an attempt started in a worker (its first model call answered).
    await until('an attempt under way in a worker', () => lines('model-log').length > 0, { timeout: 30_000 });
    down.begin(1);
    // Outage 2, while attempts are completing: a fourth task's work done.
    await until('outage 1 over and four side effects', () => down.over(1) && lines('side-effects').length >= 4, { timeout: 60_000, interval: 5 });
    down.begin(2);
    // A run that ends (or pauses) before the third outage has gone wrong: checked below.
    await until('three outages, or the run over', () => down.started.length === 3 || client.status !== 'running', { timeout: 60_000 });
    await Promise.all(down.started);

    // The side effects, by idempotency key: each worker process appends `<swarmId> <pid>`.
    await client.wait();
    const effects = new Map<string, number>();
    for (const line of lines('side-effects')) {
      const swarmId = line.split(' ')[0]!;
      effects.set(swarmId, (effects.get(swarmId) ?? 0) + 1);
    }
    await expectExactlyOnce(client, 'fleet', effects);
    expect(down.started).toHaveLength(3);
    for (const worker of workers) worker.kill('SIGTERM');
    await Promise.all(workers.map(exited));
  }, 120_000);
});
