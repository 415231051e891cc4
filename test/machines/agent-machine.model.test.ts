/**
 * Model-based tests of the agent machine (machines/agent.ts), generated with `xstate/graph`.
 *
 * The agent reports its steps with `sendParent`, which throws when there is no parent, so the
 * real agent runs as the invoked child of a tiny parent that records its reports and forwards
 * PAUSE/RESUME, as the swarm does. Its `modelStep` and `runTool` actors are controllable. An
 * abstract model machine (model responses and tool results are events) is the oracle; every
 * generated path runs against the real agent with state, context, reports, children and output
 * compared at each step, and every state and transition of the real agent must be covered.
 */
import { describe, expect, it } from 'vitest';
import { assign, createActor, sendTo, setup, type SnapshotFrom } from 'xstate';
import { createTestModel } from 'xstate/graph';
import { type AgentEvent, type AgentInput, agentMachine, type AgentOutput } from '../../machines/agent.js';
import type { SwarmEventBody } from '../../machines/events.js';
import type { ChatMessage, ModelResponse } from '../../machines/messages.js';
import type { ModelStepInput, ModelStepOutput } from '../../machines/contracts.js';
import type { ToolRunInput } from '../../machines/calls/tool.js';
import type { CallResult } from '../../machines/calls/kind.js';
import type { PlannedCall } from '../../machines/calls/index.js';
import type { Round } from '../../machines/round.js';
import type { AgentDeadlineInput } from '../../machines/agent-deadline.js';
import { Controllable, Coverage, describeModelPaths, eventSig, flush, machineGraph, same } from '../support/mbt-harness.js';

// ---------------------------------------------------------------------------------------------
// Fixtures.

const MAX_TURNS = 2;
const AGENT = 'helper';
const MODEL_ERROR = 'agent model down';
const NO_ANSWER = 'Agent gave no answer within its turn limit.';
const EXCEEDED = 'Agent exceeded its turn limit.';
const CORRECTION = 'Please answer the request in plain text.';

const input: AgentInput = {
  swarmId: 'swarm-mbt',
  definitionId: 'planner',
  agentId: AGENT,
  instructions: 'You help.',
  tools: ['lookup'],
  maxTurns: MAX_TURNS,
  request: 'find the forecast',
  session: [{ agentId: 'scout', request: 'look around', answer: 'all quiet' }],
  scope: 'swarm-mbt:t1:c1',
  // A deadline child runs beside the agent; the DEADLINE event makes it answer.
  timeout: { ms: 5_000, deadline: 0 },
};
/** What the agent answers when its deadline child does (`defineAgent({ timeoutMs })`). */
/** A tool's timeout with `onTimeout: 'fail'`: the agent ends with it (and its swarm fails). */
const FAILING_TIMEOUT: CallResult = { ok: false, content: 'Tool "lookup" timed out after 100 ms (timeoutMs)', failsSwarm: true };
const TIMED_OUT: CallResult = { ok: false, content: `Agent "${AGENT}" timed out after 5000 ms (timeoutMs)` };

type ResponseKind = 'MODEL_CALLS' | 'MODEL_INVALID' | 'MODEL_ANSWER' | 'MODEL_EMPTY';

/** The agent's `modelStep` output for a response kind at (new) turn `turn`. */
function stepFor(kind: ResponseKind, turn: number): ModelStepOutput {
  const id = (suffix: string) => `t${turn}-${suffix}`;
  const out = (response: ModelResponse, calls: PlannedCall[]): ModelStepOutput => ({ response, calls, verdict: { type: 'continue' }, durationMs: 3 });
  switch (kind) {
    case 'MODEL_CALLS':
      // Text and calls together: the calls win, the text is only part of the transcript.
      return out(
        {
          text: `checking ${turn}`,
          toolCalls: [
            { id: id('a'), name: 'lookup', arguments: '{"q":"a"}' },
            { id: id('b'), name: 'lookup', arguments: '{"q":"b"}' },
          ],
        },
        [
          { id: id('a'), name: 'lookup', kind: 'tool', arguments: '{"q":"a"}' },
          { id: id('b'), name: 'lookup', kind: 'tool', arguments: '{"q":"b"}' },
        ],
      );
    case 'MODEL_INVALID':
      return out({ toolCalls: [{ id: id('i'), name: 'nope', arguments: '{}' }] }, [{ id: id('i'), name: 'nope', kind: 'invalid', error: 'Unknown tool "nope"' }]);
    case 'MODEL_ANSWER':
      return out({ text: `answer ${turn}` }, []);
    case 'MODEL_EMPTY':
      // Neither text nor calls: the agent asks itself for a plain-text answer.
      return out({}, []);
  }
}

