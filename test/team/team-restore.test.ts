/**
 * A team restored from a durable store (SQLite in a temp folder): a runtime closed gracefully
 * right after a task completed leaves a team the next runtime continues to its end, and a
 * stored team whose leader cannot run is refused loudly (`failed`, with the reason), never left
 * `running`.
 */
import { describe, expect, it } from 'vitest';
import { createRuntime, defineSwarm, defineTeam, scriptedModel, TeamError, type ModelRequest, type SwarmStore } from '../../src/index.js';
import { collect } from '../support/script.js';
import { sleep } from '../support/sleep.js';
import { sqliteFilePerTest } from '../support/sqlite-file.js';
import { tamper } from '../support/sqlite-raw.js';
import { until } from '../support/wait.js';

const file = sqliteFilePerTest('xswarm-team-restore-');

const worker = defineSwarm({ id: 'worker', instructions: 'Work.' });
const team = defineTeam({ id: 'restored', workers: [{ type: 'any', swarm: worker, count: 2 }] });

/** The task a task swarm works on (its input says `Task: <subject> …`; subjects are the ids here). */
const taskOf = (req: ModelRequest) => /Task: (\S+)/.exec(String(req.messages.find((m) => m.role === 'user')?.content))?.[1] ?? '?';

/** A model answering each task after `delayMs`, counting the answers it gave per task. */
function countingModel(delayMs: number) {
  const answered = new Map<string, number>();
  const model = scriptedModel(async (req) => {
    await sleep(delayMs, req.signal);
    const task = taskOf(req);
    answered.set(task, (answered.get(task) ?? 0) + 1);
    return { text: `built ${task}` };
  });
  return { model, answered };
}

/**
 * The store with its team record's writes taking `ms` each (a slow disk): a write is in flight
 * whenever the team changes, so the next one is always still to come when the runtime closes.
 */
function slowTeamWrites(store: SwarmStore, teamId: string, ms: number): SwarmStore {
  return {
    ...store,
    commit: async (commit) => {
      if (commit.swarmId === teamId) await sleep(ms);
      return store.commit(commit);
    },
  };
}

const TASKS = [
  { id: 'a', subject: 'a' },
  { id: 'b', subject: 'b', dependencies: ['a'] },
  { id: 'c', subject: 'c', dependencies: ['a'] },
  { id: 'd', subject: 'd', dependencies: ['b', 'c'] },
];

describe('team restore', () => {
  it('a runtime closed right after a task completed: the next runtime on the store continues the team to its end, each task run once', async () => {
    const first = countingModel(40);
    const one = createRuntime({ model: first.model, store: slowTeamWrites(file.open(), 'sprint', 15), teams: [team], owner: 'one' });
    file.track(one);
    const client = one.forTeam(team, 'sprint');
    await client.run(TASKS);
    // Closed in the same turn as the completion of task a is seen: the team's writes of that
    // change (and of the assignments it leads to) are still to come.
    for await (const event of client.events()) {
      if (event.metadata.type === 'team-task-completed' && event.metadata.taskId === 'a') break;
    }
    await one.close();

    const second = countingModel(5);
    const two = createRuntime({ model: second.model, store: file.open(), teams: [team], owner: 'two' });
    file.track(two);
    const again = two.forTeam(team, 'sprint');
    const summary = await Promise.race([again.wait(), sleep(10_000).then(() => undefined)]);
    expect(summary?.status, 'wait() settles with the end of the run').toBe('completed');
    expect(summary?.counts).toMatchObject({ total: 4, completed: 4 });
    // One attempt per task, each its own swarm, completed once.
    expect(again.board().tasks.map((t) => [t.id, t.attempts])).toEqual(TASKS.map((t) => [t.id, 1]));
    const swarms = (await two.list()).filter((s) => s.definitionId === 'worker');
    expect(swarms.map((s) => [s.swarmId, s.status]).sort()).toEqual(TASKS.map((t) => [`sprint:${t.id}:1`, 'completed']));
    // Each task's model call answered once, in one runtime or the other (a call cut by the close is re-issued, never answered twice).
    const answers = Object.fromEntries(TASKS.map((t) => [t.id, (first.answered.get(t.id) ?? 0) + (second.answered.get(t.id) ?? 0)]));
    expect(answers).toEqual({ a: 1, b: 1, c: 1, d: 1 });
  });
});

/** A model whose calls never answer (until aborted): a task under way stays under way. */
const hanging = scriptedModel((req) => new Promise((_, reject) => req.signal.addEventListener('abort', () => reject(req.signal.reason), { once: true })));

/**
 * Leaves team `teamId` stored `running` by a closed runtime: task `hangs` under way (its
 * attempt's swarm started), task `after` waiting on it.
 */
