/**
 * Model-based tests of the swarm machine (machines/swarm.ts), generated with `xstate/graph`.
 *
 * An abstract model machine (no invokes: model responses, tool, agent and child results are
 * explicit events) is the oracle. `createTestModel` derives paths from it; each path is executed
 * against the REAL `swarmMachine` whose `modelStep`, `runTool`, `agent`, `childSwarm` and
 * `remoteAgent` actors are controllable (the agent is the real agent machine over the same
 * controllable model and tools). At every
 * step the real actor must agree with a lockstep copy of the model on state, context, running
 * children and emitted events. Finally every state and transition of the real machine's graph
 * must have been taken by some path.
 */
import { describe, expect, it } from 'vitest';
import { createActor, setup, type SnapshotFrom } from 'xstate';
import { createTestModel } from 'xstate/graph';
import { agentMachine, type SessionEntry } from '../../machines/agent.js';
import type { SwarmEventBody } from '../../machines/events.js';
import type { ChatMessage, ModelResponse } from '../../machines/messages.js';
import type { ModelStepInput, ModelStepOutput } from '../../machines/contracts.js';
import type { ToolRunInput } from '../../machines/calls/tool.js';
import type { RemoteAgentInput } from '../../machines/calls/remote.js';
import type { ChildSwarmInput } from '../../machines/calls/swarm.js';
import type { CallResult } from '../../machines/calls/kind.js';
import type { PlannedCall } from '../../machines/calls/index.js';
import type { Round } from '../../machines/round.js';
import { type SwarmInput, swarmMachine, type SwarmOutcome } from '../../machines/swarm.js';
import { persistedSnapshot } from '../../src/runtime/persisted.js';
import { Controllable, Coverage, describeModelPaths, eventSig, flush, machineGraph, same } from '../support/mbt-harness.js';

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
/** What a swarm paused at its turn limit says. */
const limitMessage = (max: number) => `maxTurns (${max}) reached without a result: extend the swarm's limits to go on, or stop it`;
const MODEL_ERROR = 'model down';
const AGENT_ERROR = 'agent model down';
const AGENT_SPEC = { instructions: 'You help.', tools: [], maxTurns: 10 };
const CHILD_DEF = 'research';
const REMOTE = 'oracle';
const REMOTE_URL = 'http://oracle.test/.well-known/agent-card.json';

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
        agent: AGENT_SPEC,
      },
      {
        toolName: `handoff_to_${CHILD_DEF}`,
        kind: 'swarm',
        definitionId: CHILD_DEF,
        description: 'A child swarm.',
        structured: false,
        customizable: false,
      },
      { toolName: `handoff_to_${REMOTE}`, kind: 'remote', agentId: REMOTE, url: REMOTE_URL, description: 'A remote A2A agent.' },
    ],
  },
};

type ResponseKind =
  | 'MODEL_COMPLETE'
  | 'MODEL_FAIL'
  | 'MODEL_TOOLS'
  | 'MODEL_HANDOFF'
  | 'MODEL_DELEGATE'
  | 'MODEL_PAUSE_CALL'
  | 'MODEL_INVALID'
  | 'MODEL_TEXT_CORRECTION'
  /** A guardrail rejected the response's tool call: the swarm ends rejected. */
  | 'MODEL_REJECT'
  /** A guardrail paused on the response's tool call: the call is held until a resume. */
  | 'MODEL_GUARD_PAUSE';

/** Which guardrail decided, on which call, for the guardrail kinds of response. */
const guardrailOn = (callId: string) => ({ guardrail: 'policy', step: 'toolCall' as const, callId });
/** What a swarm paused by a guardrail says (see `guardrailPauseReason`). */
const guardPauseMessage = (turn: number) => `hold ${turn}. Resume to go on as if allowed, or stop the swarm`;

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
    case 'MODEL_DELEGATE':
      // Handoffs that do not run here: a child swarm and a remote agent.
      return out(
        {
          toolCalls: [
            toolCall(id('s'), `handoff_to_${CHILD_DEF}`, `{"request":"research ${turn}"}`),
            toolCall(id('r'), `handoff_to_${REMOTE}`, `{"request":"ask ${turn}"}`),
          ],
        },
        [
          { id: id('s'), name: `handoff_to_${CHILD_DEF}`, kind: 'swarm', definitionId: CHILD_DEF, input: `research ${turn}` },
          { id: id('r'), name: `handoff_to_${REMOTE}`, kind: 'remote', agentId: REMOTE, url: REMOTE_URL, request: `ask ${turn}` },
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
    case 'MODEL_REJECT':
      return out({ toolCalls: [toolCall(id('z'), 'lookup', '{"q":"z"}')] }, [], { type: 'reject', reason: `rejected at ${turn}`, rejected: guardrailOn(id('z')) });
    case 'MODEL_GUARD_PAUSE':
      return out({ toolCalls: [toolCall(id('g'), 'lookup', '{"q":"g"}')] }, [{ id: id('g'), name: 'lookup', kind: 'tool', arguments: '{"q":"g"}' }], {
        type: 'pause',
        reason: `hold ${turn}`,
        rejected: guardrailOn(id('g')),
        then: { type: 'continue' },
      });
    case 'MODEL_INVALID':
      return out({ toolCalls: [toolCall(id('i'), 'nope', '{}')] }, [{ id: id('i'), name: 'nope', kind: 'invalid', error: 'Unknown tool "nope"' }], {
        type: 'continue',
      });
  }
}

const toolOutput = (callId: string): CallResult => ({ ok: true, content: `out ${callId}` });
const toolErrorText = (callId: string) => `tool ${callId} broke`;
const agentAnswer = (agentTurn: number) => `helper answer ${agentTurn}`;
const childOutput = (callId: string): CallResult => ({ ok: true, content: `child ${callId} done` });
const childErrorText = (callId: string) => `child ${callId} unreachable`;
/** What the agent says when it neither answers nor calls a tool: blank text. */
const AGENT_SILENCE = '  ';

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
  /** For a child swarm: its id, derived from the parent's id, turn and call index. */
  childSwarmId?: string;
  result?: CallResult;
}
interface ModelRound {
  turn: number;
  calls: ModelCall[];
}
interface ModelContext {
  turn: number;
  /** The swarm's bound on turns: `MAX_TURNS`, raised by one `EXTEND` at most (paths stay finite). */
  maxTurns: number;
  round: ModelRound | null;
  pauseFrom: 'model' | 'thinking' | 'round' | 'limit' | 'guardrail' | null;
  /** The round a guardrail's pause holds: its calls start when the swarm is resumed. */
  heldRound: ModelRound | null;
  notes: string[];
  outcome: SwarmOutcome | null;
  messages: ChatMessage[];
  session: SessionEntry[];
  /** Responses of the agent of the current handoff round so far. */
  agentTurn: number;
  /** The session when the current round opened: what its agent starts from. */
  agentSession: SessionEntry[];
  /** Signatures (see `eventSig`) of every event the swarm must have emitted. */
  emitted: string[];
  /** Pauses the machine named itself (from outside, at the limit): the next id's counter. */
  pauses: number;
}