const toolOutput = (callId: string): CallResult => ({ ok: true, content: `out ${callId}` });
const toolErrorText = (callId: string) => `tool ${callId} broke`;
/** Idempotency key of the agent's tool calls: scoped by its handoff and its own id. */
const toolKey = (turn: number, callId: string) => `${input.scope}:${AGENT}:t${turn}:${callId}`;

// ---------------------------------------------------------------------------------------------
// The abstract model.

interface ModelCall {
  id: string;
  kind: PlannedCall['kind'];
  result?: CallResult;
}
interface ModelRound {
  turn: number;
  calls: ModelCall[];
}
interface ModelContext {
  turn: number;
  round: ModelRound | null;
  pausedFrom: 'thinking' | 'acting' | null;
  answer: CallResult | null;
  messages: ChatMessage[];
  /** Signatures of events not yet reported to the parent. */
  outbox: string[];
  /** Signatures of every `child.report` batch the parent received. */
  reports: string[][];
}

type ModelEvent =
  | { type: ResponseKind }
  | { type: 'MODEL_ERROR' }
  | { type: 'TOOL_DONE' }
  | { type: 'TOOL_ERROR' }
  | { type: 'PAUSE' }
  | { type: 'RESUME' }
  | { type: 'DEADLINE' }
  | { type: 'TOOL_TIMEOUT_FAIL' };

const running = (round: ModelRound | null) => (round ? round.calls.filter((c) => c.result === undefined && c.kind !== 'pause') : []);
const lastRunningTool = (round: ModelRound | null) => running(round).at(-1);

function respond(c: ModelContext, kind: ResponseKind): Pick<ModelContext, 'turn' | 'messages' | 'outbox'> {
  const turn = c.turn + 1;
  const { response } = stepFor(kind, turn);
  const message: ChatMessage = { role: 'assistant', content: response.text ?? '' };
  if (response.toolCalls?.length) message.toolCalls = response.toolCalls;
  return { turn, messages: [...c.messages, message], outbox: [...c.outbox, `llm:${AGENT}:${input.scope}:${turn}`] };
}

/** Sends the outbox to the parent, if there is anything in it. */
const report = (c: ModelContext): Partial<ModelContext> => (c.outbox.length ? { reports: [...c.reports, c.outbox], outbox: [] } : {});

function openRound(c: ModelContext, kind: ResponseKind): Partial<ModelContext> {
  const r = { ...c, ...respond(c, kind) };
  const calls: ModelCall[] = stepFor(kind, r.turn).calls.map((p) =>
    p.kind === 'invalid' ? { id: p.id, kind: p.kind, result: { ok: false, content: p.error } } : { id: p.id, kind: p.kind },
  );
  const announced = calls.flatMap((call) => (call.kind === 'tool' ? [`working:tool-call:${call.id}`, `tool-start:${call.id}`] : [`tool-complete:${call.id}:false:`]));
  const opened = { ...r, round: { turn: r.turn, calls }, outbox: [...r.outbox, ...announced] };
  return { ...opened, ...report(opened) };
}

function recordCall(c: ModelContext, ok: boolean, failing?: CallResult): Partial<ModelContext> {
  const call = lastRunningTool(c.round)!;
  // agent.ts formats a tool failure with String(error) ("Error: …"); the swarm uses the message.
  const result = failing ?? (ok ? toolOutput(call.id) : { ok: false, content: `Call failed: ${toolErrorText(call.id)}` });
  return {
    round: { ...c.round!, calls: c.round!.calls.map((x) => (x === call ? { ...x, result } : x)) },
    outbox: [...c.outbox, `tool-complete:${call.id}:${ok}:${toolKey(c.round!.turn, call.id)}`],
  };
}

