/**
 * The definition catalog on its own (the `Catalog` a runtime is created with): every swarm,
 * agent and tool is checked together with the others when the catalog is built, wherever it
 * was named (the runtime's lists, another swarm's handoffs, an agent's tools), and a mistake is
 * a `DefinitionError` saying what and where. Parts that are functions of the input are checked
 * when a run resolves them.
 */
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { Catalog } from '../../src/catalog/catalog.js';
import { ADHOC_ID } from '../../src/define/ids.js';
import { Resolver } from '../../src/catalog/resolve.js';
import { type AgentDefinition, defineAgent, defineSwarm, DefinitionError, handoff, type SwarmDefinition, swarmRegistry, type Tool, tool } from '../../src/index.js';

const t = (name: string): Tool => tool({ name, description: 'd', parameters: z.object({}), execute: () => 'ok' });
const agentOf = (id: string, tools: Tool[] = []) => defineAgent({ id, instructions: `${id} instructions`, tools });

/** The catalog of these definitions, or the `DefinitionError` building it threw. */
function build(swarms: SwarmDefinition[] = [], agents: AgentDefinition[] = [], tools: Tool[] = []) {
  const catalog = new Catalog({ swarms, agents, tools });
  const resolver = new Resolver(catalog, { card: () => undefined });
  return {
    swarm: (id: string) => catalog.swarm(id),
    agent: (id: string) => catalog.agent(id),
    tool: (name: string) => catalog.tool(name),
    cards: () => catalog.cards(),
    resolve: (...args: Parameters<Resolver['resolve']>) => resolver.resolve(...args),
  };
}
const failure = (fn: () => unknown): DefinitionError => {
  try {
    fn();
  } catch (e) {
    expect(e).toBeInstanceOf(DefinitionError);
    return e as DefinitionError;
  }
  throw new Error('expected a DefinitionError');
};
const fails = (swarms: SwarmDefinition[], agents: AgentDefinition[] = [], tools: Tool[] = []) => failure(() => build(swarms, agents, tools)).message;

describe('what the catalog holds', () => {
  it('swarms and agents named by definition inside handoffs join it, transitively, with their tools', () => {
    const leaf = agentOf('leaf', [t('leaf_tool')]);
    const grandchild = defineSwarm({ id: 'grandchild', instructions: 'g', handoffs: [handoff.toAgent(leaf)] });
    const child = defineSwarm({ id: 'child', instructions: 'c', handoffs: [handoff.toSwarm(grandchild)], tools: [t('child_tool')] });
    const root = defineSwarm({ id: 'root', instructions: 'r', handoffs: [handoff.toSwarm(child)] });
    const registry = build([root]);
    expect(registry.swarm('child')).toBe(child);
    expect(registry.swarm('grandchild')).toBe(grandchild);
    expect(registry.agent('leaf')).toBe(leaf);
    expect(registry.tool('leaf_tool')).toBeDefined();
    expect(registry.tool('child_tool')).toBeDefined();
    expect(
      registry
        .cards()
        .map((c) => c.id)
        .sort(),
    ).toEqual(['child', 'grandchild', 'root']);
  });

  it('one definition named in several places is one entry, not a duplicate', () => {
    const shared = agentOf('shared', [t('shared_tool')]);
    const child = defineSwarm({ id: 'child', instructions: 'c', handoffs: [handoff.toAgent(shared)] });
    const a = defineSwarm({ id: 'a', instructions: 'a', handoffs: [handoff.toAgent(shared), handoff.toSwarm(child)] });
    const b = defineSwarm({ id: 'b', instructions: 'b', handoffs: [handoff.toSwarm(child)], tools: [shared.tools[0]!] });
    const registry = build([a, b, child], [shared], [shared.tools[0]!]);
    expect(registry.agent('shared')).toBe(shared);
    expect(registry.swarm('child')).toBe(child);
  });

  it('references by id resolve against the whole catalog, whatever the order definitions come in', () => {
    const late = agentOf('late');
    // `first` names by id an agent and a swarm that only `second` (listed after it) brings in.
    const first = defineSwarm({ id: 'first', instructions: 'f', handoffs: [handoff.toAgent('late'), handoff.toSwarm('third')] });
    const third = defineSwarm({ id: 'third', instructions: 't' });
    const second = defineSwarm({ id: 'second', instructions: 's', handoffs: [handoff.toAgent(late), handoff.toSwarm(third)] });
    expect(() => build([first, second])).not.toThrow();
  });

  it('the ad-hoc definition is always there, but cannot be defined, searched or handed off to', () => {
    const registry = build();
    expect(registry.swarm(ADHOC_ID)?.name).toBe('Ad-hoc swarm');
    expect(registry.cards()).toEqual([]);
    expect(fails([defineSwarm({ id: ADHOC_ID, instructions: 'x' })])).toBe(`Swarm id "${ADHOC_ID}" is reserved for ad-hoc swarms`);
    expect(fails([defineSwarm({ id: 's', instructions: 'x', handoffs: [handoff.toSwarm(ADHOC_ID)] })])).toBe(`Swarm "s" hands off to unknown swarm "${ADHOC_ID}"`);
  });
});

