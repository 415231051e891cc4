/**
 * `runtime.drain` and stopping a swarm by id from another runtime, on one SQLite file shared by
 * two runtimes (as two processes would share it, without NATS): new work refused with a clear
 * error (and 503 over REST); a call in flight finishes and commits, or is abandoned at the
 * deadline and made again by the adopter under the same idempotency key; the other runtime
 * adopts at once; a stop from the other runtime reaches a holder busy in a slow tool call and
 * aborts that call at once.
 */
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { defineSwarm, defineTeam, handoff, type Runtime, RuntimeDrainingError, type SwarmError, scriptedModel, tool } from '../../src/index.js';
import { serve } from '../../src/server/index.js';
import { request } from '../support/server-clients.js';
import { sqliteFilePerTest } from '../support/sqlite-file.js';
import { until } from '../support/wait.js';

const file = sqliteFilePerTest('xswarm-drain-');

/** A chore swarm whose `effect` tool takes `toolMs` (of its attempt: 1, 2, …), with what each runtime's tool saw. */
function chore(toolMs: number | ((attempt: number) => number)) {
  const seen = { executions: [] as string[], aborted: [] as string[], effects: new Set<string>() };
  const effect = tool({
    name: 'effect',
    description: 'The side effect of a chore (once per idempotency key).',
    parameters: z.object({}),
    execute: (_args, { idempotencyKey, signal }) =>
      new Promise<string>((resolve, reject) => {
        seen.executions.push(idempotencyKey);
        const ms = typeof toolMs === 'number' ? toolMs : toolMs(seen.executions.length);
        const timer = setTimeout(() => {
          seen.effects.add(idempotencyKey);
          resolve('done');
        }, ms);
        signal.addEventListener('abort', () => {
          clearTimeout(timer);
          seen.aborted.push(idempotencyKey);
          reject(signal.reason);
        });
      }),
  });
  const swarm = defineSwarm({ id: 'chore', instructions: 'Do the chore.', tools: [effect] });
  const modelCalls: string[] = [];
  const model = (who: string) =>
    scriptedModel((req) => {
      const done = req.messages.some((m) => m.role === 'tool');
      modelCalls.push(`${who}:${done ? 'after' : 'before'}`);
      return done ? { text: 'Chore done.' } : { toolCalls: [{ id: 'e1', name: 'effect', arguments: '{}' }] };
    });
  return { swarm, seen, modelCalls, model };
}

/** Two runtimes on the test's file, both started; leases far longer than the test. */
async function twoRuntimes(c: ReturnType<typeof chore>): Promise<[Runtime, Runtime]> {
  const a = file.runtime({ swarms: [c.swarm], model: c.model('a'), store: file.open(), leaseMs: 60_000 });
  const b = file.runtime({ swarms: [c.swarm], model: c.model('b'), store: file.open(), leaseMs: 60_000 });
  await a.start();
  await b.start();
  return [a, b];
}