const closeRound = (c: ModelContext): Partial<ModelContext> => ({
  messages: [...c.messages, ...c.round!.calls.map((x) => ({ role: 'tool' as const, toolCallId: x.id, content: x.result?.content ?? 'No result.' }))],
  round: null,
});

const m = setup({
  types: {} as { context: ModelContext; events: ModelEvent },
  guards: {
    // Mirrors agent.ts: `deciding` runs after the response is counted; `thinking`'s guards run
    // before it is, so the empty-response guard counts it itself.
    turnsLeft: ({ context }) => context.turn < MAX_TURNS,
    turnsLeftAfterResponse: ({ context }) => context.turn + 1 < MAX_TURNS,
    roundDone: ({ context }) => running(context.round).length === 0,
    lastRunning: ({ context }) => running(context.round).length === 1,
    toolRunning: ({ context }) => running(context.round).length > 0,
    pausedInThinking: ({ context }) => context.pausedFrom === 'thinking',
  },
});

/** Records a tool result and reports it (the round is not over yet). */
const recordAndReport = (ok: boolean) =>
  m.assign(({ context }) => {
    const recorded = { ...context, ...recordCall(context, ok) };
    return { ...recorded, ...report(recorded) };
  });

/** A tool's failing timeout: recorded (unreported: it goes with the output), and the agent's answer. */
const failingTimeout = m.assign(({ context }) => ({ ...recordCall(context, false, FAILING_TIMEOUT), answer: FAILING_TIMEOUT }));

const toolResult = (ok: boolean) => [
  // The last result goes unreported to `deciding`, which reports it with the round's close.
  { guard: 'lastRunning' as const, target: 'deciding', actions: m.assign(({ context }) => recordCall(context, ok)) },
  { guard: 'toolRunning' as const, actions: recordAndReport(ok) },
];

