/**
 * Composition: swarms of swarms, parallel handoffs, customization, overrides, ad-hoc swarms,
 * inline agents and the swarm registry.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createRuntime, defineAgent, defineSwarm, factOf, handoff, type ModelRequest, type Runtime, type SwarmEvent, swarmRegistry, tool } from '../../src/index.js';
import { call, calls, collect, queueModel, toolMessages } from '../support/script.js';
import { sleep } from '../support/sleep.js';
import { until } from '../support/wait.js';

let runtime: Runtime | undefined;
afterEach(async () => {
  await runtime?.close();
  runtime = undefined;
});

const tools = (req: ModelRequest) => req.tools.map((t) => t.name);
const lifecycle = (events: SwarmEvent[]) =>
  events
    .map((e) => factOf(e, 'child-swarm'))
    .filter(Boolean)
    .map((f) => `${f!.childSwarmId}:${f!.lifecycle}`);

/** parent → child → grandchild, each with an agent handoff. */
function threeLevels() {
  const agentA = defineAgent({ id: 'agent-a', instructions: 'A' });
  const agentB = defineAgent({ id: 'agent-b', instructions: 'B' });
  const agentC = defineAgent({ id: 'agent-c', instructions: 'C' });
  const leaf = defineSwarm({ id: 'leaf', instructions: 'Leaf work.', handoffs: [handoff.toAgent(agentC)] });
  const mid = defineSwarm({
    id: 'mid',
    instructions: 'Mid work.',
    handoffs: [handoff.toAgent(agentB), handoff.toSwarm(leaf).withDescription('Does leaf work')],
  });
  const top = defineSwarm({ id: 'top', instructions: 'Top work.', handoffs: [handoff.toAgent(agentA), handoff.toSwarm(mid)] });
  return { swarms: [top, mid, leaf], agents: [agentA, agentB, agentC], top, mid, leaf };
}