describe('drain', () => {
  it('refuses new work at once with a RuntimeDrainingError (code draining, REST 503), and resolves once parked', async () => {
    const c = chore(300);
    const [a] = await twoRuntimes(c);
    const server = await serve(a, { port: 0 });
    file.track(server);
    await a.forSwarm(c.swarm, 's1').run('Do it');
    await until('the tool to be at work', () => c.seen.executions.length === 1);

    const draining = a.drain({ deadlineMs: 5_000 });
    const refused = await a
      .forSwarm(c.swarm, 's2')
      .run('Do it')
      .catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(RuntimeDrainingError);
    expect((refused as SwarmError).code).toBe('draining');
    expect((refused as Error).message).toMatch(/draining/);
    await expect(a.start()).rejects.toBeInstanceOf(RuntimeDrainingError);
    const rest = await request(server.url, 'POST', '/swarms/chore', { input: 'Do it', swarmId: 's3' });
    expect(rest.status).toBe(503);
    expect(a.drain()).toBe(draining);
    await draining;
    await expect(file.runtime({ swarms: [c.swarm], model: c.model('c') }).drain({ deadlineMs: -1 })).rejects.toThrow(
      'drain deadlineMs must be a number of ms from 0 up, got -1',
    );
  });

  it('lets the call in flight finish and commit, then the other runtime adopts at once and makes only the next call', async () => {
    const c = chore(300);
    const [a, b] = await twoRuntimes(c);
    await a.forSwarm(c.swarm, 's1').run('Do it');
    await until('the tool to be at work', () => c.seen.executions.length === 1);

    const started = Date.now();
    await a.drain({ deadlineMs: 5_000 });
    const drainMs = Date.now() - started;
    const result = await until(
      'b to finish it',
      () => b.forSwarm(c.swarm, 's1').getResult(),
      (r) => r.status === 'completed',
      { timeout: 3_000 },
    );
    const adoptedMs = Date.now() - started - drainMs;
    console.log(`[drain] parked and closed in ${drainMs} ms; the other runtime finished the swarm ${adoptedMs} ms later (lease: 60 s)`);
    expect(result).toMatchObject({ status: 'completed', result: 'Chore done.' });
    // The tool's step was committed by a: b made the model call after it, and no tool call.
    expect(c.seen.executions).toHaveLength(1);
    expect(c.seen.aborted).toEqual([]);
    expect(c.modelCalls).toEqual(['a:before', 'b:after']);
    expect(drainMs).toBeLessThan(1_500);
    expect(adoptedMs).toBeLessThan(2_000);
  });

  it('abandons a call still in flight at the deadline; the adopter makes it again under the same idempotency key', async () => {
    const c = chore((attempt) => (attempt === 1 ? 30_000 : 50));
    const [a, b] = await twoRuntimes(c);
    await a.forSwarm(c.swarm, 's1').run('Do it');
    await until('the tool to be at work', () => c.seen.executions.length === 1);

    const started = Date.now();
    await a.drain({ deadlineMs: 600 });
    expect(Date.now() - started).toBeLessThan(900);
    expect(c.seen.aborted).toHaveLength(1);
    const result = await until(
      'b to finish it',
      () => b.forSwarm(c.swarm, 's1').getResult(),
      (r) => r.status === 'completed',
      { timeout: 3_000 },
    );
    expect(result.status).toBe('completed');
    // Made twice, under one key: its effect once.
    expect(c.seen.executions).toHaveLength(2);
    expect(new Set(c.seen.executions).size).toBe(1);
    expect(c.seen.effects.size).toBe(1);
  });
});