const agentModel = m.createMachine({
  id: 'agentModel',
  context: {
    turn: 0,
    round: null,
    pausedFrom: null,
    answer: null,
    messages: [
      { role: 'system', content: input.instructions },
      { role: 'user', content: `(to scout) look around` },
      { role: 'assistant', content: `(scout) all quiet` },
      { role: 'user', content: input.request },
    ],
    outbox: [],
    reports: [],
  },
  initial: 'thinking',
  states: {
    thinking: {
      on: {
        MODEL_CALLS: { target: 'acting', actions: m.assign(({ context }) => openRound(context, 'MODEL_CALLS')) },
        MODEL_INVALID: { target: 'acting', actions: m.assign(({ context }) => openRound(context, 'MODEL_INVALID')) },
        MODEL_ANSWER: {
          target: 'done',
          actions: m.assign(({ context }) => {
            const r = respond(context, 'MODEL_ANSWER');
            return { ...r, answer: { ok: true, content: stepFor('MODEL_ANSWER', r.turn).response.text! } };
          }),
        },
        // An empty response counts as a turn: at most maxTurns model calls, like a
        // tool-calling agent.
        MODEL_EMPTY: [
          {
            guard: 'turnsLeftAfterResponse',
            target: 'thinking',
            reenter: true,
            actions: m.assign(({ context }) => {
              const r = { ...context, ...respond(context, 'MODEL_EMPTY') };
              const corrected = { ...r, messages: [...r.messages, { role: 'user' as const, content: CORRECTION }] };
              return { ...corrected, ...report(corrected) };
            }),
          },
          { target: 'done', actions: m.assign(({ context }) => ({ ...respond(context, 'MODEL_EMPTY'), answer: { ok: false, content: NO_ANSWER } })) },
        ],
        MODEL_ERROR: { target: 'done', actions: m.assign({ answer: { ok: false, content: `Agent failed: ${MODEL_ERROR}` } }) },
        // The deadline ends the agent wherever it is; what it had not reported goes with its output.
        DEADLINE: { target: 'done', actions: m.assign({ answer: TIMED_OUT }) },
        PAUSE: { target: 'paused', actions: m.assign({ pausedFrom: 'thinking' as const }) },
        // Ignored: RESUME while not paused.
        RESUME: {},
      },
    },
    acting: {
      always: { guard: 'roundDone', target: 'deciding' },
      on: {
        TOOL_DONE: toolResult(true),
        TOOL_ERROR: toolResult(false),
        DEADLINE: { target: 'done', actions: m.assign({ answer: TIMED_OUT }) },
        TOOL_TIMEOUT_FAIL: { guard: 'toolRunning', target: 'done', actions: failingTimeout },
        PAUSE: { target: 'paused', actions: m.assign({ pausedFrom: 'acting' as const }) },
        RESUME: {},
      },
    },
    deciding: {
      always: [
        {
          guard: 'turnsLeft',
          target: 'thinking',
          actions: m.assign(({ context }) => {
            const closed = { ...context, ...closeRound(context) };
            return { ...closed, ...report(closed) };
          }),
        },
        { target: 'done', actions: m.assign(({ context }) => ({ ...closeRound(context), answer: { ok: false, content: EXCEEDED } })) },
      ],
    },
    paused: {
      on: {
        // Tools keep running while the agent is paused.
        TOOL_DONE: { guard: 'toolRunning', actions: recordAndReport(true) },
        TOOL_ERROR: { guard: 'toolRunning', actions: recordAndReport(false) },
        DEADLINE: { target: 'done', actions: m.assign({ answer: TIMED_OUT }) },
        TOOL_TIMEOUT_FAIL: { guard: 'toolRunning', target: 'done', actions: failingTimeout },
        RESUME: [{ guard: 'pausedInThinking', target: 'thinking' }, { guard: 'roundDone', target: 'deciding' }, { target: 'acting' }],
        // Ignored: a second PAUSE.
        PAUSE: {},
      },
    },
    done: { type: 'final' },
  },
});

type ModelSnapshot = SnapshotFrom<typeof agentModel>;

function project(s: ModelSnapshot): string {
  const c = s.context;
  return JSON.stringify([s.value, c.turn, running(c.round).length, c.round !== null, c.pausedFrom, c.answer?.ok ?? null]);
}

const testModel = createTestModel(agentModel, {
  serializeState: (s, e, prev) => (e && prev ? `${project(s)} <-${e.type}- ${project(prev)}` : project(s)),
  filterEvents: (s, e) => s.status === 'active' && s.can(e),
  stopWhen: (s) => s.status !== 'active',
});

// ---------------------------------------------------------------------------------------------
// The real agent under a tiny parent.

const models = new Controllable<ModelStepInput, ModelStepOutput>();
const tools = new Controllable<ToolRunInput, CallResult>();
const deadlines = new Controllable<AgentDeadlineInput, CallResult>();
const liveAgent = agentMachine.provide({ actors: { modelStep: models.logic, runTool: tools.logic, agentDeadline: deadlines.logic } });

/** Stands in for the swarm: runs the agent, keeps its reports and output, forwards PAUSE/RESUME. */
const parentMachine = setup({
  types: {} as {
    context: { input: AgentInput; reports: SwarmEventBody[][]; output: AgentOutput | null };
    events: AgentEvent | { type: 'child.report'; events: SwarmEventBody[] };
    input: AgentInput;
  },
  actors: { agent: liveAgent },
}).createMachine({
  id: 'parent',
  context: ({ input }) => ({ input, reports: [], output: null }),
  initial: 'running',
  states: {
    running: {
      invoke: {
        id: 'agent',
        src: 'agent',
        input: ({ context }) => context.input,
        onDone: { target: 'finished', actions: assign({ output: ({ event }) => event.output }) },
      },
      on: {
        PAUSE: { actions: sendTo('agent', { type: 'PAUSE' }) },
        RESUME: { actions: sendTo('agent', { type: 'RESUME' }) },
        'child.report': { actions: assign({ reports: ({ context, event }) => [...context.reports, event.events] }) },
      },
    },
    finished: { type: 'final' },
  },
});

