/**
 * Model-based tests of the swarm machine (machines/swarm.ts), generated with `xstate/graph`.
 *
 * An abstract model machine (no invokes: model responses, tool and agent results are explicit
 * events) is the oracle. `createTestModel` derives paths from it; each path is executed against
 * the REAL `swarmMachine` whose `modelStep`, `runTool` and `agent` actors are controllable
 * (the agent is the real agent machine over the same controllable model and tools). At every
 * step the real actor must agree with a lockstep copy of the model on state, context, running
 * children and emitted events. Finally every state and transition of the real machine's graph
 * must have been taken by some path.
 */
import { describe, expect, it } from 'vitest';
import { assign, createActor, setup, type SnapshotFrom } from 'xstate';
import { createTestModel } from 'xstate/graph';
import { agentMachine, type SessionEntry } from '../machines/agent.js';
import type { SwarmEventBody } from '../machines/events.js';
import type { ChatMessage, ModelResponse } from '../machines/messages.js';
import type { CallResult, ModelStepInput, ModelStepOutput, PlannedCall, Round } from '../machines/round.js';
import { type SwarmInput, swarmMachine, type SwarmOutcome } from '../machines/swarm.js';
import { Controllable, Coverage, eventSig, flush, machineGraph } from './support/mbt-harness.js';

// ---------------------------------------------------------------------------------------------
// Fixtures: what the controllable actors answer. The model and the executors share them.

const MAX_TURNS = 2;
const SWARM_ID = 'swarm-mbt';
const DEF = 'planner';
const AGENT = 'helper';
const USAGE = { inputTokens: 3, outputTokens: 2 };
const PAUSE_REASON = { type: 'HITL' as const, message: 'hold on' };
const RESUME_MESSAGE = 'go on';
const STOP_REASON = 'user stop';
const MODEL_ERROR = 'model down';
const AGENT_ERROR = 'agent model down';

const input: SwarmInput = {
  swarmId: SWARM_ID,
  definitionId: DEF,
  input: { topic: 'weekend' },
  userMessage: 'Plan the weekend.',
  config: {
    instructions: 'You plan.',
    maxTurns: MAX_TURNS,
    tools: ['lookup'],
    handoffs: [
      {
        toolName: `handoff_to_${AGENT}`,
        kind: 'agent',
        agentId: AGENT,
        description: 'Helps.',
        agent: { instructions: 'You help.', tools: [], maxTurns: 10 },
      },
    ],
  },
};

type ResponseKind =
  | 'MODEL_COMPLETE'
  | 'MODEL_FAIL'
  | 'MODEL_TOOLS'
  | 'MODEL_HANDOFF'
  | 'MODEL_PAUSE_CALL'
  | 'MODEL_INVALID'
  | 'MODEL_TEXT_CORRECTION';

const toolCall = (id: string, name: string, args: string) => ({ id, name, arguments: args });

