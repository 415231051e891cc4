/**
 * The inspector page's fold (inspector/fold.js), over events recorded by a real runtime: a
 * planner handing off to an agent with a tool, then to a child swarm, then pausing for a human;
 * a swarm paused from outside while its handoff runs; a stopped and a failed swarm. Checked:
 * the state sequence the page shows (the machine's states, in order), the tree with its turns,
 * tokens and latency, the conversation, the pause's question, that the state at step N is the
 * fold of the first N events, and the diff between steps.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createRuntime, defineAgent, defineSwarm, handoff, type Runtime, scriptedModel, type SwarmEvent, tool } from '../../../src/index.js';
import { activeStates, countThrough, Folder, fold } from '../../../inspector/fold.js';
import { diffFolds } from '../../../inspector/diff.js';
import { stepAt } from '../../../inspector/playback.js';
import { collect } from '../../support/script.js';
import { until } from '../../support/wait.js';

let runtime: Runtime | undefined;
afterEach(async () => {
  await runtime?.close();
  runtime = undefined;
});

const usage = (inputTokens: number, outputTokens: number) => ({ inputTokens, outputTokens });

/** The states the page shows as the events come, without repeats. */
function stateSequence(events: readonly SwarmEvent[]): string[] {
  const folder = new Folder();
  const states: string[] = [];
  for (const e of events) {
    folder.push(e as never);
    if (states.at(-1) !== folder.state) states.push(folder.state);
  }
  return states;
}

/**
 * The planner of docs/inspect.md with a child swarm and a pause: it hands off to `weather`
 * (which calls `get_forecast`), then to the `booker` swarm, then asks a human, then answers.
 */
async function plannerRun() {
  const forecast = tool({
    name: 'get_forecast',
    description: 'The forecast for a day',
    parameters: z.object({ day: z.string() }),
    execute: async ({ day }) => ({ day, sky: 'sunny' }),
  });
  const weather = defineAgent({ id: 'weather', instructions: 'Forecast.', tools: [forecast] });
  const booker = defineSwarm({ id: 'booker', instructions: 'Book a table.' });
  const planner = defineSwarm({ id: 'planner', instructions: 'Plan the day.', handoffs: [handoff.toAgent(weather), handoff.toSwarm(booker)] });
  const model = scriptedModel((req) => {
    const results = req.messages.filter((m) => m.role === 'tool').length;
    if (req.agentId === 'planner') {
      if (results === 0) return { toolCalls: [{ id: 'h1', name: 'handoff_to_weather', arguments: '{"request":"Saturday?"}' }], usage: usage(100, 10) };
      if (results === 1) return { toolCalls: [{ id: 'h2', name: 'handoff_to_booker', arguments: '{"request":"A table for two"}' }], usage: usage(200, 20) };
      if (results === 2) return { toolCalls: [{ id: 'p1', name: 'pause', arguments: '{"reason":"Lunch or dinner?"}' }], usage: usage(300, 30) };
      return { text: 'Hike, then dinner.', usage: usage(400, 40) };
    }
    if (req.agentId === 'booker') return { text: 'Booked for 19:00.', usage: usage(7, 3) };
    return results === 0
      ? { toolCalls: [{ id: 't1', name: 'get_forecast', arguments: '{"day":"Saturday"}' }], usage: usage(50, 5) }
      : { text: 'Sunny.', usage: usage(60, 6) };
  });
  runtime = createRuntime({ swarms: [planner, booker], agents: [weather], model });
  const client = runtime.forSwarm(planner, 'sat');
  await client.run('Plan my Saturday');
  expect(await client.wait()).toMatchObject({ status: 'paused' });
  await client.resume('Dinner');
  expect(await client.wait()).toEqual({ status: 'completed', result: 'Hike, then dinner.' });
  return collect(client.events());
}