const coverage = new Coverage('agent');
const realGraph = machineGraph(agentMachine);

const realRound = (round: Round | null) =>
  round && { turn: round.turn, calls: round.calls.map((c): ModelCall => ({ id: c.id, kind: c.kind, ...(c.result ? { result: c.result } : {}) })) };

function startRun() {
  models.reset();
  tools.reset();
  deadlines.reset();
  const parent = createActor(parentMachine, { input, inspect: coverage.observe });
  const errors: unknown[] = [];
  parent.subscribe({ error: (err) => errors.push(err) });
  parent.start();
  const agent = parent.getSnapshot().children.agent as unknown as { getSnapshot(): SnapshotFrom<typeof agentMachine> };
  const model = createActor(agentModel).start();

  async function exec(event: ModelEvent): Promise<void> {
    const before = model.getSnapshot().context;
    switch (event.type) {
      case 'MODEL_CALLS':
      case 'MODEL_INVALID':
      case 'MODEL_ANSWER':
      case 'MODEL_EMPTY':
      case 'MODEL_ERROR': {
        const call = models.one();
        // The model sees the transcript so far (instructions, session, request, rounds).
        same(
          {
            speaker: call.input.speaker,
            orchestrator: call.input.orchestrator,
            scope: call.input.scope,
            turn: call.input.turn,
            tools: call.input.tools,
            handoffs: call.input.handoffs,
            messages: call.input.messages,
          },
          { speaker: AGENT, orchestrator: false, scope: input.scope, turn: before.turn + 1, tools: input.tools, handoffs: [], messages: before.messages },
        );
        if (event.type === 'MODEL_ERROR') call.reject(new Error(MODEL_ERROR));
        else call.resolve(stepFor(event.type, before.turn + 1));
        break;
      }
      case 'TOOL_DONE':
      case 'TOOL_ERROR':
      case 'TOOL_TIMEOUT_FAIL': {
        const expected = lastRunningTool(before.round)!;
        const call = tools.last();
        same(
          { toolCallId: call.input.toolCallId, agentId: call.input.agentId, key: call.input.idempotencyKey },
          { toolCallId: expected.id, agentId: AGENT, key: toolKey(before.round!.turn, expected.id) },
        );
        if (event.type === 'TOOL_DONE') call.resolve(toolOutput(expected.id));
        else if (event.type === 'TOOL_TIMEOUT_FAIL') call.resolve(FAILING_TIMEOUT);
        else call.reject(new Error(toolErrorText(expected.id)));
        break;
      }
      case 'PAUSE':
      case 'RESUME':
        parent.send({ type: event.type });
        break;
      case 'DEADLINE': {
        const deadline = deadlines.one();
        same(deadline.input, { agentId: AGENT, key: input.scope, timeout: input.timeout });
        deadline.resolve(TIMED_OUT);
        break;
      }
      default:
        event satisfies never;
    }
    model.send(event);
    await flush();
  }

  function check(expected: ModelSnapshot): void {
    const ms = model.getSnapshot();
    same(project(ms), project(expected));
    const mc = ms.context;
    const s = agent.getSnapshot();
    const c = s.context;
    const active = ms.status === 'active';
    const thinking = ms.matches('thinking');
    const run = active ? running(mc.round) : [];
    const output = s.status === 'done' ? s.output : null;
    const real = {
      errors,
      status: s.status,
      value: s.value,
      turn: c.turn,
      pausedFrom: c.pausedFrom,
      round: realRound(c.round),
      messages: c.messages,
      answer: c.answer,
      outbox: c.outbox.map(eventSig),
      reports: parent.getSnapshot().context.reports.map((batch) => batch.map(eventSig)),
      // A failing timeout's mark goes with the output: the swarm fails on it.
      output: output && { ok: output.ok, content: output.content, ...(output.failsSwarm ? { failsSwarm: true } : {}), events: output.events.map(eventSig) },
      parentOutput: parent.getSnapshot().context.output === output,
      children: active ? Object.keys(s.children).sort() : Object.entries(s.children).flatMap(([id, ref]) => (ref?.getSnapshot().status === 'active' ? [id] : [])),
      openModelCalls: models.open().length,
      openToolCalls: tools.open().length,
    };
    const wanted = {
      errors: [],
      status: ms.status,
      value: ms.value,
      turn: mc.turn,
      pausedFrom: mc.pausedFrom,
      round: mc.round,
      messages: mc.messages,
      answer: mc.answer,
      outbox: mc.outbox,
      reports: mc.reports,
      // At done the output is the answer plus the events not reported yet.
      output: active ? null : { ...mc.answer!, events: mc.outbox },
      parentOutput: true,
      children: [
        ...(thinking ? ['model'] : []),
        ...(active ? ['deadline'] : []),
        ...(mc.round ? mc.round.calls.flatMap((x, i) => (run.includes(x) ? [`tool:${mc.round!.turn}:${i}`] : [])) : []),
      ].sort(),
      // A paused agent aborts its model call (re-issued on resume); its tools keep running.
      openModelCalls: thinking ? 1 : 0,
      openToolCalls: run.length,
    };
    same(real, wanted);
    if (!active) same(models.allClosed() && tools.allClosed() && deadlines.allClosed(), true);
  }

  return { exec, check };
}