/** The orchestrator's `modelStep` output for a response kind at (new) turn `turn`. */
function stepFor(kind: ResponseKind, turn: number): ModelStepOutput {
  const id = (suffix: string) => `t${turn}-${suffix}`;
  const out = (response: ModelResponse, calls: PlannedCall[], verdict: ModelStepOutput['verdict']): ModelStepOutput => ({
    response: { ...response, usage: USAGE },
    calls,
    verdict,
    durationMs: 7,
  });
  switch (kind) {
    case 'MODEL_COMPLETE':
      return out({ text: `done at ${turn}` }, [], { type: 'complete', result: `result ${turn}` });
    case 'MODEL_FAIL':
      return out({ text: `giving up at ${turn}` }, [], { type: 'fail', reason: `gave up at ${turn}` });
    case 'MODEL_TEXT_CORRECTION':
      return out({ text: `musing ${turn}` }, [], { type: 'correct', message: `correction ${turn}` });
    case 'MODEL_TOOLS':
      return out(
        { toolCalls: [toolCall(id('a'), 'lookup', '{"q":"a"}'), toolCall(id('b'), 'lookup', '{"q":"b"}')] },
        [
          { id: id('a'), name: 'lookup', kind: 'tool', arguments: '{"q":"a"}' },
          { id: id('b'), name: 'lookup', kind: 'tool', arguments: '{"q":"b"}' },
        ],
        { type: 'continue' },
      );
    case 'MODEL_HANDOFF':
      return out(
        {
          text: 'asking the helper',
          toolCalls: [toolCall(id('h'), `handoff_to_${AGENT}`, `{"request":"help ${turn}"}`), toolCall(id('x'), 'lookup', '{"q":"x"}')],
        },
        [
          { id: id('h'), name: `handoff_to_${AGENT}`, kind: 'agent', agentId: AGENT, request: `help ${turn}` },
          { id: id('x'), name: 'lookup', kind: 'tool', arguments: '{"q":"x"}' },
        ],
        { type: 'continue' },
      );
    case 'MODEL_PAUSE_CALL':
      return out(
        { toolCalls: [toolCall(id('p'), 'pause', '{}'), toolCall(id('y'), 'lookup', '{"q":"y"}')] },
        [
          { id: id('p'), name: 'pause', kind: 'pause', reason: { type: 'APPROVAL_NEEDED', message: `approve ${turn}` } },
          { id: id('y'), name: 'lookup', kind: 'tool', arguments: '{"q":"y"}' },
        ],
        { type: 'continue' },
      );
    case 'MODEL_INVALID':
      return out({ toolCalls: [toolCall(id('i'), 'nope', '{}')] }, [{ id: id('i'), name: 'nope', kind: 'invalid', error: 'Unknown tool "nope"' }], {
        type: 'continue',
      });
  }
}

const toolOutput = (callId: string): CallResult => ({ ok: true, content: `out ${callId}` });
const toolError = (callId: string) => new Error(`tool ${callId} broke`);
const agentAnswer = (agentTurn: number) => `helper answer ${agentTurn}`;

// ---------------------------------------------------------------------------------------------
// The abstract model. Its context is the oracle: the projection used for graph vertices is
// small (state, turn, running calls, pending pause, pause origin, outcome status); the rest
// (messages, notes, session, emitted signatures) is what the real context must equal.

type Kind = PlannedCall['kind'];
interface ModelCall {
  id: string;
  kind: Kind;
  name: string;
  request?: string;
  reason?: { type: string; message: string };
  result?: CallResult;
}
interface ModelRound {
  turn: number;
  calls: ModelCall[];
}
interface ModelContext {
  turn: number;
  round: ModelRound | null;
  pauseFrom: 'model' | 'thinking' | 'round' | null;
  notes: string[];
  outcome: SwarmOutcome | null;
  messages: ChatMessage[];
  session: SessionEntry[];
  /** Responses of the agent of the current handoff round so far. */
  agentTurn: number;
  /** Signatures (see `eventSig`) of every event the swarm must have emitted. */
  emitted: string[];
}

type ModelEvent =
  | { type: ResponseKind }
  | { type: 'MODEL_ERROR' }
  | { type: 'TOOL_DONE' }
  | { type: 'TOOL_ERROR' }
  | { type: 'AGENT_DONE' }
  | { type: 'AGENT_FAIL' }
  | { type: 'AGENT_STEP' }
  | { type: 'PAUSE' }
  | { type: 'RESUME'; message?: string }
  | { type: 'STOP' };

const running = (round: ModelRound | null): ModelCall[] =>
  round ? round.calls.filter((c) => c.result === undefined && c.kind !== 'pause') : [];
const pendingPauseCall = (round: ModelRound | null) => round?.calls.find((c) => c.kind === 'pause' && c.result === undefined);
const lastRunningTool = (round: ModelRound | null) => running(round).filter((c) => c.kind === 'tool').at(-1);
const runningAgent = (round: ModelRound | null) => running(round).find((c) => c.kind === 'agent');

function expectedAssistant(response: ModelResponse): ChatMessage {
  const m: ChatMessage = { role: 'assistant', content: response.text ?? '' };
  if (response.toolCalls?.length) m.toolCalls = response.toolCalls;
  return m;
}

