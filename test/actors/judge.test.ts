/**
 * The judge on its own (`actors/judge.ts`): what a model response means — which calls are
 * tools, handoffs or built-ins, which are malformed, and whether the response ends the swarm —
 * with a stand-in for the runtime's ports, so no model, machine or store is involved.
 */
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { REGISTRY_HANDOFF, REGISTRY_SEARCH } from '../../actors/plan-handoff.js';
import { judgeResponse, normalizeResponse, parseTypedText } from '../../actors/judge.js';
import type { Checked, SwarmPorts } from '../../actors/ports.js';
import type { ChatMessage, ModelResponse } from '../../machines/messages.js';
import type { ModelStepInput } from '../../machines/contracts.js';
import type { HandoffTarget } from '../../machines/plan.js';

const check = (schema: z.ZodType, value: unknown): Checked => {
  const parsed = schema.safeParse(value);
  return parsed.success ? { ok: true, value: parsed.data } : { ok: false, error: parsed.error.issues.map((i) => i.message).join('; ') };
};

/** Result schemas of the swarms the tests judge for: `text` is plain text, `plan` is typed. */
const RESULTS: Record<string, z.ZodType> = {
  text: z.string(),
  plan: z.object({ day: z.string(), activities: z.array(z.string()) }),
};
const TOOLS: Record<string, z.ZodType> = { get_forecast: z.object({ day: z.string() }), noop: z.object({}) };
/** Child swarms: `tickets` takes a structured input, `notes` text; only `tickets` may be customized. */
const CHILD_INPUTS: Record<string, z.ZodType> = { tickets: z.object({ seats: z.number().int() }), notes: z.string() };

/** Ports that answer from the tables above; `rejectOutput` makes the output guardrail refuse. */
function ports(options: { rejectOutput?: string } = {}): SwarmPorts & { guarded: unknown[] } {
  const guarded: unknown[] = [];
  const unused = () => {
    throw new Error('the judge must not run anything');
  };
  return {
    guarded,
    modelFor: unused,
    toolSpecs: unused,
    checkToolArgs: (name, args) => check(TOOLS[name]!, args),
    checkResult: (definitionId, _swarmId, value) => check(RESULTS[definitionId]!, value),
    resultIsText: (definitionId) => definitionId === 'text',
    childInput: (definitionId, args) => check(CHILD_INPUTS[definitionId]!, args),
    checkCustomization: (value) =>
      check(z.strictObject({ additional_instructions: z.string().optional(), max_turns_override: z.number().int().min(1).optional() }), value),
    isCustomizable: (definitionId) => definitionId === 'tickets',
    toolTimeoutMs: () => undefined,
    swarmTimeoutMs: () => undefined,
    runChild: unused,
    runRemote: unused,
    guardInput: unused,
    guardOutput: async (_definitionId, _swarmId, result) => {
      guarded.push(result);
      return options.rejectOutput;
    },
    executeTool: unused,
    onText: unused,
    durable: unused,
  };
}

const HANDOFFS: HandoffTarget[] = [
  { toolName: 'handoff_to_weather_agent', kind: 'agent', agentId: 'weather-agent', description: 'Weather' },
  { toolName: 'handoff_to_far', kind: 'remote', agentId: 'far', url: 'http://127.0.0.1:1/card', description: 'Remote' },
  { toolName: 'handoff_to_tickets', kind: 'swarm', definitionId: 'tickets', description: 'Tickets', structured: true, customizable: true },
  { toolName: 'handoff_to_notes', kind: 'swarm', definitionId: 'notes', description: 'Notes', structured: false, customizable: false },
];

/** The orchestrator of swarm `definitionId` (`text` or `plan`), with one tool and every kind of handoff. */
function orchestrator(definitionId = 'text', extra: Partial<ModelStepInput> = {}): ModelStepInput {
  return {
    swarmId: 's1',
    definitionId,
    speaker: definitionId,
    orchestrator: true,
    scope: '',
    turn: 1,
    messages: [],
    tools: ['get_forecast'],
    handoffs: HANDOFFS,
    ...extra,
  };
}

/** An agent of swarm `text`: tools only, no built-ins, no handoffs. */
const agent = (): ModelStepInput => ({ ...orchestrator(), speaker: 'weather-agent', orchestrator: false, scope: 'h0', handoffs: [] });

const calls = (...list: [name: string, args: unknown][]): ModelResponse => ({
  toolCalls: list.map(([name, args], i) => ({ id: `c${i}`, name, arguments: typeof args === 'string' ? args : JSON.stringify(args) })),
});

