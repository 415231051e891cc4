/**
 * One task attempt (`src/team/host-task.ts`) on a port whose answers the test scripts: the
 * store or the transport unreachable is waited out (the attempt never fails for it, and its
 * worker counts as waiting, not silent); any other error is checked against the attempt's key
 * before it fails the attempt (a completed swarm is its success, a running one is waited for,
 * only a swarm that does not exist lets the error fail it); an aborted attempt stops retrying.
 * The same through real NATS outages: test/team/team-outage.test.ts.
 */
import { createActor, toPromise } from 'xstate';
import { describe, expect, it } from 'vitest';
import { SwarmError } from '../../src/errors.js';
import { defineTeam } from '../../src/define/team.js';
import { createBoard } from '../../src/team/board.js';
import { isOutage, taskRunner } from '../../src/team/host-task.js';
import type { TeamRuntimePort } from '../../src/team/host-types.js';
import type { PendingStop } from '../../src/team/host-stops.js';
import type { SwarmResult } from '../../src/store/result.js';
import { TransportError } from '../../src/transport/types.js';
import { until } from '../support/wait.js';
import { totalsOf } from '../../src/usage/report.js';

const SWARM = 't:x:1';
const running: SwarmResult = { status: 'running', currentTurn: 1, maxTurns: 10 };
const completed: SwarmResult = { status: 'completed', result: 'built x' };
const down = () => new SwarmError('The JetStream store is unavailable: timeout', 'unavailable');

/** A port whose answers are the given functions; every call is logged. */
function port(answers: Partial<Pick<TeamRuntimePort, 'stored' | 'startSwarm' | 'wait'>>, reachable = () => true) {
  const calls: string[] = [];
  const p: TeamRuntimePort = {
    stored: async (id) => (calls.push('stored'), answers.stored ? answers.stored(id) : undefined),
    startSwarm: async (d, id, input) => (calls.push('start'), answers.startSwarm?.(d, id, input)),
    wait: async (id, signal) => (calls.push('wait'), answers.wait ? answers.wait(id, signal) : completed),
    stop: async () => void calls.push('stop'),
    subscribe: () => () => {},
    follow: () => {},
    activity: () => undefined,
    reachable,
    usage: async () => totalsOf({}, undefined),
  };
  return { port: p, calls };
}

/** Runs one attempt of task `x` (claimed by `w1`) on `p`; resolves with its output or rejects with its error. */
function attempt(p: TeamRuntimePort, signal?: AbortSignal) {
  const board = createBoard({ id: 't' });
  board.create([{ id: 'x', subject: 'x' }]);
  board.claim('w1', 'x');
  const team = defineTeam({ id: 't', workers: [{ type: 'dev', swarm: 'builder' }] });
  const waiting: boolean[] = [];
  const released: PendingStop[] = [];
  const runTask = taskRunner({
    port: p,
    board,
    worker: () => team.workers[0]!,
    clock: Date.now,
    running: () => {},
    progressed: () => {},
    waiting: (swarmId, on) => {
      expect(swarmId).toBe(SWARM);
      waiting.push(on);
    },
    closing: () => false,
    released: (stop) => released.push(stop),
    retryMs: 5,
  });
  const actor = createActor(runTask, {
    input: { teamId: 't', workerId: 'w1', type: 'dev', specialty: 'dev', task: { taskId: 'x', subject: 'x', description: '' }, attemptKey: SWARM },
  });
  signal?.addEventListener('abort', () => actor.stop(), { once: true });
  actor.start();
  return { done: toPromise(actor), waiting, released };
}