describe('duplicate ids', () => {
  it('two swarm definitions with one id: in the list, or one of them named in a handoff', () => {
    const one = defineSwarm({ id: 'dup', instructions: '1' });
    const two = defineSwarm({ id: 'dup', instructions: '2' });
    expect(fails([one, two])).toBe('Duplicate swarm id "dup"');
    const parent = defineSwarm({ id: 'parent', instructions: 'p', handoffs: [handoff.toSwarm(two)] });
    expect(fails([one, parent])).toBe('Duplicate swarm id "dup" in handoffs of swarm "parent"');
    // Two parents naming different definitions of one child id.
    const p1 = defineSwarm({ id: 'p1', instructions: 'p', handoffs: [handoff.toSwarm(one)] });
    const p2 = defineSwarm({ id: 'p2', instructions: 'p', handoffs: [handoff.toSwarm(two)] });
    expect(fails([p1, p2])).toMatch(/^Duplicate swarm id "dup" in handoffs of swarm "p[12]"$/);
  });

  it('two agent definitions with one id, wherever they are named', () => {
    const one = agentOf('twin');
    const two = agentOf('twin');
    expect(fails([], [one, two])).toBe('Duplicate agent id "twin" in agents');
    const s1 = defineSwarm({ id: 's1', instructions: 'i', handoffs: [handoff.toAgent(one)] });
    const s2 = defineSwarm({ id: 's2', instructions: 'i', handoffs: [handoff.toAgent(two)] });
    expect(fails([s1, s2])).toMatch(/^Duplicate agent id "twin" in handoffs of swarm "s[12]"$/);
  });

  it('two different tools with one name, across the tools list, agents and swarms', () => {
    expect(fails([], [agentOf('a', [t('lookup')])], [t('lookup')])).toBe('Two different tools are named "lookup" (agent "a")');
    expect(fails([defineSwarm({ id: 's', instructions: 'i', tools: [t('lookup')] })], [agentOf('a', [t('lookup')])])).toBe(
      'Two different tools are named "lookup" (swarm "s")',
    );
    const inline = handoff.inline({ id: 'helper', description: 'h', instructions: 'i', tools: [t('lookup')] });
    expect(fails([defineSwarm({ id: 's', instructions: 'i', handoffs: [inline] })], [], [t('lookup')])).toBe(
      'Two different tools are named "lookup" (inline agent "helper")',
    );
  });

  it('one tool listed twice by one swarm (the registry tools included)', () => {
    const lookup = t('lookup');
    expect(fails([defineSwarm({ id: 's', instructions: 'i', tools: [lookup, lookup] })])).toBe('swarm "s" lists a tool twice');
    expect(fails([defineSwarm({ id: 's', instructions: 'i', tools: [swarmRegistry(), swarmRegistry()] })])).toBe('swarm "s" lists a tool twice');
  });

  it('handoffs whose tool names collide, and a handoff tool name over 64 characters', () => {
    const s = defineSwarm({ id: 's', instructions: 'i', handoffs: [handoff.toAgent(agentOf('a.b')), handoff.toAgent(agentOf('a-b'))] });
    expect(fails([s])).toBe('Swarm "s" has two handoffs named "handoff_to_a_b"');
    const long = agentOf('x'.repeat(60));
    expect(fails([defineSwarm({ id: 's', instructions: 'i', handoffs: [handoff.toAgent(long)] })])).toBe(
      `Handoff tool name "handoff_to_${'x'.repeat(60)}" is longer than 64 characters`,
    );
    expect(() => build([defineSwarm({ id: 's', instructions: 'i', handoffs: [handoff.toAgent(agentOf('x'.repeat(53)))] })])).not.toThrow();
  });
});

