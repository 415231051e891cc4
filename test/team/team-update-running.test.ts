/**
 * `teamClient.updateTask` on a task in progress (real SQLite): a cancel stops the attempt's swarm
 * and fails the task for good as a pending cancel does (its dependents blocked), never as a
 * failure; `assignTo` stops the attempt and re-queues the task for the named worker, whose
 * attempt (a new number) does not count against `maxAttempts`; blockers for a running task and
 * any change to a finished one are refused. Also `runtime.deleteTeam`.
 */
import { describe, expect, it } from 'vitest';
import { defineSwarm, defineTeam, scriptedModel, TeamError, type ModelRequest, type Runtime, type TeamFact } from '../../src/index.js';
import { sqliteFilePerTest } from '../support/sqlite-file.js';
import { until } from '../support/wait.js';

const file = sqliteFilePerTest('xswarm-team-update-');

const taskOf = (req: ModelRequest) => /Task: (\S+)/.exec(String(req.messages.find((m) => m.role === 'user')?.content))?.[1] ?? '?';
const worker = defineSwarm({ id: 'upd-worker', instructions: 'Work.' });
const team = defineTeam({ id: 'upd', workers: [{ type: 'dev', swarm: worker, count: 2 }], limits: { maxAttempts: 1 } });

/**
 * A runtime whose task `slow` hangs in its model call until aborted the first time it is run
 * (`calls` counts its calls), and whose other tasks finish at once.
 */
function start(): { runtime: Runtime; calls: { slow: number } } {
  const calls = { slow: 0 };
  const model = scriptedModel(async (req) => {
    const task = taskOf(req);
    if (task === 'slow' && ++calls.slow === 1) {
      await new Promise<never>((_, reject) => req.signal.addEventListener('abort', () => reject(req.signal.reason), { once: true }));
    }
    return { text: `built ${task}` };
  });
  return { runtime: file.runtime({ model, store: file.open(), teams: [team] }), calls };
}

async function facts(runtime: Runtime, teamId: string): Promise<TeamFact[]> {
  const out: TeamFact[] = [];
  for await (const event of runtime.forTeam('upd', teamId).events({ signal: AbortSignal.timeout(1_000) })) out.push(event.metadata);
  return out;
}