type ModelEvent =
  | { type: ResponseKind }
  | { type: 'MODEL_ERROR' }
  | { type: 'TOOL_DONE' }
  | { type: 'TOOL_ERROR' }
  | { type: 'TOOL_TIMEOUT_FAIL' }
  | { type: 'AGENT_DONE' }
  | { type: 'AGENT_FAIL' }
  | { type: 'AGENT_STEP' }
  | { type: 'CHILD_DONE' }
  | { type: 'CHILD_ERROR' }
  | { type: 'PAUSE' }
  | { type: 'RESUME'; message?: string }
  | { type: 'EXTEND' }
  | { type: 'STOP' };

const running = (round: ModelRound | null): ModelCall[] => (round ? round.calls.filter((c) => c.result === undefined && c.kind !== 'pause') : []);
const pendingPauseCall = (round: ModelRound | null) => round?.calls.find((c) => c.kind === 'pause' && c.result === undefined);
const lastRunningTool = (round: ModelRound | null) =>
  running(round)
    .filter((c) => c.kind === 'tool')
    .at(-1);
const runningAgent = (round: ModelRound | null) => running(round).find((c) => c.kind === 'agent');
/** Handoffs that run elsewhere (child swarm, remote agent); the test settles the last first. */
const isExternal = (kind: Kind) => kind === 'swarm' || kind === 'remote';
const lastRunningExternal = (round: ModelRound | null) =>
  running(round)
    .filter((c) => isExternal(c.kind))
    .at(-1);
const isHandoff = (kind: Kind) => kind === 'agent' || isExternal(kind);
const toolKey = (turn: number, callId: string) => `${SWARM_ID}:t${turn}:${callId}`;

function expectedAssistant(response: ModelResponse): ChatMessage {
  const m: ChatMessage = { role: 'assistant', content: response.text ?? '' };
  if (response.toolCalls?.length) m.toolCalls = response.toolCalls;
  return m;
}

/** Records a model response: turn, transcript and the llm-call event. */
function respond(c: ModelContext, kind: ResponseKind): Pick<ModelContext, 'turn' | 'messages' | 'emitted'> {
  const turn = c.turn + 1;
  const out = stepFor(kind, turn);
  return { turn, messages: [...c.messages, expectedAssistant(out.response)], emitted: [...c.emitted, `llm:${DEF}::${turn}`] };
}

