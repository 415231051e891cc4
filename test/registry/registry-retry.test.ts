/**
 * The registry's dispatched tasks against real A2A peers (our own `serve()` on 127.0.0.1):
 * retry on another agent when the chosen one is broken, and questions (`input-required`)
 * answered with `answer()`.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createAgentRegistry, type AgentRegistry } from '../../src/registry/index.js';
import { TeamError } from '../../src/errors.js';
import { type Peer, peersClosedBy, tickingClock } from '../support/registry-peers.js';

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c().catch(() => undefined);
});

const peer = peersClosedBy(cleanups);

async function translators(): Promise<{ a: Peer; b: Peer; r: AgentRegistry }> {
  const a = await peer('A', 'translator-a');
  const b = await peer('B', 'translator-b');
  const r = createAgentRegistry({ healthIntervalMs: 0, timeoutMs: 2000, now: tickingClock() });
  cleanups.push(() => r.close());
  await r.register(a.cardUrl);
  await r.register(b.cardUrl);
  return { a, b, r };
}

describe('dispatch: retry on another agent', () => {
  it('a broken agent is left for the next best; the history records each agent tried', async () => {
    const { a, b, r } = await translators();
    await a.stop();
    const task = r.dispatch({ id: 't1', skill: 'translate', message: 'hola' });
    const done = await r.wait(task.id);
    expect(done).toMatchObject({ state: 'completed', agentId: 'translator-b', result: 'B did: hola' });
    expect(done.history.map((h) => [h.state, h.agentId])).toEqual([
      ['submitted', undefined],
      ['working', 'translator-a'],
      ['submitted', undefined],
      ['working', 'translator-b'],
      ['completed', undefined],
    ]);
    expect(done.history[2]!.error).toMatch(/^translator-a: Could not reach the remote agent at http:\/\/127\.0\.0\.1:\d+\/a2a\/translator-a/);
    expect(r.agent('translator-a')!.health).toBe('unhealthy');
    expect(b.model.seen).toEqual(['hola']);
  });

  it('every agent broken: the task fails naming each; a healthy agent’s failure and a named agent are not retried', async () => {
    const { a, b, r } = await translators();
    await a.stop();
    await b.stop();
    const both = await r.wait(r.dispatch({ skill: 'translate', message: 'hola' }).id);
    expect(both.state).toBe('failed');
    expect(both.error).toMatch(/^Every agent tried failed: translator-a: Could not reach .*; translator-b: Could not reach /);
    expect(both.history.filter((h) => h.state === 'working').map((h) => h.agentId)).toEqual(['translator-a', 'translator-b']);

    await a.restart();
    await b.restart();
    await r.checkHealth();
    // A healthy agent failing gave its answer: B is not asked.
    const answered = await r.wait(r.dispatch({ skill: 'translate', message: 'FAIL this' }).id);
    expect(answered).toMatchObject({ state: 'failed', agentId: 'translator-a', error: 'The remote agent "translator-a" failed: A cannot do "FAIL this"' });
    // A named agent is the only one the task may go to.
    await a.stop();
    const named = await r.wait(r.dispatch({ agent: 'translator-a', message: 'only A' }).id);
    expect(named).toMatchObject({ state: 'failed', agentId: 'translator-a' });
    expect(named.error).toMatch(/^Could not reach the remote agent/);
    expect(b.model.seen).toEqual([]);
  });
});

describe('dispatch: input-required', () => {
  it('a question puts the task in input-required; answer() sends the reply on the same remote task', async () => {
    const { a, r } = await translators();
    const task = r.dispatch({ id: 'q', skill: 'translate', message: 'ASK where' });
    // wait() returns once the task asks.
    const asking = await r.wait(task.id);
    expect(asking).toMatchObject({ state: 'input-required', agentId: 'translator-a', question: 'A asks: which city?' });
    expect(r.agent('translator-a')!.load).toBe(1);
    expect(() => r.answer('nope', 'x')).toThrow(TeamError);

    const answered = r.answer(task.id, 'Lyon');
    expect(answered.state).toBe('working');
    expect(answered.question).toBeUndefined();
    const done = await r.wait(task.id);
    expect(done).toMatchObject({ state: 'completed', result: 'A did: ASK where in Lyon' });
    expect(done.history.map((h) => h.state)).toEqual(['submitted', 'working', 'input-required', 'working', 'completed']);
    // One remote task, answered in place.
    expect(await a.runtime.list()).toHaveLength(1);
    let code = '';
    try {
      r.answer(task.id, 'again');
    } catch (e) {
      code = (e as TeamError).code;
    }
    expect(code).toBe('wrong-state');
  });

  it('close() leaves a task waiting for an answer as it was (a restored registry asks again); answer() and wait() then refuse', async () => {
    const { a, r } = await translators();
    const task = r.dispatch({ skill: 'translate', message: 'ASK where' });
    await vi.waitFor(() => expect(r.task(task.id)!.state).toBe('input-required'));
    await r.close();
    expect(r.task(task.id)).toMatchObject({ state: 'input-required', question: 'A asks: which city?' });
    expect(r.snapshot().tasks).toMatchObject([{ id: task.id, state: 'input-required' }]);
    expect(() => r.answer(task.id, 'Lyon')).toThrow(expect.objectContaining({ code: 'registry-closed' }));
    await expect(r.wait(task.id)).resolves.toMatchObject({ state: 'input-required' });

    const restored = createAgentRegistry({ healthIntervalMs: 0, timeoutMs: 2000, now: tickingClock(10_000), restore: r.snapshot() });
    cleanups.push(() => restored.close());
    expect(await restored.wait(task.id)).toMatchObject({ state: 'input-required', question: 'A asks: which city?' });
    restored.answer(task.id, 'Lyon');
    expect(await restored.wait(task.id)).toMatchObject({ state: 'completed', result: 'A did: ASK where in Lyon' });
    // The same remote task, asked once and answered in place.
    expect(await a.runtime.list()).toHaveLength(1);
  });
});