describe('child swarms', () => {
  it('a three-level composition with an agent handoff at each level completes; data flows only through request and result', async () => {
    const { swarms, agents, top } = threeLevels();
    const model = queueModel({
      top: [call('handoff_to_agent_a', { request: 'a?' }), call('handoff_to_mid', { request: 'do mid' }, 'm1'), { text: 'top done' }],
      mid: [call('handoff_to_agent_b', { request: 'b?' }), call('handoff_to_leaf', { request: 'do leaf' }, 'l1'), { text: 'mid done' }],
      leaf: [call('handoff_to_agent_c', { request: 'c?' }), { text: 'leaf done' }],
      'agent-a': [{ text: 'A says hi' }],
      'agent-b': [{ text: 'B says hi' }],
      'agent-c': [{ text: 'C says hi' }],
    });
    runtime = createRuntime({ swarms, agents, model });
    const c = runtime.forSwarm(top, 'p');
    await c.run('go');
    expect(await c.wait()).toEqual({ status: 'completed', result: 'top done' });
    expect(await runtime.forSwarm('mid', 'p:t2:0').getResult()).toEqual({ status: 'completed', result: 'mid done' });
    expect(await runtime.forSwarm('leaf', 'p:t2:0:t2:0').getResult()).toEqual({ status: 'completed', result: 'leaf done' });

    const midFirst = model.requests.find((r) => r.agentId === 'mid')!;
    expect(midFirst.swarmId).toBe('p:t2:0');
    expect(midFirst.messages).toEqual([
      { role: 'system', content: 'Mid work.' },
      { role: 'user', content: 'do mid' },
    ]); // no trace of the parent's conversation
    expect(toolMessages(model.requests.filter((r) => r.agentId === 'top')[2]!).at(-1)).toEqual({
      role: 'tool',
      toolCallId: 'm1',
      content: 'mid done',
    });
    const events = await collect(c.events());
    expect(events.map((e) => factOf(e, 'swarm-handoff')).find(Boolean)).toMatchObject({ from: 'top', to: 'mid', childSwarmId: 'p:t2:0' });
    expect(lifecycle(events)).toEqual(['p:t2:0:started', 'p:t2:0:completed']);
  });

  it('a grandchild pausing for a human keeps the parent running with currentChildSwarm; resuming the grandchild finishes all three', async () => {
    const { swarms, agents, top } = threeLevels();
    const model = queueModel({
      top: [call('handoff_to_mid', { request: 'do mid' }), { text: 'top done' }],
      mid: [call('handoff_to_leaf', { request: 'do leaf' }), { text: 'mid done' }],
      leaf: [call('handoff_to_agent_c', { request: 'c?' }), call('pause', { reason: 'Approve the leaf plan?' }, 'ask'), { text: 'leaf approved' }],
      'agent-c': [{ text: 'C says hi' }],
    });
    runtime = createRuntime({ swarms, agents, model });
    const parent = runtime.forSwarm(top, 'p');
    await parent.run('go');
    const leaf = runtime.forSwarm('leaf', 'p:t1:0:t1:0');
    await until('the leaf to pause', async () => (await leaf.getResult().catch(() => undefined))?.status === 'paused', { interval: 5 });
    expect(await leaf.getResult()).toMatchObject({ status: 'paused', reason: { type: 'HITL', message: 'Approve the leaf plan?' } });
    expect(await parent.getResult()).toEqual({
      status: 'running',
      currentTurn: 1,
      maxTurns: 10,
      currentChildSwarm: 'p:t1:0',
      inFlight: [{ callId: expect.any(String), kind: 'swarm', target: 'mid', childSwarmId: 'p:t1:0' }],
      // The grandchild's pause shows at the root, naming it.
      pausedChildren: [{ swarmId: 'p:t1:0:t1:0', reason: { type: 'HITL', message: 'Approve the leaf plan?', pauseId: 'ask' } }],
    });
    expect(await runtime.forSwarm('mid', 'p:t1:0').getResult()).toMatchObject({ status: 'running', currentChildSwarm: 'p:t1:0:t1:0' });

    await leaf.resume('approved');
    expect(await parent.wait()).toEqual({ status: 'completed', result: 'top done' });
    const leafAfter = model.requests.filter((r) => r.agentId === 'leaf')[2]!;
    expect(toolMessages(leafAfter).at(-1)).toEqual({ role: 'tool', toolCallId: 'ask', content: 'approved' });
    const midEvents = await collect(runtime.forSwarm('mid', 'p:t1:0').events());
    expect(lifecycle(midEvents)).toEqual(['p:t1:0:t1:0:started', 'p:t1:0:t1:0:paused', 'p:t1:0:t1:0:resumed', 'p:t1:0:t1:0:completed']);
    const paused = midEvents.map((e) => factOf(e, 'child-swarm')).find((f) => f?.lifecycle === 'paused');
    expect(paused?.reason).toBe('Approve the leaf plan?');
  });

  it('stopping the parent mid-run stops all three levels', async () => {
    const { swarms, agents, top } = threeLevels();
    let aborted = 0;
    const model = queueModel({
      top: [call('handoff_to_mid', { request: 'do mid' })],
      mid: [call('handoff_to_leaf', { request: 'do leaf' })],
      leaf: [
        async (req) => {
          await sleep(10_000, req.signal).catch((e) => {
            aborted++;
            throw e;
          });
          return { text: 'never' };
        },
      ],
    });
    runtime = createRuntime({ swarms, agents, model });
    const parent = runtime.forSwarm(top, 'p');
    await parent.run('go');
    const leaf = runtime.forSwarm('leaf', 'p:t1:0:t1:0');
    await until('the leaf to run', async () => (await leaf.getResult().catch(() => undefined))?.status === 'running', { interval: 5 });
    await parent.stop('user cancelled');
    const mid = runtime.forSwarm('mid', 'p:t1:0');
    await until('the leaf to stop', async () => (await leaf.getResult()).status === 'stopped', { interval: 5 });
    expect(await parent.getResult()).toEqual({ status: 'stopped', reason: 'user cancelled' });
    expect(await mid.getResult()).toEqual({ status: 'stopped', reason: 'parent swarm "p" stopped' });
    expect(await leaf.getResult()).toEqual({ status: 'stopped', reason: 'parent swarm "p:t1:0" stopped' });
    expect(aborted).toBe(1);
  });

  it('pausing a parent pauses its running child; resuming the parent resumes it', async () => {
    const { swarms, agents, top } = threeLevels();
    const model = queueModel({
      top: [call('handoff_to_mid', { request: 'do mid' }), { text: 'top done' }],
      mid: [async (req) => (await sleep(10_000, req.signal), { text: 'never' }), { text: 'mid done' }],
    });
    runtime = createRuntime({ swarms, agents, model });
    const parent = runtime.forSwarm(top, 'p');
    await parent.run('go');
    const mid = runtime.forSwarm('mid', 'p:t1:0');
    await until('mid to run', async () => (await mid.getResult().catch(() => undefined))?.status === 'running', { interval: 5 });
    await parent.pause('lunch');
    expect(await mid.getResult()).toMatchObject({ status: 'paused', reason: { message: 'Parent swarm "p" paused: lunch' } });
    await parent.resume();
    expect(await parent.wait()).toEqual({ status: 'completed', result: 'top done' });
    expect(await mid.getResult()).toEqual({ status: 'completed', result: 'mid done' });
  });

  it('a structured-input child takes its input schema as the handoff parameters', async () => {
    const booking = defineSwarm({
      id: 'booking',
      input: z.object({ event: z.string(), seats: z.number().int().min(1) }),
      result: z.object({ confirmation: z.string() }),
      instructions: ({ input }) => `Book ${input.seats} seats for ${input.event}.`,
    });
    const planner = defineSwarm({ id: 'planner', instructions: 'Plan.', handoffs: [handoff.toSwarm(booking)] });
    const model = queueModel({
      planner: [
        call('handoff_to_booking', { event: 'concert', seats: 0 }, 'bad'),
        call('handoff_to_booking', { event: 'concert', seats: 2 }, 'good'),
        { text: 'booked' },
      ],
      booking: [call('complete', { result: { confirmation: 'ABC123' } })],
    });
    runtime = createRuntime({ swarms: [planner, booking], model });
    const c = runtime.forSwarm(planner);
    await c.run('weekend');
    expect(await c.wait()).toEqual({ status: 'completed', result: 'booked' });
    const spec = model.requests[0]!.tools.find((t) => t.name === 'handoff_to_booking')!;
    expect(spec.parameters).toMatchObject({ type: 'object', required: ['event', 'seats'], properties: { seats: { type: 'integer' } } });
    expect(toolMessages(model.requests[1]!)[0]!.content).toMatch(/^Invalid input for swarm "booking": seats: /);
    expect(model.requests.find((r) => r.agentId === 'booking')!.messages[0]!.content).toBe('Book 2 seats for concert.');
    const plannerCalls = model.requests.filter((r) => r.agentId === 'planner');
    expect(toolMessages(plannerCalls[2]!).at(-1)!.content).toBe('{"confirmation":"ABC123"}');
  });
});