/** Records a model response: turn, transcript and the llm-call event. */
function respond(c: ModelContext, kind: ResponseKind): Pick<ModelContext, 'turn' | 'messages' | 'emitted'> {
  const turn = c.turn + 1;
  const out = stepFor(kind, turn);
  return { turn, messages: [...c.messages, expectedAssistant(out.response)], emitted: [...c.emitted, `llm:${DEF}:${turn}`] };
}

/** A response with calls: opens the round and announces its calls. */
function openRound(c: ModelContext, kind: ResponseKind): Partial<ModelContext> {
  const r = respond(c, kind);
  const out = stepFor(kind, r.turn);
  const calls: ModelCall[] = out.calls.map((p) => {
    switch (p.kind) {
      case 'invalid':
        return { id: p.id, kind: p.kind, name: p.name, result: { ok: false, content: p.error } };
      case 'agent':
        return { id: p.id, kind: p.kind, name: p.name, request: p.request };
      case 'pause':
        return { id: p.id, kind: p.kind, name: p.name, reason: p.reason };
      default:
        return { id: p.id, kind: p.kind, name: p.name };
    }
  });
  const announced = calls.flatMap((call) => {
    if (call.kind === 'tool') return [`working:tool-call:${call.id}`, `tool-start:${call.id}`];
    if (call.kind === 'agent') return [`working:agent-handoff:${call.id}`];
    if (call.kind === 'invalid') return [`tool-complete:${call.id}:false`];
    return [];
  });
  return {
    ...r,
    round: { turn: r.turn, calls },
    agentTurn: 0,
    emitted: [...r.emitted, ...announced, 'cp:model-response'],
  };
}

const withResult = (round: ModelRound, id: string, result: CallResult): ModelRound => ({
  ...round,
  calls: round.calls.map((call) => (call.id === id ? { ...call, result } : call)),
});

/** A tool of the round finished: the last running one (the test settles tools in reverse call order). */
function finishTool(c: ModelContext, ok: boolean): Partial<ModelContext> {
  const call = lastRunningTool(c.round)!;
  const result = ok ? toolOutput(call.id) : { ok: false, content: `Call failed: ${toolError(call.id).message}` };
  return {
    round: withResult(c.round!, call.id, result),
    emitted: [...c.emitted, `tool-complete:${call.id}:${ok}`, 'cp:tool-result'],
  };
}

/** The handoff's agent finished: answered (ok) or its model call failed. */
function finishAgent(c: ModelContext, ok: boolean): Partial<ModelContext> {
  const call = runningAgent(c.round)!;
  if (!ok) {
    const result = { ok: false, content: `Agent failed: ${AGENT_ERROR}` };
    return {
      round: withResult(c.round!, call.id, result),
      emitted: [...c.emitted, `working:handoff-result:${call.id}:false`, 'cp:handoff-result'],
    };
  }
  const agentTurn = c.agentTurn + 1;
  const answer = agentAnswer(agentTurn);
  return {
    agentTurn,
    round: withResult(c.round!, call.id, { ok: true, content: answer }),
    session: [...c.session, { agentId: AGENT, request: call.request!, answer }],
    emitted: [...c.emitted, `llm:${AGENT}:${agentTurn}`, `working:handoff-result:${call.id}:true`, 'cp:handoff-result'],
  };
}

const publishTurn = (c: ModelContext) => ({ emitted: [...c.emitted, `working:turn-completed:${c.turn}`] });

const closeRound = (c: ModelContext): Partial<ModelContext> => ({
  messages: [
    ...c.messages,
    ...(c.round?.calls ?? []).map((call) => ({ role: 'tool' as const, toolCallId: call.id, content: call.result?.content ?? 'No result.' })),
    ...c.notes.map((content) => ({ role: 'user' as const, content })),
  ],
  round: null,
  notes: [],
});

function fail(c: ModelContext, reason: string): Partial<ModelContext> {
  return { outcome: { status: 'failed', reason }, emitted: [...c.emitted, `failed:failed:${reason}!`] };
}

