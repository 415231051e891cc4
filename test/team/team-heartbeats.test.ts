/**
 * A worker's heartbeat is its task swarm's activity, not its durability: on a store whose
 * commits are slow (each one acknowledged later than `workerTimeoutMs`, as a full fsync on a
 * loaded machine or a group commit can be), a working worker is never declared silent, so no
 * attempt is released and redone. A worker that really stalls (its model hangs, nothing numbered
 * and nothing committing) is still declared silent and respawned on that same store.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { createRuntime, defineSwarm, defineTeam, memoryStore, type Runtime, scriptedModel, type TeamEvent, type TeamFact } from '../../src/index.js';
import { recordingStore } from '../support/recording-store.js';
import { collect } from '../support/script.js';
import { sleep } from '../support/sleep.js';

/** Every commit is acknowledged this long after it is issued: longer than the worker timeout. */
const COMMIT_MS = 400;
const WORKER_TIMEOUT_MS = 150;

let runtime: Runtime | undefined;
afterEach(async () => {
  await runtime?.close();
  runtime = undefined;
});

const builder = defineSwarm({ id: 'builder', instructions: 'Build the task.' });

/** A model answering each task after 10 ms, but hanging (until aborted) on the tasks `hangs` names in their first attempt. */
function model(hangs: (swarmId: string) => boolean = () => false) {
  return scriptedModel(async (req) => {
    await sleep(hangs(req.swarmId) ? 60_000 : 10, req.signal);
    return { text: `built ${req.swarmId}` };
  });
}

const ofType = (events: readonly TeamEvent[], ...types: TeamFact['type'][]) => events.map((e) => e.metadata).filter((f) => types.includes(f.type));

describe('team heartbeats on a slow store', () => {
  it('a working worker whose every commit takes longer than workerTimeoutMs is not declared silent', async () => {
    const slow = recordingStore(memoryStore(), { delayMs: COMMIT_MS });
    const team = defineTeam({ id: 'patient', workers: [{ type: 'dev', swarm: builder, count: 2 }], limits: { workerTimeoutMs: WORKER_TIMEOUT_MS } });
    runtime = createRuntime({ model: model(), teams: [team], store: slow.store });
    const client = runtime.forTeam(team);
    await client.run([
      { id: 'a', subject: 'a' },
      { id: 'b', subject: 'b' },
      { id: 'c', subject: 'c', dependencies: ['a'] },
    ]);
    const summary = await client.wait();
    expect(summary.status).toBe('completed');
    const events = await collect(client.events());
    expect(ofType(events, 'team-worker-respawned', 'team-task-released', 'team-task-failed')).toEqual([]);
    expect(client.board().tasks.map((t) => [t.id, t.attempts])).toEqual([
      ['a', 1],
      ['b', 1],
      ['c', 1],
    ]);
    expect(summary.metrics.respawns).toBe(0);
    // The commits were as slow as meant: each task swarm took several of them.
    const commits = slow.commits.filter((c) => c.swarmId === 'patient:a:1').length;
    expect(commits).toBeGreaterThanOrEqual(2);
    expect(summary.metrics.durationMs).toBeGreaterThan(2 * COMMIT_MS);
  });

  it('a worker whose model hangs is still declared silent on that store, and respawned', async () => {
    const slow = recordingStore(memoryStore(), { delayMs: COMMIT_MS });
    const team = defineTeam({ id: 'stalls', workers: [{ type: 'dev', swarm: builder }], limits: { workerTimeoutMs: WORKER_TIMEOUT_MS } });
    runtime = createRuntime({ model: model((id) => id === 'stalls:slow:1'), teams: [team], store: slow.store });
    const client = runtime.forTeam(team);
    await client.run([
      { id: 'slow', subject: 'slow' },
      { id: 'after', subject: 'after', dependencies: ['slow'] },
    ]);
    expect((await client.wait()).status).toBe('completed');
    const events = await collect(client.events());
    expect(ofType(events, 'team-worker-respawned')).toEqual([{ type: 'team-worker-respawned', workerId: 'dev-1', workerType: 'dev', respawns: 1 }]);
    expect(ofType(events, 'team-task-released')).toMatchObject([{ taskId: 'slow', attempt: 1, reason: 'worker silent' }]);
    expect(client.board().tasks.map((t) => [t.id, t.attempts])).toEqual([
      ['slow', 2],
      ['after', 1],
    ]);
  });
});