describe('drain with child swarms and waiting swarms', () => {
  it('parks a parent awaiting its child, the child in a tool call and a swarm waiting for a human; the other runtime finishes them, the tool once', async () => {
    const c = chore(300);
    const parent = defineSwarm({ id: 'lead', instructions: 'Delegate.', handoffs: [handoff.toSwarm(c.swarm)] });
    const asking = defineSwarm({ id: 'asking', instructions: 'Ask which day.' });
    const model = (who: string) =>
      scriptedModel((req) => {
        const done = req.messages.some((m) => m.role === 'tool');
        if (req.agentId !== 'asking') c.modelCalls.push(`${who}:${req.agentId}:${done ? 'after' : 'before'}`);
        if (req.agentId === 'asking') {
          const day = req.messages.findLast((m) => m.role === 'tool')?.content;
          return day ? { text: `Booked ${day}.` } : { toolCalls: [{ id: 'q', name: 'pause', arguments: '{"reason":"Which day?"}' }] };
        }
        if (req.agentId === 'lead') return done ? { text: 'Delegated.' } : { toolCalls: [{ id: 'h1', name: 'handoff_to_chore', arguments: '{"request":"Do it"}' }] };
        return done ? { text: 'Chore done.' } : { toolCalls: [{ id: 'e1', name: 'effect', arguments: '{}' }] };
      });
    const a = file.runtime({ swarms: [parent, c.swarm, asking], model: model('a'), store: file.open(), leaseMs: 60_000 });
    const b = file.runtime({ swarms: [parent, c.swarm, asking], model: model('b'), store: file.open(), leaseMs: 60_000 });
    await a.start();
    await b.start();
    // Another swarm waits for a human meanwhile: it is parked already.
    await a.forSwarm(asking, 'q1').run('Book a day');
    expect((await a.forSwarm(asking, 'q1').wait()).status).toBe('paused');
    await a.forSwarm(parent, 'p1').run('Delegate');
    await until('the child tool to be at work', () => c.seen.executions.length === 1);

    await a.drain({ deadlineMs: 5_000 });
    expect(a.stats()).toEqual({ live: 0, passivated: 0 });
    expect(await b.forSwarm(parent, 'p1').wait()).toEqual({ status: 'completed', result: 'Delegated.' });
    expect(c.seen.executions).toHaveLength(1);
    expect(c.modelCalls).toEqual(['a:lead:before', 'a:chore:before', 'b:chore:after', 'b:lead:after']);
    // The waiting swarm was adopted too: the human answers it there.
    await until(
      'b to hold q1',
      async () =>
        await b
          .forSwarm(asking, 'q1')
          .resume('Sunday')
          .then(() => true)
          .catch(() => false),
    );
    expect(await b.forSwarm(asking, 'q1').wait()).toEqual({ status: 'completed', result: 'Booked Sunday.' });
  });
});

describe('stop by id from another runtime on the same SQLite file', () => {
  it('reaches the holder busy in a slow tool call, and aborts that call at once', async () => {
    const c = chore(30_000);
    const [a, b] = await twoRuntimes(c);
    await a.forSwarm(c.swarm, 's1').run('Do it');
    await until('the tool to be at work', () => c.seen.executions.length === 1);

    const started = Date.now();
    await b.forSwarm(c.swarm, 's1').stop('stopped by ops');
    const stopMs = Date.now() - started;
    console.log(`[stop via the store] stopped in ${stopMs} ms`);
    expect(stopMs).toBeLessThan(2_000);
    expect(c.seen.aborted).toHaveLength(1);
    expect(await b.forSwarm(c.swarm, 's1').getResult()).toMatchObject({ status: 'stopped', reason: 'stopped by ops' });
    expect(a.stats().live).toBe(0);
  });
});

describe('a team while its runtime drains', () => {
  it('refuses a new team run, holds the next attempt unstarted, and another runtime finishes the team, each task once', async () => {
    const c = chore(300);
    const team = defineTeam({ id: 'chores', workers: [{ type: 'any', swarm: c.swarm, count: 1 }] });
    const tasks = ['a', 'b', 'c'].map((id) => ({ id, subject: `chore ${id}` }));
    // Short leases: a team is adopted at the other runtime's scan (every half lease).
    const a = file.runtime({ teams: [team], model: c.model('a'), store: file.open(), leaseMs: 2_000 });
    await a.start();
    await a.forTeam(team).run(tasks);
    await until('the first chore at work', () => c.seen.executions.length === 1);
    const draining = a.drain({ deadlineMs: 5_000 });
    await expect(a.forTeam(team, 'other').run(tasks)).rejects.toBeInstanceOf(RuntimeDrainingError);
    await draining;
    // The tool call in flight finished and committed; the model call after it, and the next
    // attempts, were held here.
    expect(c.seen.effects.size).toBe(1);
    expect(c.modelCalls.filter((m) => m.startsWith('a:'))).toEqual(['a:before']);

    const b = file.runtime({ teams: [team], model: c.model('b'), store: file.open(), leaseMs: 2_000 });
    await b.start();
    const summary = await b.forTeam(team).wait();
    expect(summary.status).toBe('completed');
    expect(summary.counts.completed).toBe(3);
    expect(c.seen.effects.size).toBe(3);
    expect(c.seen.executions.length).toBe(3);
  });
});
