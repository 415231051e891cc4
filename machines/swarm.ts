/**
 * The swarm machine: one orchestrator conversation that calls tools, hands off to agents and
 * loops until a termination rule fires. Top-level states are exactly `running`,
 * `awaitingHandoff`, `paused`, `completed`, `failed` and `stopped`.
 *
 * Pure: no I/O, no timers. The model call (`modelStep`), tool execution (`runTool`) and agents
 * (`agent`) are actors registered in `setup({ actors })` and provided by the runtime, so every
 * snapshot can be persisted and restored. Each completed step leaves its result in context and
 * emits an `internal:checkpoint` event, which is the runtime's cue to persist.
 *
 * @module
 */
import { assign, emit, enqueueActions, fromPromise, setup } from 'xstate';
import { agentMachine, type AgentInput, type AgentOutput, type SessionEntry } from './agent.js';
import { modelStepSlot, runToolSlot } from './slots.js';
import type { CheckpointStep, Part, PauseReason, SwarmEventBody } from './events.js';
import type { ChatMessage, Usage } from './messages.js';
import {
  assistantMessage,
  callDoneEvent,
  type CallResult,
  type ChildSwarmInput,
  type RemoteAgentInput,
  type HandoffTarget,
  isLastRunning,
  llmCallEvent,
  type ModelStepOutput,
  openRound,
  pendingPause,
  recordResult,
  resultMessages,
  type Round,
  roundStartEvents,
  runningCalls,
  callResultOf,
  type ChildEvent,
  errorText,
  toolKey,
} from './round.js';

/**
 * How an agent handed off to runs: its instructions, tools and turn limit.
 *
 * @example
 * const spec: AgentSpec = { instructions: 'You are a weather expert.', tools: ['get_forecast'], maxTurns: 10 };
 */
export interface AgentSpec {
  instructions: string;
  tools: string[];
  maxTurns: number;
}

/**
 * A resolved handoff: the tool the model sees plus, for an agent, what runs when it is called.
 *
 * @example
 * const h: ResolvedHandoff = { toolName: 'handoff_to_weather_agent', kind: 'agent', agentId: 'weather-agent',
 *   description: 'Forecasts', agent: { instructions: 'You are a weather expert.', tools: [], maxTurns: 10 } };
 */
export type ResolvedHandoff =
  | (Extract<HandoffTarget, { kind: 'agent' }> & { agent: AgentSpec })
  | Extract<HandoffTarget, { kind: 'swarm' | 'remote' }>;

/**
 * A swarm's configuration after the runtime resolved its definition for one input: JSON-safe,
 * so it lives in the snapshot and a restored swarm needs nothing else to continue.
 *
 * @example
 * const config: SwarmConfig = { instructions: 'Plan the weekend.', maxTurns: 10, tools: [], handoffs: [] };
 */
export interface SwarmConfig {
  instructions: string;
  maxTurns: number;
  tools: string[];
  handoffs: ResolvedHandoff[];
  /** JSON Schema of the result, for ad-hoc swarms (defined swarms use their definition's). */
  result?: Record<string, unknown>;
  /** Name and description of an ad-hoc swarm. */
  label?: { name?: string; description?: string };
  /** Most matches a `swarm_registry_search` returns, when the swarm has the registry tools. */
  registryLimit?: number;
}

/**
 * What the runtime passes to start a swarm.
 *
 * @example
 * const input: SwarmInput = { swarmId: 's1', definitionId: 'planner', input: 'hi', userMessage: 'hi',
 *   config: { instructions: 'Be brief.', maxTurns: 10, tools: [], handoffs: [] } };
 */
export interface SwarmInput {
  swarmId: string;
  definitionId: string;
  input: unknown;
  userMessage: string;
  config: SwarmConfig;
}

/**
 * How a swarm ended; also the machine's output.
 *
 * @example
 * const o: SwarmOutcome = { status: 'completed', result: { day: 'Saturday', activities: ['hike'] } };
 */