describe('updateTask on a running task', () => {
  it('cancel stops the attempt’s swarm; the task fails for good, not as a failure, and its dependant is blocked', async () => {
    const { runtime } = start();
    const client = runtime.forTeam('upd', 'c1');
    await client.run([
      { id: 'slow', subject: 'slow' },
      { id: 'after', subject: 'after', dependencies: ['slow'] },
      { id: 'other', subject: 'other' },
    ]);
    await until('slow to run', () => client.board().tasks.find((t) => t.id === 'slow')?.status === 'in_progress');
    const canceled = await client.updateTask('slow', { cancel: true });
    expect(canceled).toMatchObject({ status: 'failed', failures: 0, attempts: 1, lastError: 'canceled by the user' });
    const summary = await client.wait();
    expect(summary.status).toBe('stalled');
    expect(summary.counts).toMatchObject({ completed: 1, failed: 1, blocked: 1 });
    expect(summary.escalation).toBeUndefined();
    // The stopped attempt's swarm ended stopped (its stop is durable: owed until then).
    const attempt = await runtime.forSwarm('upd-worker', 'c1:slow:1').getResult();
    expect(attempt.status).toBe('stopped');
    const all = await facts(runtime, 'c1');
    expect(all.find((f) => f.type === 'team-task-updated')).toMatchObject({ taskId: 'slow', canceled: true, stoppedAttempt: 1 });
    expect(all.some((f) => f.type === 'team-task-failed' || f.type === 'team-escalation')).toBe(false);
    // Finished tasks refuse every change, saying why.
    await expect(client.updateTask('slow', { cancel: true })).rejects.toThrow(/slow is failed: a finished task cannot be changed/);
    await expect(client.updateTask('other', { assignTo: 'dev-1' })).rejects.toMatchObject({ code: 'wrong-state' });
  });

  it('assignTo stops the attempt and re-queues the task for the named worker, as a new attempt outside maxAttempts', async () => {
    const { runtime, calls } = start();
    const client = runtime.forTeam('upd', 'r1');
    await client.run([{ id: 'slow', subject: 'slow' }]);
    const running = await until(
      'slow to run',
      () => client.board().tasks.find((t) => t.id === 'slow'),
      (t) => t?.status === 'in_progress',
    );
    const other = running!.owner === 'dev-1' ? 'dev-2' : 'dev-1';
    // Blockers cannot be added to a started task: refused, nothing changed.
    const refused = await client.updateTask('slow', { addBlockers: ['slow'] }).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(TeamError);
    expect(refused).toMatchObject({ code: 'wrong-state', message: expect.stringMatching(/in progress .*cannot wait on blockers/) });
    expect(client.board().tasks[0]).toMatchObject({ status: 'in_progress', owner: running!.owner });

    const moved = await client.updateTask('slow', { assignTo: other });
    expect(moved.failures).toBe(0);
    const summary = await client.wait();
    // maxAttempts is 1: the stopped attempt did not count, attempt 2 ran and completed.
    expect(summary.status).toBe('completed');
    expect(client.board().tasks[0]).toMatchObject({ status: 'completed', attempts: 2, failures: 0, result: 'built slow' });
    expect(calls.slow).toBe(2);
    expect((await runtime.forSwarm('upd-worker', 'r1:slow:1').getResult()).status).toBe('stopped');
    const all = await facts(runtime, 'r1');
    const claims = all.filter((f) => f.type === 'team-task-claimed');
    expect(claims.map((c) => [c.attempt, c.workerId])).toEqual([
      [1, running!.owner],
      [2, other],
    ]);
    expect(all.find((f) => f.type === 'team-task-updated')).toMatchObject({ assignTo: other, stoppedAttempt: 1 });
  });

  it('the worker whose attempt is stopped keeps its counts (its idle notification says how many tasks it completed)', async () => {
    const solo = defineTeam({ id: 'solo', workers: [{ type: 'dev', swarm: worker }] });
    const model = scriptedModel(async (req) => {
      if (taskOf(req) === 'slow') await new Promise<never>((_, reject) => req.signal.addEventListener('abort', () => reject(req.signal.reason), { once: true }));
      return { text: 'done' };
    });
    const runtime = file.runtime({ model, store: file.open(), teams: [solo] });
    const client = runtime.forTeam('solo', 's1');
    await client.run([
      { id: 'quick', subject: 'quick' },
      { id: 'slow', subject: 'slow', dependencies: ['quick'] },
    ]);
    await until('slow to run', () => client.board().tasks.find((t) => t.id === 'slow')?.status === 'in_progress');
    await client.updateTask('slow', { cancel: true });
    expect((await client.wait()).status).toBe('completed');
    const idle = client
      .inbox()
      .messages()
      .filter((m) => m.type === 'idle_notification')
      .map((m) => (m.payload as { completedTasks: number }).completedTasks);
    // Spawned (0), after quick (1), replaced after the cancel (still 1).
    expect(idle).toEqual([0, 1, 1]);
  });
});

describe('runtime.deleteTeam', () => {
  it('deletes a finished team of any known definition; refuses a running one and one that never ran', async () => {
    const { runtime } = start();
    const client = runtime.forTeam('upd', 'd1');
    await client.run([{ id: 'slow', subject: 'slow' }, { subject: 'quick' }]);
    await until('slow to run', () => client.board().counts.in_progress >= 1);
    await expect(runtime.deleteTeam('d1')).rejects.toMatchObject({ code: 'wrong-team-state' });
    await expect(runtime.deleteTeam('never')).rejects.toMatchObject({ code: 'unknown-team' });
    await client.updateTask('slow', { cancel: true });
    expect(['completed', 'stalled']).toContain((await client.wait()).status);
    // The team's record and its attempts' (slow:1 stopped, quick:1).
    expect(await runtime.deleteTeam('d1')).toBe(3);
    expect(await runtime.listTeams()).toEqual([]);
    await expect(runtime.deleteTeam('d1')).rejects.toMatchObject({ code: 'unknown-team' });
  });
});