const judge = (response: ModelResponse, input = orchestrator(), p = ports()) => judgeResponse(response, input, p);

describe('tool calls', () => {
  it('a registered tool with valid arguments is planned with its raw arguments; the round continues', async () => {
    expect(await judge(calls(['get_forecast', { day: 'Sat' }]))).toEqual({
      calls: [{ id: 'c0', name: 'get_forecast', kind: 'tool', arguments: '{"day":"Sat"}' }],
      verdict: { type: 'continue' },
    });
  });

  it('several calls keep the model’s order, valid and invalid alike; text beside calls is ignored', async () => {
    const response = { ...calls(['get_forecast', { day: 'Sat' }], ['nope', {}], ['get_forecast', { day: 'Sun' }]), text: 'thinking…' };
    const { calls: planned, verdict } = await judge(response);
    expect(planned.map((c) => [c.id, c.kind])).toEqual([
      ['c0', 'tool'],
      ['c1', 'invalid'],
      ['c2', 'tool'],
    ]);
    expect(verdict).toEqual({ type: 'continue' });
  });

  it('arguments that fail the tool schema are an error naming the tool, fed back as its result', async () => {
    const { calls: planned } = await judge(calls(['get_forecast', { day: 3 }]));
    expect(planned).toEqual([{ id: 'c0', name: 'get_forecast', kind: 'invalid', error: expect.stringMatching(/^Invalid arguments for "get_forecast": /) }]);
  });

  it('empty arguments count as {}', async () => {
    expect((await judge(calls(['noop', '']), orchestrator('text', { tools: ['noop'] }))).calls).toEqual([{ id: 'c0', name: 'noop', kind: 'tool', arguments: '' }]);
  });
});

