/**
 * Definition mistakes fail fast when the runtime is created, with a clear DefinitionError.
 */
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createRuntime, defineAgent, defineSwarm, DefinitionError, handoff, scriptedModel, tool } from '../../src/index.js';

const model = scriptedModel(() => ({ text: 'ok' }));
const t = (name: string) => tool({ name, description: 'd', parameters: z.object({}), execute: () => 'ok' });
const make = (opts: Parameters<typeof createRuntime>[0]) => () => createRuntime(opts);

describe('createRuntime fails fast on definition mistakes', () => {
  it('duplicate swarm ids', () => {
    const a = defineSwarm({ id: 'a', instructions: 'x' });
    expect(make({ swarms: [a, defineSwarm({ id: 'a', instructions: 'y' })], model })).toThrow(new DefinitionError('Duplicate swarm id "a"'));
  });

  it('duplicate agent ids (two different agents)', () => {
    const one = defineAgent({ id: 'x', instructions: '1' });
    const two = defineAgent({ id: 'x', instructions: '2' });
    expect(make({ agents: [one, two], model })).toThrow('Duplicate agent id "x" in agents');
    const s = defineSwarm({ id: 's', instructions: 'i', handoffs: [handoff.toAgent(two)] });
    expect(make({ swarms: [s], agents: [one], model })).toThrow('Duplicate agent id "x" in handoffs of swarm "s"');
  });

  it('a handoff to an unknown agent', () => {
    const s = defineSwarm({ id: 's', instructions: 'i', handoffs: [handoff.toAgent('ghost')] });
    expect(make({ swarms: [s], model })).toThrow('Swarm "s" hands off to unknown agent "ghost"');
  });

  it('invalid and reserved tool names, and two tools sharing a name', () => {
    expect(make({ swarms: [defineSwarm({ id: 's', instructions: 'i', tools: [t('has space')] })], model })).toThrow(/Tool name "has space" in swarm "s" is invalid/);
    expect(make({ swarms: [defineSwarm({ id: 's', instructions: 'i', tools: [t('complete')] })], model })).toThrow(/reserved/);
    expect(make({ swarms: [defineSwarm({ id: 's', instructions: 'i', tools: [t('handoff_to_x')] })], model })).toThrow(/reserved/);
    expect(make({ swarms: [defineSwarm({ id: 's', instructions: 'i', tools: [t('same'), t('same')] })], model })).toThrow('Two different tools are named "same"');
  });

  it('handoff ids that collide as tool names, invalid ids, bad maxTurns, empty instructions', () => {
    const a = defineAgent({ id: 'w-x', instructions: 'A' });
    const b = defineAgent({ id: 'w_x', instructions: 'B' });
    const s = defineSwarm({ id: 's', instructions: 'i', handoffs: [handoff.toAgent(a), handoff.toAgent(b)] });
    expect(make({ swarms: [s], model })).toThrow('Swarm "s" has two handoffs named "handoff_to_w_x"');
    expect(make({ swarms: [defineSwarm({ id: 'bad id', instructions: 'i' })], model })).toThrow(/Swarm id "bad id" in swarms is invalid/);
    expect(make({ swarms: [defineSwarm({ id: 's', instructions: 'i', maxTurns: 0 })], model })).toThrow(/maxTurns must be a positive integer/);
    expect(make({ swarms: [defineSwarm({ id: 's', instructions: '  ' })], model })).toThrow('Swarm "s" has empty instructions');
    expect(make({ agents: [defineAgent({ id: 'a', instructions: 'x', maxTurns: 1.5 })], model })).toThrow(/maxTurns/);
  });

  it('a missing model', () => {
    expect(() => createRuntime({} as never)).toThrow(/`model` is required/);
  });

  it('function-valued parts are checked when a run resolves them', async () => {
    const s = defineSwarm({ id: 's', instructions: 'i', handoffs: () => [handoff.toAgent('ghost')] });
    const rt = createRuntime({ swarms: [s], model });
    await expect(rt.forSwarm(s).run('x')).rejects.toThrow('Swarm "s" hands off to unknown agent "ghost"');
    await rt.close();
  });

  it('a function-valued part is evaluated once per run, with the validated input', async () => {
    const seen: string[] = [];
    const a = defineAgent({ id: 'a', instructions: 'A' });
    const s = defineSwarm({
      id: 's',
      instructions: 'i',
      handoffs: ({ input }) => {
        seen.push(input);
        return [handoff.toAgent(a)];
      },
    });
    const rt = createRuntime({ swarms: [s], agents: [a], model });
    await rt.forSwarm(s).run('first');
    await rt.forSwarm(s).run('second');
    expect(seen).toEqual(['first', 'second']);
    await rt.close();
  });

  it('handoff tool names and descriptions come from the agent, withDescription overrides', async () => {
    const seen: string[][] = [];
    const weather = defineAgent({ id: 'weather-agent', description: 'Weather facts', instructions: 'x' });
    const s = defineSwarm({
      id: 's',
      instructions: 'i',
      handoffs: [handoff.toAgent(weather).withDescription('Ask about the sky')],
    });
    const rt = createRuntime({
      swarms: [s],
      model: scriptedModel((req) => {
        seen.push(req.tools.map((x) => `${x.name}: ${x.description}`));
        return { text: 'ok' };
      }),
    });
    const c = rt.forSwarm(s);
    await c.run('x');
    await c.wait();
    expect(seen[0]![0]).toBe('handoff_to_weather_agent: Ask about the sky');
    await rt.close();
  });
});
