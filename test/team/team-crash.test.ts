/**
 * Team durability: the team's state is a record of the runtime's store, written after every
 * change. A process killed with SIGKILL mid-batch leaves the team and its task swarms in the
 * store; a new process adopts both and completes the batch, with no task's swarm done twice
 * (an attempt re-attaches to its swarm by the attempt key).
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { defineSwarm, defineTeam, scriptedModel, sqliteStore, createRuntime, type TeamFact } from '../../src/index.js';
import { runFixture } from '../support/crash-process.js';
import { sleep } from '../support/sleep.js';

const dir = mkdtempSync(join(tmpdir(), 'xswarm-team-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const FIXTURE = 'test/fixtures/team-crash.ts';

describe('team durability', () => {
  it('a process killed mid-batch: the next one completes the batch, no task swarm done twice', async () => {
    const db = join(dir, 'crash.db');
    const log = join(dir, 'model.log');
    const env = { OWNER: 'team-owner', LEASE_MS: '1000', TASK_MS: '150', KILL_AT_CLAIM: 'endpoints' };
    const first = await runFixture(FIXTURE, [db, log, 'run'], env);
    expect(first.signal).toBe('SIGKILL');
    const before = readFileSync(log, 'utf8').trim().split('\n');
    // Killed mid-batch: schema done, endpoints' model call in flight, dashboard not started.
    expect(before).toContain('end crashers:schema:1');
    expect(before).toContain('start crashers:endpoints:1');
    expect(before).not.toContain('end crashers:endpoints:1');
    expect(before.some((l) => l.includes('dashboard'))).toBe(false);

    const second = await runFixture(FIXTURE, [db, log, 'resume'], env);
    expect(second.code, second.stderr).toBe(0);
    const out = JSON.parse(second.stdout.trim().split('\n').at(-1)!) as {
      summary: { status: string; counts: { completed: number; total: number } };
      events: TeamFact[];
      swarms: { id: string; status: string }[];
      seqs: number[];
    };
    expect(out.summary.status).toBe('completed');
    expect(out.summary.counts).toMatchObject({ total: 4, completed: 4 });
    // One swarm per task, the first attempt's: the attempt in flight was re-attached, not redone.
    expect(out.swarms.map((s) => s.id).sort()).toEqual(['crashers:dashboard:1', 'crashers:endpoints:1', 'crashers:login:1', 'crashers:schema:1']);
    expect(out.swarms.every((s) => s.status === 'completed')).toBe(true);
    const ends = readFileSync(log, 'utf8')
      .trim()
      .split('\n')
      .filter((l) => l.startsWith('end '));
    expect(ends.sort()).toEqual(['end crashers:dashboard:1', 'end crashers:endpoints:1', 'end crashers:login:1', 'end crashers:schema:1']);
    // The stream continued across the crash: one ordered stream, each task completed once.
    expect(out.seqs).toEqual(out.seqs.map((_, i) => i + 1));
    const completed = out.events.filter((f) => f.type === 'team-task-completed').map((f) => (f as { taskId: string }).taskId);
    expect(completed.sort()).toEqual(['dashboard', 'endpoints', 'login', 'schema']);
    expect(out.events.at(-1)).toMatchObject({ type: 'team-ended', status: 'completed' });
  });

  it('a closed runtime leaves its team in the store; the next one on the same store continues it on first use', async () => {
    const db = join(dir, 'close.db');
    const slow = scriptedModel(async (req) => {
      await sleep(60, req.signal);
      return { text: `built ${req.swarmId}` };
    });
    const worker = defineSwarm({ id: 'worker', instructions: 'Work.' });
    const team = defineTeam({ id: 'closers', workers: [{ type: 'any', swarm: worker }] });
    let store = sqliteStore(db);
    let runtime = createRuntime({ model: slow, store, teams: [team], owner: 'one' });
    const tasks = [
      { id: 'a', subject: 'a' },
      { id: 'b', subject: 'b', dependencies: ['a'] },
      { id: 'c', subject: 'c', dependencies: ['b'] },
    ];
    await runtime.forTeam(team).run(tasks);
    await sleep(100);
    await runtime.close();
    await store.close();

    store = sqliteStore(db);
    runtime = createRuntime({ model: slow, store, teams: [team], owner: 'two' });
    // No start(): the first use restores the team, and its attempt re-attaches to its swarm.
    const client = runtime.forTeam(team);
    const summary = await client.wait();
    expect(summary.status).toBe('completed');
    expect(summary.counts.completed).toBe(3);
    expect(client.board().tasks.map((t) => t.attempts)).toEqual([1, 1, 1]);
    expect(client.metrics().workers[0]!.completed).toBeGreaterThanOrEqual(1);
    const swarms = (await runtime.list())
      .filter((s) => !s.definitionId.startsWith('xswarm.team.'))
      .map((s) => s.swarmId)
      .sort();
    expect(swarms).toEqual(['closers:a:1', 'closers:b:1', 'closers:c:1']);
    await runtime.close();
    await store.close();
  });
});