function resume(c: ModelContext, message: string | undefined): Partial<ModelContext> {
  const emitted = [...c.emitted, `working:resumed:${message ?? ''}`, 'cp:resume'];
  if (c.pauseFrom === 'model') {
    const call = pendingPauseCall(c.round)!;
    return { pauseFrom: null, emitted, round: withResult(c.round!, call.id, { ok: true, content: message ?? 'Resumed without a message.' }) };
  }
  if (c.pauseFrom === 'thinking') {
    return { pauseFrom: null, emitted, messages: message ? [...c.messages, { role: 'user', content: message }] : c.messages };
  }
  return { pauseFrom: null, emitted, notes: message ? [...c.notes, message] : c.notes };
}

const paused = (c: ModelContext, from: 'thinking' | 'round'): Partial<ModelContext> => ({
  pauseFrom: from,
  emitted: [...c.emitted, `input-required:paused:${PAUSE_REASON.message}`, 'cp:pause'],
});

const m = setup({
  types: {} as { context: ModelContext; events: ModelEvent },
  guards: {
    roundDone: ({ context }) => running(context.round).length === 0,
    toolRunning: ({ context }) => lastRunningTool(context.round) !== undefined,
    lastIsTool: ({ context }) => running(context.round).length === 1 && running(context.round)[0]!.kind === 'tool',
    agentRunning: ({ context }) => runningAgent(context.round) !== undefined,
    lastIsAgent: ({ context }) => running(context.round).length === 1 && running(context.round)[0]!.kind === 'agent',
    pausePending: ({ context }) => pendingPauseCall(context.round) !== undefined,
    turnsExhausted: ({ context }) => context.turn >= MAX_TURNS,
    fromModel: ({ context }) => context.pauseFrom === 'model',
    fromThinking: ({ context }) => context.pauseFrom === 'thinking',
    handoffsRunning: ({ context }) => runningAgent(context.round) !== undefined,
    callsRunning: ({ context }) => running(context.round).length > 0,
  },
});

const answer = (kind: ResponseKind, target: string) => ({
  target,
  actions: assign(({ context }: { context: ModelContext }) => openRound(context, kind)),
});

const toolDone = (ok: boolean, target: string) => [
  {
    guard: 'lastIsTool' as const,
    target,
    actions: [
      assign(({ context }: { context: ModelContext }) => finishTool(context, ok)),
      assign(({ context }: { context: ModelContext }) => publishTurn(context)),
    ],
  },
  { guard: 'toolRunning' as const, actions: assign(({ context }: { context: ModelContext }) => finishTool(context, ok)) },
];

const agentDone = (ok: boolean) => [
  {
    guard: 'lastIsAgent' as const,
    target: '#model.running.deciding',
    actions: [
      assign(({ context }: { context: ModelContext }) => finishAgent(context, ok)),
      assign(({ context }: { context: ModelContext }) => publishTurn(context)),
    ],
  },
  { guard: 'agentRunning' as const, actions: assign(({ context }: { context: ModelContext }) => finishAgent(context, ok)) },
];

