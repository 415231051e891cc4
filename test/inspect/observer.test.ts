/**
 * `createRuntime({ inspect })` with a plain observer: every kind of actor the runtime makes
 * reports to it — a swarm, its agent's run, tool calls, a child swarm, a team's leader and
 * workers — and a swarm restored after a passivation registers again. A bad observer is a
 * `TypeError` naming the option.
 */
import type { AnyActorRef, InspectionEvent } from 'xstate';
import { afterAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createRuntime, defineAgent, defineSwarm, defineTeam, handoff, type Runtime, scriptedModel, tool } from '../../src/index.js';
import { askerModel, call, queueModel } from '../support/script.js';
import { until } from '../support/wait.js';

/** What registered (`@xstate.actor`): actor id and machine id, for each registration in order. */
function registrations(seen: InspectionEvent[]): { id: string; machine: string | undefined; parent: string | undefined }[] {
  return seen
    .filter((e) => e.type === '@xstate.actor')
    .map((e) => {
      const ref = e.actorRef as AnyActorRef & { logic: { config?: { id?: string } } };
      return { id: ref.id, machine: ref.logic.config?.id, parent: ref._parent?.id };
    });
}

const idOf = (e: InspectionEvent) => (e.actorRef as AnyActorRef).id;

const closeAfter: Runtime[] = [];
const track = (rt: Runtime) => (closeAfter.push(rt), rt);