describe('unknown handoff targets', () => {
  it('an agent or a swarm named by id that nothing defines', () => {
    expect(fails([defineSwarm({ id: 's', instructions: 'i', handoffs: [handoff.toAgent('ghost')] })])).toBe('Swarm "s" hands off to unknown agent "ghost"');
    expect(fails([defineSwarm({ id: 's', instructions: 'i', handoffs: [handoff.toSwarm('phantom')] })])).toBe('Swarm "s" hands off to unknown swarm "phantom"');
  });

  it('inside a swarm that is only named in another’s handoffs', () => {
    const child = defineSwarm({ id: 'child', instructions: 'c', handoffs: [handoff.toAgent('ghost')] });
    expect(fails([defineSwarm({ id: 'root', instructions: 'r', handoffs: [handoff.toSwarm(child)] })])).toBe('Swarm "child" hands off to unknown agent "ghost"');
  });

  it('a function of the input is checked when a run resolves it, not before', () => {
    const s = defineSwarm({ id: 's', instructions: 'i', handoffs: ({ input }) => [handoff.toAgent(input)] });
    const registry = build([s], [agentOf('known')]);
    expect(registry.resolve(s, 'known').handoffs.map((h) => h.toolName)).toEqual(['handoff_to_known']);
    expect(failure(() => registry.resolve(s, 'ghost')).message).toBe('Swarm "s" hands off to unknown agent "ghost"');
  });
});

describe('ids and tool names', () => {
  it('invalid swarm, agent and inline agent ids', () => {
    expect(fails([defineSwarm({ id: 'no spaces', instructions: 'i' })])).toBe('Swarm id "no spaces" in swarms is invalid: use letters, digits, _ . : -');
    expect(fails([], [agentOf('-leading')])).toBe('Agent id "-leading" in agents is invalid: use letters, digits, _ . : -');
    expect(fails([], [agentOf('x'.repeat(129))])).toMatch(/^Agent id "x+" in agents is invalid/);
    const inline = handoff.inline({ id: 'bad/id', description: 'd', instructions: 'i' });
    expect(fails([defineSwarm({ id: 's', instructions: 'i', handoffs: [inline] })])).toBe('Inline agent id "bad/id" in swarm "s" is invalid');
  });

  it('reserved tool names: the built-ins, handoff_to_*, swarm_registry_* — in every place a tool can be named', () => {
    for (const name of ['complete', 'pause', 'fail', 'handoff_to_someone', 'swarm_registry_search', 'swarm_registry_other']) {
      const reserved = `Tool name "${name}" in tools is reserved for built-ins and handoffs`;
      expect(fails([], [], [t(name)]), name).toBe(reserved);
      expect(fails([], [agentOf('a', [t(name)])]), name).toBe(reserved.replace('in tools', 'in agent "a"'));
      expect(fails([defineSwarm({ id: 's', instructions: 'i', tools: [t(name)] })]), name).toBe(reserved.replace('in tools', 'in swarm "s"'));
    }
  });

  it('invalid tool names: empty, spaces, dots, non-ASCII, longer than 64', () => {
    for (const name of ['', 'has space', 'dot.ted', 'ünï', 'x'.repeat(65)]) {
      expect(fails([], [], [t(name)]), name).toMatch(/^Tool name ".*" in tools is invalid: it must match /);
    }
    expect(() => build([], [], [t('x'.repeat(64)), t('kebab-and_snake_09')])).not.toThrow();
  });

  it('the registry tools come as a pair from swarmRegistry(), never as a user tool', () => {
    const s = defineSwarm({ id: 's', instructions: 'i', tools: [swarmRegistry()] });
    expect(build([s]).resolve(s, 'x').tools).toEqual(['swarm_registry_search', 'swarm_registry_handoff']);
  });
});

