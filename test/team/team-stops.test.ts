/**
 * The stops a team owes the attempts it gave up (`src/team/host-stops.ts`), on a port whose
 * answers the test scripts: sent again with backoff until the attempt's stored status is final,
 * dropped then; an attempt that completed all the same reported once. The whole path through a
 * runtime (no worker process up, then one) is in test/distribution/distributed-local.test.ts.
 */
import { describe, expect, it } from 'vitest';
import { SwarmError } from '../../src/errors.js';
import type { SwarmResult } from '../../src/store/result.js';
import { type PendingStop, PendingStops } from '../../src/team/host-stops.js';
import { until } from '../support/wait.js';
import { sleep } from '../support/sleep.js';

const stop = (attempt: number): PendingStop => ({ swarmId: `t:b:${attempt}`, definitionId: 'builder', taskId: 'b', attempt, reason: 'released' });
const running: SwarmResult = { status: 'running', currentTurn: 1, maxTurns: 10 };

describe('stops owed to released attempts', () => {
  it('sends a stop nobody took again, with backoff, until the attempt is stopped; then drops it', async () => {
    const stored = new Map<string, SwarmResult>([['t:b:1', running]]);
    const sent: number[] = [];
    const changes: PendingStop[][] = [];
    const stops: PendingStops = new PendingStops({
      port: {
        stored: async (id) => stored.get(id),
        stop: async (id, reason) => {
          sent.push(Date.now());
          // Nobody answers for the first two; the third is applied.
          if (sent.length < 3) throw new SwarmError('no runtime hosting "builder" answered', 'not-live');
          stored.set(id, { status: 'stopped', reason });
        },
      },
      retryMs: 20,
      changed: () => changes.push(stops.list()),
      completedAnyway: () => expect.fail('a stopped attempt is not reported'),
    });
    stops.add(stop(1));
    stops.add(stop(1));
    expect(stops.list()).toEqual([stop(1)]);
    await until('no stop owed', () => stops.list().length === 0, { timeout: 2_000 });
    expect(sent).toHaveLength(3);
    // Backoff: the second wait is about twice the first.
    expect(sent[2]! - sent[1]!).toBeGreaterThanOrEqual(2 * 20 - 5);
    expect(changes).toEqual([[stop(1)], []]);
    stops.close();
  });

  it('reports an attempt that completed anyway once, and sends it no stop', async () => {
    const reported: PendingStop[] = [];
    let stopsSent = 0;
    const stops = new PendingStops({
      port: {
        stored: async () => ({ status: 'completed', result: 'built twice' }),
        stop: async () => void stopsSent++,
      },
      retryMs: 10,
      changed: () => undefined,
      completedAnyway: (s) => reported.push(s),
    });
    stops.add(stop(2));
    await until('no stop owed', () => stops.list().length === 0, { timeout: 2_000 });
    await sleep(50);
    expect(reported).toEqual([stop(2)]);
    expect(stopsSent).toBe(0);
    stops.close();
  });

  it('keeps what is owed when closed, and a restored set goes on from it', async () => {
    const stored = new Map<string, SwarmResult>([['t:b:3', running]]);
    const port = {
      stored: async (id: string) => stored.get(id),
      stop: async () => {
        throw new SwarmError('nobody', 'not-live');
      },
    };
    const first = new PendingStops({ port, retryMs: 10, changed: () => undefined, completedAnyway: () => undefined });
    first.add(stop(3));
    first.close();
    const owed = first.list();
    expect(owed).toEqual([stop(3)]);
    stored.set('t:b:3', { status: 'stopped', reason: 'stopped by the process that took it over' });
    const next = new PendingStops({ port, retryMs: 10, changed: () => undefined, completedAnyway: () => undefined });
    next.restore(owed);
    await until('no stop owed', () => next.list().length === 0, { timeout: 2_000 });
    next.close();
  });
});