describe('fold: a planner, an agent with a tool, a child swarm, a pause', () => {
  it('shows the machine states in order: thinking → awaitingHandoff → thinking … → paused → thinking → completed', async () => {
    const events = await plannerRun();
    expect(stateSequence(events)).toEqual([
      'running.thinking',
      'awaitingHandoff', // to weather
      'running.thinking',
      'awaitingHandoff', // to the booker swarm
      'running.thinking',
      'running.deciding', // the pause call waits for a human
      'paused',
      'running.thinking', // the answer goes back to the model
      'completed',
    ]);
    // The state as the swarm's own status says at the end; its active states for the chart.
    const end = fold(events as never);
    expect(end.state).toBe('completed');
    expect(activeStates('running.thinking')).toEqual(['running.thinking', 'running']);
  });

  it('builds the tree: the swarm, the agent and its tool, the child swarm, with turns, tokens and latency', async () => {
    const events = await plannerRun();
    const { tree, tokens, turns, outcome } = fold(events as never);
    const byKind = tree.map((n) => [n.kind, n.id, n.parent]);
    expect(byKind).toEqual([
      ['swarm', 'sat', null],
      ['agent', 'weather', 'swarm'],
      ['tool', 'get_forecast', 'agent:weather'],
      ['child-swarm', 'sat:t2:0', 'swarm'],
    ]);
    const [swarm, agent, forecast, child] = tree;
    expect(swarm).toMatchObject({ turns: 4, inputTokens: 1000, outputTokens: 100, status: 'done', open: 0 });
    expect(agent).toMatchObject({ turns: 2, calls: 1, inputTokens: 110, outputTokens: 11, status: 'done', open: 0 });
    expect(forecast).toMatchObject({ calls: 1, turns: 0, status: 'done', open: 0 });
    expect(child).toMatchObject({ label: 'booker', calls: 1, status: 'done', open: 0 });
    for (const n of tree) expect(n.latencyMs).toBeGreaterThanOrEqual(0);
    expect(swarm!.latencyMs).toBeGreaterThan(0);
    // Every model call of this stream (the child swarm's are in its own stream).
    expect(tokens).toEqual({ input: 1110, output: 111 });
    expect(turns).toBe(4);
    expect(outcome).toBe('Hike, then dinner.');
  });

  it('tells the conversation: input, responses, tool and handoff results, the pause, the answer', async () => {
    const events = await plannerRun();
    const { conversation } = fold(events as never);
    expect(conversation.map((m) => [m.role, m.speaker, m.nested])).toEqual([
      ['user', 'user', false],
      ['assistant', 'planner', false], // → handoff_to_weather
      ['assistant', 'weather', true], // → get_forecast
      ['tool', 'get_forecast', true],
      ['assistant', 'weather', true],
      ['tool', 'weather', false], // the handoff's result
      ['assistant', 'planner', false], // → handoff_to_booker
      ['tool', 'booker', false],
      ['assistant', 'planner', false], // → pause
      ['status', 'planner', false],
      ['user', 'human', false],
      ['assistant', 'planner', false],
    ]);
    expect(conversation[0]!.text).toBe('Plan my Saturday');
    expect(conversation[1]!.calls).toEqual(['handoff_to_weather({"request":"Saturday?"})']);
    expect(conversation[5]!.text).toBe('Sunny.');
    expect(conversation[9]!.text).toBe('Paused: Lunch or dinner?');
    expect(conversation[10]!.text).toBe('Dinner');
    expect(conversation.at(-1)!.text).toBe('Hike, then dinner.');
  });

  it('the swarm at step N is the fold of the first N events; the pause question shows while paused', async () => {
    const events = await plannerRun();
    const folder = new Folder();
    const paused = events.find((e) => e.kind === 'status-update' && e.metadata.type === 'paused')!.seq;
    const resumed = events.find((e) => e.kind === 'status-update' && e.metadata.type === 'resumed')!.seq;
    for (const [i, e] of events.entries()) {
      folder.push(e as never);
      const live = folder.snapshot();
      const replayed = fold(events as never, e.seq);
      expect(replayed).toEqual(live);
      expect(replayed.count).toBe(i + 1);
      expect(fold(events.slice(0, i + 1) as never)).toEqual(live);
      expect(live.pauseQuestion).toBe(e.seq >= paused && e.seq < resumed ? 'Lunch or dinner?' : null);
    }
    expect(fold(events as never, 0)).toMatchObject({ seq: 0, state: '', tree: [], conversation: [] });
    // Step 3 of a finished swarm: started, nothing asked of the model yet.
    expect(fold(events as never, 3).state).toBe('running.thinking');
  });

  it('a snapshot stays as it was while the fold goes on', async () => {
    const events = await plannerRun();
    const folder = new Folder();
    for (const e of events.slice(0, 10)) folder.push(e as never);
    const early = folder.snapshot();
    const copy = structuredClone(early);
    for (const e of events.slice(10)) folder.push(e as never);
    expect(early).toEqual(copy);
  });

  it('diffs consecutive steps: the state change, the new event, the new message, the changed nodes', async () => {
    const events = await plannerRun();
    const handoffSeq = events.find((e) => e.kind === 'internal:llm-call' && e.scope === '' && e.turn === 1)!.seq;
    const { at, before, diff } = stepAt(events as never, handoffSeq);
    expect(before.seq).toBe(handoffSeq - 1);
    expect(at.seq).toBe(handoffSeq);
    expect(diff.state).toEqual({ from: 'running.thinking', to: 'awaitingHandoff' });
    expect(diff.events.map((e) => e.seq)).toEqual([handoffSeq]);
    expect(diff.messages.map((m) => m.calls)).toEqual([['handoff_to_weather({"request":"Saturday?"})']]);
    expect(diff.nodes).toEqual([expect.objectContaining({ key: 'swarm', change: 'changed' })]);
    expect(diff.nodes[0]!.after.turns - diff.nodes[0]!.before!.turns).toBe(1);

    // The agent's node appears with the handoff fact.
    const agentHandoff = events.find((e) => e.kind === 'status-update' && e.metadata.type === 'agent-handoff')!.seq;
    const step = stepAt(events as never, agentHandoff);
    expect(step.diff.state).toBeNull();
    expect(step.diff.nodes).toEqual([expect.objectContaining({ key: 'agent:weather', kind: 'agent', id: 'weather', change: 'added', before: null })]);

    // A checkpoint changes nothing shown; a span of steps lists each event once.
    const checkpoint = events.find((e) => e.kind === 'internal:checkpoint' && e.seq > 3)!.seq;
    expect(stepAt(events as never, checkpoint).diff).toMatchObject({ state: null, messages: [], nodes: [] });
    const whole = diffFolds(fold(events as never, 0), fold(events as never), events as never);
    expect(whole.events.map((e) => e.seq)).toEqual(events.map((e) => e.seq));
    expect(whole.messages).toHaveLength(fold(events as never).conversation.length);
  });
});