describe('maxTurns and instructions', () => {
  it('a swarm’s maxTurns must be a positive integer', () => {
    for (const maxTurns of [0, -1, 1.5, Number.NaN, Number.POSITIVE_INFINITY]) {
      expect(fails([defineSwarm({ id: 's', instructions: 'i', maxTurns })]), String(maxTurns)).toBe(
        `Swarm "s": maxTurns must be a positive integer, got ${String(maxTurns)}`,
      );
    }
    expect(() => build([defineSwarm({ id: 's', instructions: 'i', maxTurns: 1 })])).not.toThrow();
  });

  it('an agent’s maxTurns must be a positive integer, also when the agent is only named in a handoff', () => {
    expect(fails([], [defineAgent({ id: 'a', instructions: 'i', maxTurns: 0 })])).toBe('Agent "a": maxTurns must be a positive integer, got 0');
    const nested = defineAgent({ id: 'n', instructions: 'i', maxTurns: 2.5 });
    expect(fails([defineSwarm({ id: 's', instructions: 'i', handoffs: [handoff.toAgent(nested)] })])).toBe('Agent "n": maxTurns must be a positive integer, got 2.5');
  });

  it('an inline agent’s maxTurns must be a positive integer', () => {
    const inline = (maxTurns: number) => handoff.inline({ id: 'helper', description: 'd', instructions: 'i', maxTurns });
    expect(fails([defineSwarm({ id: 's', instructions: 'i', handoffs: [inline(0)] })])).toBe('Inline agent "helper": maxTurns must be a positive integer, got 0');
    expect(() => build([defineSwarm({ id: 's', instructions: 'i', handoffs: [inline(3)] })])).not.toThrow();
  });

  it('a maxTurns or instructions computed from the input is checked when a run resolves it', () => {
    const s = defineSwarm({
      id: 's',
      input: z.object({ turns: z.number(), text: z.string() }),
      instructions: ({ input }) => input.text,
      maxTurns: ({ input }) => input.turns,
    });
    const registry = build([s]);
    expect(registry.resolve(s, { turns: 3, text: 'go' })).toMatchObject({ maxTurns: 3, instructions: 'go' });
    expect(failure(() => registry.resolve(s, { turns: 0, text: 'go' })).message).toBe('Swarm "s": maxTurns must be a positive integer, got 0');
    expect(failure(() => registry.resolve(s, { turns: 2, text: ' ' })).message).toBe('Swarm "s": instructions resolved to an empty value');
  });

  it('a customization may raise or lower maxTurns only within 1..1000', () => {
    const registry = build([defineSwarm({ id: 's', instructions: 'i', maxTurns: 5 })]);
    const s = registry.swarm('s')!;
    expect(registry.resolve(s, 'x', { customization: { max_turns_override: 2 } }).maxTurns).toBe(2);
    for (const max_turns_override of [0, 1001, 2.5]) {
      expect(failure(() => registry.resolve(s, 'x', { customization: { max_turns_override } })).message).toMatch(
        /^Invalid customization for swarm "s": max_turns_override: /,
      );
    }
  });

  it('empty static instructions', () => {
    expect(fails([defineSwarm({ id: 's', instructions: ' \n ' })])).toBe('Swarm "s" has empty instructions');
  });
});