describe('createRuntime({ inspect }) with a plain function', () => {
  it('hears a swarm, its agent, a tool call, the model steps and a child swarm, each with its parent', async () => {
    const forecast = tool({
      name: 'get_forecast',
      description: 'Forecast',
      parameters: z.object({ day: z.string() }),
      execute: async ({ day }) => ({ day, sky: 'sunny' }),
    });
    const weather = defineAgent({ id: 'weather', instructions: 'Forecast.', tools: [forecast] });
    const leaf = defineSwarm({ id: 'leaf', instructions: 'Leaf work.' });
    const top = defineSwarm({ id: 'top', instructions: 'Plan.', handoffs: [handoff.toAgent(weather), handoff.toSwarm(leaf)] });
    const model = queueModel({
      top: [call('handoff_to_weather', { request: 'weather?' }), call('handoff_to_leaf', { request: 'do it' }), { text: 'top done' }],
      weather: [call('get_forecast', { day: 'mon' }), { text: 'sunny' }],
      leaf: [{ text: 'leaf done' }],
    });
    const seen: InspectionEvent[] = [];
    const rt = track(createRuntime({ swarms: [top, leaf], agents: [weather], model, inspect: (e) => seen.push(e) }));
    const c = rt.forSwarm(top, 'trip');
    await c.run('go');
    expect(await c.wait()).toEqual({ status: 'completed', result: 'top done' });
    await rt.close();

    const regs = registrations(seen);
    expect(regs).toContainEqual({ id: 'trip', machine: 'swarm', parent: undefined });
    const agent = regs.find((r) => r.id.startsWith('agent:'));
    expect(agent).toMatchObject({ machine: 'agent', parent: 'trip' });
    expect(regs).toContainEqual({ id: expect.stringMatching(/^tool:/), machine: undefined, parent: agent!.id });
    expect(regs.filter((r) => r.id === 'model').length).toBeGreaterThanOrEqual(4);
    // The child swarm: the call in the parent, and the child's own root (another system).
    expect(regs).toContainEqual({ id: expect.stringMatching(/^swarm:/), machine: undefined, parent: 'trip' });
    expect(regs).toContainEqual({ id: 'trip:t2:0', machine: 'swarm', parent: undefined });
    // Snapshots and events too, not only registrations; the root's last snapshot is final.
    const rootSnapshots = seen.filter((e) => e.type === '@xstate.snapshot' && idOf(e) === 'trip');
    expect(rootSnapshots.at(-1)).toMatchObject({ snapshot: { status: 'done' } });
    expect(seen.some((e) => e.type === '@xstate.event' && idOf(e) === 'trip')).toBe(true);
  });

  it("hears a team's leader and its worker, and the worker's task and its swarm", async () => {
    const api = defineSwarm({ id: 'api-worker', instructions: 'You build endpoints.' });
    const team = defineTeam({ id: 'builders', workers: [{ type: 'api', swarm: api }] });
    const events: InspectionEvent[] = [];
    // The observer form of XState (`{ next }`) works as the function does.
    const rt = track(createRuntime({ model: scriptedModel(() => ({ text: 'built' })), teams: [team], inspect: { next: (e) => events.push(e) } }));
    const builders = rt.forTeam(team);
    await builders.run([{ id: 'schema', subject: 'Schema', metadata: { type: 'api' } }]);
    expect((await builders.wait()).status).toBe('completed');
    await rt.close();

    const regs = registrations(events);
    expect(regs).toContainEqual({ id: 'builders/leader', machine: 'teamLeader', parent: undefined });
    const worker = regs.find((r) => r.machine === 'teamWorker');
    expect(worker).toMatchObject({ id: expect.stringMatching(/^builders\//), parent: undefined });
    expect(regs).toContainEqual({ id: 'task', machine: undefined, parent: worker!.id });
    expect(regs.some((r) => r.machine === 'swarm' && r.id.startsWith('builders:schema:'))).toBe(true);
  });

  it('hears a passivated swarm again when a command restores it, with its state', async () => {
    const asker = defineSwarm({ id: 'asker', instructions: 'Book a day.' });
    const seen: InspectionEvent[] = [];
    const rt = track(createRuntime({ swarms: [asker], model: askerModel(), passivateAfterMs: 0, inspect: (e) => seen.push(e) }));
    const c = rt.forSwarm(asker, 'book');
    await c.run('Book me in');
    expect((await c.wait()).status).toBe('paused');
    await until('passivation', () => rt.stats().passivated === 1);
    const before = registrations(seen).filter((r) => r.id === 'book').length;
    expect(before).toBe(1);

    await c.resume('Friday');
    expect(await c.wait()).toEqual({ status: 'completed', result: 'Booked for Friday.' });
    const restored = seen.filter((e) => e.type === '@xstate.actor' && idOf(e) === 'book');
    expect(restored).toHaveLength(2);
    // Registered from its stored snapshot: paused, the state it was evicted in.
    const first = seen.find((e) => e.type === '@xstate.snapshot' && e.actorRef === restored[1]!.actorRef);
    expect(first).toMatchObject({ event: { type: 'xstate.init' }, snapshot: { value: 'paused' } });
    await rt.close();
  });

  it('a throwing observer changes nothing for the swarms (its errors are its own)', async () => {
    const asker = defineSwarm({ id: 'asker', instructions: 'Book a day.' });
    let calls = 0;
    const rt = track(
      createRuntime({
        swarms: [asker],
        model: askerModel(),
        inspect: () => {
          calls++;
          throw new Error('observer bug');
        },
      }),
    );
    const c = rt.forSwarm(asker, 'book');
    await c.run('Book me in');
    expect((await c.wait()).status).toBe('paused');
    await c.resume('Friday');
    expect(await c.wait()).toEqual({ status: 'completed', result: 'Booked for Friday.' });
    expect(calls).toBeGreaterThan(10);
    await rt.close();
  });

  it('refuses an observer that is not one, naming the option', () => {
    const model = scriptedModel(() => ({ text: 'ok' }));
    for (const bad of [42, 'log', {}, { next: 1 }]) {
      expect(() => createRuntime({ model, inspect: bad as never })).toThrow(
        new TypeError('createRuntime: inspect must be an inspection observer: a function, or an object with next (e.g. createWebSocketInspector().inspect)'),
      );
    }
    expect(() => createRuntime({ model, inspect: undefined })).not.toThrow();
  });
});

// Runtimes a failed assertion left open.
afterAll(async () => {
  for (const rt of closeAfter) await rt.close();
});