const swarmModel = m.createMachine({
  id: 'model',
  context: {
    turn: 0,
    round: null,
    pauseFrom: null,
    notes: [],
    outcome: null,
    messages: [
      { role: 'system', content: input.config.instructions },
      { role: 'user', content: input.userMessage },
    ],
    session: [],
    agentTurn: 0,
    emitted: ['task', 'working:started', 'cp:start'],
  },
  on: {
    STOP: {
      target: '.stopped',
      actions: assign(({ context }) => ({
        outcome: { status: 'stopped' as const, reason: STOP_REASON },
        emitted: [...context.emitted, 'cp:stop', `canceled:stopped:${STOP_REASON}!`],
      })),
    },
  },
  initial: 'running',
  states: {
    running: {
      // Ignored: RESUME while not paused changes nothing and emits nothing.
      on: { RESUME: {} },
      initial: 'thinking',
      states: {
        thinking: {
          on: {
            MODEL_FAIL: {
              target: '#model.failed',
              actions: assign(({ context }) => {
                const r = { ...context, ...respond(context, 'MODEL_FAIL') };
                const reason = (stepFor('MODEL_FAIL', r.turn).verdict as { reason: string }).reason;
                return { ...r, ...fail({ ...r, emitted: [...r.emitted, 'cp:model-response'] }, reason) };
              }),
            },
            MODEL_COMPLETE: {
              target: '#model.completed',
              actions: assign(({ context }) => {
                const r = respond(context, 'MODEL_COMPLETE');
                const result = `result ${r.turn}`;
                return {
                  ...r,
                  outcome: { status: 'completed' as const, result },
                  emitted: [...r.emitted, 'cp:model-response', 'artifact', `completed:completed:${JSON.stringify(result)}!`],
                };
              }),
            },
            MODEL_ERROR: {
              target: '#model.failed',
              actions: assign(({ context }) => fail(context, `Model call failed: ${MODEL_ERROR}`)),
            },
            MODEL_HANDOFF: answer('MODEL_HANDOFF', '#model.awaitingHandoff'),
            MODEL_TOOLS: answer('MODEL_TOOLS', 'acting'),
            MODEL_PAUSE_CALL: answer('MODEL_PAUSE_CALL', 'acting'),
            MODEL_INVALID: answer('MODEL_INVALID', 'acting'),
            MODEL_TEXT_CORRECTION: {
              target: 'deciding',
              actions: assign(({ context }) => {
                const r = respond(context, 'MODEL_TEXT_CORRECTION');
                const correction = (stepFor('MODEL_TEXT_CORRECTION', r.turn).verdict as { message: string }).message;
                return {
                  ...r,
                  messages: [...r.messages, { role: 'user' as const, content: correction }],
                  emitted: [...r.emitted, `working:turn-completed:${r.turn}`, 'cp:model-response'],
                };
              }),
            },
            PAUSE: { target: '#model.paused', actions: assign(({ context }) => paused(context, 'thinking')) },
          },
        },
        acting: {
          always: { guard: 'roundDone', target: 'deciding', actions: assign(({ context }) => publishTurn(context)) },
          on: {
            TOOL_DONE: toolDone(true, 'deciding'),
            TOOL_ERROR: toolDone(false, 'deciding'),
            PAUSE: { target: '#model.paused', actions: assign(({ context }) => paused(context, 'round')) },
          },
        },
        deciding: {
          always: [
            {
              guard: 'pausePending',
              target: '#model.paused',
              actions: assign(({ context }) => {
                const reason = pendingPauseCall(context.round)!.reason!;
                return { pauseFrom: 'model' as const, emitted: [...context.emitted, `input-required:paused:${reason.message}`, 'cp:pause'] };
              }),
            },
            {
              guard: 'turnsExhausted',
              target: '#model.failed',
              actions: assign(({ context }) => {
                const closed = { ...context, ...closeRound(context) };
                return { ...closed, ...fail(closed, `maxTurns (${MAX_TURNS}) reached without a result`) };
              }),
            },
            { target: 'thinking', actions: assign(({ context }) => closeRound(context)) },
          ],
        },
      },
    },
    awaitingHandoff: {
      on: {
        RESUME: {},
        TOOL_DONE: toolDone(true, '#model.running.deciding'),
        TOOL_ERROR: toolDone(false, '#model.running.deciding'),
        AGENT_DONE: agentDone(true),
        AGENT_FAIL: agentDone(false),
        AGENT_STEP: {
          guard: 'agentRunning',
          actions: assign(({ context }) => ({
            agentTurn: context.agentTurn + 1,
            emitted: [...context.emitted, `llm:${AGENT}:${context.agentTurn + 1}`, 'cp:agent-step'],
          })),
        },
        PAUSE: { target: 'paused', actions: assign(({ context }) => paused(context, 'round')) },
      },
    },
    paused: {
      on: {
        // Ignored: a second PAUSE changes nothing and emits nothing.
        PAUSE: {},
        TOOL_DONE: { guard: 'toolRunning', actions: assign(({ context }) => finishTool(context, true)) },
        TOOL_ERROR: { guard: 'toolRunning', actions: assign(({ context }) => finishTool(context, false)) },
        RESUME: [
          { guard: 'fromModel', target: 'running.deciding', actions: assign(({ context, event }) => resume(context, event.message)) },
          { guard: 'fromThinking', target: 'running.thinking', actions: assign(({ context, event }) => resume(context, event.message)) },
          { guard: 'handoffsRunning', target: 'awaitingHandoff', actions: assign(({ context, event }) => resume(context, event.message)) },
          { guard: 'callsRunning', target: 'running.acting', actions: assign(({ context, event }) => resume(context, event.message)) },
          {
            target: 'running.deciding',
            actions: assign(({ context, event }) => {
              const r = { ...context, ...resume(context, event.message) };
              return { ...r, ...publishTurn(r) };
            }),
          },
        ],
      },
    },
    completed: { type: 'final' },
    failed: { type: 'final' },
    stopped: { type: 'final' },
  },
});

