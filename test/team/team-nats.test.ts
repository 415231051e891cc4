/**
 * Team workers in other processes, over a real `nats-server -js` (started per test on
 * 127.0.0.1): the leader's runtime lacks the workers' swarm definition, worker processes
 * (test/fixtures/team-nats-node.ts) host it, and one of them dies by SIGKILL mid-task.
 *
 * - team-level recovery: the leader hears nothing from the dead worker for `workerTimeoutMs`,
 *   releases its task and respawns it; the released attempt's swarm is stopped (taken over by
 *   the surviving process only to be stopped), and attempt 2 runs in the surviving process;
 * - runtime-level recovery: the attempt's heartbeats stop first, its call is sent again and
 *   the surviving process takes the attempt over and finishes it: nothing is released;
 * - periodic team adoption: a leader process killed mid-run; a runtime already started (not
 *   restarted) picks its team up at its next scan and completes it.
 */
import type { ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { createRuntime, type Runtime, scriptedModel, type TeamFact } from '../../src/index.js';
import { exited, startFixture } from '../support/crash-process.js';
import { jsonLine, natsFaultFixtures } from '../support/nats-faults.js';
import { natsServerMissing } from '../support/nats-server.js';
import { CHAIN, crewTeam } from '../fixtures/team-nats-team.js';

const NODE = fileURLToPath(new URL('../fixtures/team-nats-node.ts', import.meta.url));

const nats = natsFaultFixtures('xswarm-team-nats-');

const ready = (child: ChildProcess) => jsonLine<{ ready: number }>(child, (l) => 'ready' in l).then((l) => l.ready);

/** Starts a fixture process of `role` on this test's server. */
function node(role: 'worker' | 'leader', args: string[], env: Record<string, string> = {}): ChildProcess {
  return startFixture(NODE, [role, ...args], {
    NATS_URL: nats.server.url,
    SIDE_EFFECTS: join(nats.dir, 'side-effects'),
    MODEL_LOG: join(nats.dir, 'model-log'),
    KILL_MARKER: join(nats.dir, 'killed'),
    MODEL_DELAY_MS: '200',
    ...env,
  });
}

/** A leader runtime in this process: the team, not the `builder` swarm its workers run. */
function leaderRuntime(options: { workerTimeoutMs: number; heartbeatTimeoutMs: number; leaseMs?: number }): Runtime {
  const runtime = createRuntime({
    teams: [crewTeam(options.workerTimeoutMs)],
    model: scriptedModel(() => {
      throw new Error('the leader runs no model');
    }),
    nats: { servers: nats.server.url },
    leaseMs: options.leaseMs ?? 60_000,
    hosting: { heartbeatMs: 200, heartbeatTimeoutMs: options.heartbeatTimeoutMs, deadlineMs: 5_000 },
  });
  nats.runtimes.push(runtime);
  return runtime;
}

function lines(file: string): string[] {
  try {
    return readFileSync(join(nats.dir, file), 'utf8').split('\n').filter(Boolean);
  } catch {
    return [];
  }
}

/** The side effects as `swarmId → pid`, each task's work recorded once (asserted). */
function workByTask(): Map<string, { swarmId: string; pid: number }> {
  const work = new Map<string, { swarmId: string; pid: number }>();
  for (const line of lines('side-effects')) {
    const [swarmId, pid] = line.split(' ');
    const taskId = swarmId!.split(':')[1]!;
    expect(work.has(taskId), `task ${taskId} recorded twice: ${lines('side-effects').join(', ')}`).toBe(false);
    work.set(taskId, { swarmId: swarmId!, pid: Number(pid) });
  }
  return work;
}

async function factsOf(runtime: Runtime, teamId: string): Promise<TeamFact[]> {
  const facts: TeamFact[] = [];
  for await (const event of runtime.forTeam('crew', teamId).events()) facts.push(event.metadata);
  return facts;
}

describe.skipIf(natsServerMissing)('team workers in other processes over NATS', () => {
  it('a worker process killed mid-task: its task is done once, in the other process (released and redone as attempt 2, or attempt 1 sent again there); nothing is lost or done twice', async () => {
    // Both would die at task b's first model call; the marker lets only the first do so.
    const workers = [node('worker', [], { KILL_AT: 'b:1' }), node('worker', [], { KILL_AT: 'b:1' })];
    const pids = await Promise.all(workers.map(ready));
    // A short worker timeout: the team may notice the silence before the start is asked again.
    const leader = leaderRuntime({ workerTimeoutMs: 1_500, heartbeatTimeoutMs: 30_000 });
    await leader.start();
    const client = leader.forTeam('crew', 'tl');
    await client.run(CHAIN);
    const summary = await client.wait();
    expect(summary.status).toBe('completed');
    expect(summary.counts).toMatchObject({ total: 3, completed: 3 });

    const dead = workers.findIndex((w) => w.signalCode === 'SIGKILL');
    expect(dead).toBeGreaterThanOrEqual(0);
    const survivor = pids[1 - dead]!;
    const facts = await factsOf(leader, 'tl');
    expect(facts.filter((f) => f.type === 'team-task-completed').map((f) => (f as { taskId: string }).taskId)).toEqual(['a', 'b', 'c']);
    const work = workByTask();
    expect([...work.keys()].sort()).toEqual(['a', 'b', 'c']);
    expect(work.get('c')!.pid).toBe(survivor);
    // Two outcomes are correct, and which one comes depends on the machine's load: the team
    // declares the dead process's worker silent first (b released, its worker respawned, attempt
    // 2 done by the survivor, attempt 1 stopped), or the start request, which the dead process
    // never answered, is sent again and the survivor starts attempt 1 itself (its key: nothing
    // of it had been written). Either way b's work is done once, by the survivor.
    const released = facts.some((f) => f.type === 'team-task-released');
    if (released) {
      expect(facts).toContainEqual(expect.objectContaining({ type: 'team-task-released', taskId: 'b', attempt: 1, reason: 'worker silent' }));
      expect(facts.some((f) => f.type === 'team-worker-respawned')).toBe(true);
      // The released attempt ended (stopped by the process that took it over), its work never done.
      expect(await leader.forSwarm('builder', 'tl:b:1').wait()).toMatchObject({ status: 'stopped' });
      expect(work.get('b')).toEqual({ swarmId: 'tl:b:2', pid: survivor });
    } else {
      expect(client.board().tasks.map((t) => [t.id, t.attempts])).toEqual([
        ['a', 1],
        ['b', 1],
        ['c', 1],
      ]);
      expect(await leader.forSwarm('builder', 'tl:b:1').wait()).toMatchObject({ status: 'completed' });
      expect(work.get('b')).toEqual({ swarmId: 'tl:b:1', pid: survivor });
    }
    workers[1 - dead]!.kill('SIGTERM');
    await exited(workers[1 - dead]!);
  }, 40_000);

  it('a worker process killed mid-task: its attempt is taken over and finished by the other process, nothing released', async () => {
    // Killed at b's second model call: its tool step (the side effect) is durable by then.
    const workers = [node('worker', [], { KILL_AT: 'b:2' }), node('worker', [], { KILL_AT: 'b:2' })];
    const pids = await Promise.all(workers.map(ready));
    const leader = leaderRuntime({ workerTimeoutMs: 30_000, heartbeatTimeoutMs: 1_000 });
    await leader.start();
    const client = leader.forTeam('crew', 'rl');
    await client.run(CHAIN);
    const summary = await client.wait();
    expect(summary.status).toBe('completed');

    const dead = workers.findIndex((w) => w.signalCode === 'SIGKILL');
    expect(dead).toBeGreaterThanOrEqual(0);
    const survivor = pids[1 - dead]!;
    const facts = await factsOf(leader, 'rl');
    expect(facts.filter((f) => f.type === 'team-task-released')).toEqual([]);
    expect(facts.filter((f) => f.type === 'team-worker-respawned')).toEqual([]);
    expect(client.board().tasks.map((t) => t.attempts)).toEqual([1, 1, 1]);
    // The tool ran once, in the process that died; the surviving one answered the rest.
    const work = workByTask();
    expect(work.get('b')).toEqual({ swarmId: 'rl:b:1', pid: pids[dead] });
    expect(lines('model-log')).toContain(`rl:b:1 2 ${survivor}`);
    expect(await leader.forSwarm('builder', 'rl:b:1').wait()).toEqual({ status: 'completed', result: 'built b' });
  }, 40_000);

  it('a leader process killed mid-run: a runtime already started adopts its team at its next scan and completes it', async () => {
    const worker = node('worker', []);
    await ready(worker);
    // Started before the leader exists: only its periodic scan can find the team.
    const adopter = leaderRuntime({ workerTimeoutMs: 30_000, heartbeatTimeoutMs: 30_000, leaseMs: 1_000 });
    await adopter.start();
    const leader = node('leader', ['pa']);
    await jsonLine(leader, (l) => (l.fact as TeamFact | undefined)?.type === 'team-task-claimed' && (l.fact as { taskId: string }).taskId === 'b');
    // Read here while the leader drives it: this runtime only reads the team then.
    const client = adopter.forTeam('crew', 'pa');
    await client.ready();
    await expect(client.run([{ id: 'late', subject: 'late' }])).rejects.toMatchObject({ code: 'team-in-use' });
    leader.kill('SIGKILL');
    await exited(leader);

    const summary = await client.wait();
    expect(summary.status).toBe('completed');
    expect(summary.counts).toMatchObject({ total: 3, completed: 3 });
    expect(client.board().tasks.map((t) => t.attempts)).toEqual([1, 1, 1]);
    const work = workByTask();
    expect([...work.keys()].sort()).toEqual(['a', 'b', 'c']);
    worker.kill('SIGTERM');
    await exited(worker);
  }, 40_000);
});