describe('malformed arguments', () => {
  it('arguments that are not JSON are an error quoting them, never a throw', async () => {
    const { calls: planned, verdict } = await judge(calls(['get_forecast', '{"day": Sat']));
    expect(planned).toHaveLength(1);
    expect(planned[0]).toMatchObject({ kind: 'invalid', id: 'c0' });
    const error = (planned[0] as { error: string }).error;
    expect(error).toMatch(/^Arguments for "get_forecast" are not valid JSON \(/);
    expect(error).toContain('{"day": Sat');
    expect(error).toMatch(/Send a JSON object\.$/);
    expect(verdict).toEqual({ type: 'continue' });
  });

  it('JSON that is not an object (an array, a string, null) is an error', async () => {
    for (const args of ['[1,2]', '"Sat"', 'null', '42']) {
      const { calls: planned } = await judge(calls(['get_forecast', args]));
      expect(planned[0], args).toMatchObject({ kind: 'invalid', error: expect.stringContaining('must be a JSON object') });
    }
  });

  it('a very long malformed argument is quoted truncated', async () => {
    const { calls: planned } = await judge(calls(['get_forecast', `{${'x'.repeat(1000)}`]));
    const error = (planned[0] as { error: string }).error;
    expect(error.length).toBeLessThan(400);
    expect(error).toContain('…');
  });

  it('malformed arguments to a built-in do not terminate the swarm', async () => {
    expect(await judge(calls(['complete', '{result: 1}']))).toMatchObject({ calls: [{ kind: 'invalid' }], verdict: { type: 'continue' } });
  });
});

describe('unknown tools', () => {
  it('name every tool, handoff and built-in the orchestrator has', async () => {
    const { calls: planned } = await judge(calls(['get_weather', {}]));
    expect(planned).toEqual([
      {
        id: 'c0',
        name: 'get_weather',
        kind: 'invalid',
        error:
          'Unknown tool "get_weather". Available tools: get_forecast, handoff_to_weather_agent, handoff_to_far, handoff_to_tickets, handoff_to_notes, complete, pause, fail.',
      },
    ]);
  });

  it('an agent has no built-ins: complete, pause and fail are unknown tools for it', async () => {
    for (const name of ['complete', 'pause', 'fail']) {
      const { calls: planned, verdict } = await judge(calls([name, { result: 'x', reason: 'y' }]), agent());
      expect(planned, name).toEqual([{ id: 'c0', name, kind: 'invalid', error: `Unknown tool "${name}". Available tools: get_forecast.` }]);
      expect(verdict).toEqual({ type: 'continue' });
    }
  });

  it('with nothing available, the list says so; a nameless call is unknown too', async () => {
    const bare = { ...agent(), tools: [] };
    expect((await judge(calls(['x', {}]), bare)).calls[0]).toMatchObject({ error: 'Unknown tool "x". Available tools: (none).' });
    const nameless = normalizeResponse({ toolCalls: [{ arguments: '{}' }] }, 1);
    expect((await judge(nameless, bare)).calls[0]).toMatchObject({ kind: 'invalid', name: '' });
  });

  it('a registry handoff is unknown unless the swarm has the registry tools', async () => {
    const { calls: planned } = await judge(calls([REGISTRY_HANDOFF, { swarm_id: 'tickets' }]));
    expect(planned[0]).toMatchObject({ kind: 'invalid', error: expect.stringMatching(/^Unknown tool "swarm_registry_handoff"/) });
  });
});

describe('handoffs', () => {
  it('to an agent and to a remote agent: the request string', async () => {
    const { calls: planned, verdict } = await judge(calls(['handoff_to_weather_agent', { request: 'forecast?' }], ['handoff_to_far', { request: 'anything?' }]));
    expect(planned).toEqual([
      { id: 'c0', name: 'handoff_to_weather_agent', kind: 'agent', agentId: 'weather-agent', request: 'forecast?' },
      { id: 'c1', name: 'handoff_to_far', kind: 'remote', agentId: 'far', url: 'http://127.0.0.1:1/card', request: 'anything?' },
    ]);
    expect(verdict).toEqual({ type: 'continue' });
  });

  it('an agent handoff without a non-empty request is an error', async () => {
    for (const args of [{}, { request: '  ' }, { request: 3 }]) {
      const { calls: planned } = await judge(calls(['handoff_to_weather_agent', args], ['handoff_to_far', args]));
      expect(
        planned.map((c) => c.kind),
        JSON.stringify(args),
      ).toEqual(['invalid', 'invalid']);
      expect(planned[0]).toMatchObject({ error: 'handoff_to_weather_agent needs a non-empty "request" string.' });
    }
  });

  it('to a text-input swarm: the request is its input', async () => {
    expect((await judge(calls(['handoff_to_notes', { request: 'write it down' }]))).calls).toEqual([
      { id: 'c0', name: 'handoff_to_notes', kind: 'swarm', definitionId: 'notes', input: 'write it down' },
    ]);
    expect((await judge(calls(['handoff_to_notes', {}]))).calls[0]).toMatchObject({ kind: 'invalid' });
  });

  it('to a structured swarm: the arguments are its input, checked against its schema', async () => {
    expect((await judge(calls(['handoff_to_tickets', { seats: 2 }]))).calls).toEqual([
      { id: 'c0', name: 'handoff_to_tickets', kind: 'swarm', definitionId: 'tickets', input: { seats: 2 } },
    ]);
    expect((await judge(calls(['handoff_to_tickets', { seats: 'two' }]))).calls[0]).toMatchObject({
      kind: 'invalid',
      error: expect.stringMatching(/^Invalid input for swarm "tickets": /),
    });
  });

  it('a customization reaches a customizable swarm checked, and is refused by another', async () => {
    const customization = { additional_instructions: 'VIP', max_turns_override: 3 };
    expect((await judge(calls(['handoff_to_tickets', { seats: 2, customization }]))).calls).toEqual([
      { id: 'c0', name: 'handoff_to_tickets', kind: 'swarm', definitionId: 'tickets', input: { seats: 2 }, customization },
    ]);
    expect((await judge(calls(['handoff_to_tickets', { seats: 2, customization: { remove_everything: true } }]))).calls[0]).toMatchObject({
      kind: 'invalid',
      error: expect.stringMatching(/^Invalid customization: /),
    });
    expect((await judge(calls(['handoff_to_notes', { request: 'x', customization }]))).calls[0]).toMatchObject({
      kind: 'invalid',
      error: 'Swarm "notes" cannot be customized; call handoff_to_notes without "customization".',
    });
  });

  it('two agent handoffs and a swarm handoff in one response are all planned, in order (a parallel round)', async () => {
    const { calls: planned, verdict } = await judge(
      calls(['handoff_to_weather_agent', { request: 'a' }], ['handoff_to_far', { request: 'b' }], ['handoff_to_tickets', { seats: 1 }]),
    );
    expect(planned.map((c) => c.kind)).toEqual(['agent', 'remote', 'swarm']);
    expect(verdict).toEqual({ type: 'continue' });
  });

  it('a registry handoff reaches only a swarm an earlier search of this conversation returned', async () => {
    const searched: ChatMessage[] = [
      { role: 'assistant', content: '', toolCalls: [{ id: 's0', name: REGISTRY_SEARCH, arguments: '{"query":"tickets"}' }] },
      { role: 'tool', toolCallId: 's0', content: JSON.stringify({ matches: [{ id: 'tickets' }] }) },
      // A tool result that only looks like a search (another call id) grants nothing.
      { role: 'tool', toolCallId: 'other', content: JSON.stringify({ matches: [{ id: 'notes' }] }) },
    ];
    const input = orchestrator('text', { tools: [REGISTRY_SEARCH, REGISTRY_HANDOFF], messages: searched });
    expect((await judge(calls([REGISTRY_HANDOFF, { swarm_id: 'tickets', input: { seats: 4 } }]), input)).calls).toEqual([
      { id: 'c0', name: REGISTRY_HANDOFF, kind: 'swarm', definitionId: 'tickets', input: { seats: 4 } },
    ]);
    expect((await judge(calls([REGISTRY_HANDOFF, { swarm_id: 'notes', request: 'x' }]), input)).calls[0]).toMatchObject({
      kind: 'invalid',
      error: expect.stringContaining('was not returned by swarm_registry_search'),
    });
    expect((await judge(calls([REGISTRY_HANDOFF, {}]), input)).calls[0]).toMatchObject({
      kind: 'invalid',
      error: 'swarm_registry_handoff needs a "swarm_id" string.',
    });
  });
});

describe('built-ins', () => {
  it('complete(result) with a valid result completes, after the output guardrail', async () => {
    const p = ports();
    expect(await judge(calls(['complete', { result: { day: 'Sat', activities: ['hike'] } }]), orchestrator('plan'), p)).toEqual({
      calls: [],
      verdict: { type: 'complete', result: { day: 'Sat', activities: ['hike'] } },
    });
    expect(p.guarded).toEqual([{ day: 'Sat', activities: ['hike'] }]);
  });

  it('complete without a result, or with one off the schema, is an error fed back; nothing terminates', async () => {
    const missing = await judge(calls(['complete', { answer: 1 }]), orchestrator('plan'));
    expect(missing).toEqual({
      calls: [{ id: 'c0', name: 'complete', kind: 'invalid', error: 'complete needs a "result" argument.' }],
      verdict: { type: 'continue' },
    });
    const off = await judge(calls(['complete', { result: { day: 'Sat' } }]), orchestrator('plan'));
    expect(off.calls[0]).toMatchObject({ kind: 'invalid', error: expect.stringMatching(/^The result does not match the result schema: /) });
    expect(off.verdict).toEqual({ type: 'continue' });
  });

  it('an output guardrail that rejects the result turns complete into fail', async () => {
    const p = ports({ rejectOutput: 'polite: rude word' });
    expect((await judge(calls(['complete', { result: 'rude' }]), orchestrator(), p)).verdict).toEqual({
      type: 'fail',
      reason: 'Output guardrail rejected the result: polite: rude word',
    });
  });

  it('fail(reason) fails; without a reason it says the model gave up', async () => {
    expect((await judge(calls(['fail', { reason: 'no tickets left' }]))).verdict).toEqual({ type: 'fail', reason: 'no tickets left' });
    expect((await judge(calls(['fail', {}]))).verdict).toEqual({ type: 'fail', reason: 'The model gave up without a reason.' });
  });

  it('the first valid terminal call wins; other calls of the response are still planned', async () => {
    const p = ports();
    const first = await judge(calls(['get_forecast', { day: 'Sat' }], ['fail', { reason: 'first' }], ['complete', { result: 'second' }]), orchestrator(), p);
    expect(first.verdict).toEqual({ type: 'fail', reason: 'first' });
    expect(first.calls.map((c) => c.kind)).toEqual(['tool']);
    expect(p.guarded).toEqual([]);
    // An invalid complete does not count: the valid one after it does.
    const second = await judge(calls(['complete', {}], ['complete', { result: 'ok' }]));
    expect(second.verdict).toEqual({ type: 'complete', result: 'ok' });
  });

  it('pause(reason) is planned as a pause call (HITL by default), with its context', async () => {
    expect((await judge(calls(['pause', { reason: 'Which day?', context: 'Both are sunny.' }]))).calls).toEqual([
      { id: 'c0', name: 'pause', kind: 'pause', reason: { type: 'HITL', message: 'Which day?\n\nBoth are sunny.' } },
    ]);
    expect((await judge(calls(['pause', { reason: 'Why?', type: 'WHATEVER' }]))).calls[0]).toMatchObject({ reason: { type: 'HITL' } });
    expect((await judge(calls(['pause', { reason: 'Fire!', type: 'EMERGENCY' }]))).calls[0]).toMatchObject({
      reason: { type: 'EMERGENCY', message: 'Fire!' },
    });
  });

  it('an approval pause names the call it approves; a pause without a reason is an error', async () => {
    expect((await judge(calls(['pause', { reason: 'Spend $500?', type: 'APPROVAL_NEEDED' }]))).calls).toEqual([
      { id: 'c0', name: 'pause', kind: 'pause', reason: { type: 'APPROVAL_NEEDED', message: 'Spend $500?', pendingApprovalId: 'c0' } },
    ]);
    expect((await judge(calls(['pause', { reason: ' ' }]))).calls[0]).toMatchObject({ kind: 'invalid', error: 'pause needs a "reason" string.' });
  });
});

describe('text answers', () => {
  it('clean text completes a text swarm with the text as given', async () => {
    const p = ports();
    expect(await judge({ text: '  All done.\n' }, orchestrator(), p)).toEqual({ calls: [], verdict: { type: 'complete', result: '  All done.\n' } });
    expect(p.guarded).toEqual(['  All done.\n']);
  });

  it('text that parses and matches a typed result completes it (type-match), also in a code fence', async () => {
    const plan = { day: 'Sun', activities: ['swim'] };
    expect((await judge({ text: JSON.stringify(plan) }, orchestrator('plan'))).verdict).toEqual({ type: 'complete', result: plan });
    const fenced = `Here you go:\n\`\`\`json\n${JSON.stringify(plan)}\n\`\`\`\nEnjoy!`;
    expect((await judge({ text: fenced }, orchestrator('plan'))).verdict).toEqual({ type: 'complete', result: plan });
  });

  it('text that is not JSON, or JSON off the schema, earns a correction naming the problem', async () => {
    const prose = await judge({ text: 'Go swimming on Sunday.' }, orchestrator('plan'));
    expect(prose.calls).toEqual([]);
    expect(prose.verdict).toMatchObject({
      type: 'correct',
      message: expect.stringMatching(/^Your answer does not match the required result schema: Your answer is not valid JSON/),
    });
    const off = await judge({ text: '{"day":"Sun"}' }, orchestrator('plan'));
    expect(off.verdict).toMatchObject({ type: 'correct', message: expect.stringContaining('Call complete(result) with a valid result.') });
  });

  it('an empty response (no text, blank text) earns a correction', async () => {
    for (const response of [{}, { text: '   ' }]) {
      expect((await judge(response)).verdict).toEqual({
        type: 'correct',
        message: 'Your response was empty. Use a tool, or call complete(result) with the final result.',
      });
    }
  });

  it('an agent’s text is its answer: the agent loop continues (ends), nothing completes the swarm', async () => {
    const p = ports();
    expect(await judge({ text: 'Sunny.' }, agent(), p)).toEqual({ calls: [], verdict: { type: 'continue' } });
    expect(await judge({}, agent(), p)).toEqual({ calls: [], verdict: { type: 'continue' } });
    expect(p.guarded).toEqual([]);
  });
});

describe('normalizing what a model returned', () => {
  it('gives every call a unique id, a name and string arguments', () => {
    const raw = {
      text: 42,
      toolCalls: [{ id: '', name: 'a', arguments: { x: 1 } }, { id: 'dup', name: 'b' }, { id: 'dup', name: 'c', arguments: '{}' }, null],
      usage: { inputTokens: 3, outputTokens: 4 },
    };
    expect(normalizeResponse(raw, 2)).toEqual({
      text: '42',
      toolCalls: [
        { id: 'call_2_0', name: 'a', arguments: '{"x":1}' },
        { id: 'dup', name: 'b', arguments: '{}' },
        { id: 'dup_2', name: 'c', arguments: '{}' },
        { id: 'call_2_3', name: '', arguments: '{}' },
      ],
      usage: { inputTokens: 3, outputTokens: 4 },
    });
  });

  it('drops an empty call list and malformed usage; throws only for something that is not a response', () => {
    expect(normalizeResponse({ text: null, toolCalls: [], usage: { inputTokens: '3' } }, 1)).toEqual({});
    expect(() => normalizeResponse(null, 1)).toThrow('model returned null, expected { text?, toolCalls? }');
    expect(() => normalizeResponse('hi', 1)).toThrow('model returned string');
  });

  it('parseTypedText reads the whole text or the first fenced block', () => {
    expect(parseTypedText(' {"a":1} ')).toEqual({ ok: true, value: { a: 1 } });
    expect(parseTypedText('x\n```\n[1]\n```\n```json\n[2]\n```')).toEqual({ ok: true, value: [1] });
    expect(parseTypedText('nope')).toMatchObject({ ok: false, error: expect.stringMatching(/^Your answer is not valid JSON/) });
  });
});