async function leaveRunning(teamId: string): Promise<void> {
  const store = file.open();
  const one = createRuntime({ model: hanging, store, teams: [team], owner: 'one' });
  await one.forTeam(team, teamId).run([
    { id: 'hangs', subject: 'hangs' },
    { id: 'after', subject: 'after', dependencies: ['hangs'] },
  ]);
  await until(
    `${teamId} stored with its attempt under way`,
    async () => [(await store.load(teamId))?.status, (await store.load(`${teamId}:hangs:1`))?.status],
    ([teamStatus, attempt]) => teamStatus === 'running' && attempt === 'running',
  );
  await one.close();
  await store.close();
}

const TAMPERED = [
  { problem: 'no leader snapshot', sql: `json_set(snapshot, '$.leader', json('null'))`, reason: /has no stored leader snapshot/ },
  // What a runtime closed right after a change wrote before the fix of the graceful close.
  { problem: 'a stopped leader', sql: `json_set(snapshot, '$.leader.status', 'stopped')`, reason: /stored leader is stopped, not active/ },
  {
    problem: 'a leader in a state its machine does not have',
    sql: `json_set(snapshot, '$.leader.value', 'nowhere')`,
    reason: /stored leader cannot be restored \(.*nowhere/,
  },
];

describe('a restored team whose leader cannot run', () => {
  it.each(TAMPERED)('with $problem is failed with the reason, in its record too; wait() resolves, resume() is refused', async ({ sql, reason }) => {
    await leaveRunning('broken');
    tamper(file.path, `UPDATE swarms SET snapshot = ${sql} WHERE swarm_id = ?`, 'broken');

    const store = file.open();
    const two = createRuntime({ model: scriptedModel(() => ({ text: 'built' })), store, teams: [team], owner: 'two' });
    file.track(two);
    const client = two.forTeam(team, 'broken');
    const summary = await Promise.race([client.wait(), sleep(5_000).then(() => undefined)]);
    expect(summary?.status, 'wait() settles').toBe('failed');
    expect(summary?.reason).toMatch(/^team broken cannot continue its run: /);
    expect(summary?.reason).toMatch(reason);
    expect(client.status).toBe('failed');
    await expect(client.resume()).rejects.toSatisfy(
      (e) => e instanceof TeamError && e.code === 'wrong-team-state' && /is failed \(team broken cannot continue/.test(e.message),
    );

    // Every reader sees it: the stored record, and its events.
    await until(
      'the failure stored',
      () => store.load('broken'),
      (r) => r?.status === 'failed',
    );
    const record = (await store.load('broken'))!;
    expect(record.result).toEqual({ status: 'failed', reason: summary!.reason });
    const events = await collect(client.events());
    expect(events.at(-1)?.metadata).toEqual({ type: 'team-ended', status: 'failed', reason: summary!.reason });
    // What the lost run held is back on the board, and its attempt is owed a stop (kept in the
    // record until it is delivered), so nobody finishes it later.
    expect(client.board().tasks.map((t) => [t.id, t.status, t.attempts])).toEqual([
      ['hangs', 'pending', 1],
      ['after', 'pending', 0],
    ]);
    expect((record.snapshot as { pendingStops?: unknown[] }).pendingStops).toEqual([
      { swarmId: 'broken:hangs:1', definitionId: 'worker', taskId: 'hangs', attempt: 1, reason: summary!.reason },
    ]);

    // The team is not wedged: a new run takes the board on.
    await client.run([{ id: 'more', subject: 'more' }]);
    expect((await client.wait()).status).toBe('completed');
    expect(client.board().tasks.map((t) => [t.id, t.status, t.attempts])).toEqual([
      ['hangs', 'completed', 2],
      ['after', 'completed', 1],
      ['more', 'completed', 1],
    ]);
  });

  it('is failed by the adoption scan of a started runtime, without any client', async () => {
    await leaveRunning('adopted');
    tamper(file.path, `UPDATE swarms SET snapshot = json_set(snapshot, '$.leader.status', 'stopped') WHERE swarm_id = ?`, 'adopted');
    const store = file.open();
    const two = createRuntime({ model: hanging, store, teams: [team], owner: 'two' });
    file.track(two);
    await two.start();
    const record = await until(
      'the adopted team failed in the store',
      () => store.load('adopted'),
      (r) => r?.status === 'failed',
    );
    expect(record?.result).toMatchObject({ status: 'failed', reason: expect.stringMatching(/^team adopted cannot continue its run: .*stopped, not active/) });
    // Given up once written: no runtime holds a finished team.
    await until(
      'the lease given up',
      async () => (await store.list()).find((r) => r.swarmId === 'adopted'),
      (r) => r !== undefined && r.lease === undefined,
    );
    // The attempt the lost run left under way (adopted here as a swarm) is stopped.
    await until(
      'the abandoned attempt stopped',
      () => store.load('adopted:hangs:1'),
      (r) => r?.status === 'stopped',
    );
  });
});