const shortest = testModel.getShortestPaths();

/** The agent thinks again for its second turn, or is done: the end of the first round. */
const firstRoundOver = (s: ModelSnapshot) => s.status !== 'active' || (s.matches('thinking') && s.context.turn === 1);
const ended = (s: ModelSnapshot) => s.status !== 'active';

/*
 * Simple paths (no abstract state visited twice), bounded: unbounded they number ~7,800. Two
 * families: every simple path through the first round with every event (all orders of tool
 * results, pauses and resumes within a round), and every simple path to `done` without PAUSE
 * (all sequences of responses and results up to the turn limit).
 */
const simpleFirstRound = testModel.getSimplePaths({
  serializeState: (s) => project(s),
  toState: firstRoundOver,
  stopWhen: firstRoundOver,
  allowDuplicatePaths: true,
  // The deadline only ends a path: the shortest paths take it from every state.
  filterEvents: (s, e) => s.status === 'active' && s.can(e) && e.type !== 'DEADLINE' && e.type !== 'TOOL_TIMEOUT_FAIL',
});
const simpleToEnd = testModel.getSimplePaths({
  serializeState: (s) => project(s),
  toState: ended,
  allowDuplicatePaths: true,
  filterEvents: (s, e) => s.status === 'active' && s.can(e) && e.type !== 'PAUSE' && e.type !== 'DEADLINE' && e.type !== 'TOOL_TIMEOUT_FAIL',
});

const describePath = (steps: { event: ModelEvent }[]) =>
  steps
    .slice(1)
    .map((s) => s.event.type)
    .join(' → ') || '(start)';
/** Every model event type; `satisfies` makes the compiler insist on all of them. */
const EVENT_TYPES = Object.keys({
  MODEL_CALLS: true,
  MODEL_INVALID: true,
  MODEL_ANSWER: true,
  MODEL_EMPTY: true,
  MODEL_ERROR: true,
  TOOL_DONE: true,
  TOOL_ERROR: true,
  PAUSE: true,
  RESUME: true,
  DEADLINE: true,
  TOOL_TIMEOUT_FAIL: true,
} satisfies Record<ModelEvent['type'], true>) as ModelEvent['type'][];