describe('fold: paused from outside, stopped, failed', () => {
  it('a pause while a handoff runs resumes to awaitingHandoff; the tree shows the agent running', async () => {
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const helper = defineAgent({ id: 'helper', instructions: 'Help.' });
    const boss = defineSwarm({ id: 'boss', instructions: 'Delegate.', handoffs: [handoff.toAgent(helper)] });
    const model = scriptedModel(async (req) => {
      if (req.agentId === 'helper') return gate.then(() => ({ text: 'helped' }));
      return req.messages.some((m) => m.role === 'tool') ? { text: 'done' } : { toolCalls: [{ id: 'h', name: 'handoff_to_helper', arguments: '{"request":"help"}' }] };
    });
    runtime = createRuntime({ swarms: [boss], agents: [helper], model });
    const client = runtime.forSwarm(boss, 'b1');
    await client.run('go');
    const seen: SwarmEvent[] = [];
    const reading = (async () => {
      for await (const e of client.events()) seen.push(e);
    })();
    await until('the handoff', () => seen.some((e) => e.kind === 'status-update' && e.metadata.type === 'agent-handoff'));
    expect(fold(seen as never).state).toBe('awaitingHandoff');
    expect(fold(seen as never).tree.find((n) => n.kind === 'agent')).toMatchObject({ id: 'helper', status: 'running', open: 1 });
    await client.pause('Hold on');
    await until('the pause', () => fold(seen as never).state === 'paused');
    expect(fold(seen as never).pauseQuestion).toBe('Hold on');
    await client.resume();
    await until('the resume', () => seen.some((e) => e.kind === 'status-update' && e.metadata.type === 'resumed'));
    expect(fold(seen as never).state).toBe('awaitingHandoff');
    release();
    await reading;
    expect(stateSequence(seen)).toEqual(['running.thinking', 'awaitingHandoff', 'paused', 'awaitingHandoff', 'running.thinking', 'completed']);
  });

  it('a stop while the model thinks ends in stopped, with the reason said', async () => {
    const slow = defineSwarm({ id: 'slow', instructions: 'Think.' });
    const model = scriptedModel((req) => new Promise((resolve) => req.signal?.addEventListener('abort', () => resolve({ text: 'late' }))));
    runtime = createRuntime({ swarms: [slow], model });
    const client = runtime.forSwarm(slow, 's1');
    await client.run('x');
    await client.stop('enough');
    const events = await collect(client.events());
    expect(stateSequence(events)).toEqual(['running.thinking', 'stopped']);
    const end = fold(events as never);
    expect(end.tree[0]).toMatchObject({ kind: 'swarm', status: 'stopped' });
    expect(end.conversation.at(-1)).toMatchObject({ role: 'status', text: 'Stopped: enough' });
  });

  it("turns used up with onLimit 'fail': the last round decides, then fails", async () => {
    const tick = tool({ name: 'tick', description: 'Tick', parameters: z.object({}), execute: async () => 'tock' });
    const loop = defineSwarm({ id: 'loop', instructions: 'Loop.', tools: [tick], maxTurns: 2, onLimit: 'fail' });
    const model = scriptedModel(() => ({ toolCalls: [{ id: `c${Math.random()}`, name: 'tick', arguments: '{}' }], usage: usage(1, 1) }));
    runtime = createRuntime({ swarms: [loop], model });
    const client = runtime.forSwarm(loop, 'l1');
    await client.run('x');
    expect((await client.wait()).status).toBe('failed');
    const events = await collect(client.events());
    expect(stateSequence(events)).toEqual([
      'running.thinking',
      'running.acting',
      'running.thinking',
      'running.acting',
      'running.thinking', // the last tool result: the machine's guard sees the limit…
      'running.deciding', // …which turn-completed says, and deciding fails the swarm
      'failed',
    ]);
    const end = fold(events as never);
    expect(end.tree.map((n) => [n.kind, n.id, n.calls])).toEqual([
      ['swarm', 'l1', 0],
      ['tool', 'tick', 2],
    ]);
    expect(end.tokens).toEqual({ input: 2, output: 2 });
  });

  it('turns used up (the default): paused at the limit; extended and resumed, it thinks again and completes', async () => {
    const tick = tool({ name: 'tick', description: 'Tick', parameters: z.object({}), execute: async () => 'tock' });
    const loop = defineSwarm({ id: 'loop', instructions: 'Loop.', tools: [tick], maxTurns: 1 });
    const model = scriptedModel((req) =>
      req.messages.some((m) => m.role === 'user' && m.content === 'finish') ? { text: 'finished' } : { toolCalls: [{ id: 'c1', name: 'tick', arguments: '{}' }] },
    );
    runtime = createRuntime({ swarms: [loop], model });
    const client = runtime.forSwarm(loop, 'l2');
    await client.run('x');
    expect(await client.wait()).toMatchObject({ status: 'paused', reason: { type: 'LIMIT' } });
    await client.extend({ maxTurns: 2 });
    await client.resume('finish');
    expect(await client.wait()).toEqual({ status: 'completed', result: 'finished' });
    const events = await collect(client.events());
    expect(stateSequence(events)).toEqual(['running.thinking', 'running.acting', 'running.thinking', 'running.deciding', 'paused', 'running.thinking', 'completed']);
    const end = fold(events as never);
    expect(end.conversation.map((m) => m.text)).toContain('Limit raised: maxTurns 2 (was 1)');
  });
});