describe('parallel handoffs', () => {
  it('two agents and a child swarm in one response run concurrently; results in call order; a failing child is an error result', async () => {
    const slow = (ms: number, text: string) => async (req: ModelRequest) => (await sleep(ms, req.signal), { text });
    const fast = defineAgent({ id: 'fast', instructions: 'F' });
    const slowAgent = defineAgent({ id: 'slow', instructions: 'S' });
    const child = defineSwarm({ id: 'child', instructions: 'C' });
    const parent = defineSwarm({
      id: 'parent',
      instructions: 'P',
      handoffs: [handoff.toAgent(slowAgent), handoff.toAgent(fast), handoff.toSwarm(child)],
    });
    const model = queueModel({
      parent: [
        calls(['handoff_to_slow', { request: 's' }, 'c1'], ['handoff_to_fast', { request: 'f' }, 'c2'], ['handoff_to_child', { request: 'x' }, 'c3']),
        { text: 'joined' },
      ],
      slow: [slow(300, 'slow answer')],
      fast: [slow(150, 'fast answer')],
      child: [
        async (req) => {
          await sleep(250, req.signal);
          return call('fail', { reason: 'no capacity' });
        },
      ],
    });
    runtime = createRuntime({ swarms: [parent, child], agents: [fast, slowAgent], model });
    const c = runtime.forSwarm(parent, 'par');
    const started = Date.now();
    await c.run('go');
    await sleep(50);
    // All three are visible while they run, in the model's order.
    expect(await c.getResult()).toMatchObject({
      status: 'running',
      currentAgent: 'slow',
      currentChildSwarm: 'par:t1:2',
      inFlight: [
        { callId: 'c1', kind: 'agent', target: 'slow' },
        { callId: 'c2', kind: 'agent', target: 'fast' },
        { callId: 'c3', kind: 'swarm', target: 'child', childSwarmId: 'par:t1:2' },
      ],
    });
    expect(await c.wait()).toEqual({ status: 'completed', result: 'joined' });
    const elapsed = Date.now() - started;
    // Sequential would be 300 + 150 + 250 = 700 ms; concurrent ≈ 300 ms.
    expect(elapsed).toBeLessThan(600);
    const results = toolMessages(model.requests.at(-1)!);
    expect(results.map((m) => m.toolCallId)).toEqual(['c1', 'c2', 'c3']);
    expect(results[0]!.content).toBe('slow answer');
    expect(results[1]!.content).toBe('fast answer');
    expect(results[2]!.content).toBe('Swarm "child" (par:t1:2) failed: no capacity');
    const events = await collect(c.events());
    const done = events.map((e) => factOf(e, 'handoff-result')).filter(Boolean);
    // Completion order: fast first, then the child, then slow.
    expect(done.map((d) => [d!.callId, d!.ok])).toEqual([
      ['c2', true],
      ['c3', false],
      ['c1', true],
    ]);
  });
});

