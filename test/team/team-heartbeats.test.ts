/**
 * A worker's heartbeat is its task swarm's activity, not its durability: on a store whose
 * commits are slow (each one acknowledged later than `workerTimeoutMs`, as a full fsync on a
 * loaded machine or a group commit can be), a working worker is never declared silent, so no
 * attempt is released and redone. A worker that really stalls (its model hangs, nothing numbered
 * and nothing committing) is still declared silent and respawned on that same store. And a
 * worker found silent is looked at again before it is reported: one whose attempt's swarm has
 * ended (its wait held up, as by a read an outage left to run out its timeout) is not.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { createRuntime, defineSwarm, defineTeam, memoryStore, type Runtime, scriptedModel, type TeamEvent, type TeamFact } from '../../src/index.js';
import { TeamHost } from '../../src/team/host.js';
import type { TeamRuntimePort } from '../../src/team/host-types.js';
import type { SwarmResult } from '../../src/store/result.js';
import { recordingStore } from '../support/recording-store.js';
import { collect } from '../support/script.js';
import { sleep } from '../support/sleep.js';
import { totalsOf } from '../../src/usage/report.js';

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

  it('a worker whose attempt has ended is not declared silent while its wait is held up', async () => {
    // The attempt's swarm runs elsewhere and completes at once; its wait here answers only
    // after six worker timeouts, and no heartbeat or event tells anything meanwhile.
    let result: SwarmResult | undefined;
    const looked: string[] = [];
    const port: TeamRuntimePort = {
      startSwarm: async () => {
        result = { status: 'completed', result: 'built' };
      },
      stored: async (id) => (looked.push(id), result),
      wait: () => new Promise((resolve) => setTimeout(() => resolve(result!), 6 * WORKER_TIMEOUT_MS)),
      stop: async () => {},
      subscribe: () => () => {},
      follow: () => {},
      activity: () => undefined,
      reachable: () => true,
      usage: async () => totalsOf({}, undefined),
    };
    const team = defineTeam({ id: 'held', workers: [{ type: 'dev', swarm: 'elsewhere' }], limits: { workerTimeoutMs: WORKER_TIMEOUT_MS } });
    const host = new TeamHost({ definition: team, teamId: 'held', port });
    try {
      host.run([{ id: 'x', subject: 'x' }]);
      const summary = await host.wait();
      expect(summary.status).toBe('completed');
      expect(summary.metrics.respawns).toBe(0);
      expect(host.board.tasks().map((t) => [t.id, t.status, t.attempts])).toEqual([['x', 'completed', 1]]);
      // Found silent, looked up by its key (beyond the attempt's own look-up before its start), kept.
      expect(looked.filter((id) => id === 'held:x:1').length).toBeGreaterThan(1);
    } finally {
      host.close();
    }
  });
});
