/**
 * The client contract: run / getResult / events / pause / resume / stop, and their errors.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createRuntime, defineSwarm, isFinalEvent, type Runtime, type SwarmClient, type SwarmEvent, SwarmError } from '../../src/index.js';
import { call, collect, queueModel } from '../support/script.js';
import { sleep } from '../support/sleep.js';

let runtime: Runtime | undefined;
afterEach(async () => {
  await runtime?.close();
  runtime = undefined;
});

const echo = defineSwarm({ id: 'echo', instructions: 'Repeat.' });

describe('run', () => {
  it('generates a swarm id when none is given and resolves once started', async () => {
    runtime = createRuntime({ swarms: [echo], model: queueModel({ echo: [{ text: 'a' }, { text: 'b' }] }) });
    const a = runtime.forSwarm(echo);
    const b = runtime.forSwarm(echo);
    expect(a.swarmId).toMatch(/^[0-9a-f-]{36}$/);
    expect(a.swarmId).not.toBe(b.swarmId);
    await a.run('x');
    const first = await collect(a.events());
    expect(first[0]).toMatchObject({
      seq: 1,
      kind: 'task',
      id: a.swarmId,
      contextId: a.swarmId,
      status: { state: 'submitted' },
      history: [{ role: 'user', parts: [{ kind: 'text', text: 'x' }] }],
      metadata: { definitionId: 'echo' },
      swarmId: a.swarmId,
    });
  });

  it('throws on an unknown definition, invalid input and an id in use', async () => {
    const typed = defineSwarm({ id: 'typed', input: z.object({ city: z.string() }), instructions: 'x' });
    runtime = createRuntime({ swarms: [echo, typed], model: queueModel({ echo: [{ text: 'a' }] }) });
    await expect(runtime.forSwarm('nope').run('x')).rejects.toMatchObject({ name: 'SwarmError', code: 'unknown-definition', message: 'Unknown swarm definition "nope"' });
    await expect(runtime.forSwarm(typed).run({ city: 3 } as never)).rejects.toThrow(
      /^Invalid input for swarm "typed": city: Invalid input: expected string, received number$/,
    );
    await expect(runtime.forSwarm(echo).run(42 as never)).rejects.toBeInstanceOf(SwarmError);
    const c = runtime.forSwarm(echo, 'fixed');
    await c.run('x');
    await expect(runtime.forSwarm(echo, 'fixed').run('y')).rejects.toThrow('Swarm id "fixed" is already in use');
    await c.wait();
    // Still in use after it finished: ids are never reused.
    await expect(runtime.forSwarm(echo, 'fixed').run('y')).rejects.toThrow('already in use');
  });

  it('two concurrent runs with the same id: exactly one starts', async () => {
    runtime = createRuntime({ swarms: [echo], model: queueModel({ echo: [{ text: 'a' }, { text: 'b' }] }) });
    const results = await Promise.allSettled([runtime.forSwarm(echo, 'dup').run('1'), runtime.forSwarm(echo, 'dup').run('2')]);
    expect(results.map((r) => r.status).sort()).toEqual(['fulfilled', 'rejected']);
  });

  it('a closed runtime refuses to start swarms', async () => {
    const rt = createRuntime({ swarms: [echo], model: queueModel({}) });
    await rt.close();
    await expect(rt.forSwarm(echo).run('x')).rejects.toThrow('This runtime is closed');
  });
});

describe('events', () => {
  async function finished(): Promise<{ events: SwarmEvent[]; client: SwarmClient<any, any> }> {
    const model = queueModel({ echo: [call('pause', { reason: 'ok?' }), { text: 'done' }] });
    runtime = createRuntime({ swarms: [echo], model });
    const client = runtime.forSwarm(echo);
    await client.run('x');
    await client.wait();
    await client.resume('yes');
    await client.wait();
    return { events: await collect(client.events()), client };
  }

  it('numbers events 1, 2, 3 … without gaps, starts with task and ends with one final status-update', async () => {
    const { events } = await finished();
    expect(events.map((e) => e.seq)).toEqual(events.map((_, i) => i + 1));
    expect(events[0]!.kind).toBe('task');
    expect(events.filter(isFinalEvent)).toHaveLength(1);
    expect(events.at(-1)).toMatchObject({ kind: 'status-update', status: { state: 'completed' }, final: true, metadata: { type: 'completed', result: 'done' } });
    const artifact = events.find((e) => e.kind === 'artifact-update')!;
    expect(artifact).toMatchObject({ artifact: { artifactId: 'result', parts: [{ kind: 'text', text: 'done' }] }, lastChunk: true });
    for (const e of events) {
      if (e.kind === 'task' || e.kind === 'status-update') expect(Date.parse(e.status.timestamp)).toBeGreaterThan(0);
      else if (e.kind !== 'artifact-update') expect(typeof e.timestamp).toBe('number');
    }
  });

  it('replays from any sequence number with no gap and no duplicate', async () => {
    const { events, client } = await finished();
    for (const since of [0, 1, 5, events.length - 1, events.length]) {
      const replay = await collect(client.events({ since }));
      expect(replay.map((e) => e.seq)).toEqual(events.slice(since).map((e) => e.seq));
    }
  });

  it('a live subscriber sees stored events first, then live ones, and stops after the final event', async () => {
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const model = queueModel({ echo: [async () => (await gate, { text: 'late' })] });
    runtime = createRuntime({ swarms: [echo], model });
    const c = runtime.forSwarm(echo);
    await c.run('x');
    const seen: SwarmEvent[] = [];
    const reading = (async () => {
      for await (const e of c.events()) seen.push(e);
    })();
    await sleep(20);
    const before = seen.length;
    expect(before).toBeGreaterThan(0);
    expect(seen.some(isFinalEvent)).toBe(false);
    release();
    await reading;
    expect(seen.length).toBeGreaterThan(before);
    expect(seen.at(-1)).toMatchObject({ final: true });
    expect(seen.map((e) => e.seq)).toEqual(seen.map((_, i) => i + 1));
  });

  it('events of an unknown swarm throw', async () => {
    runtime = createRuntime({ swarms: [echo], model: queueModel({}) });
    await expect(collect(runtime.forSwarm(echo, 'ghost').events())).rejects.toThrow('Unknown swarm "ghost"');
  });
});

describe('commands', () => {
  it('reject commands that do not fit the state, with clear errors', async () => {
    const model = queueModel({ echo: [call('pause', { reason: 'q' }), { text: 'done' }] });
    runtime = createRuntime({ swarms: [echo], model });
    const c = runtime.forSwarm(echo);
    await expect(c.getResult()).rejects.toThrow(`Unknown swarm "${c.swarmId}"`);
    await expect(c.pause('x')).rejects.toMatchObject({ code: 'unknown-swarm', message: `Cannot pause swarm "${c.swarmId}": unknown swarm` });
    await c.run('x');
    await c.wait();
    await expect(c.pause('again')).rejects.toMatchObject({ code: 'wrong-state', message: `Swarm "${c.swarmId}" is already paused` });
    await c.resume('ok');
    await c.wait();
    await expect(c.resume('more')).rejects.toMatchObject({ code: 'wrong-state', message: `Cannot resume swarm "${c.swarmId}": it has ended (completed)` });
    await expect(c.stop()).rejects.toThrow(/it has ended \(completed\)/);
    expect(await c.getResult()).toEqual({ status: 'completed', result: 'done' });
  });

  it('resume on a running swarm is refused', async () => {
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    runtime = createRuntime({ swarms: [echo], model: queueModel({ echo: [async () => (await gate, { text: 'x' })] }) });
    const c = runtime.forSwarm(echo);
    await c.run('x');
    await expect(c.resume('hi')).rejects.toThrow(`Swarm "${c.swarmId}" is running, not paused`);
    release();
    await c.wait();
  });
});