describe('customization', () => {
  const lookup = tool({ name: 'vip_lookup', description: 'VIP records', parameters: z.object({ id: z.string() }), execute: () => 'gold' });
  const ownTool = tool({ name: 'ticket_db', description: 'Tickets', parameters: z.object({}), execute: () => 'ok' });
  const escalation = defineAgent({ id: 'escalation', description: 'Escalates', instructions: 'Escalate.' });
  const faq = defineAgent({ id: 'faq', description: 'FAQ', instructions: 'Answer FAQs.' });
  const support = defineSwarm({
    id: 'support',
    instructions: 'Resolve the ticket.',
    handoffs: [handoff.toAgent(faq)],
    tools: [ownTool],
    maxTurns: 6,
    // Its turn limit ends it (the parent reads the failure) instead of pausing it for a human.
    onLimit: 'fail',
  });
  const triage = defineSwarm({ id: 'triage', instructions: 'Triage.', handoffs: [handoff.toSwarm(support).customizable()] });

  it('extends the child: extra instructions, agents, tools and turn limit reach its model request; its own stay', async () => {
    const model = queueModel({
      triage: [
        call('handoff_to_support', {
          request: 'refund please',
          customization: {
            additional_instructions: 'The customer is a VIP.',
            additional_agents: ['escalation'],
            additional_tools: ['vip_lookup'],
            max_turns_override: 2,
          },
        }),
        { text: 'triaged' },
      ],
      support: [call('vip_lookup', { id: '7' }), call('vip_lookup', { id: '7' })],
    });
    runtime = createRuntime({ swarms: [triage, support], agents: [escalation, faq], tools: [lookup], model });
    const c = runtime.forSwarm(triage, 't');
    await c.run('ticket');
    expect(await c.wait()).toEqual({ status: 'completed', result: 'triaged' });
    const child = model.requests.find((r) => r.agentId === 'support')!;
    expect(child.messages[0]!.content).toBe('Resolve the ticket.\n\nThe customer is a VIP.');
    expect(tools(child)).toEqual(['ticket_db', 'vip_lookup', 'handoff_to_faq', 'handoff_to_escalation', 'complete', 'pause', 'fail']);
    // max_turns_override: the child fails after two rounds
    expect(await runtime.forSwarm(support, 't:t1:0').getResult()).toEqual({
      status: 'failed',
      reason: 'maxTurns (2) reached without a result',
    });
    const spec = model.requests[0]!.tools.find((t) => t.name === 'handoff_to_support')!;
    expect(spec.parameters).toMatchObject({ properties: { request: { type: 'string' }, customization: { type: 'object' } } });
  });

  it('unknown agents or tools in a customization are a tool error for the parent, not a crash', async () => {
    const model = queueModel({
      triage: [
        call('handoff_to_support', { request: 'x', customization: { additional_agents: ['ghost'], additional_tools: ['nope'] } }),
        call('handoff_to_support', { request: 'x', customization: { remove_tools: ['ticket_db'] } }),
        { text: 'gave up' },
      ],
    });
    runtime = createRuntime({ swarms: [triage, support], agents: [escalation, faq], tools: [lookup], model });
    const c = runtime.forSwarm(triage);
    await c.run('ticket');
    expect(await c.wait()).toEqual({ status: 'completed', result: 'gave up' });
    expect(toolMessages(model.requests[1]!)[0]!.content).toBe('Invalid customization: unknown agents: ghost');
    expect(toolMessages(model.requests[2]!).at(-1)!.content).toMatch(/^Invalid customization: .*remove_tools/);
  });

  it('a non-customizable handoff refuses a customization', async () => {
    const plain = defineSwarm({ id: 'plain', instructions: 'P', handoffs: [handoff.toSwarm(support)] });
    const model = queueModel({ plain: [call('handoff_to_support', { request: 'x', customization: {} }), { text: 'ok' }] });
    runtime = createRuntime({ swarms: [plain, support], agents: [faq], model });
    const c = runtime.forSwarm(plain);
    await c.run('x');
    await c.wait();
    expect(toolMessages(model.requests[1]!)[0]!.content).toMatch(/cannot be customized/);
    expect(model.requests[0]!.tools.find((t) => t.name === 'handoff_to_support')!.parameters).not.toHaveProperty('properties.customization');
  });
});