export type SwarmOutcome =
  | { status: 'completed'; result: unknown }
  | { status: 'failed'; reason: string }
  | { status: 'stopped'; reason: string };

/**
 * Why the swarm is paused and what it returns to. `model`: the model called `pause` and the
 * human's answer becomes that call's result. `thinking`/`round`: paused from outside while the
 * model or the round's calls were running.
 *
 * @example
 * const p: PauseState = { reason: { type: 'HITL', message: 'Which day suits you?' }, from: 'model' };
 */
export interface PauseState {
  reason: PauseReason;
  from: 'model' | 'thinking' | 'round';
}

/**
 * The swarm machine's context: everything needed to continue after a restore.
 *
 * @example
 * const { turn, config } = actor.getSnapshot().context; // a SwarmContext
 * console.log(`turn ${turn} of ${config.maxTurns}`);
 */
export interface SwarmContext {
  swarmId: string;
  definitionId: string;
  /** The validated input the swarm was started with. */
  input: unknown;
  config: SwarmConfig;
  messages: ChatMessage[];
  /** Agent exchanges of this swarm, shared by all its agents. */
  session: SessionEntry[];
  /** Orchestrator model responses received so far. */
  turn: number;
  round: Round | null;
  pause: PauseState | null;
  /** Human messages given while a round was open; added once its tool results are in. */
  notes: string[];
  outcome: SwarmOutcome | null;
  usage: Usage;
}

/**
 * Events the swarm machine accepts from the runtime (besides its children's done events).
 *
 * @example
 * actor.send({ type: 'PAUSE', reason: { type: 'HITL', message: 'check with legal' } });
 */
export type SwarmCommand =
  | { type: 'PAUSE'; reason: PauseReason }
  | { type: 'RESUME'; message?: string }
  | { type: 'STOP'; reason: string }
  | { type: 'child.report'; events: SwarmEventBody[] };

/**
 * The single emitted event type: a batch of event bodies produced by one transition.
 *
 * @example
 * actor.on('swarm.events', (e: SwarmEmitted) => e.events.forEach(accept));
 */
export interface SwarmEmitted {
  type: 'swarm.events';
  events: SwarmEventBody[];
}

/**
 * The version stamped on persisted snapshots; bump it whenever states or actor keys change.
 *
 * @example
 * if (record.machineVersion !== SWARM_MACHINE_VERSION) throw new Error('snapshot from another machine version');
 */
export const SWARM_MACHINE_VERSION = 1;

type StepEvent = { output: ModelStepOutput };

const step = (event: unknown): ModelStepOutput => (event as StepEvent).output;
const isHandoff = (kind: string): boolean => kind === 'agent' || kind === 'swarm' || kind === 'remote';
const child = (event: unknown): ChildEvent => event as ChildEvent;
const checkpoint = (s: CheckpointStep): SwarmEventBody => ({ kind: 'internal:checkpoint', step: s });

const working = (metadata: Extract<SwarmEventBody, { kind: 'status-update' }>['metadata']): SwarmEventBody => ({
  kind: 'status-update',
  state: 'working',
  final: false,
  metadata,
});

function turnCompleted(context: SwarmContext): SwarmEventBody {
  return working({
    type: 'turn-completed',
    turn: context.turn,
    maxTurns: context.config.maxTurns,
    activeAgent: context.definitionId,
  });
}

function addUsage(total: Usage, output: ModelStepOutput): Usage {
  const u = output.response.usage;
  return u ? { inputTokens: total.inputTokens + u.inputTokens, outputTokens: total.outputTokens + u.outputTokens } : total;
}


/**
 * How a state waiting on a round's calls takes their results (done or failed alike): each is
 * recorded; the last one closes the round and moves on to `deciding`.
 */
function callResults(deciding: 'deciding' | 'running.deciding') {
  const take = [
    { guard: 'lastCall' as const, target: deciding, actions: { type: 'recordCall' as const, params: { last: true } } },
    { actions: { type: 'recordCall' as const, params: { last: false } } },
  ];
  return { 'xstate.done.actor.*': take, 'xstate.error.actor.*': take };
}