describe('a task attempt', () => {
  it('tells an outage from other errors', () => {
    expect(isOutage(down())).toBe(true);
    expect(isOutage(new TransportError('NATS is disconnected', 'unavailable'))).toBe(true);
    expect(isOutage(new TransportError('no answer', 'timeout'))).toBe(true);
    expect(isOutage(Object.assign(new Error('timeout'), { name: 'TimeoutError' }))).toBe(true);
    expect(isOutage(new TransportError('nobody listens', 'no-responders'))).toBe(false);
    expect(isOutage(Object.assign(new Error('closed'), { name: 'ClosedConnectionError' }))).toBe(false);
    expect(isOutage(new SwarmError('No runtime hosts "builder"', 'unknown-definition'))).toBe(false);
    expect(isOutage(new Error('boom'))).toBe(false);
  });

  it('waits out the store unavailable at its look-up, its start and its wait, and completes under its first key', async () => {
    const fails = { stored: 2, start: 2, wait: 3 };
    const { port: p, calls } = port({
      stored: async () => {
        if (fails.stored-- > 0) throw down();
        return undefined;
      },
      startSwarm: async () => {
        if (fails.start-- > 0) throw new TransportError('NATS is disconnected', 'unavailable');
      },
      wait: async () => {
        if (fails.wait-- > 0) throw down();
        return completed;
      },
    });
    const run = attempt(p);
    expect(await run.done).toMatchObject({ result: 'built x' });
    expect(calls.filter((c) => c === 'wait')).toHaveLength(4);
    expect(run.released).toEqual([]);
    // Waiting on the runtime (look-ups, starts, pauses through the outage) and back, in pairs.
    expect(run.waiting.length).toBeGreaterThan(0);
    expect(run.waiting.filter((w) => w).length).toBe(run.waiting.filter((w) => !w).length);
  });

  it('checks any other error against its key: a swarm that completed is its success', async () => {
    let looks = 0;
    const { port: p } = port({
      stored: async () => (looks++ === 0 ? undefined : completed),
      wait: async () => {
        throw new SwarmError(`Unknown swarm "${SWARM}"`, 'unknown-swarm');
      },
    });
    expect(await attempt(p).done).toMatchObject({ result: 'built x' });
  });

  it('waits for a swarm its key finds running, whatever its wait throws, until it ends', async () => {
    let state: SwarmResult = running;
    let waits = 0;
    const { port: p } = port({
      stored: async () => (waits === 0 ? undefined : state),
      wait: async () => {
        waits++;
        if (waits === 5) state = { status: 'failed', reason: 'the model broke' };
        throw new SwarmError('Swarm "t:x:1" is not live here', 'not-live');
      },
    });
    // The swarm's own outcome fails the attempt, not the errors of its wait.
    await expect(attempt(p).done).rejects.toThrow('task swarm t:x:1 failed: the model broke');
    expect(waits).toBe(5);
  });

  it('fails with the error when its key finds no swarm (never started)', async () => {
    const { port: p, calls } = port({
      startSwarm: async () => {
        throw new SwarmError('No runtime hosts "builder" (asked for 10 s)', 'unknown-definition');
      },
    });
    await expect(attempt(p).done).rejects.toThrow('No runtime hosts "builder"');
    expect(calls).toEqual(['stored', 'start', 'stored']);
  });

  it('takes an id in use at its start for its swarm (an earlier start of the same attempt)', async () => {
    const { port: p, calls } = port({
      startSwarm: async () => {
        throw new SwarmError(`Swarm id "${SWARM}" is already in use`, 'id-in-use');
      },
    });
    expect(await attempt(p).done).toMatchObject({ result: 'built x' });
    expect(calls).toEqual(['stored', 'start', 'wait']);
  });

  it('retries through an outage as long as it lasts, and ends (released) when it is given up', async () => {
    const { port: p, calls } = port({ stored: async () => Promise.reject(down()) }, () => false);
    const giveUp = new AbortController();
    const run = attempt(p, giveUp.signal);
    await until('a few tries', () => calls.length >= 5);
    giveUp.abort();
    await run.done.catch(() => undefined);
    const tries = calls.length;
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(calls.length).toBe(tries);
    expect(run.released).toMatchObject([{ swarmId: SWARM, taskId: 'x', attempt: 1 }]);
  });
});