/** A response with calls: opens the round and announces its calls. */
function openRound(c: ModelContext, kind: ResponseKind): Partial<ModelContext> {
  const r = respond(c, kind);
  const out = stepFor(kind, r.turn);
  const calls: ModelCall[] = out.calls.map((p, index) => {
    switch (p.kind) {
      case 'swarm':
        return { id: p.id, kind: p.kind, name: p.name, childSwarmId: `${SWARM_ID}:t${r.turn}:${index}` };
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
  const announced = announcements(calls);
  return {
    ...r,
    round: { turn: r.turn, calls },
    agentTurn: 0,
    agentSession: c.session,
    emitted: [...r.emitted, ...announced, 'cp:model-response'],
  };
}

/** The events announcing a round's calls as they start. */
function announcements(calls: ModelCall[]): string[] {
  return calls.flatMap((call) => {
    if (call.kind === 'tool') return [`working:tool-call:${call.id}`, `tool-start:${call.id}`];
    if (call.kind === 'agent' || call.kind === 'remote') return [`working:agent-handoff:${call.id}`];
    if (call.kind === 'swarm') return [`working:swarm-handoff:${call.id}:${call.childSwarmId}`];
    if (call.kind === 'invalid') return [`tool-complete:${call.id}:false:`];
    return [];
  });
}

/** A guardrail paused the response: its round is held (its calls unannounced, unstarted). */
function holdRound(c: ModelContext): Partial<ModelContext> {
  const opened = { ...c, ...openRound(c, 'MODEL_GUARD_PAUSE') };
  const id = `guardrail:t${c.turn}:${c.pauses + 1}`;
  return {
    turn: opened.turn,
    messages: opened.messages,
    round: null,
    heldRound: opened.round,
    pauseFrom: 'guardrail',
    pauses: c.pauses + 1,
    emitted: [...c.emitted, `llm:${DEF}::${opened.turn}`, 'cp:model-response', `input-required:paused:${guardPauseMessage(opened.turn)}@${id}`, 'cp:pause'],
  };
}

const withResult = (round: ModelRound, id: string, result: CallResult): ModelRound => ({
  ...round,
  calls: round.calls.map((call) => (call.id === id ? { ...call, result } : call)),
});

/** A tool of the round finished: the last running one (the test settles tools in reverse call order). */
function finishTool(c: ModelContext, ok: boolean): Partial<ModelContext> {
  const call = lastRunningTool(c.round)!;
  const result = ok ? toolOutput(call.id) : { ok: false, content: `Call failed: ${toolErrorText(call.id)}` };
  return {
    round: withResult(c.round!, call.id, result),
    emitted: [...c.emitted, `tool-complete:${call.id}:${ok}:${toolKey(c.round!.turn, call.id)}`, 'cp:tool-result'],
  };
}

/** A tool's timeout with `onTimeout: 'fail'` (the test's tools say so in their result). */
const failingTimeout = (id: string): CallResult => ({ ok: false, content: `Tool "lookup" ${id} timed out after 100 ms (timeoutMs)`, failsSwarm: true });

/** A tool timed out with `onTimeout: 'fail'` (the last running one): its result is recorded, then the swarm fails with it. */
function failOnTimeout(c: ModelContext): Partial<ModelContext> {
  const call = lastRunningTool(c.round)!;
  const result = failingTimeout(call.id);
  const recorded = {
    ...c,
    round: withResult(c.round!, call.id, result),
    emitted: [...c.emitted, `tool-complete:${call.id}:false:${toolKey(c.round!.turn, call.id)}`, 'cp:tool-result'],
  };
  return { ...recorded, ...fail(recorded, `${result.content} (onTimeout: 'fail')`) };
}

/**
 * A child swarm or remote agent finished (the last running one). Mirrors swarm.ts, which
 * checkpoints these results as 'tool-result' although they are handoff results (see report).
 */
function finishExternal(c: ModelContext, ok: boolean): Partial<ModelContext> {
  const call = lastRunningExternal(c.round)!;
  const result = ok ? childOutput(call.id) : { ok: false, content: `Call failed: ${childErrorText(call.id)}` };
  const child = call.childSwarmId ? `:${call.childSwarmId}` : '';
  return {
    round: withResult(c.round!, call.id, result),
    emitted: [...c.emitted, `working:handoff-result:${call.id}:${ok}${child}`, 'cp:handoff-result'],
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
    emitted: [...c.emitted, `llm:${AGENT}:${agentScope(c)}:${agentTurn}`, `working:handoff-result:${call.id}:true`, 'cp:handoff-result'],
  };
}

/** The agent's scope: the swarm, turn and call of its handoff. */
const agentScope = (c: ModelContext) => toolKey(c.round!.turn, runningAgent(c.round)!.id);

/** What the handoff's agent sends to its model next. */
function agentMessages(c: ModelContext): ChatMessage[] {
  return [
    { role: 'system', content: AGENT_SPEC.instructions },
    ...c.agentSession.flatMap((e): ChatMessage[] => [
      { role: 'user', content: `(to ${e.agentId}) ${e.request}` },
      { role: 'assistant', content: `(${e.agentId}) ${e.answer}` },
    ]),
    { role: 'user', content: runningAgent(c.round)!.request! },
    ...Array.from({ length: c.agentTurn }, (): ChatMessage[] => [
      { role: 'assistant', content: AGENT_SILENCE },
      { role: 'user', content: 'Please answer the request in plain text.' },
    ]).flat(),
  ];
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
  if (c.pauseFrom === 'thinking' || c.pauseFrom === 'limit') {
    return { pauseFrom: null, emitted, messages: message ? [...c.messages, { role: 'user', content: message }] : c.messages };
  }
  return { pauseFrom: null, emitted, notes: message ? [...c.notes, message] : c.notes };
}

const paused = (c: ModelContext, from: 'thinking' | 'round'): Partial<ModelContext> => ({
  pauseFrom: from,
  pauses: c.pauses + 1,
  // A pause from outside is named by the machine: its turn and its count.
  emitted: [...c.emitted, `input-required:paused:${PAUSE_REASON.message}@pause:t${c.turn}:${c.pauses + 1}`, 'cp:pause'],
});

const m = setup({
  types: {} as { context: ModelContext; events: ModelEvent },
  guards: {
    roundDone: ({ context }) => running(context.round).length === 0,
    // The call an event settles (of the given kind) is the only one left running.
    lastRunning: ({ context }, params: { kind: 'tool' | 'agent' | 'external' }) => {
      const run = running(context.round);
      return run.length === 1 && (params.kind === 'external' ? isExternal(run[0]!.kind) : run[0]!.kind === params.kind);
    },
    toolRunning: ({ context }) => lastRunningTool(context.round) !== undefined,
    agentRunning: ({ context }) => runningAgent(context.round) !== undefined,
    externalRunning: ({ context }) => lastRunningExternal(context.round) !== undefined,
    pausePending: ({ context }) => pendingPauseCall(context.round) !== undefined,
    turnsExhausted: ({ context }) => context.turn >= context.maxTurns,
    fromLimit: ({ context }) => context.pauseFrom === 'limit',
    // One extension per path, at a limit: the swarm then has one more turn.
    extendable: ({ context }) => context.pauseFrom === 'limit' && context.maxTurns === MAX_TURNS,
    fromModel: ({ context }) => context.pauseFrom === 'model',
    fromThinking: ({ context }) => context.pauseFrom === 'thinking',
    fromGuardrail: ({ context }) => context.pauseFrom === 'guardrail',
    handoffsRunning: ({ context }) => running(context.round).some((c) => isHandoff(c.kind)),
    callsRunning: ({ context }) => running(context.round).length > 0,
  },
});

const timeoutFails = { guard: 'toolRunning' as const, target: '#model.failed', actions: m.assign(({ context }) => failOnTimeout(context)) };

const answer = (kind: ResponseKind, target: string) => ({ target, actions: m.assign(({ context }) => openRound(context, kind)) });

/** A call of the round settles: to `deciding` when it was the last one running, else recorded. */
const settle = (finish: (c: ModelContext) => Partial<ModelContext>, kind: 'tool' | 'agent' | 'external', target: string) => [
  {
    guard: { type: 'lastRunning' as const, params: { kind } },
    target,
    actions: m.assign(({ context }) => {
      const done = { ...context, ...finish(context) };
      return { ...done, ...publishTurn(done) };
    }),
  },
  { guard: { type: `${kind}Running` as const }, actions: m.assign(({ context }) => finish(context)) },
];

const resumeAction = (turnCompleted: boolean) =>
  m.assign(({ context, event }) => {
    const resumed = { ...context, ...resume(context, event.type === 'RESUME' ? event.message : undefined) };
    return turnCompleted ? { ...resumed, ...publishTurn(resumed) } : resumed;
  });

const swarmModel = m.createMachine({
  id: 'model',
  context: {
    turn: 0,
    maxTurns: MAX_TURNS,
    round: null,
    pauseFrom: null,
    heldRound: null,
    notes: [],
    outcome: null,
    messages: [
      { role: 'system', content: input.config.instructions },
      { role: 'user', content: input.userMessage },
    ],
    session: [],
    agentTurn: 0,
    agentSession: [],
    emitted: ['task', 'working:started', 'cp:start'],
    pauses: 0,
  },
  on: {
    STOP: {
      target: '.stopped',
      actions: m.assign(({ context }) => ({
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
              actions: m.assign(({ context }) => {
                const r = { ...context, ...respond(context, 'MODEL_FAIL') };
                const reason = (stepFor('MODEL_FAIL', r.turn).verdict as { reason: string }).reason;
                // The last turn completes too, before the final status.
                return { ...r, ...fail({ ...r, emitted: [...r.emitted, `working:turn-completed:${r.turn}`, 'cp:model-response'] }, reason) };
              }),
            },
            MODEL_COMPLETE: {
              target: '#model.completed',
              actions: m.assign(({ context }) => {
                const r = respond(context, 'MODEL_COMPLETE');
                const result = `result ${r.turn}`;
                return {
                  ...r,
                  outcome: { status: 'completed' as const, result },
                  emitted: [...r.emitted, `working:turn-completed:${r.turn}`, 'cp:model-response', 'artifact', `completed:completed:${JSON.stringify(result)}!`],
                };
              }),
            },
            MODEL_ERROR: {
              target: '#model.failed',
              actions: m.assign(({ context }) => fail(context, `Model call failed: ${MODEL_ERROR}`)),
            },
            MODEL_REJECT: {
              target: '#model.failed',
              actions: m.assign(({ context }) => {
                const r = respond(context, 'MODEL_REJECT');
                const verdict = stepFor('MODEL_REJECT', r.turn).verdict as { reason: string; rejected: ReturnType<typeof guardrailOn> };
                return {
                  ...r,
                  outcome: { status: 'failed' as const, reason: verdict.reason, rejected: verdict.rejected },
                  emitted: [...r.emitted, `working:turn-completed:${r.turn}`, 'cp:model-response', `rejected:failed:${verdict.reason}!`],
                };
              }),
            },
            MODEL_GUARD_PAUSE: { target: '#model.paused', actions: m.assign(({ context }) => holdRound(context)) },
            MODEL_HANDOFF: answer('MODEL_HANDOFF', '#model.awaitingHandoff'),
            MODEL_DELEGATE: answer('MODEL_DELEGATE', '#model.awaitingHandoff'),
            MODEL_TOOLS: answer('MODEL_TOOLS', 'acting'),
            MODEL_PAUSE_CALL: answer('MODEL_PAUSE_CALL', 'acting'),
            MODEL_INVALID: answer('MODEL_INVALID', 'acting'),
            MODEL_TEXT_CORRECTION: {
              target: 'deciding',
              actions: m.assign(({ context }) => {
                const r = respond(context, 'MODEL_TEXT_CORRECTION');
                const correction = (stepFor('MODEL_TEXT_CORRECTION', r.turn).verdict as { message: string }).message;
                return {
                  ...r,
                  messages: [...r.messages, { role: 'user' as const, content: correction }],
                  emitted: [...r.emitted, `working:turn-completed:${r.turn}`, 'cp:model-response'],
                };
              }),
            },
            PAUSE: { target: '#model.paused', actions: m.assign(({ context }) => paused(context, 'thinking')) },
          },
        },
        acting: {
          always: { guard: 'roundDone', target: 'deciding', actions: m.assign(({ context }) => publishTurn(context)) },
          on: {
            TOOL_DONE: settle((c) => finishTool(c, true), 'tool', 'deciding'),
            TOOL_ERROR: settle((c) => finishTool(c, false), 'tool', 'deciding'),
            TOOL_TIMEOUT_FAIL: timeoutFails,
            PAUSE: { target: '#model.paused', actions: m.assign(({ context }) => paused(context, 'round')) },
          },
        },
        deciding: {
          always: [
            {
              guard: 'pausePending',
              target: '#model.paused',
              actions: m.assign(({ context }) => {
                // A model's pause is named by its call id.
                const call = pendingPauseCall(context.round)!;
                return { pauseFrom: 'model' as const, emitted: [...context.emitted, `input-required:paused:${call.reason!.message}@${call.id}`, 'cp:pause'] };
              }),
            },
            {
              // onLimit 'pause', the default: the swarm waits at its limit (the 'fail' side is
              // run on its own below, for the coverage of the real machine's transitions).
              guard: 'turnsExhausted',
              target: '#model.paused',
              actions: m.assign(({ context }) => {
                const closed = { ...context, ...closeRound(context) };
                const id = `limit:t${closed.turn}:${closed.pauses + 1}`;
                return {
                  ...closed,
                  pauseFrom: 'limit' as const,
                  pauses: closed.pauses + 1,
                  emitted: [...closed.emitted, `input-required:paused:${limitMessage(closed.maxTurns)}@${id}`, 'cp:pause'],
                };
              }),
            },
            { target: 'thinking', actions: m.assign(({ context }) => closeRound(context)) },
          ],
        },
      },
    },
    awaitingHandoff: {
      on: {
        RESUME: {},
        TOOL_DONE: settle((c) => finishTool(c, true), 'tool', '#model.running.deciding'),
        TOOL_ERROR: settle((c) => finishTool(c, false), 'tool', '#model.running.deciding'),
        TOOL_TIMEOUT_FAIL: timeoutFails,
        AGENT_DONE: settle((c) => finishAgent(c, true), 'agent', '#model.running.deciding'),
        AGENT_FAIL: settle((c) => finishAgent(c, false), 'agent', '#model.running.deciding'),
        CHILD_DONE: settle((c) => finishExternal(c, true), 'external', '#model.running.deciding'),
        CHILD_ERROR: settle((c) => finishExternal(c, false), 'external', '#model.running.deciding'),
        AGENT_STEP: {
          guard: 'agentRunning',
          actions: m.assign(({ context }) => ({
            agentTurn: context.agentTurn + 1,
            emitted: [...context.emitted, `llm:${AGENT}:${agentScope(context)}:${context.agentTurn + 1}`, 'cp:agent-step'],
          })),
        },
        PAUSE: { target: 'paused', actions: m.assign(({ context }) => paused(context, 'round')) },
      },
    },
    paused: {
      on: {
        // Ignored: a second PAUSE changes nothing and emits nothing.
        PAUSE: {},
        TOOL_DONE: { guard: 'toolRunning', actions: m.assign(({ context }) => finishTool(context, true)) },
        TOOL_ERROR: { guard: 'toolRunning', actions: m.assign(({ context }) => finishTool(context, false)) },
        TOOL_TIMEOUT_FAIL: timeoutFails,
        // A paused swarm pauses its agents but not its child swarms and remote agents.
        CHILD_DONE: { guard: 'externalRunning', actions: m.assign(({ context }) => finishExternal(context, true)) },
        CHILD_ERROR: { guard: 'externalRunning', actions: m.assign(({ context }) => finishExternal(context, false)) },
        EXTEND: {
          guard: 'extendable',
          actions: m.assign(({ context }) => ({
            maxTurns: context.maxTurns + 1,
            emitted: [...context.emitted, `input-required:extended:${context.maxTurns + 1}`, 'cp:extend'],
          })),
        },
        RESUME: [
          // A guardrail's pause: the held calls start now.
          {
            guard: 'fromGuardrail',
            target: 'running.acting',
            actions: m.assign(({ context, event }) => {
              const resumed = { ...context, ...resume(context, event.type === 'RESUME' ? event.message : undefined) };
              const round = context.heldRound!;
              return { ...resumed, round, heldRound: null, agentTurn: 0, agentSession: context.session, emitted: [...resumed.emitted, ...announcements(round.calls)] };
            }),
          },
          // At its limit still, it pauses again (deciding decides).
          { guard: 'fromLimit', target: 'running.deciding', actions: resumeAction(false) },
          { guard: 'fromModel', target: 'running.deciding', actions: resumeAction(false) },
          { guard: 'fromThinking', target: 'running.thinking', actions: resumeAction(false) },
          { guard: 'handoffsRunning', target: 'awaitingHandoff', actions: resumeAction(false) },
          { guard: 'callsRunning', target: 'running.acting', actions: resumeAction(false) },
          // Everything finished while paused: the round is over.
          { target: 'running.deciding', actions: resumeAction(true) },
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
    run.filter((x) => isExternal(x.kind)).length,
    pendingPauseCall(c.round) !== undefined,
    c.pauseFrom,
    c.heldRound !== null,
    c.maxTurns,
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
const realGraph = machineGraph(swarmMachine);

// The real machine with controllable actors; the agent is the real agent machine over the same
// model and tools. Paths run one after another, so one set of controllables is reset per path.
const models = new Controllable<ModelStepInput, ModelStepOutput>();
const tools = new Controllable<ToolRunInput, CallResult>();
const childSwarms = new Controllable<ChildSwarmInput, CallResult>();
const remotes = new Controllable<RemoteAgentInput, CallResult>();
const liveAgent = agentMachine.provide({ actors: { modelStep: models.logic, runTool: tools.logic } });
const liveSwarm = swarmMachine.provide({
  actors: { modelStep: models.logic, runTool: tools.logic, agent: liveAgent, childSwarm: childSwarms.logic, remoteAgent: remotes.logic },
});

function startRun() {
  for (const c of [models, tools, childSwarms, remotes]) c.reset();
  const actor = createActor(liveSwarm, {
    input,
    inspect: coverage.observe,
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
      case 'MODEL_DELEGATE':
      case 'MODEL_PAUSE_CALL':
      case 'MODEL_INVALID':
      case 'MODEL_REJECT':
      case 'MODEL_GUARD_PAUSE':
      case 'MODEL_TEXT_CORRECTION': {
        const call = models.one(orchestrator);
        // The model sees the transcript so far, for the next turn.
        same(
          { speaker: call.input.speaker, scope: call.input.scope, turn: call.input.turn, messages: call.input.messages, handoffs: call.input.handoffs },
          { speaker: DEF, scope: '', turn: before.turn + 1, messages: before.messages, handoffs: input.config.handoffs },
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
          { toolCallId: expected.id, agentId: DEF, key: toolKey(before.round!.turn, expected.id) },
        );
        if (event.type === 'TOOL_DONE') call.resolve(toolOutput(expected.id));
        else if (event.type === 'TOOL_TIMEOUT_FAIL') call.resolve(failingTimeout(expected.id));
        else call.reject(new Error(toolErrorText(expected.id)));
        break;
      }
      case 'AGENT_DONE':
      case 'AGENT_FAIL':
      case 'AGENT_STEP': {
        const call = models.one(agentCall);
        // The agent sees its instructions, the swarm's session as it was when the round
        // opened, the request, and its own corrections so far.
        same(
          { speaker: call.input.speaker, scope: call.input.scope, turn: call.input.turn, messages: call.input.messages },
          { speaker: AGENT, scope: agentScope(before), turn: before.agentTurn + 1, messages: agentMessages(before) },
        );
        if (event.type === 'AGENT_FAIL') call.reject(new Error(AGENT_ERROR));
        else if (event.type === 'AGENT_DONE')
          call.resolve({ response: { text: agentAnswer(before.agentTurn + 1) }, calls: [], verdict: { type: 'continue' }, durationMs: 1 });
        // No text, no calls: the agent corrects itself and reports its step to the swarm.
        else call.resolve({ response: { text: AGENT_SILENCE }, calls: [], verdict: { type: 'continue' }, durationMs: 1 });
        break;
      }
      case 'CHILD_DONE':
      case 'CHILD_ERROR': {
        const expected = lastRunningExternal(before.round)!;
        const turn = before.round!.turn;
        const index = before.round!.calls.indexOf(expected);
        let call: { resolve(o: CallResult): void; reject(e: unknown): void };
        if (expected.kind === 'swarm') {
          const child = childSwarms.one((i) => i.callId === expected.id);
          same(child.input, {
            parentId: SWARM_ID,
            callId: expected.id,
            key: toolKey(turn, expected.id),
            childSwarmId: `${SWARM_ID}:t${turn}:${index}`,
            definitionId: CHILD_DEF,
            input: `research ${turn}`,
          });
          call = child;
        } else {
          const remote = remotes.one((i) => i.callId === expected.id);
          same(remote.input, { swarmId: SWARM_ID, callId: expected.id, agentId: REMOTE, url: REMOTE_URL, request: `ask ${turn}`, key: toolKey(turn, expected.id) });
          call = remote;
        }
        if (event.type === 'CHILD_DONE') call.resolve(childOutput(expected.id));
        else call.reject(new Error(childErrorText(expected.id)));
        break;
      }
      case 'PAUSE':
        actor.send({ type: 'PAUSE', reason: PAUSE_REASON });
        break;
      case 'RESUME':
        actor.send(event.message !== undefined ? { type: 'RESUME', message: event.message } : { type: 'RESUME' });
        break;
      case 'EXTEND':
        actor.send({ type: 'EXTEND', maxTurns: before.maxTurns + 1 });
        break;
      case 'STOP':
        actor.send({ type: 'STOP', reason: STOP_REASON });
        break;
      default:
        event satisfies never;
    }
    model.send(event);
    await flush();
  }

  function check(expected: ModelSnapshot): void {
    const ms = model.getSnapshot();
    // The lockstep model agrees with the path the graph produced.
    same(project(ms), project(expected));
    const mc = ms.context;
    const s = actor.getSnapshot();
    const c = s.context;
    const active = ms.status === 'active';
    const run = active ? running(mc.round) : [];
    const thinking = ms.matches({ running: 'thinking' });
    const real = {
      errors,
      status: s.status,
      value: s.value,
      turn: c.turn,
      pauseFrom: c.pause?.from ?? null,
      maxTurns: c.config.maxTurns,
      round: realRound(c.round),
      notes: c.notes,
      messages: c.messages,
      session: c.session,
      outcome: c.outcome,
      output: s.output ?? null,
      usage: c.usage,
      // Events of this step, in order: facts, checkpoints, finals.
      events: emitted.slice(seenReal).map(eventSig),
      // Children: the model call in `thinking` and one child per running call. XState keeps
      // the refs of spawned children in a final snapshot, but they must all be stopped.
      children: active ? Object.keys(s.children).sort() : Object.entries(s.children).flatMap(([id, ref]) => (ref?.getSnapshot().status === 'active' ? [id] : [])),
      openModelCalls: models.open(orchestrator).length,
      openToolCalls: tools.open().length,
      openAgentModelCalls: models.open(agentCall).length,
      openExternalCalls: childSwarms.open().length + remotes.open().length,
    };
    const wanted = {
      errors: [],
      status: ms.status,
      value: ms.value,
      turn: mc.turn,
      pauseFrom: mc.pauseFrom,
      maxTurns: mc.maxTurns,
      round: modelRound(mc.round ?? mc.heldRound),
      notes: mc.notes,
      messages: mc.messages,
      session: mc.session,
      outcome: mc.outcome,
      output: active ? null : mc.outcome,
      usage: { inputTokens: USAGE.inputTokens * mc.turn, outputTokens: USAGE.outputTokens * mc.turn },
      events: mc.emitted.slice(seenModel),
      children: [
        ...(thinking ? ['model'] : []),
        ...(mc.round ? mc.round.calls.flatMap((call, i) => (run.includes(call) ? [`${call.kind}:${mc.round!.turn}:${i}`] : [])) : []),
      ].sort(),
      openModelCalls: thinking ? 1 : 0,
      openToolCalls: run.filter((x) => x.kind === 'tool').length,
      // A paused swarm pauses its agents, which abort their model call (re-issued on resume).
      openAgentModelCalls: run.some((x) => x.kind === 'agent') && !ms.matches('paused') ? 1 : 0,
      // Child swarms and remote agents keep running while the swarm is paused.
      openExternalCalls: run.filter((x) => isExternal(x.kind)).length,
    };
    same(real, wanted);
    // The runtime's persisted snapshot (built without XState's walk over the contexts) is XState's own.
    same(persistedSnapshot(actor), actor.getPersistedSnapshot());
    // Durability: a step that emits anything also emits a checkpoint, unless it ended the swarm
    // (the final status update is the runtime's cue to persist then).
    if (real.events.length > 0 && active)
      same(
        real.events.some((sig) => sig.startsWith('cp:')),
        true,
      );
    seenReal = emitted.length;
    seenModel = mc.emitted.length;

    // Exactly one final status update, as the last event, once the swarm is final; every
    // model and tool call ever started has settled or was aborted.
    const finals = emitted.filter((e) => e.kind === 'status-update' && e.final);
    if (active) same(finals.length, 0);
    else {
      same(finals.length, 1);
      same(emitted.at(-1) === finals[0], true);
      same(
        [models, tools, childSwarms, remotes].every((c) => c.allClosed()),
        true,
      );
    }
  }

  actor.start();
  return { actor, exec, check };
}

/** Shortest paths to every model transition (vertices are transitions, see `serializeState`). */
const shortest = testModel.getShortestPaths();

/** The swarm thinks again for its second turn, or ended: the end of the first round. */
const firstRoundOver = (s: ModelSnapshot) => s.status !== 'active' || (s.matches({ running: 'thinking' }) && s.context.turn === 1);
const ended = (s: ModelSnapshot) => s.status !== 'active';

/*
 * Simple paths (no abstract state visited twice), bounded: unbounded they number more than
 * 10,000 (and take ~10 s to generate). Two families:
 * - every simple path through the first round, with every event: all orders of call results,
 *   pauses, resumes and stops within a round; each ends when the swarm thinks again or ends;
 * - every simple path to a final state without pauses, stops and failed handoffs: all
 *   sequences of responses and call results over both turns (to the end, or to the pause at
 *   the turn limit).
 */
const simpleFirstRound = testModel.getSimplePaths({
  serializeState: (s) => project(s),
  toState: firstRoundOver,
  stopWhen: firstRoundOver,
  allowDuplicatePaths: true,
  // A failing timeout only ends a path: the shortest paths take it from every state it can happen in.
  filterEvents: (s, e) => s.status === 'active' && s.can(e) && e.type !== 'TOOL_TIMEOUT_FAIL',
});
/** Left out of the second family: pauses, stops, and failed handoff results (tool failures stay). */
const SIMPLE_TO_END_SKIPS = new Set<ModelEvent['type']>(['PAUSE', 'STOP', 'AGENT_FAIL', 'CHILD_ERROR', 'EXTEND', 'MODEL_GUARD_PAUSE', 'TOOL_TIMEOUT_FAIL']);
/** The run is over for the model's responses: it ended, or it waits at its turn limit. */
const runOver = (s: ModelSnapshot) => ended(s) || (s.matches('paused') && s.context.pauseFrom === 'limit');
const simpleToEnd = testModel.getSimplePaths({
  serializeState: (s) => project(s),
  toState: runOver,
  stopWhen: runOver,
  allowDuplicatePaths: true,
  filterEvents: (s, e) => s.status === 'active' && s.can(e) && !SIMPLE_TO_END_SKIPS.has(e.type),
});

const describePath = (steps: { event: ModelEvent }[]) =>
  steps
    .slice(1)
    .map((s) => eventKey(s.event))
    .join(' → ') || '(start)';

/** Every model event type; `satisfies` makes the compiler insist on all of them. */
const EVENT_TYPES = Object.keys({
  MODEL_COMPLETE: true,
  MODEL_FAIL: true,
  MODEL_ERROR: true,
  MODEL_TOOLS: true,
  MODEL_HANDOFF: true,
  MODEL_DELEGATE: true,
  MODEL_PAUSE_CALL: true,
  MODEL_INVALID: true,
  MODEL_TEXT_CORRECTION: true,
  MODEL_REJECT: true,
  MODEL_GUARD_PAUSE: true,
  TOOL_DONE: true,
  TOOL_ERROR: true,
  TOOL_TIMEOUT_FAIL: true,
  AGENT_DONE: true,
  AGENT_FAIL: true,
  AGENT_STEP: true,
  CHILD_DONE: true,
  CHILD_ERROR: true,
  PAUSE: true,
  RESUME: true,
  EXTEND: true,
  STOP: true,
} satisfies Record<ModelEvent['type'], true>) as ModelEvent['type'][];

describe('swarm machine, model-based (xstate/graph)', () => {
  it('the model yields paths', () => {
    expect(shortest.length).toBeGreaterThan(100);
    expect(simpleFirstRound.length).toBeGreaterThan(100);
    expect(simpleToEnd.length).toBeGreaterThan(100);
  });

  it('with onLimit: fail, reaching the turn limit fails the swarm (the side of the limit the model leaves out)', async () => {
    for (const c of [models, tools, childSwarms, remotes]) c.reset();
    const actor = createActor(liveSwarm, { input: { ...input, config: { ...input.config, onLimit: 'fail' } }, inspect: coverage.observe });
    actor.start();
    for (let turn = 1; turn <= MAX_TURNS; turn++) {
      models.one((i) => i.orchestrator).resolve(stepFor('MODEL_TEXT_CORRECTION', turn));
      await flush();
    }
    expect(actor.getSnapshot().value).toBe('failed');
    expect(actor.getSnapshot().output).toEqual({ status: 'failed', reason: `maxTurns (${MAX_TURNS}) reached without a result` });
  });

  // Guardrails and stall detection, the sides the abstract model leaves out: each drives the real
  // machine through its transitions (recorded for the coverage check below).
  describe('guardrails and stall detection', () => {
    const rejected = { guardrail: 'policy', step: 'toolCall' as const, callId: 't1-a' };
    const start = (config: Partial<SwarmInput['config']> = {}) => {
      for (const c of [models, tools, childSwarms, remotes]) c.reset();
      const actor = createActor(liveSwarm, { input: { ...input, config: { ...input.config, maxTurns: 5, ...config } }, inspect: coverage.observe });
      const emitted: SwarmEventBody[] = [];
      actor.on('swarm.events', (e) => emitted.push(...e.events));
      actor.start();
      return { actor, emitted };
    };
    /** `kind`'s step at turn 1 with `verdict` instead of its own. */
    const withVerdict = (kind: ResponseKind, verdict: ModelStepOutput['verdict']): ModelStepOutput => ({ ...stepFor(kind, 1), verdict });
    const answer = async (out: ModelStepOutput) => {
      models.one((i) => i.orchestrator).resolve(out);
      await flush();
    };

    it('a rejection ends the swarm failed, its outcome and final update saying rejected', async () => {
      const { actor, emitted } = start();
      await answer(withVerdict('MODEL_TOOLS', { type: 'reject', reason: 'no lookups', rejected }));
      expect(actor.getSnapshot().value).toBe('failed');
      expect(actor.getSnapshot().output).toEqual({ status: 'failed', reason: 'no lookups', rejected });
      expect(tools.open()).toHaveLength(0);
      const last = emitted.at(-1);
      expect(last).toMatchObject({ kind: 'status-update', final: true, status: { state: 'rejected' }, metadata: { type: 'failed', rejected } });
    });

    it('a pause holds the calls unstarted; resume starts them', async () => {
      const { actor, emitted } = start();
      await answer(withVerdict('MODEL_TOOLS', { type: 'pause', reason: 'check this', rejected, then: { type: 'continue' } }));
      const paused = actor.getSnapshot();
      expect(paused.value).toBe('paused');
      expect(paused.context.pause).toMatchObject({ from: 'guardrail', reason: { type: 'GUARDRAIL', guardrail: rejected, pauseId: 'guardrail:t0:1' } });
      expect(tools.open()).toHaveLength(0);
      expect(emitted.some((e) => e.kind === 'internal:tool-start')).toBe(false);
      actor.send({ type: 'RESUME', message: 'fine' });
      await flush();
      expect(actor.getSnapshot().value).toEqual({ running: 'acting' });
      expect(tools.open()).toHaveLength(2);
      expect(emitted.filter((e) => e.kind === 'internal:tool-start')).toHaveLength(2);
      tools.last().resolve(toolOutput('t1-b'));
      await flush();
      tools.last().resolve(toolOutput('t1-a'));
      await flush();
      // The human's word joins the conversation once the round closed.
      expect(models.one((i) => i.orchestrator).input.messages.at(-1)).toEqual({ role: 'user', content: 'fine' });
    });

    it('a pause holding handoffs starts them on resume', async () => {
      const { actor } = start();
      await answer(withVerdict('MODEL_DELEGATE', { type: 'pause', reason: 'check', rejected, then: { type: 'continue' } }));
      expect(childSwarms.open().length + remotes.open().length).toBe(0);
      actor.send({ type: 'RESUME' });
      await flush();
      expect(actor.getSnapshot().value).toBe('awaitingHandoff');
      expect(childSwarms.open().length + remotes.open().length).toBe(2);
    });

    it('a pause holding a completion or a failure ends the swarm so on resume; stop ends it', async () => {
      const done = start();
      await answer(withVerdict('MODEL_COMPLETE', { type: 'pause', reason: 'check', rejected, then: { type: 'complete', result: 'ok' } }));
      done.actor.send({ type: 'RESUME' });
      await flush();
      expect(done.actor.getSnapshot().output).toEqual({ status: 'completed', result: 'ok' });
      expect(done.emitted.at(-1)).toMatchObject({ final: true, status: { state: 'completed' } });
      const failed = start();
      await answer(withVerdict('MODEL_FAIL', { type: 'pause', reason: 'check', rejected, then: { type: 'fail', reason: 'gave up' } }));
      failed.actor.send({ type: 'RESUME' });
      await flush();
      expect(failed.actor.getSnapshot().output).toEqual({ status: 'failed', reason: 'gave up' });
      const stopped = start();
      await answer(withVerdict('MODEL_TOOLS', { type: 'pause', reason: 'check', rejected, then: { type: 'continue' } }));
      stopped.actor.send({ type: 'STOP', reason: 'no' });
      await flush();
      expect(stopped.actor.getSnapshot().value).toBe('stopped');
      expect(tools.open()).toHaveLength(0);
    });

    it('stall detection pauses a swarm repeating the same calls, once per stall', async () => {
      const { actor } = start({ stall: { repeats: 2 } });
      for (const turn of [1, 2]) {
        models.one((i) => i.orchestrator).resolve(stepFor('MODEL_TOOLS', turn));
        await flush();
        tools.last().resolve(toolOutput(`t${turn}-b`));
        await flush();
        tools.last().resolve(toolOutput(`t${turn}-a`));
        await flush();
      }
      const s = actor.getSnapshot();
      expect(s.value).toBe('paused');
      expect(s.context.pause?.reason).toMatchObject({ type: 'LIMIT', limit: { limit: 'struggling', rule: 'repeats', max: 2, spent: 2, toolName: 'lookup' } });
      actor.send({ type: 'RESUME', message: 'try something else' });
      await flush();
      // What the stall showed is not read again: the swarm thinks.
      expect(actor.getSnapshot().value).toEqual({ running: 'thinking' });
    });
  });

  /*
   * Tool approval gates (machines/swarm-approvals.ts), driven on the real machine outside the
   * oracle (their pauses would multiply its paths): a response with gated calls pauses at once
   * (its other calls run meanwhile); a RESUME does not answer them; each APPROVE / REJECT settles
   * one; the last one goes back to the round (or to the handoffs still running); an agent's gated
   * calls pause the swarm from `awaitingHandoff` or join a pause under way.
   */
  describe('approval gates', () => {
    const gated = (id: string, approvalId: string): PlannedCall => ({ id, name: 'lookup', kind: 'gated', arguments: '{}', approvalId });
    const respond = (calls: PlannedCall[]): ModelStepOutput => ({
      response: { toolCalls: calls.map((c) => toolCall(c.id, c.name, '{}')), usage: USAGE },
      calls,
      verdict: { type: 'continue' },
      durationMs: 1,
    });
    const start = () => {
      for (const c of [models, tools, childSwarms, remotes]) c.reset();
      const actor = createActor(liveSwarm, { input, inspect: coverage.observe });
      const emitted: SwarmEventBody[] = [];
      actor.on('swarm.events', (e) => emitted.push(...e.events));
      actor.start();
      return { actor, emitted };
    };
    const pending = (actor: { getSnapshot(): { context: { pause: { reason: { pendingApprovals?: { approvalId: string }[] } } | null } } }) =>
      actor.getSnapshot().context.pause?.reason.pendingApprovals?.map((p) => p.approvalId);

    it("a guardrail's pause that held gated calls: released by RESUME, they ask for approval; nothing ran before", async () => {
      const { actor } = start();
      const rejected = { guardrail: 'review', step: 'toolCall' as const, callId: 'g1' };
      models
        .one((i) => i.orchestrator)
        .resolve({ ...respond([gated('g1', 'apr_1')]), verdict: { type: 'pause', reason: 'review it', rejected, then: { type: 'continue' } } });
      await flush();
      expect(actor.getSnapshot().context.pause).toMatchObject({ from: 'guardrail' });
      actor.send({ type: 'RESUME', message: 'reviewed' });
      await flush();
      expect(actor.getSnapshot().value).toBe('paused');
      expect(actor.getSnapshot().context.pause).toMatchObject({ from: 'approval', reason: { type: 'APPROVAL_NEEDED', pendingApprovalId: 'apr_1' } });
      expect(tools.open()).toHaveLength(0);
      actor.send({ type: 'APPROVE', approvalId: 'apr_1', at: 5 });
      await flush();
      expect(tools.open().map((c) => c.input.toolCallId)).toEqual(['g1']);
    });

    it("the orchestrator's gated calls: pause at once, RESUME ignored, approve one, reject the last", async () => {
      const { actor, emitted } = start();
      models.one((i) => i.orchestrator).resolve(respond([gated('g1', 'apr_1'), { id: 't1', name: 'lookup', kind: 'tool', arguments: '{}' }, gated('g2', 'apr_2')]));
      await flush();
      expect(actor.getSnapshot().value).toBe('paused');
      expect(actor.getSnapshot().context.pause).toMatchObject({
        from: 'approval',
        reason: { type: 'APPROVAL_NEEDED', pauseId: 'approval:t1:1', pendingApprovalId: 'apr_1' },
      });
      // The ungated call runs meanwhile; the gated ones do not.
      expect(tools.open().map((c) => c.input.toolCallId)).toEqual(['t1']);
      actor.send({ type: 'RESUME', message: 'go' });
      actor.send({ type: 'APPROVE', approvalId: 'apr_unknown' });
      await flush();
      expect(pending(actor)).toEqual(['apr_1', 'apr_2']);
      actor.send({ type: 'APPROVE', approvalId: 'apr_1', at: 5 });
      await flush();
      expect(actor.getSnapshot().value).toBe('paused');
      expect(pending(actor)).toEqual(['apr_2']);
      expect(tools.open().map((c) => c.input.toolCallId)).toEqual(['t1', 'g1']);
      actor.send({ type: 'REJECT', approvalId: 'apr_2', reason: 'no' });
      await flush();
      expect(actor.getSnapshot().value).toEqual({ running: 'acting' });
      for (const c of tools.open()) c.resolve(toolOutput(c.input.toolCallId));
      await flush();
      expect(actor.getSnapshot().value).toEqual({ running: 'thinking' });
      expect(
        actor
          .getSnapshot()
          .context.messages.slice(-3)
          .map((m) => m.content),
      ).toEqual(['out g1', 'out t1', 'The call was rejected by a human: no']);
      expect(emitted.flatMap((e) => (e.kind === 'status-update' && e.metadata.type === 'approval' ? [e.metadata.decision] : []))).toEqual(['approved', 'rejected']);
      actor.stop();
    });

    it('reject one, approve the last: it runs, and the round decides once it is in', async () => {
      const { actor } = start();
      models.one((i) => i.orchestrator).resolve(respond([gated('g1', 'apr_1'), gated('g2', 'apr_2')]));
      await flush();
      actor.send({ type: 'REJECT', approvalId: 'apr_1', reason: 'no' });
      actor.send({ type: 'APPROVE', approvalId: 'apr_2', always: true });
      await flush();
      expect(actor.getSnapshot().value).toEqual({ running: 'acting' });
      expect(actor.getSnapshot().context.approvedTools).toEqual(['lookup']);
      tools.one().resolve(toolOutput('g2'));
      await flush();
      expect(actor.getSnapshot().value).toEqual({ running: 'thinking' });
      // Approved for the rest of the run: the next step knows it.
      expect(models.one((i) => i.orchestrator).input.approvedTools).toEqual(['lookup']);
      actor.stop();
    });

    it("an agent's gated calls pause the swarm, or join its pause; the last answer goes back to the handoff", async () => {
      const agentStep = (calls: PlannedCall[]) => models.one((i) => !i.orchestrator).resolve(respond(calls));
      // Paused by the orchestrator's gated call, joined by the agent's.
      let { actor } = start();
      models
        .one((i) => i.orchestrator)
        .resolve(respond([{ id: 'h1', name: `handoff_to_${AGENT}`, kind: 'agent', agentId: AGENT, request: 'help' }, gated('g1', 'apr_1')]));
      await flush();
      agentStep([gated('a1', 'apr_a')]);
      await flush();
      expect(pending(actor)).toEqual(['apr_1', 'apr_a']);
      expect(actor.getSnapshot().context.pause?.reason.pendingApprovals?.[1]).toMatchObject({ agent: AGENT, scope: toolKey(1, 'h1') });
      actor.send({ type: 'REJECT', approvalId: 'apr_a', reason: 'not you' });
      await flush();
      actor.send({ type: 'REJECT', approvalId: 'apr_1', reason: 'no' });
      await flush();
      expect(actor.getSnapshot().value).toBe('awaitingHandoff');
      // The agent read the rejection and thinks again.
      expect(models.one((i) => !i.orchestrator).input.messages.at(-1)).toEqual({ role: 'tool', toolCallId: 'a1', content: 'The call was rejected by a human: not you' });
      actor.stop();

      // Paused by the agent's gated call alone (from awaitingHandoff); approved: it runs.
      ({ actor } = start());
      models.one((i) => i.orchestrator).resolve(respond([{ id: 'h1', name: `handoff_to_${AGENT}`, kind: 'agent', agentId: AGENT, request: 'help' }]));
      await flush();
      agentStep([gated('a1', 'apr_a')]);
      await flush();
      expect(actor.getSnapshot().value).toBe('paused');
      actor.send({ type: 'APPROVE', approvalId: 'apr_a' });
      await flush();
      expect(actor.getSnapshot().value).toBe('awaitingHandoff');
      expect(tools.one().input).toMatchObject({ toolCallId: 'a1', agentId: AGENT });
      actor.stop();
    });
  });

  const suites: [string, typeof shortest][] = [
    [`shortest paths to every model transition (${shortest.length})`, shortest],
    [`simple paths through the first round (${simpleFirstRound.length})`, simpleFirstRound],
    [`simple paths to a final state or the turn limit, no PAUSE/STOP/failed handoff (${simpleToEnd.length})`, simpleToEnd],
  ];
  describeModelPaths({
    suites,
    eventTypes: EVENT_TYPES,
    startRun,
    describePath,
    coverage,
    graph: realGraph,
    knownState: 'swarm.running.deciding',
  });
});
