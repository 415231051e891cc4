/**
 * The agent loop, row by row of the termination table in DESIGN.md, plus the guards.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createRuntime, defineAgent, defineSwarm, factOf, handoff, type Runtime, type SwarmEvent, tool } from '../../src/index.js';
import { call, calls, collect, queueModel, toolMessages } from '../support/script.js';
import { sleep } from '../support/sleep.js';

let runtime: Runtime | undefined;
afterEach(async () => {
  await runtime?.close();
  runtime = undefined;
});

describe('regular tools', () => {
  it('runs several tool calls of one response concurrently and feeds results back in call order', async () => {
    const log: string[] = [];
    const slow = tool({
      name: 'slow',
      description: 'slow',
      parameters: z.object({ n: z.number() }),
      execute: async ({ n }) => {
        log.push('slow:start');
        await sleep(80);
        log.push('slow:end');
        return { n, which: 'slow' };
      },
    });
    const fast = tool({
      name: 'fast',
      description: 'fast',
      parameters: z.object({ n: z.number() }),
      execute: async ({ n }) => {
        log.push('fast:start');
        await sleep(5);
        log.push('fast:end');
        return `fast ${n}`;
      },
    });
    const model = queueModel({
      s: [calls(['slow', { n: 1 }, 'a'], ['fast', { n: 2 }, 'b']), { text: 'done' }],
    });
    const s = defineSwarm({ id: 's', instructions: 'go', tools: [slow, fast] });
    runtime = createRuntime({ swarms: [s], model });
    const c = runtime.forSwarm(s);
    await c.run('x');
    expect(await c.wait()).toEqual({ status: 'completed', result: 'done' });
    // Both started before the slow one finished: concurrent, not sequential.
    expect(log.indexOf('fast:start')).toBeLessThan(log.indexOf('slow:end'));
    expect(log.indexOf('fast:end')).toBeLessThan(log.indexOf('slow:end'));
    const second = model.requests[1]!;
    expect(toolMessages(second).map((m) => [m.toolCallId, m.content])).toEqual([
      ['a', '{"n":1,"which":"slow"}'],
      ['b', 'fast 2'],
    ]);
  });

  it('gives tools a stable idempotency key, the swarm id and the caller', async () => {
    const seen: unknown[] = [];
    const t = tool({
      name: 'probe',
      description: 'p',
      parameters: z.object({}),
      execute: (_args, ctx) => {
        seen.push({ swarmId: ctx.swarmId, agentId: ctx.agentId, toolCallId: ctx.toolCallId, key: ctx.idempotencyKey });
        expect(ctx.signal).toBeInstanceOf(AbortSignal);
        return 'ok';
      },
    });
    const s = defineSwarm({ id: 'orch', instructions: 'go', tools: [t] });
    runtime = createRuntime({ swarms: [s], model: queueModel({ orch: [call('probe', {}, 'c9'), { text: 'fine' }] }) });
    const c = runtime.forSwarm(s, 'swarm-7');
    await c.run('x');
    await c.wait();
    expect(seen).toEqual([{ swarmId: 'swarm-7', agentId: 'orch', toolCallId: 'c9', key: 'swarm-7:t1:c9' }]);
  });
});

describe('agent handoffs', () => {
  it('runs the agent with its own instructions, tools and loop; its answer is the tool result', async () => {
    const forecast = tool({
      name: 'get_forecast',
      description: 'forecast',
      parameters: z.object({ day: z.string() }),
      execute: ({ day }) => ({ day, sky: 'sunny' }),
    });
    const weather = defineAgent({
      id: 'weather-agent',
      description: 'Weather expert',
      instructions: 'You are a weather expert.',
      tools: [forecast],
    });
    const model = queueModel({
      planner: [call('handoff_to_weather_agent', { request: 'forecast for Saturday' }, 'h1'), { text: 'Go hiking.' }],
      'weather-agent': [call('get_forecast', { day: 'Saturday' }, 'f1'), { text: 'Saturday is sunny.' }],
    });
    const planner = defineSwarm({ id: 'planner', instructions: 'Plan.', handoffs: [handoff.toAgent(weather)] });
    runtime = createRuntime({ swarms: [planner], model });
    const c = runtime.forSwarm(planner);
    await c.run('weekend');
    expect(await c.wait()).toEqual({ status: 'completed', result: 'Go hiking.' });

    const first = model.requests[0]!;
    const handoffTool = first.tools.find((t) => t.name === 'handoff_to_weather_agent')!;
    expect(handoffTool.description).toBe('Weather expert');
    expect(handoffTool.parameters).toMatchObject({ properties: { request: { type: 'string' } }, required: ['request'] });
    expect(first.tools.map((t) => t.name)).toEqual(['handoff_to_weather_agent', 'complete', 'pause', 'fail']);

    const agentFirst = model.requests.find((r) => r.agentId === 'weather-agent')!;
    expect(agentFirst.messages[0]).toEqual({ role: 'system', content: 'You are a weather expert.' });
    expect(agentFirst.messages.at(-1)).toEqual({ role: 'user', content: 'forecast for Saturday' });
    expect(agentFirst.tools.map((t) => t.name)).toEqual(['get_forecast']);
    const agentSecond = model.requests.filter((r) => r.agentId === 'weather-agent')[1]!;
    expect(toolMessages(agentSecond)[0]!.content).toBe('{"day":"Saturday","sky":"sunny"}');

    const last = model.requests.at(-1)!;
    expect(last.agentId).toBe('planner');
    expect(toolMessages(last)).toEqual([{ role: 'tool', toolCallId: 'h1', content: 'Saturday is sunny.' }]);
  });

  it('agents of one swarm share its session: a later agent sees earlier exchanges', async () => {
    const a = defineAgent({ id: 'a', instructions: 'A' });
    const b = defineAgent({ id: 'b', instructions: 'B' });
    const model = queueModel({
      s: [call('handoff_to_a', { request: 'first question' }), call('handoff_to_b', { request: 'second' }), { text: 'ok' }],
      a: [{ text: 'answer from a' }],
      b: [{ text: 'answer from b' }],
    });
    const s = defineSwarm({ id: 's', instructions: 'go', handoffs: [handoff.toAgent(a), handoff.toAgent(b)] });
    runtime = createRuntime({ swarms: [s], model });
    const c = runtime.forSwarm(s);
    await c.run('x');
    await c.wait();
    const bReq = model.requests.find((r) => r.agentId === 'b')!;
    const text = bReq.messages.map((m) => m.content).join('\n');
    expect(text).toContain('first question');
    expect(text).toContain('answer from a');
  });

  it('reports the handoff as running with currentAgent while the agent works, and an agent failure as an error result', async () => {
    const a = defineAgent({ id: 'slowpoke', instructions: 'A' });
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const model = queueModel({
      s: [call('handoff_to_slowpoke', { request: 'q' }, 'h'), { text: 'recovered' }],
      slowpoke: [
        async () => {
          await gate;
          throw new Error('agent model exploded');
        },
      ],
    });
    const s = defineSwarm({ id: 's', instructions: 'go', handoffs: [handoff.toAgent(a)] });
    runtime = createRuntime({ swarms: [s], model });
    const c = runtime.forSwarm(s);
    await c.run('x');
    await sleep(20);
    expect(await c.getResult()).toEqual({
      status: 'running',
      currentTurn: 1,
      maxTurns: 10,
      currentAgent: 'slowpoke',
      inFlight: [{ callId: 'h', kind: 'agent', target: 'slowpoke' }],
    });
    release();
    expect(await c.wait()).toEqual({ status: 'completed', result: 'recovered' });
    const result = toolMessages(model.requests.at(-1)!)[0]!;
    expect(result.content).toContain('agent model exploded');
    const events = await collect(c.events());
    expect(events.map((e) => factOf(e, 'handoff-result')).find(Boolean)).toMatchObject({ ok: false, from: 'slowpoke' });
  });
});

describe('termination', () => {
  const typed = z.object({ day: z.string(), activities: z.array(z.string()) });

  it('complete(result) validates against the result schema: invalid is fed back, valid completes', async () => {
    const model = queueModel({
      s: [call('complete', { result: { day: 1 } }, 'bad'), call('complete', { result: { day: 'Sat', activities: ['hike'] } })],
    });
    const s = defineSwarm({ id: 's', instructions: 'go', result: typed });
    runtime = createRuntime({ swarms: [s], model });
    const c = runtime.forSwarm(s);
    await c.run('x');
    expect(await c.wait()).toEqual({ status: 'completed', result: { day: 'Sat', activities: ['hike'] } });
    const fed = toolMessages(model.requests[1]!)[0]!;
    expect(fed.toolCallId).toBe('bad');
    expect(fed.content).toMatch(/result schema/);
    expect(fed.content).toMatch(/day/);
    // complete's parameters carry the result schema
    const complete = model.requests[0]!.tools.find((t) => t.name === 'complete')!;
    expect(complete.parameters).toMatchObject({ properties: { result: { type: 'object', required: ['day', 'activities'] } } });
  });

  it('fail(reason) fails the swarm with that reason', async () => {
    const s = defineSwarm({ id: 's', instructions: 'go' });
    runtime = createRuntime({ swarms: [s], model: queueModel({ s: [call('fail', { reason: 'no tickets left' })] }) });
    const c = runtime.forSwarm(s);
    await c.run('x');
    expect(await c.wait()).toEqual({ status: 'failed', reason: 'no tickets left' });
    const events = await collect(c.events());
    expect(events.at(-1)).toMatchObject({ kind: 'status-update', status: { state: 'failed' }, final: true });
  });

  it('text that conforms to a typed result schema completes (type-match), also inside a code fence', async () => {
    const s = defineSwarm({ id: 's', instructions: 'go', result: typed });
    runtime = createRuntime({
      swarms: [s],
      model: queueModel({ s: [{ text: 'Here:\n```json\n{"day":"Sun","activities":["swim"]}\n```' }] }),
    });
    const c = runtime.forSwarm(s);
    await c.run('x');
    expect(await c.wait()).toEqual({ status: 'completed', result: { day: 'Sun', activities: ['swim'] } });
  });

  it('clean text completes a string swarm', async () => {
    const s = defineSwarm({ id: 's', instructions: 'go' });
    runtime = createRuntime({ swarms: [s], model: queueModel({ s: [{ text: 'All done.' }] }) });
    const c = runtime.forSwarm(s);
    await c.run('x');
    expect(await c.wait()).toEqual({ status: 'completed', result: 'All done.' });
  });

  it('clean text that does not parse as the typed result earns a correction round', async () => {
    const model = queueModel({ s: [{ text: 'Saturday, hiking' }, { text: '{"day":"Sat","activities":[]}' }] });
    const s = defineSwarm({ id: 's', instructions: 'go', result: typed });
    runtime = createRuntime({ swarms: [s], model });
    const c = runtime.forSwarm(s);
    await c.run('x');
    expect(await c.wait()).toEqual({ status: 'completed', result: { day: 'Sat', activities: [] } });
    const correction = model.requests[1]!.messages.at(-1)!;
    expect(correction.role).toBe('user');
    expect(correction.content).toMatch(/result schema/);
    const events = await collect(c.events());
    expect(events.map((e) => factOf(e, 'turn-completed')).filter(Boolean)).toEqual([
      { type: 'turn-completed', turn: 1, maxTurns: 10, activeAgent: 's' },
      { type: 'turn-completed', turn: 2, maxTurns: 10, activeAgent: 's' },
    ]);
  });

  it('maxTurns reached pauses the swarm (default 10), saying what tripped; with onLimit: fail it fails', async () => {
    const t = tool({ name: 'noop', description: 'n', parameters: z.object({}), execute: () => 'ok' });
    const model = queueModel({ s: Array.from({ length: 12 }, (_, i) => call('noop', {}, `n${i}`)) });
    const s = defineSwarm({ id: 's', instructions: 'go', tools: [t] });
    runtime = createRuntime({ swarms: [s], model });
    const c = runtime.forSwarm(s);
    await c.run('x');
    expect(await c.wait()).toEqual({
      status: 'paused',
      reason: {
        type: 'LIMIT',
        message: "maxTurns (10) reached without a result: extend the swarm's limits to go on, or stop it",
        limit: { limit: 'maxTurns', max: 10, spent: 10, left: 0 },
        pauseId: 'limit:t10:1',
      },
      currentTurn: 10,
      maxTurns: 10,
    });
    expect(model.requests).toHaveLength(10);

    const failing = defineSwarm({ id: 'f', instructions: 'go', tools: [t], onLimit: 'fail' });
    const failModel = queueModel({ f: Array.from({ length: 12 }, (_, i) => call('noop', {}, `n${i}`)) });
    await runtime.close();
    runtime = createRuntime({ swarms: [failing], model: failModel });
    const f = runtime.forSwarm(failing);
    await f.run('x');
    expect(await f.wait()).toEqual({ status: 'failed', reason: 'maxTurns (10) reached without a result' });
    expect(failModel.requests).toHaveLength(10);
  });

  it('maxTurns may be a function of the input', async () => {
    const t = tool({ name: 'noop', description: 'n', parameters: z.object({}), execute: () => 'ok' });
    const model = queueModel({ s: Array.from({ length: 5 }, (_, i) => call('noop', {}, `n${i}`)) });
    const s = defineSwarm({
      id: 's',
      input: z.object({ budget: z.number() }),
      instructions: ({ input }) => `budget ${input.budget}`,
      tools: [t],
      maxTurns: ({ input }) => input.budget,
    });
    runtime = createRuntime({ swarms: [s], model });
    const c = runtime.forSwarm(s);
    await c.run({ budget: 2 });
    expect(await c.wait()).toMatchObject({ status: 'paused', reason: { type: 'LIMIT', limit: { max: 2, spent: 2 } }, maxTurns: 2 });
    expect(model.requests[0]!.messages[0]!.content).toBe('budget 2');
    expect(model.requests[0]!.messages[1]!.content).toBe('{"budget":2}');
  });

  it('a fatal model error fails the swarm with the error', async () => {
    const s = defineSwarm({ id: 's', instructions: 'go' });
    runtime = createRuntime({
      swarms: [s],
      model: queueModel({
        s: [
          () => {
            throw new Error('503 upstream down');
          },
        ],
      }),
    });
    const c = runtime.forSwarm(s);
    await c.run('x');
    expect(await c.wait()).toEqual({ status: 'failed', reason: 'Model call failed: 503 upstream down' });
  });

  it('an input guardrail rejection fails the swarm before any model call', async () => {
    const model = queueModel({ s: [{ text: 'never' }] });
    const s = defineSwarm({
      id: 's',
      instructions: 'go',
      guardrails: { input: [{ name: 'no-secrets', check: (input) => !input.includes('password') || 'mentions a password' }] },
    });
    runtime = createRuntime({ swarms: [s], model });
    const c = runtime.forSwarm(s);
    await c.run('my password is hunter2');
    expect(await c.wait()).toEqual({
      status: 'failed',
      reason: 'Input guardrail rejected the input: no-secrets: mentions a password',
      rejected: { guardrail: 'no-secrets', step: 'input' },
    });
    expect(model.requests).toHaveLength(0);
  });

  it('an output guardrail rejection fails the swarm; a passing one lets it complete', async () => {
    const s = defineSwarm({
      id: 's',
      instructions: 'go',
      guardrails: {
        output: [
          {
            name: 'polite',
            check: async (out) => {
              if (out.includes('stupid')) throw new Error('rude word');
              return true as const;
            },
          },
        ],
      },
    });
    runtime = createRuntime({ swarms: [s], model: queueModel({ s: [{ text: 'that is stupid' }, { text: 'that is fine' }] }) });
    const bad = runtime.forSwarm(s);
    await bad.run('x');
    expect(await bad.wait()).toEqual({
      status: 'failed',
      reason: 'Output guardrail rejected the result: polite: the guardrail threw an error: rude word',
      rejected: { guardrail: 'polite', step: 'output' },
    });
    const good = runtime.forSwarm(s);
    await good.run('y');
    expect(await good.wait()).toEqual({ status: 'completed', result: 'that is fine' });
  });
});

describe('pause, resume, stop', () => {
  it('pause(reason) from the model pauses; resume(message) answers it in the same conversation', async () => {
    const model = queueModel({
      s: [call('pause', { reason: 'Which day?', context: 'weekend plans' }, 'p1'), { text: 'Sunday it is.' }],
    });
    const s = defineSwarm({ id: 's', instructions: 'go' });
    runtime = createRuntime({ swarms: [s], model });
    const c = runtime.forSwarm(s);
    await c.run('plan');
    expect(await c.wait()).toEqual({
      status: 'paused',
      reason: { type: 'HITL', message: 'Which day?\n\nweekend plans', pauseId: 'p1' },
      currentTurn: 1,
      maxTurns: 10,
    });
    await c.resume('Sunday');
    expect(await c.wait()).toEqual({ status: 'completed', result: 'Sunday it is.' });
    const after = model.requests[1]!;
    expect(after.messages[0]).toEqual(model.requests[0]!.messages[0]); // same conversation
    expect(toolMessages(after)).toEqual([{ role: 'tool', toolCallId: 'p1', content: 'Sunday' }]);
    const events = await collect(c.events());
    const states = events.flatMap((e) => (e.kind === 'status-update' ? [e.status.state] : []));
    expect(states).toContain('input-required');
    expect(events.map((e) => factOf(e, 'resumed')).find(Boolean)).toEqual({ type: 'resumed', message: 'Sunday' });
  });

  it('an external pause aborts the in-flight model call; resume re-issues it with the human message', async () => {
    let aborted = 0;
    const model = queueModel({
      s: [
        async (req) => {
          try {
            await sleep(5_000, req.signal);
          } catch (e) {
            aborted++;
            throw e;
          }
          return { text: 'too late' };
        },
        { text: 'resumed answer' },
      ],
    });
    const s = defineSwarm({ id: 's', instructions: 'go' });
    runtime = createRuntime({ swarms: [s], model });
    const c = runtime.forSwarm(s);
    await c.run('x');
    await sleep(20);
    await c.pause({ type: 'EMERGENCY', message: 'hold on' });
    await sleep(10);
    expect(aborted).toBe(1);
    expect(await c.getResult()).toEqual({
      status: 'paused',
      reason: { type: 'EMERGENCY', message: 'hold on', pauseId: 'pause:t0:1' },
      currentTurn: 0,
      maxTurns: 10,
    });
    await c.resume('please be brief');
    expect(await c.wait()).toEqual({ status: 'completed', result: 'resumed answer' });
    expect(model.requests).toHaveLength(2);
    expect(model.requests[1]!.messages.slice(0, 2)).toEqual(model.requests[0]!.messages);
    expect(model.requests[1]!.messages.at(-1)).toEqual({ role: 'user', content: 'please be brief' });
  });

  it('pausing during a handoff pauses the agent; resume continues it', async () => {
    let agentCalls = 0;
    const a = defineAgent({ id: 'a', instructions: 'A' });
    const model = queueModel({
      s: [call('handoff_to_a', { request: 'q' }, 'h'), { text: 'end' }],
      a: [
        async (req) => {
          agentCalls++;
          await sleep(5_000, req.signal);
          return { text: 'never' };
        },
        () => {
          agentCalls++;
          return { text: 'agent answer' };
        },
      ],
    });
    const s = defineSwarm({ id: 's', instructions: 'go', handoffs: [handoff.toAgent(a)] });
    runtime = createRuntime({ swarms: [s], model });
    const c = runtime.forSwarm(s);
    await c.run('x');
    await sleep(20);
    await c.pause('wait');
    expect((await c.getResult()).status).toBe('paused');
    await c.resume();
    expect(await c.wait()).toEqual({ status: 'completed', result: 'end' });
    expect(agentCalls).toBe(2);
    expect(toolMessages(model.requests.at(-1)!)[0]!.content).toBe('agent answer');
  });

  it('stop ends the swarm from running, paused and awaitingHandoff, aborting what runs', async () => {
    const aborted: string[] = [];
    const a = defineAgent({ id: 'a', instructions: 'A' });
    const hang = (name: string) => async (req: { signal: AbortSignal }) => {
      try {
        await sleep(5_000, req.signal);
      } catch (e) {
        aborted.push(name);
        throw e;
      }
      return { text: 'never' };
    };
    const s = defineSwarm({ id: 's', instructions: 'go', handoffs: [handoff.toAgent(a)] });
    const model = queueModel({
      s: [hang('orchestrator'), call('pause', { reason: 'ok?' }), call('handoff_to_a', { request: 'q' })],
      a: [hang('agent')],
    });
    runtime = createRuntime({ swarms: [s], model });

    const running = runtime.forSwarm(s);
    await running.run('1');
    await sleep(10);
    await running.stop('user cancelled');
    expect(await running.getResult()).toEqual({ status: 'stopped', reason: 'user cancelled' });

    const paused = runtime.forSwarm(s);
    await paused.run('2');
    await paused.wait();
    await paused.stop('not needed');
    expect(await paused.getResult()).toEqual({ status: 'stopped', reason: 'not needed' });

    const handing = runtime.forSwarm(s);
    await handing.run('3');
    await sleep(20);
    expect(await handing.getResult()).toMatchObject({ status: 'running', currentAgent: 'a' });
    await handing.stop('enough');
    await sleep(10);
    expect(await handing.getResult()).toEqual({ status: 'stopped', reason: 'enough' });
    expect(aborted).toEqual(['orchestrator', 'agent']);
    const events = await collect(handing.events());
    expect(events.at(-1)).toMatchObject({ kind: 'status-update', status: { state: 'canceled' }, final: true, metadata: { type: 'stopped', reason: 'enough' } });
  });
});

describe('what a model says never crashes a swarm', () => {
  const weather = tool({
    name: 'get_forecast',
    description: 'f',
    parameters: z.object({ day: z.enum(['Saturday', 'Sunday']) }),
    execute: ({ day }) => `${day}: sunny`,
  });

  async function feedback(first: { toolCalls?: { id: string; name: string; arguments: string }[]; text?: string }) {
    const model = queueModel({ s: [first, { text: 'recovered' }] });
    const s = defineSwarm({ id: 's', instructions: 'go', tools: [weather] });
    runtime = createRuntime({ swarms: [s], model });
    const c = runtime.forSwarm(s);
    await c.run('x');
    expect(await c.wait()).toEqual({ status: 'completed', result: 'recovered' });
    const events: SwarmEvent[] = await collect(c.events());
    expect(events.map((e) => factOf(e, 'turn-completed')?.turn).filter(Boolean)).toEqual([1, 2]);
    return toolMessages(model.requests[1]!);
  }

  it('malformed tool-call JSON is a tool error fed back', async () => {
    const [m] = await feedback({ toolCalls: [{ id: 'c', name: 'get_forecast', arguments: '{"day": Satur' }] });
    expect(m).toMatchObject({ toolCallId: 'c' });
    expect(m!.content).toMatch(/not valid JSON/);
  });

  it('an unknown tool name is a tool error listing the available tools', async () => {
    const [m] = await feedback({ toolCalls: [{ id: 'c', name: 'get_weather', arguments: '{}' }] });
    expect(m!.content).toBe('Unknown tool "get_weather". Available tools: get_forecast, complete, pause, fail.');
  });

  it('arguments failing the tool schema are a tool error naming the field', async () => {
    const [m] = await feedback({ toolCalls: [{ id: 'c', name: 'get_forecast', arguments: '{"day":"Monday"}' }] });
    expect(m!.content).toMatch(/^Invalid arguments for "get_forecast": day: /);
  });

  it('arguments that are JSON but not an object are a tool error', async () => {
    const [m] = await feedback({ toolCalls: [{ id: 'c', name: 'get_forecast', arguments: '[1,2]' }] });
    expect(m!.content).toMatch(/must be a JSON object/);
  });

  it('a tool that throws, or returns something unserializable, is an error result', async () => {
    const boom = tool({
      name: 'boom',
      description: 'b',
      parameters: z.object({}),
      execute: () => {
        throw new Error('kaput');
      },
    });
    const big = tool({ name: 'big', description: 'b', parameters: z.object({}), execute: () => 10n });
    const model = queueModel({ s: [calls(['boom', {}, 'x'], ['big', {}, 'y']), { text: 'ok' }] });
    const s = defineSwarm({ id: 's', instructions: 'go', tools: [boom, big] });
    runtime = createRuntime({ swarms: [s], model });
    const c = runtime.forSwarm(s);
    await c.run('x');
    expect(await c.wait()).toEqual({ status: 'completed', result: 'ok' });
    const [x, y] = toolMessages(model.requests[1]!);
    expect(x!.content).toBe('Tool "boom" failed: kaput');
    expect(y!.content).toMatch(/^Tool "big" failed: .*bigint/i);
  });

  it('a handoff without a request string is a tool error, and an empty response earns a correction', async () => {
    const a = defineAgent({ id: 'a', instructions: 'A' });
    const model = queueModel({ s: [call('handoff_to_a', { req: 1 }, 'h'), {}, { text: 'fine' }] });
    const s = defineSwarm({ id: 's', instructions: 'go', handoffs: [handoff.toAgent(a)] });
    runtime = createRuntime({ swarms: [s], model });
    const c = runtime.forSwarm(s);
    await c.run('x');
    expect(await c.wait()).toEqual({ status: 'completed', result: 'fine' });
    expect(toolMessages(model.requests[1]!)[0]!.content).toMatch(/needs a non-empty "request"/);
    expect(model.requests[2]!.messages.at(-1)!.content).toMatch(/response was empty/);
  });

  it('a model that returns something that is not a response fails the swarm with a clear reason', async () => {
    const s = defineSwarm({ id: 's', instructions: 'go' });
    runtime = createRuntime({ swarms: [s], model: queueModel({ s: [() => null as never] }) });
    const c = runtime.forSwarm(s);
    await c.run('x');
    expect(await c.wait()).toEqual({
      status: 'failed',
      reason: 'Model call failed: scripted: model returned null, expected { text?, toolCalls? }',
    });
  });
});