type ModelSnapshot = SnapshotFrom<typeof swarmModel>;

/** The part of a model snapshot that identifies a graph vertex. */
function project(s: ModelSnapshot): string {
  const c = s.context;
  const run = running(c.round);
  return JSON.stringify([
    s.value,
    c.turn,
    run.filter((x) => x.kind === 'tool').length,
    run.filter((x) => x.kind === 'agent').length,
    pendingPauseCall(c.round) !== undefined,
    c.pauseFrom,
    c.outcome?.status ?? null,
  ]);
}

const eventKey = (e: ModelEvent): string => ('message' in e && e.message !== undefined ? `${e.type}(${e.message})` : e.type);

const testModel = createTestModel(swarmModel, {
  events: [{ type: 'RESUME' }, { type: 'RESUME', message: RESUME_MESSAGE }],
  // Vertices are model transitions (state reached + event + state left), so shortest paths
  // reach every transition of the model, not only every state.
  serializeState: (s, e, prev) => (e && prev ? `${project(s)} <-${eventKey(e)}- ${project(prev)}` : project(s)),
  filterEvents: (s, e) => s.status === 'active' && s.can(e),
  stopWhen: (s) => s.status !== 'active',
});

// ---------------------------------------------------------------------------------------------
// Running a path against the real machine.

interface RealCall {
  id: string;
  kind: Kind;
  result?: CallResult;
}
const realRound = (round: Round | null) =>
  round && { turn: round.turn, calls: round.calls.map((c): RealCall => ({ id: c.id, kind: c.kind, ...(c.result ? { result: c.result } : {}) })) };
const modelRound = (round: ModelRound | null) =>
  round && { turn: round.turn, calls: round.calls.map((c): RealCall => ({ id: c.id, kind: c.kind, ...(c.result ? { result: c.result } : {}) })) };

const coverage = new Coverage('swarm');
const agentCoverage = new Coverage('agent');
const realGraph = machineGraph(swarmMachine);