describe('overrides, ad-hoc swarms, inline agents', () => {
  it('withParameters overrides instructions, handoffs, tools, maxTurns and onLimit for one run', async () => {
    const extra = tool({ name: 'extra', description: 'e', parameters: z.object({}), execute: () => 'x' });
    const s = defineSwarm({ id: 's', instructions: 'Original.', maxTurns: 5 });
    const model = queueModel({ s: [{ text: 'one' }, call('extra', {}), call('extra', {})] });
    runtime = createRuntime({ swarms: [s], model, tools: [extra] });
    await runtime.forSwarm(s).run('a');
    const o = runtime.forSwarm(s).withParameters({
      instructions: ({ input }) => `Override for ${input}.`,
      tools: [extra],
      handoffs: [handoff.inline({ id: 'helper', description: 'Helps', instructions: 'Help.' })],
      maxTurns: 2,
      onLimit: 'fail',
    });
    await o.run('b');
    expect(await o.wait()).toEqual({ status: 'failed', reason: 'maxTurns (2) reached without a result' });
    expect(model.requests[0]!.messages[0]!.content).toBe('Original.');
    expect(model.requests[1]!.messages[0]!.content).toBe('Override for b.');
    expect(tools(model.requests[1]!)).toEqual(['extra', 'handoff_to_helper', 'complete', 'pause', 'fail']);
  });

  it('an inline agent runs with its own instructions and tools, no registration needed', async () => {
    const spell = tool({ name: 'spell', description: 's', parameters: z.object({ w: z.string() }), execute: ({ w }) => w.toUpperCase() });
    const s = defineSwarm({
      id: 's',
      instructions: 'Write.',
      handoffs: [handoff.inline({ id: 'critic', description: 'Critiques drafts', instructions: 'Be harsh.', tools: [spell] })],
    });
    const model = queueModel({
      s: [call('handoff_to_critic', { request: 'draft v1' }), { text: 'final' }],
      critic: [call('spell', { w: 'ok' }), { text: 'needs work' }],
    });
    runtime = createRuntime({ swarms: [s], model });
    const c = runtime.forSwarm(s);
    await c.run('x');
    expect(await c.wait()).toEqual({ status: 'completed', result: 'final' });
    const critic = model.requests.find((r) => r.agentId === 'critic')!;
    expect(critic.messages[0]!.content).toBe('Be harsh.');
    expect(tools(critic)).toEqual(['spell']);
    expect(model.requests[0]!.tools.find((t) => t.name === 'handoff_to_critic')!.description).toBe('Critiques drafts');
  });

  it('an ad-hoc swarm runs from parameters alone, with a typed result validated from its stored schema', async () => {
    const model = queueModel({
      ['xswarm.adhoc']: [call('complete', { result: { items: 3 } }), call('complete', { result: { items: ['bread', 'cheese'] } })],
    });
    runtime = createRuntime({ model });
    const c = runtime.adhoc('picnic');
    await c.run({
      userMessage: 'Plan a picnic',
      instructions: 'You plan picnics.',
      result: z.object({ items: z.array(z.string()) }),
      maxTurns: 3,
      name: 'Picnic planner',
    });
    expect(await c.wait()).toEqual({ status: 'completed', result: { items: ['bread', 'cheese'] } });
    expect(model.requests[0]!.messages).toEqual([
      { role: 'system', content: 'You plan picnics.' },
      { role: 'user', content: 'Plan a picnic' },
    ]);
    expect(toolMessages(model.requests[1]!)[0]!.content).toMatch(/result schema/);
    await expect(runtime.adhoc().run({ userMessage: 'x' } as never)).rejects.toThrow(/needs \{ userMessage: string, instructions: string \}/);
  });
});