describe('countThrough', () => {
  it('counts the events at or before a seq, by binary search', () => {
    const events = [1, 2, 3, 5, 8].map((seq) => ({ seq }));
    expect([0, 1, 2, 4, 5, 7, 8, 100].map((s) => countThrough(events, s))).toEqual([0, 1, 2, 3, 4, 4, 5, 5]);
    expect(countThrough([], 3)).toBe(0);
  });
});

describe('fold: a remote agent', () => {
  it('a handoff planned as remote makes a remote node, timed from the handoff to its result', () => {
    const at = (ms: number) => new Date(1_700_000_000_000 + ms).toISOString();
    const status = (seq: number, ms: number, metadata: unknown) => ({
      kind: 'status-update',
      seq,
      swarmId: 'r',
      status: { state: 'working', timestamp: at(ms) },
      final: false,
      metadata,
    });
    const events = [
      { kind: 'task', id: 'r', seq: 1, swarmId: 'r', status: { state: 'submitted', timestamp: at(0) }, metadata: { definitionId: 'd' }, history: [] },
      status(2, 0, { type: 'started', definitionId: 'd' }),
      {
        kind: 'internal:llm-call',
        seq: 3,
        swarmId: 'r',
        timestamp: 1_700_000_000_010,
        agent: 'd',
        scope: '',
        turn: 1,
        response: { toolCalls: [{ id: 'x', name: 'handoff_to_travel', arguments: '{"request":"Rome?"}' }] },
        durationMs: 10,
        calls: [{ id: 'x', name: 'handoff_to_travel', kind: 'remote', agentId: 'travel', url: 'http://127.0.0.1:1/', request: 'Rome?' }],
        verdict: { type: 'continue' },
      },
      status(4, 10, { type: 'agent-handoff', from: 'd', to: 'travel', callId: 'x', request: 'Rome?' }),
      status(5, 260, { type: 'handoff-result', from: 'travel', to: 'd', callId: 'x', ok: true, content: 'Go.', key: 'k' }),
    ];
    const end = fold(events as never);
    expect(stateSequence(events as never)).toEqual(['running.thinking', 'awaitingHandoff', 'running.thinking']);
    expect(end.tree.find((n) => n.kind === 'remote')).toMatchObject({ key: 'remote:travel', id: 'travel', calls: 1, open: 0, status: 'done', latencyMs: 250 });
    expect(end.tree.some((n) => n.kind === 'agent')).toBe(false);
  });
});