describe('agent machine, model-based (xstate/graph)', () => {
  it('the model yields paths', () => {
    expect(shortest.length).toBeGreaterThan(20);
    expect(simpleFirstRound.length).toBeGreaterThan(20);
    expect(simpleToEnd.length).toBeGreaterThan(20);
  });

  // Tool approval gates, driven outside the oracle: the agent asks its parent for approvals of
  // its gated calls (`child.approvals`) and waits; an answer runs the call or gives the model the
  // reason; the round ends once every call is settled.
  it('gated calls: asks its parent, waits, and takes APPROVE / REJECT', async () => {
    models.reset();
    tools.reset();
    const asked: unknown[] = [];
    const parent = createActor(
      setup({ actors: { agent: liveAgent } }).createMachine({
        invoke: { id: 'agent', src: 'agent', input },
        on: { '*': { actions: ({ event }) => void (event.type === 'child.approvals' && asked.push(event)) } },
      }),
      { inspect: coverage.observe },
    ).start();
    const agent = parent.getSnapshot().children.agent as unknown as { send(e: AgentEvent): void; getSnapshot(): SnapshotFrom<typeof agentMachine> };
    const gated = (id: string, approvalId: string): PlannedCall => ({ id, name: 'lookup', kind: 'gated', arguments: '{}', approvalId });
    models.one().resolve({ response: { toolCalls: [] }, calls: [gated('g1', 'apr_1'), gated('g2', 'apr_2')], verdict: { type: 'continue' }, durationMs: 1 });
    await flush();
    expect(asked).toEqual([
      {
        type: 'child.approvals',
        approvals: [
          { approvalId: 'apr_1', tool: 'lookup', arguments: '{}', callId: 'g1', agent: AGENT, scope: input.scope },
          { approvalId: 'apr_2', tool: 'lookup', arguments: '{}', callId: 'g2', agent: AGENT, scope: input.scope },
        ],
      },
    ]);
    expect(agent.getSnapshot().value).toBe('acting');
    agent.send({ type: 'APPROVE', approvalId: 'apr_1', always: true });
    await flush();
    // Always: the other pending call of the tool is approved too, and the tool for the rest of the run.
    expect(tools.open().map((c) => c.input.toolCallId)).toEqual(['g1', 'g2']);
    expect(agent.getSnapshot().context.approvedTools).toEqual(['lookup']);
    agent.send({ type: 'REJECT', approvalId: 'apr_2', reason: 'late' });
    await flush();
    for (const c of tools.open()) c.resolve({ ok: true, content: `out ${c.input.toolCallId}` });
    await flush();
    expect(agent.getSnapshot().value).toBe('thinking');
    expect(models.one().input.approvedTools).toEqual(['lookup']);
    parent.stop();
  });

  const suites: [string, typeof shortest][] = [
    [`shortest paths to every model transition (${shortest.length})`, shortest],
    [`simple paths through the first round (${simpleFirstRound.length})`, simpleFirstRound],
    [`simple paths to done without PAUSE (${simpleToEnd.length})`, simpleToEnd],
  ];
  describeModelPaths({
    suites,
    eventTypes: EVENT_TYPES,
    startRun,
    describePath,
    coverage,
    graph: realGraph,
    knownState: 'agent.deciding',
    extra: () => {
      it("a guardrail's rejection of a response ends the agent with the rejection as its failed answer", async () => {
        models.reset();
        tools.reset();
        const parent = createActor(parentMachine, { input, inspect: coverage.observe });
        parent.start();
        const rejected = { guardrail: 'policy', step: 'toolCall' as const, callId: 'c1' };
        models.one().resolve({ ...stepFor('MODEL_CALLS', 1), verdict: { type: 'reject', reason: 'not this tool', rejected } });
        await flush();
        const output = parent.getSnapshot().context.output;
        expect(output).toMatchObject({ ok: false, content: 'not this tool' });
        // The step is recorded (for replay), and no tool ran.
        expect(output?.events.map((e) => e.kind)).toEqual(['internal:llm-call']);
        expect(tools.open()).toHaveLength(0);
      });
      it('needs a parent: run standalone, its first report (sendParent) makes the actor error', async () => {
        models.reset();
        tools.reset();
        const actor = createActor(liveAgent, { input });
        const errors: unknown[] = [];
        actor.subscribe({ error: (err) => errors.push(err) });
        actor.start();
        models.one().resolve(stepFor('MODEL_CALLS', 1));
        await flush();
        expect(actor.getSnapshot().status).toBe('error');
        expect(String(errors[0])).toContain("Unable to send event to actor '#_parent'");
      });
    },
  });
});