function startRun() {
  const models = new Controllable<ModelStepInput, ModelStepOutput>();
  const tools = new Controllable<{ toolCallId: string; idempotencyKey: string; agentId: string }, CallResult>();
  const agent = agentMachine.provide({ actors: { modelStep: models.logic, runTool: tools.logic } });
  const machine = swarmMachine.provide({ actors: { modelStep: models.logic, runTool: tools.logic, agent } });
  const actor = createActor(machine, {
    input,
    inspect: (e) => {
      coverage.observe(e);
      agentCoverage.observe(e);
    },
  });
  const emitted: SwarmEventBody[] = [];
  actor.on('swarm.events', (e) => emitted.push(...e.events));
  const errors: unknown[] = [];
  actor.subscribe({ error: (err) => errors.push(err) });
  const model = createActor(swarmModel).start();
  let seenReal = 0;
  let seenModel = 0;

  const orchestrator = (i: ModelStepInput) => i.orchestrator;
  const agentCall = (i: ModelStepInput) => !i.orchestrator;

  async function exec(event: ModelEvent): Promise<void> {
    const before = model.getSnapshot().context;
    switch (event.type) {
      case 'MODEL_ERROR':
      case 'MODEL_COMPLETE':
      case 'MODEL_FAIL':
      case 'MODEL_TOOLS':
      case 'MODEL_HANDOFF':
      case 'MODEL_PAUSE_CALL':
      case 'MODEL_INVALID':
      case 'MODEL_TEXT_CORRECTION': {
        const call = models.one(orchestrator);
        // The model sees the transcript so far, for the next turn.
        expect(call.input.turn).toBe(before.turn + 1);
        expect(call.input.speaker).toBe(DEF);
        expect(call.input.messages).toEqual(before.messages);
        if (event.type === 'MODEL_ERROR') call.reject(new Error(MODEL_ERROR));
        else call.resolve(stepFor(event.type, before.turn + 1));
        break;
      }
      case 'TOOL_DONE':
      case 'TOOL_ERROR': {
        const expected = lastRunningTool(before.round)!;
        const call = tools.last();
        expect(call.input.toolCallId).toBe(expected.id);
        expect(call.input.agentId).toBe(DEF);
        expect(call.input.idempotencyKey).toBe(`${SWARM_ID}:t${before.round!.turn}:${expected.id}`);
        if (event.type === 'TOOL_DONE') call.resolve(toolOutput(expected.id));
        else call.reject(toolError(expected.id));
        break;
      }
      case 'AGENT_DONE':
      case 'AGENT_FAIL':
      case 'AGENT_STEP': {
        const call = models.one(agentCall);
        expect(call.input.speaker).toBe(AGENT);
        expect(call.input.turn).toBe(before.agentTurn + 1);
        // The agent sees the swarm's session as it was when the round opened.
        const request = runningAgent(before.round)!.request!;
        expect(call.input.messages.find((msg) => msg.role === 'user')).toBeDefined();
        expect(call.input.messages.filter((msg) => msg.role === 'user').at(-1)?.content).toMatch(
          before.agentTurn === 0 ? request : 'Please answer the request in plain text.',
        );
        if (event.type === 'AGENT_FAIL') call.reject(new Error(AGENT_ERROR));
        else if (event.type === 'AGENT_DONE')
          call.resolve({ response: { text: agentAnswer(before.agentTurn + 1) }, calls: [], verdict: { type: 'continue' }, durationMs: 1 });
        // No text, no calls: the agent corrects itself and reports its step to the swarm.
        else call.resolve({ response: { text: '  ' }, calls: [], verdict: { type: 'continue' }, durationMs: 1 });
        break;
      }
      case 'PAUSE':
        actor.send({ type: 'PAUSE', reason: PAUSE_REASON });
        break;
      case 'RESUME':
        actor.send(event.message !== undefined ? { type: 'RESUME', message: event.message } : { type: 'RESUME' });
        break;
      case 'STOP':
        actor.send({ type: 'STOP', reason: STOP_REASON });
        break;
    }
    model.send(event);
    await flush();
  }

  function check(expected: ModelSnapshot): void {
    const ms = model.getSnapshot();
    // The lockstep model agrees with the path the graph produced.
    expect(project(ms)).toBe(project(expected));
    const mc = ms.context;
    const s = actor.getSnapshot();
    expect(errors).toEqual([]);
    expect(s.status).toBe(ms.status);
    expect(s.value).toEqual(ms.value);
    const c = s.context;
    expect(c.turn).toBe(mc.turn);
    expect(c.pause?.from ?? null).toBe(mc.pauseFrom);
    expect(realRound(c.round)).toEqual(modelRound(mc.round));
    expect(c.notes).toEqual(mc.notes);
    expect(c.messages).toEqual(mc.messages);
    expect(c.session).toEqual(mc.session);
    expect(c.outcome).toEqual(mc.outcome);
    expect(c.usage).toEqual({ inputTokens: USAGE.inputTokens * mc.turn, outputTokens: USAGE.outputTokens * mc.turn });

    // Events of this step, in order: checkpoints, facts, finals.
    expect(emitted.slice(seenReal).map(eventSig)).toEqual(mc.emitted.slice(seenModel));
    seenReal = emitted.length;
    seenModel = mc.emitted.length;

    // Children: the model call in `thinking`, one child per running call, nothing else; a
    // final swarm has stopped all of them.
    const active = ms.status === 'active';
    const run = active ? running(mc.round) : [];
    const thinking = ms.matches({ running: 'thinking' });
    const expectedChildren = [
      ...(thinking ? ['model'] : []),
      ...(mc.round ? mc.round.calls.flatMap((call, i) => (run.includes(call) ? [`${call.kind}:${mc.round!.turn}:${i}`] : [])) : []),
    ].sort();
    if (active) expect(Object.keys(s.children).sort()).toEqual(expectedChildren);
    // XState leaves the refs of spawned children in a final snapshot, but stops them.
    else expect(Object.values(s.children).filter((ref) => ref?.getSnapshot().status === 'active')).toEqual([]);
    expect(models.open(orchestrator).length).toBe(thinking ? 1 : 0);
    expect(tools.open().length).toBe(run.filter((x) => x.kind === 'tool').length);
    // A paused swarm pauses its agents, which abort their model call (re-issued on resume).
    expect(models.open(agentCall).length).toBe(run.some((x) => x.kind === 'agent') && !ms.matches('paused') ? 1 : 0);

    if (ms.status === 'done') {
      expect(s.output).toEqual(mc.outcome);
      const finals = emitted.filter((e) => e.kind === 'status-update' && e.final);
      expect(finals).toHaveLength(1);
      expect(emitted.at(-1)).toBe(finals[0]);
      expect(models.allClosed() && tools.allClosed()).toBe(true);
    } else {
      expect(emitted.some((e) => e.kind === 'status-update' && e.final)).toBe(false);
    }
  }

  actor.start();
  return { actor, exec, check };
}