describe('registration', () => {
  it('swarms named by definition in handoffs register themselves, recursively', async () => {
    const leaf = defineSwarm({ id: 'leaf', instructions: 'L' });
    const mid = defineSwarm({ id: 'mid', instructions: 'M', handoffs: [handoff.toSwarm(leaf)] });
    const top = defineSwarm({ id: 'top', instructions: 'T', handoffs: [handoff.toSwarm(mid)] });
    const model = queueModel({
      top: [call('handoff_to_mid', { request: 'm' }), { text: 'top done' }],
      mid: [call('handoff_to_leaf', { request: 'l' }), { text: 'mid done' }],
      leaf: [{ text: 'leaf done' }],
    });
    runtime = createRuntime({ swarms: [top], model });
    expect(
      runtime
        .definitions()
        .map((d) => d.id)
        .sort(),
    ).toEqual(['leaf', 'mid', 'top']);
    const c = runtime.forSwarm(top, 'r');
    await c.run('x');
    expect(await c.wait()).toEqual({ status: 'completed', result: 'top done' });
    expect(() => createRuntime({ swarms: [top, defineSwarm({ id: 'leaf', instructions: 'other' })], model })).toThrow(
      'Duplicate swarm id "leaf" in handoffs of swarm "mid"',
    );
  });
});

describe('swarm registry', () => {
  it('honours the search limit of the swarm that searches', async () => {
    const a = defineSwarm({ id: 'weather-a', description: 'weather one', instructions: 'A' });
    const b = defineSwarm({ id: 'weather-b', description: 'weather two', instructions: 'B' });
    const one = defineSwarm({ id: 'one', instructions: 'Search.', tools: [swarmRegistry({ limit: 1 })] });
    const model = queueModel({ one: [call('swarm_registry_search', { query: 'weather' }, 's'), { text: 'ok' }] });
    runtime = createRuntime({ swarms: [one, a, b], model });
    const c = runtime.forSwarm(one);
    await c.run('x');
    await c.wait();
    const found = JSON.parse(toolMessages(model.requests[1]!)[0]!.content) as { matches: { id: string }[] };
    expect(found.matches.map((m) => m.id)).toEqual(['weather-a']);
  });

  const ticketing = defineSwarm({ id: 'ticketing', description: 'Books concert and museum tickets', instructions: 'Book.', customizable: true });
  const weatherSwarm = defineSwarm({ id: 'forecaster', description: 'Weather forecasts for a city', instructions: 'Forecast.' });
  const planner = defineSwarm({ id: 'task-planner', instructions: 'Find swarms for the tasks.', tools: [swarmRegistry()] });

  it('search returns matching definitions; handoff works only for ids a search returned', async () => {
    const model = queueModel({
      'task-planner': [
        call('swarm_registry_handoff', { swarm_id: 'ticketing', request: 'two tickets' }, 'early'),
        call('swarm_registry_search', { query: 'book tickets for a concert' }, 'search'),
        call('swarm_registry_handoff', { swarm_id: 'ticketing', request: 'two tickets', customization: { additional_instructions: 'Aisle seats.' } }, 'go'),
        { text: 'all booked' },
      ],
      ticketing: [{ text: 'Tickets T1, T2' }],
    });
    runtime = createRuntime({ swarms: [planner, ticketing, weatherSwarm], model });
    const c = runtime.forSwarm(planner, 'tp');
    await c.run('Weekend: concert');
    expect(await c.wait()).toEqual({ status: 'completed', result: 'all booked' });
    expect(tools(model.requests[0]!)).toEqual(['swarm_registry_search', 'swarm_registry_handoff', 'complete', 'pause', 'fail']);
    expect(toolMessages(model.requests[1]!)[0]!.content).toMatch(/was not returned by swarm_registry_search/);
    const found = JSON.parse(toolMessages(model.requests[2]!).at(-1)!.content) as {
      matches: { id: string; capabilities: string[]; customizable: boolean; inputSchema: unknown }[];
    };
    expect(found.matches.map((m) => m.id)).toEqual(['ticketing']);
    expect(found.matches[0]).toMatchObject({ customizable: true, inputSchema: { type: 'string' } });
    const own = model.requests.filter((r) => r.agentId === 'task-planner');
    expect(toolMessages(own[3]!).at(-1)).toEqual({ role: 'tool', toolCallId: 'go', content: 'Tickets T1, T2' });
    const child = model.requests.find((r) => r.agentId === 'ticketing')!;
    expect(child.messages[0]!.content).toBe('Book.\n\nAisle seats.');
    expect(await runtime.forSwarm(ticketing, 'tp:t3:0').getResult()).toEqual({ status: 'completed', result: 'Tickets T1, T2' });
  });
});