/**
 * The swarm machine. The runtime provides the real actors with
 * `swarmMachine.provide({ actors: { modelStep, runTool, agent } })`.
 *
 * @example
 * const actor = createActor(swarmMachine.provide({ actors }), { input });
 * actor.on('swarm.events', ({ events }) => console.log(events));
 * actor.start();
 */
export const swarmMachine = setup({
  types: {} as {
    context: SwarmContext;
    input: SwarmInput;
    output: SwarmOutcome;
    events: SwarmCommand;
    emitted: SwarmEmitted;
  },
  actors: {
    modelStep: modelStepSlot,
    runTool: runToolSlot,
    agent: agentMachine,
    // A child swarm is a swarm of its own (own id, store record, events, client); this actor
    // starts or re-attaches to it and resolves with its outcome as the handoff's result.
    childSwarm: fromPromise<CallResult, ChildSwarmInput>(async () => {
      throw new Error('childSwarm is provided by the runtime');
    }),
    // A handoff to an agent served by another process over A2A.
    remoteAgent: fromPromise<CallResult, RemoteAgentInput>(async () => {
      throw new Error('remoteAgent is provided by the runtime');
    }),
  },
  guards: {
    verdictFail: ({ event }) => step(event).verdict.type === 'fail',
    verdictComplete: ({ event }) => step(event).verdict.type === 'complete',
    wantsHandoffs: ({ event }) => step(event).calls.some((c) => isHandoff(c.kind)),
    wantsCalls: ({ event }) => step(event).calls.length > 0,
    lastCall: ({ context, event }) => isLastRunning(context.round, child(event).actorId),
    roundDone: ({ context }) => runningCalls(context.round).length === 0,
    pausePending: ({ context }) => pendingPause(context.round) !== undefined,
    turnsExhausted: ({ context }) => context.turn >= context.config.maxTurns,
    resumesModelPause: ({ context }) => context.pause?.from === 'model',
    pausedInThinking: ({ context }) => context.pause?.from === 'thinking',
    handoffsRunning: ({ context }) => runningCalls(context.round).some((c) => isHandoff(c.kind)),
    callsRunning: ({ context }) => runningCalls(context.round).length > 0,
  },
  actions: {
    // One action per model response: a single context update and a single batch of events
    // (each separate assign or emit costs XState a resolution and a context copy).
    takeResponse: enqueueActions(({ context, event, enqueue }, params: { then: 'round' | 'correct' | 'complete' | 'fail' }) => {
      const out = step(event);
      const turn = context.turn + 1;
      const messages = [...context.messages, assistantMessage(out.response)];
      const next: Partial<SwarmContext> = { turn, messages, usage: addUsage(context.usage, out) };
      const events: SwarmEventBody[] = [llmCallEvent(context.definitionId, '', turn, out)];
      const verdict = out.verdict;
      if (params.then === 'round') {
        next.round = openRound(turn, out.calls, context.swarmId);
        events.push(...roundStartEvents(context.definitionId, next.round), checkpoint('model-response'));
      } else if (params.then === 'correct') {
        messages.push({ role: 'user', content: verdict.type === 'correct' ? verdict.message : 'Continue.' });
        events.push(turnCompleted({ ...context, turn }), checkpoint('model-response'));
      } else if (params.then === 'complete') {
        const result = verdict.type === 'complete' ? verdict.result : undefined;
        next.outcome = { status: 'completed', result };
        const parts: Part[] =
          typeof result === 'string'
            ? [{ kind: 'text', text: result }, { kind: 'data', data: { result } }]
            : [{ kind: 'data', data: { result } }, { kind: 'text', text: JSON.stringify(result) }];
        events.push(
          checkpoint('model-response'),
          { kind: 'artifact-update', artifact: { artifactId: 'result', name: 'result', parts }, append: false, lastChunk: true },
          { kind: 'status-update', state: 'completed', final: true, metadata: { type: 'completed', result } },
        );
      } else {
        const reason = verdict.type === 'fail' ? verdict.reason : 'The model response ended the swarm.';
        next.outcome = { status: 'failed', reason };
        events.push(checkpoint('model-response'), {
          kind: 'status-update',
          state: 'failed',
          final: true,
          metadata: { type: 'failed', reason },
        });
      }
      enqueue.assign(next);
      enqueue.emit({ type: 'swarm.events', events });
    }),
    spawnCalls: enqueueActions(({ context, enqueue }) => {
      const round = context.round!;
      for (const call of runningCalls(round)) {
        if (call.kind === 'agent') {
          const handoff = context.config.handoffs.find(
            (h): h is Extract<ResolvedHandoff, { kind: 'agent' }> => h.kind === 'agent' && h.agentId === call.agentId,
          )!;
          const input: AgentInput = {
            swarmId: context.swarmId,
            definitionId: context.definitionId,
            agentId: call.agentId!,
            instructions: handoff.agent.instructions,
            tools: handoff.agent.tools,
            maxTurns: handoff.agent.maxTurns,
            request: call.request ?? '',
            session: context.session,
            scope: toolKey(context.swarmId, round.turn, call.id),
          };
          enqueue.spawnChild('agent', { id: call.childId!, input });
        } else if (call.kind === 'swarm') {
          const input: ChildSwarmInput = {
            parentId: context.swarmId,
            callId: call.id,
            key: toolKey(context.swarmId, round.turn, call.id),
            childSwarmId: call.childSwarmId!,
            definitionId: call.definitionId!,
            input: call.input,
            ...(call.customization ? { customization: call.customization } : {}),
          };
          enqueue.spawnChild('childSwarm', { id: call.childId!, input });
        } else if (call.kind === 'remote') {
          const input: RemoteAgentInput = {
            swarmId: context.swarmId,
            callId: call.id,
            agentId: call.agentId!,
            url: call.url!,
            request: call.request ?? '',
            key: toolKey(context.swarmId, round.turn, call.id),
          };
          enqueue.spawnChild('remoteAgent', { id: call.childId!, input });
        } else {
          enqueue.spawnChild('runTool', {
            id: call.childId!,
            input: {
              swarmId: context.swarmId,
              agentId: context.definitionId,
              toolCallId: call.id,
              name: call.name,
              arguments: call.arguments ?? '{}',
              idempotencyKey: toolKey(context.swarmId, round.turn, call.id),
            },
          });
        }
      }
    }),
    recordCall: enqueueActions(({ context, event, enqueue }, params: { last: boolean }) => {
      const done = child(event);
      const call = context.round?.calls.find((c) => c.childId === done.actorId && c.result === undefined);
      if (!call) return;
      const result = callResultOf(done);
      const session =
        call.kind === 'agent' && result.ok
          ? [...context.session, { agentId: call.agentId!, request: call.request ?? '', answer: result.content }]
          : context.session;
      enqueue.assign({ round: recordResult(context.round!, done.actorId, result), session });
      enqueue.stopChild(done.actorId);
      const agentEvents = call.kind === 'agent' ? ((done.output as AgentOutput | undefined)?.events ?? []) : [];
      enqueue.emit({
        type: 'swarm.events',
        events: [
          ...agentEvents,
          callDoneEvent(context.definitionId, call, result, toolKey(context.swarmId, context.round!.turn, call.id)),
          checkpoint(isHandoff(call.kind) ? 'handoff-result' : 'tool-result'),
          ...(params.last ? [turnCompleted(context)] : []),
        ],
      });
    }),
    publishTurn: emit(({ context }) => ({ type: 'swarm.events' as const, events: [turnCompleted(context)] })),
    // Also runs after a correction round, which opened no round of calls.
    closeRound: assign(({ context }) => ({
      messages: [
        ...context.messages,
        ...(context.round ? resultMessages(context.round) : []),
        ...context.notes.map((content) => ({ role: 'user' as const, content })),
      ],
      round: null,
      notes: [],
    })),
    fail: enqueueActions(({ enqueue }, params: { reason: string }) => {
      enqueue.assign({ outcome: { status: 'failed', reason: params.reason } });
      enqueue.emit({
        type: 'swarm.events',
        events: [{ kind: 'status-update', state: 'failed', final: true, metadata: { type: 'failed', reason: params.reason } }],
      });
    }),
    stop: enqueueActions(({ event, enqueue }) => {
      const reason = event.type === 'STOP' ? event.reason : 'stopped';
      enqueue.assign({ outcome: { status: 'stopped', reason } });
      enqueue.emit({
        type: 'swarm.events',
        events: [
          checkpoint('stop'),
          { kind: 'status-update', state: 'canceled', final: true, metadata: { type: 'stopped', reason } },
        ],
      });
    }),
    pauseFrom: enqueueActions(({ context, event, enqueue }, params: { from: 'thinking' | 'round' }) => {
      if (event.type !== 'PAUSE') return;
      enqueue.assign({ pause: { reason: event.reason, from: params.from } });
      for (const call of runningCalls(context.round)) {
        if (call.kind === 'agent') enqueue.sendTo(call.childId!, { type: 'PAUSE' });
      }
      enqueue.emit({
        type: 'swarm.events',
        events: [
          { kind: 'status-update', state: 'input-required', final: false, metadata: { type: 'paused', reason: event.reason } },
          checkpoint('pause'),
        ],
      });
    }),
    pauseForModel: enqueueActions(({ context, enqueue }) => {
      const call = pendingPause(context.round)!;
      const reason = call.pauseReason ?? { type: 'HITL' as const, message: 'The model asked for a human.' };
      enqueue.assign({ pause: { reason, from: 'model' } });
      enqueue.emit({
        type: 'swarm.events',
        events: [
          { kind: 'status-update', state: 'input-required', final: false, metadata: { type: 'paused', reason } },
          checkpoint('pause'),
        ],
      });
    }),
    resume: enqueueActions(({ context, event, enqueue }) => {
      if (event.type !== 'RESUME') return;
      const message = event.message?.trim() ? event.message : undefined;
      const from = context.pause?.from;
      if (from === 'model') {
        const call = pendingPause(context.round)!;
        const round = { ...context.round!, calls: context.round!.calls.map((c) => (c === call ? { ...c, result: { ok: true, content: message ?? 'Resumed without a message.' } } : c)) };
        enqueue.assign({ round, pause: null });
      } else if (from === 'thinking') {
        enqueue.assign({
          pause: null,
          messages: message ? [...context.messages, { role: 'user' as const, content: message }] : context.messages,
        });
      } else {
        enqueue.assign({ pause: null, notes: message ? [...context.notes, message] : context.notes });
        for (const call of runningCalls(context.round)) {
          if (call.kind === 'agent') enqueue.sendTo(call.childId!, { type: 'RESUME' });
        }
      }
      enqueue.emit({
        type: 'swarm.events',
        events: [
          { kind: 'status-update', state: 'working', final: false, metadata: message ? { type: 'resumed', message } : { type: 'resumed' } },
          checkpoint('resume'),
        ],
      });
    }),
    relayReport: emit(({ event }) => ({
      type: 'swarm.events' as const,
      events: event.type === 'child.report' ? [...event.events, checkpoint('agent-step')] : [],
    })),
  },
}).createMachine({
  id: 'swarm',
  context: ({ input }) => ({
    swarmId: input.swarmId,
    definitionId: input.definitionId,
    input: input.input,
    config: input.config,
    messages: [
      { role: 'system', content: input.config.instructions },
      { role: 'user', content: input.userMessage },
    ],
    session: [],
    turn: 0,
    round: null,
    pause: null,
    notes: [],
    outcome: null,
    usage: { inputTokens: 0, outputTokens: 0 },
  }),
  entry: emit(({ context }) => ({
    type: 'swarm.events' as const,
    events: [
      { kind: 'task', state: 'submitted', definitionId: context.definitionId, input: context.input },
      working({ type: 'started', definitionId: context.definitionId }),
      checkpoint('start'),
    ],
  })),
  on: {
    STOP: { target: '.stopped', actions: 'stop' },
    'child.report': { actions: 'relayReport' },
  },
  initial: 'running',
  states: {
    running: {
      initial: 'thinking',
      states: {
        thinking: {
          on: { PAUSE: { target: '#swarm.paused', actions: { type: 'pauseFrom', params: { from: 'thinking' } } } },
          invoke: {
            id: 'model',
            src: 'modelStep',
            input: ({ context }) => ({
              swarmId: context.swarmId,
              definitionId: context.definitionId,
              speaker: context.definitionId,
              orchestrator: true,
              scope: '',
              turn: context.turn + 1,
              messages: context.messages,
              tools: context.config.tools,
              handoffs: context.config.handoffs,
            }),
            onDone: [
              { guard: 'verdictFail', target: '#swarm.failed', actions: { type: 'takeResponse', params: { then: 'fail' } } },
              { guard: 'verdictComplete', target: '#swarm.completed', actions: { type: 'takeResponse', params: { then: 'complete' } } },
              {
                guard: 'wantsHandoffs',
                target: '#swarm.awaitingHandoff',
                actions: [{ type: 'takeResponse', params: { then: 'round' } }, 'spawnCalls'],
              },
              { guard: 'wantsCalls', target: 'acting', actions: [{ type: 'takeResponse', params: { then: 'round' } }, 'spawnCalls'] },
              { target: 'deciding', actions: { type: 'takeResponse', params: { then: 'correct' } } },
            ],
            onError: {
              target: '#swarm.failed',
              actions: { type: 'fail', params: ({ event }) => ({ reason: `Model call failed: ${errorText(event.error)}` }) },
            },
          },
        },
        acting: {
          // A round whose calls were all rejected up front has nothing to wait for.
          always: { guard: 'roundDone', target: 'deciding', actions: 'publishTurn' },
          on: {
            PAUSE: { target: '#swarm.paused', actions: { type: 'pauseFrom', params: { from: 'round' } } },
            ...callResults('deciding'),
          },
        },
        deciding: {
          always: [
            { guard: 'pausePending', target: '#swarm.paused', actions: 'pauseForModel' },
            {
              guard: 'turnsExhausted',
              target: '#swarm.failed',
              actions: [
                'closeRound',
                {
                  type: 'fail',
                  params: ({ context }) => ({
                    reason: `maxTurns (${context.config.maxTurns}) reached without a result`,
                  }),
                },
              ],
            },
            { target: 'thinking', actions: 'closeRound' },
          ],
        },
      },
    },
    awaitingHandoff: {
      on: {
        PAUSE: { target: 'paused', actions: { type: 'pauseFrom', params: { from: 'round' } } },
        ...callResults('running.deciding'),
      },
    },
    paused: {
      on: {
        'xstate.done.actor.*': { actions: { type: 'recordCall', params: { last: false } } },
        'xstate.error.actor.*': { actions: { type: 'recordCall', params: { last: false } } },
        RESUME: [
          { guard: 'resumesModelPause', target: 'running.deciding', actions: 'resume' },
          { guard: 'pausedInThinking', target: 'running.thinking', actions: 'resume' },
          { guard: 'handoffsRunning', target: 'awaitingHandoff', actions: 'resume' },
          { guard: 'callsRunning', target: 'running.acting', actions: 'resume' },
          { target: 'running.deciding', actions: ['resume', 'publishTurn'] },
        ],
      },
    },
    completed: { type: 'final' },
    failed: { type: 'final' },
    stopped: { type: 'final' },
  },
  output: ({ context }) => context.outcome ?? { status: 'failed', reason: 'Swarm ended without an outcome.' },
});