const shortest = testModel.getShortestPaths();
const describePath = (steps: { event: ModelEvent }[]) => steps.slice(1).map((s) => eventKey(s.event)).join(' → ');

const EVENT_TYPES: ModelEvent['type'][] = [
  'MODEL_COMPLETE',
  'MODEL_FAIL',
  'MODEL_ERROR',
  'MODEL_TOOLS',
  'MODEL_HANDOFF',
  'MODEL_PAUSE_CALL',
  'MODEL_INVALID',
  'MODEL_TEXT_CORRECTION',
  'TOOL_DONE',
  'TOOL_ERROR',
  'AGENT_DONE',
  'AGENT_FAIL',
  'AGENT_STEP',
  'PAUSE',
  'RESUME',
  'STOP',
];

describe('swarm machine, model-based', () => {
  it('generates paths from the model', () => {
    expect(shortest.length).toBeGreaterThan(50);
  });

  describe(`shortest paths (${shortest.length})`, () => {
    shortest.forEach((path, i) => {
      it(`#${i + 1}: ${describePath(path.steps)}`, async () => {
        const run = startRun();
        const events = Object.fromEntries(EVENT_TYPES.map((type) => [type, ({ event }: { event: ModelEvent }) => run.exec(event)]));
        await path.test({ events, states: { '*': (state) => run.check(state) } });
      });
    });
  });

  it('covers every state and every transition of the real swarm machine', () => {
    const missing = coverage.missing(realGraph);
    expect(missing).toEqual({ states: [], transitions: [] });
  });
});

// TEMP probe
for (const [name, ser] of [
  ['value+turn', (s: ModelSnapshot) => JSON.stringify([s.value, s.context.turn])],
  ['value+turn+pauseFrom', (s: ModelSnapshot) => JSON.stringify([s.value, s.context.turn, s.context.pauseFrom])],
  ['value+turn+running', (s: ModelSnapshot) => JSON.stringify([s.value, s.context.turn, running(s.context.round).length])],
] as const) {
  const t0 = Date.now();
  const all = testModel.getSimplePaths({ serializeState: ser });
  const fin = testModel.getSimplePaths({ serializeState: ser, toState: (s) => s.status !== 'active' });
  console.log('PROBE', name, all.length, fin.length, Date.now() - t0, 'ms', Math.max(...all.map((p) => p.steps.length)));
}
