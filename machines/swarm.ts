/**
 * The swarm machine: one orchestrator conversation that calls tools, hands off to agents and
 * loops until a termination rule fires. Top-level states are exactly `running`,
 * `awaitingHandoff`, `paused`, `completed`, `failed` and `stopped`.
 *
 * Pure: no I/O, no timers. The model call (`modelStep`, `contracts.ts`), agents (`agent`, the
 * agent machine) and each kind of call a child actor runs (tool, child swarm, remote agent: one
 * file each in `calls/`) are actor slots declared in `setup({ actors })` and provided by the
 * runtime (`actors/index.ts`), so every snapshot can be persisted and restored. Each completed
 * step leaves its result in context and emits an `internal:checkpoint` event, which is the
 * runtime's cue to persist.
 *
 * Where each step is done: `thinking` invokes `modelStep` (`actors/model-step.ts`, which judges
 * the response in `actors/judge.ts`); a response's calls become a round (`round.ts`) whose calls
 * `spawnCalls` starts, each as its kind says (`calls/`; handoffs are planned in
 * `actors/plan-handoff.ts`); event bodies are built in `event-builders.ts` and by the kinds.
 *
 * @module
 */
import { assign, emit, enqueueActions, setup, stopChild } from 'xstate';
import { agentMachine, type AgentOutput, type SessionEntry } from './agent.js';
import { CALL_SLOTS, callDoneEvents, isHandoff, roundStartEvents, spawnOf } from './calls/index.js';
import { type ModelStepOutput, modelStepSlot } from './contracts.js';
import { failedUpdate, llmCallEvent, statusUpdate, summaryCallEvent, valueParts, valueText } from './event-builders.js';
import type { CheckpointStep, Part, PauseReason, SwarmEventBody, SwarmFact, SwarmFailureKind, SwarmLabel } from './events.js';
import type { ChatMessage, Usage } from './messages.js';
import { type HistoryPolicy, type HistorySummary, type MadeSummary, withHistory } from './history.js';
import type { HandoffTarget } from './plan.js';
import { addByModel, addCall, emptyLedger, type UsageLedger } from './usage.js';
import { LIMIT_PAUSE } from './pause.js';
import { type GuardrailNames, guardrailPauseReason, rejectedOutcome, type GuardrailRejection } from './guardrail.js';
import { findStall, type StallRule } from './stall.js';
import type { HeldVerdict } from './plan.js';
import { type ApprovalCommand, type ApprovalRequest, waitingCalls } from './approvals.js';
import { answeredApproval, approvalGuards, approvalStep } from './swarm-approvals.js';
import type { BudgetCaps, SwarmBudget } from './budget.js';
import {
  answerPause,
  assistantMessage,
  callResultOf,
  type ChildEvent,
  isLastRunning,
  openRound,
  pendingPause,
  recordResult,
  resultMessages,
  type Round,
  runningCall,
  runningCalls,
  toolKey,
} from './round.js';
import { errorText } from './error-text.js';

/** How an agent handed off to runs: its instructions, tools and turn limit. */
export interface AgentSpec {
  instructions: string;
  tools: string[];
  maxTurns: number;
  /** What the agent's model sees of its conversation (`history.ts`); else the swarm's policy. */
  history?: HistoryPolicy;
  /** How long a handoff to it may take (`defineAgent({ timeoutMs })`), counted from the round that handed off. */
  timeoutMs?: number;
  /** What its timeout does, when it fails the swarm (`defineAgent({ onTimeout: 'fail' })`). */
  onTimeout?: 'fail';
}

/** A resolved handoff: the tool the model sees plus, for an agent, what runs when it is called. */
export type ResolvedHandoff = (Extract<HandoffTarget, { kind: 'agent' }> & { agent: AgentSpec }) | Extract<HandoffTarget, { kind: 'swarm' | 'remote' }>;

/**
 * A swarm's configuration after the runtime resolved its definition for one input: JSON-safe,
 * so it lives in the snapshot and a restored swarm needs nothing else to continue.
 */
export interface SwarmConfig {
  instructions: string;
  maxTurns: number;
  tools: string[];
  handoffs: ResolvedHandoff[];
  /** JSON Schema of the result, for ad-hoc swarms (defined swarms use their definition's). */
  result?: Record<string, unknown>;
  /** Name, description and component id of an ad-hoc swarm. */
  label?: SwarmLabel;
  /** Most matches a `swarm_registry_search` returns, when the swarm has the registry tools. */
  registryLimit?: number;
  /**
   * What reaching a limit (`maxTurns`) does: pause the swarm (the default; `client.extend` then
   * `resume` go on) or fail it, as before limits could pause.
   */
  onLimit?: 'pause' | 'fail';
  /** Stall detection (off when absent): when the swarm counts as struggling and pauses (`stall.ts`). */
  stall?: StallRule;
  /** Registered guardrails by name (an ad-hoc swarm's; a definition's own are on the definition). */
  guardrails?: GuardrailNames;
  /** The budgets its calls draw from (`budget.ts`); absent without any. */
  budget?: SwarmBudget;
  /** What the orchestrator's model sees of its conversation (`history.ts`); absent: all of it. */
  history?: HistoryPolicy;
}

/** What the runtime passes to start a swarm. */
export interface SwarmInput {
  swarmId: string;
  /** The session the swarm belongs to (an A2A client's `contextId`); default its own id. */
  contextId?: string;
  definitionId: string;
  input: unknown;
  userMessage: string;
  /**
   * The parts of the message that started the swarm, as sent, when they hold files (an A2A
   * message with file parts): its task's history keeps them, while the model reads `userMessage`.
   */
  inputParts?: Part[];
  config: SwarmConfig;
  /** The caller's trace context the swarm starts under (a traced runtime's); absent without one. */
  trace?: CallerTrace;
}

/**
 * A caller's W3C trace context (`traceparent`, `tracestate`), kept with a swarm so that a runtime
 * adopting it after a restart continues the caller's trace. Opaque to the machine.
 */
export interface CallerTrace {
  traceparent: string;
  tracestate?: string;
}

/** How a swarm ended; also the machine's output. */
export type SwarmOutcome =
  | { status: 'completed'; result: unknown }
  /** `rejected`: a guardrail rejected the swarm (A2A state `rejected`). */
  | { status: 'failed'; reason: string; rejected?: GuardrailRejection }
  | { status: 'stopped'; reason: string };

/**
 * Why the swarm is paused and what it returns to. `model`: the model called `pause` and the
 * human's answer becomes that call's result. `thinking`/`round`: paused from outside while the
 * model or the round's calls were running.
 */
export interface PauseState {
  reason: PauseReason;
  /** Where the pause began: a model's pause call, an outside pause (while thinking, or with calls running), or a limit. */
  from: 'model' | 'thinking' | 'round' | 'limit' | 'guardrail' | 'approval';
  /** For a guardrail's pause: the verdict the step had without it, which a resume carries out. */
  then?: HeldVerdict;
}

/** The swarm machine's context: everything needed to continue after a restore. */
export interface SwarmContext {
  swarmId: string;
  /** The swarm's session: every event it emits carries it as `contextId`. */
  contextId: string;
  definitionId: string;
  /** The validated input the swarm was started with. */
  input: unknown;
  /** The parts it was started with, as sent, when they hold files (see {@link SwarmInput.inputParts}). */
  inputParts?: Part[];
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
  /**
   * Tokens of every model call made for this swarm: its orchestrator's and its agents' (each
   * call's own usage is in its `internal:llm-call` event; a child swarm counts its own).
   */
  usage: Usage;
  /**
   * The same calls by model (`own`), and the rolled-up usage of its children (child swarms,
   * remote peers that report it), each added once, with its handoff's result. Absent in
   * snapshots taken before usage was kept by model: read as empty.
   */
  usageByModel?: UsageLedger;
  /**
   * How many pauses the machine has named itself (outside and limit pauses; a model's pause is
   * named by its call id): part of the next one's id, so ids never repeat and a replay makes
   * the same ones. Absent in snapshots stored before pauses had ids (counts from 0 then).
   */
  pauses?: number;
  /**
   * Where stall detection starts reading the conversation (a message index): past the turns a
   * stall pause already showed a human. Absent: from the start.
   */
  stallFrom?: number;
  /**
   * Tools approved for the rest of the run (`approve(id, { always: true })`): their calls need no
   * approval any more. Absent until the first such approval.
   */
  approvedTools?: string[];
  /**
   * The summary of the orchestrator's older turns, under a `'summarize'` history policy: made by
   * a recorded model call, reused and extended by later turns (absent until one is made).
   */
  summary?: HistorySummary;
  /**
   * The caller's trace context the swarm was started under (a traced runtime's): kept so that an
   * adopting runtime's spans stay in the caller's trace. Absent without one, and in snapshots
   * stored before it was kept (their adopters trace them in the swarm's own derived trace).
   */
  trace?: CallerTrace;
}

/** Events the swarm machine accepts from the runtime (besides its children's done events). */
export type SwarmCommand =
  | { type: 'PAUSE'; reason: PauseReason }
  | { type: 'RESUME'; message?: string }
  | { type: 'STOP'; reason: string }
  | { type: 'EXTEND'; maxTurns: number; budget?: BudgetCaps }
  | { type: 'child.report'; events: SwarmEventBody[] }
  | ApprovalCommand
  | ApprovalRequest;

/** The single emitted event type: a batch of event bodies produced by one transition. */
export interface SwarmEmitted {
  type: 'swarm.events';
  events: SwarmEventBody[];
}

/**
 * The version stamped on persisted snapshots; bump it whenever states, actor keys, the context
 * or the event format change (2: A2A v0.3 events, `contextId` in the context).
 */
export const SWARM_MACHINE_VERSION = 2;

type StepEvent = { output: ModelStepOutput };

/** What a model response leads to: a round of calls, a correction, or the end of the swarm. */
type ResponseOutcome = 'round' | 'correct' | 'complete' | 'fail' | 'reject' | 'pause';

const step = (event: unknown): ModelStepOutput => (event as StepEvent).output;
const child = (event: unknown): ChildEvent => event as ChildEvent;
const checkpoint = (s: CheckpointStep): SwarmEventBody => ({ kind: 'internal:checkpoint', step: s });

const working = (fact: SwarmFact): SwarmEventBody => statusUpdate('working', fact);

/**
 * The id of a pause the machine names itself (from outside, or at a limit): deterministic, from
 * the turn and the count of such pauses, so a replay makes the same id; with the pause's update.
 */
function namedPause(context: SwarmContext, kind: 'pause' | 'limit' | 'guardrail', reason: PauseReason): { reason: PauseReason; pauses: number } {
  const pauses = (context.pauses ?? 0) + 1;
  return { reason: { ...reason, pauseId: `${kind}:t${context.turn}:${pauses}` }, pauses };
}

/** The events of a pause, whoever asked for it (a command, or the model's `pause` call). */
function pausedEvents(reason: PauseReason): { type: 'swarm.events'; events: SwarmEventBody[] } {
  return { type: 'swarm.events', events: [statusUpdate('input-required', { type: 'paused', reason }, reason.message), checkpoint('pause')] };
}

function turnCompleted(context: SwarmContext): SwarmEventBody {
  return working({
    type: 'turn-completed',
    turn: context.turn,
    maxTurns: context.config.maxTurns,
    activeAgent: context.definitionId,
  });
}

/** `total` plus one model call's usage, if it reported any (cached tokens only once some are reported). */
function addUsage(total: Usage, usage: Usage | undefined): Usage {
  if (!usage) return total;
  const sum: Usage = { inputTokens: total.inputTokens + usage.inputTokens, outputTokens: total.outputTokens + usage.outputTokens };
  const cached = (total.cachedInputTokens ?? 0) + (usage.cachedInputTokens ?? 0);
  if (cached > 0 || total.cachedInputTokens !== undefined) sum.cachedInputTokens = cached;
  return sum;
}

type Counted = Pick<SwarmContext, 'usage' | 'usageByModel'>;

/** `counted` plus one model call of `model` (its totals and its row by model). */
function countCall(counted: Counted, model: string | undefined, usage: Usage | undefined): Counted {
  const ledger = counted.usageByModel ?? emptyLedger();
  return { usage: addUsage(counted.usage, usage), usageByModel: { ...ledger, own: addCall(ledger.own, model, usage) } };
}

/** `counted` plus every model call among `events` (an agent's steps). */
function countEvents(counted: Counted, events: readonly SwarmEventBody[]): Counted {
  let sum: Counted = { usage: counted.usage, usageByModel: counted.usageByModel ?? emptyLedger() };
  for (const e of events) if (e.kind === 'internal:llm-call') sum = countCall(sum, e.model, e.usage);
  return sum;
}

/** `counted` plus a summary call, and the summary kept for the next turns. */
function summarized(counted: Counted, made: MadeSummary): Counted & { summary: HistorySummary } {
  return { ...countCall(counted, made.model, made.usage), summary: { text: made.text, upTo: made.upTo } };
}

/**
 * The context update that closes `round`: its results (and the human notes given meanwhile)
 * join the conversation. Also used after a correction round, which opened no round of calls.
 */
function closedRound(context: SwarmContext, round: Round | null): Partial<SwarmContext> {
  return {
    messages: [...context.messages, ...(round ? resultMessages(round) : []), ...context.notes.map((content) => ({ role: 'user' as const, content }))],
    round: null,
    notes: [],
  };
}

/** The actions that take a finished call's result (see `announceCall`). */
function takeCall(last: boolean, close = false) {
  return [{ type: 'announceCall' as const, params: { last } }, { type: 'recordCall' as const, params: { close } }, 'stopCall' as const];
}

/** The actions that take a model response (see `takeResponse`). */
function takeResponse(then: ResponseOutcome) {
  const params = { then };
  return [
    { type: 'takeResponse' as const, params },
    { type: 'announceResponse' as const, params },
  ];
}

/**
 * A call that timed out with `onTimeout: 'fail'` (its result says so, `failsSwarm`): its result
 * is recorded and announced as any other, then the swarm fails with it (its other calls stop).
 */
const failingTimeout = {
  guard: 'callFailsSwarm' as const,
  target: '#swarm.failed',
  actions: [
    ...takeCall(false),
    {
      type: 'fail' as const,
      params: ({ event }: { event: unknown }) => ({ reason: `${callResultOf(child(event)).content} (onTimeout: 'fail')`, kind: 'timeout' as const }),
    },
  ],
};

/**
 * How a state waiting on a round's calls takes their results (done or failed alike): each is
 * recorded; the last one closes the round. When nothing is left to decide (no pause call
 * waits, turns remain) it goes straight back to `thinking`, sparing the eventless hop through
 * `deciding` (one microstep less per round); otherwise `deciding` decides.
 */
function callResults(deciding: 'deciding' | 'running.deciding') {
  const take = [
    { guard: 'lastCallThenThink' as const, target: '#swarm.running.thinking', actions: takeCall(true, true) },
    { guard: 'lastCall' as const, target: deciding, actions: takeCall(true) },
    { actions: takeCall(false) },
  ];
  // Only a done call can carry a failing timeout (`failsSwarm`); an error never does.
  return { 'xstate.done.actor.*': [failingTimeout, ...take], 'xstate.error.actor.*': take };
}

/**
 * The swarm machine. The runtime provides the real actors through `wireSwarm`
 * (`actors/index.ts`), i.e. `swarmMachine.provide({ actors })`.
 */
export const swarmMachine = setup({
  types: {} as {
    context: SwarmContext;
    input: SwarmInput;
    output: SwarmOutcome;
    events: SwarmCommand;
    emitted: SwarmEmitted;
  },
  // The model step, the agent machine, and the slot of each kind of call a child actor runs.
  actors: { modelStep: modelStepSlot, agent: agentMachine, ...CALL_SLOTS },
  guards: {
    verdictFail: ({ event }) => step(event).verdict.type === 'fail',
    verdictComplete: ({ event }) => step(event).verdict.type === 'complete',
    verdictReject: ({ event }) => step(event).verdict.type === 'reject',
    verdictPause: ({ event }) => step(event).verdict.type === 'pause',
    wantsHandoffs: ({ event }) => step(event).calls.some(isHandoff),
    wantsCalls: ({ event }) => step(event).calls.length > 0,
    lastCall: ({ context, event }) => isLastRunning(context.round, child(event).actorId),
    // What `deciding` would find after the last call: no pause call waiting and turns left.
    lastCallThenThink: ({ context, event }) =>
      isLastRunning(context.round, child(event).actorId) &&
      pendingPause(context.round) === undefined &&
      context.turn < context.config.maxTurns &&
      context.config.stall === undefined,
    roundDone: ({ context }) => runningCalls(context.round).length === 0,
    pausePending: ({ context }) => pendingPause(context.round) !== undefined,
    turnsExhausted: ({ context }) => context.turn >= context.config.maxTurns,
    failsAtLimit: ({ context }) => context.turn >= context.config.maxTurns && context.config.onLimit === 'fail',
    resumesLimitPause: ({ context }) => context.pause?.from === 'limit',
    // A guardrail's pause resumes with the step it held: a completion, a failure, or its calls.
    releasesComplete: ({ context }) => context.pause?.from === 'guardrail' && context.pause.then?.type === 'complete',
    releasesFail: ({ context }) => context.pause?.from === 'guardrail' && context.pause.then?.type === 'fail',
    releasesHandoffs: ({ context }) => context.pause?.from === 'guardrail' && runningCalls(context.round).some(isHandoff),
    releasesCalls: ({ context }) => context.pause?.from === 'guardrail' && context.round !== null,
    // A guardrail's pause held calls of which some need approval: released, they ask for it.
    releasesGated: ({ context }) => context.pause?.from === 'guardrail' && waitingCalls(context.round).length > 0,
    struggling: ({ context }) =>
      context.config.stall !== undefined && findStall(closedRound(context, context.round).messages!, context.stallFrom ?? 0, context.config.stall) !== undefined,
    resumesModelPause: ({ context }) => context.pause?.from === 'model',
    pausedInThinking: ({ context }) => context.pause?.from === 'thinking',
    handoffsRunning: ({ context }) => runningCalls(context.round).some(isHandoff),
    callsRunning: ({ context }) => runningCalls(context.round).length > 0,
    ...approvalGuards,
    // Asked of every finished call: the cheap look at its output first.
    callFailsSwarm: ({ context, event }) =>
      (child(event).output as { failsSwarm?: unknown } | undefined)?.failsSwarm === true && runningCall(context.round, child(event).actorId) !== undefined,
  },
  actions: {
    // A model response is taken in two static actions: one context update (`takeResponse`),
    // then one batch of events built from the updated context (`announceResponse`). Static
    // actions cost XState a lookup each; `enqueueActions` would build its enqueue helpers and
    // fresh action objects on every response.
    takeResponse: assign(({ context, event }, params: { then: ResponseOutcome }) => {
      const out = step(event);
      const messages = [...context.messages, assistantMessage(out.response)];
      const turn = context.turn + 1;
      const counted = countCall(context, out.model, out.response.usage);
      const next: Partial<SwarmContext> = { turn, messages, ...(out.summary ? summarized(counted, out.summary) : counted) };
      const verdict = out.verdict;
      if (params.then === 'round') next.round = openRound(turn, out.calls, context.swarmId, out.at);
      else if (params.then === 'correct') messages.push({ role: 'user', content: verdict.type === 'correct' ? verdict.message : 'Continue.' });
      else if (params.then === 'complete') next.outcome = { status: 'completed', result: verdict.type === 'complete' ? verdict.result : undefined };
      else if (verdict.type === 'reject') next.outcome = rejectedOutcome(verdict);
      else if (verdict.type === 'pause') {
        // A paused input has no response to record.
        if (!out.response.text && !out.response.toolCalls) messages.pop();
        // The step is taken (its turn counted) but held: its calls wait in the round, unstarted.
        if (verdict.then.type === 'continue' && out.calls.length > 0) next.round = openRound(turn, out.calls, context.swarmId);
        else if (verdict.then.type === 'correct') messages.push({ role: 'user', content: verdict.then.message });
        const { reason, pauses } = namedPause(context, 'guardrail', guardrailPauseReason(verdict));
        next.pause = { reason, from: 'guardrail', then: verdict.then };
        next.pauses = pauses;
      } else next.outcome = { status: 'failed', reason: verdict.type === 'fail' ? verdict.reason : 'The model response ended the swarm.' };
      return next;
    }),
    // Runs right after takeResponse: `context` is the updated one (turn counted, round open).
    announceResponse: emit(({ context, event }, params: { then: ResponseOutcome }) => {
      const out = step(event);
      const events: SwarmEventBody[] = out.summary ? [summaryCallEvent(context.definitionId, '', context.turn, out.summary)] : [];
      events.push(llmCallEvent(context.definitionId, '', context.turn, out));
      const outcome = context.outcome;
      if (params.then === 'round') {
        events.push(...roundStartEvents(context.definitionId, context.round!), checkpoint('model-response'));
      } else if (params.then === 'correct') {
        events.push(turnCompleted(context), checkpoint('model-response'));
      } else if (params.then === 'complete') {
        // The last turn completes too (N turns report N), before the final status.
        const result = outcome?.status === 'completed' ? outcome.result : undefined;
        events.push(
          turnCompleted(context),
          checkpoint('model-response'),
          { kind: 'artifact-update', artifact: { artifactId: 'result', name: 'result', parts: valueParts(result) }, append: false, lastChunk: true },
          statusUpdate('completed', { type: 'completed', result }, valueText(result)),
        );
      } else if (params.then === 'pause') {
        events.push(checkpoint('model-response'), ...pausedEvents(context.pause!.reason).events);
      } else if (outcome?.status === 'failed' && outcome.rejected) {
        events.push(turnCompleted(context), checkpoint('model-response'), failedUpdate(outcome.reason, 'guardrail', outcome.rejected));
      } else {
        // The model's own `fail` call (the one verdict that fails a swarm without a guardrail).
        const reason = outcome?.status === 'failed' ? outcome.reason : 'The model response ended the swarm.';
        events.push(turnCompleted(context), checkpoint('model-response'), failedUpdate(reason, 'gave-up'));
      }
      return { type: 'swarm.events' as const, events };
    }),
    // Every call of a new round starts here, as the child actor its kind names (calls/): a tool
    // (runTool), an agent (the agent machine), a child swarm (childSwarm), a remote agent
    // (remoteAgent). Handoffs were planned in actors/plan-handoff.ts.
    spawnCalls: enqueueActions(({ context, enqueue }) => {
      const round = context.round;
      if (!round) return;
      for (const call of runningCalls(round)) {
        const { src, input } = spawnOf(call, {
          swarmId: context.swarmId,
          definitionId: context.definitionId,
          speaker: context.definitionId,
          key: toolKey(context.swarmId, round.turn, call.id),
          swarm: context,
          ...(round.openedAt !== undefined ? { openedAt: round.openedAt } : {}),
        });
        enqueue.spawnChild(src, { id: call.childId, input: input as never });
      }
    }),
    // A finished call takes three static actions: its events emitted (built from the context
    // before the result is recorded, so a call no round runs emits nothing), its result
    // recorded (one context update), its child stopped.
    announceCall: emit(({ context, event }, params: { last: boolean }) => {
      const done = child(event);
      const round = context.round;
      const call = runningCall(round, done.actorId);
      if (!round || !call) return { type: 'swarm.events' as const, events: [] };
      const agentEvents = call.kind === 'agent' ? ((done.output as AgentOutput | undefined)?.events ?? []) : [];
      const events = [...agentEvents, ...callDoneEvents(context.definitionId, call, callResultOf(done), toolKey(context.swarmId, round.turn, call.id))];
      events.push(checkpoint(isHandoff(call) ? 'handoff-result' : 'tool-result'));
      if (params.last) events.push(turnCompleted(context));
      return { type: 'swarm.events' as const, events };
    }),
    // With `close`, the last call's result also closes the round (see `closedRound`): one
    // context update instead of two.
    recordCall: assign(({ context, event }, params: { close: boolean }) => {
      const done = child(event);
      const round = context.round;
      const call = runningCall(round, done.actorId);
      if (!round || !call) return {};
      const result = callResultOf(done);
      const session =
        call.kind === 'agent' && result.ok ? [...context.session, { agentId: call.agentId, request: call.request, answer: result.content }] : context.session;
      const recorded = recordResult(round, call, result);
      // An agent's last steps come with its output (the earlier ones came as reports).
      const counted: Partial<Counted> = call.kind === 'agent' ? countEvents(context, (done.output as AgentOutput | undefined)?.events ?? []) : {};
      // A child's (or a peer's) rolled-up usage counts once: here, with its handoff's result.
      if (result.usage) {
        const ledger = counted.usageByModel ?? context.usageByModel ?? emptyLedger();
        counted.usageByModel = { ...ledger, children: addByModel(ledger.children, result.usage) };
      }
      return params.close ? { ...closedRound(context, recorded), session, ...counted } : { round: recorded, session, ...counted };
    }),
    stopCall: stopChild(({ event }) => child(event).actorId),
    publishTurn: emit(({ context }) => ({ type: 'swarm.events' as const, events: [turnCompleted(context)] })),
    // Also runs after a correction round, which opened no round of calls.
    closeRound: assign(({ context }) => closedRound(context, context.round)),
    fail: enqueueActions(({ enqueue }, params: { reason: string; kind: SwarmFailureKind }) => {
      enqueue.assign({ outcome: { status: 'failed', reason: params.reason } });
      enqueue.emit({ type: 'swarm.events', events: [failedUpdate(params.reason, params.kind)] });
    }),
    stop: enqueueActions(({ event, enqueue }) => {
      const reason = event.type === 'STOP' ? event.reason : 'stopped';
      enqueue.assign({ outcome: { status: 'stopped', reason } });
      enqueue.emit({
        type: 'swarm.events',
        events: [checkpoint('stop'), statusUpdate('canceled', { type: 'stopped', reason }, reason)],
      });
    }),
    pauseFrom: enqueueActions(({ context, event, enqueue }, params: { from: 'thinking' | 'round' }) => {
      if (event.type !== 'PAUSE') return;
      const { reason, pauses } = namedPause(context, 'pause', event.reason);
      enqueue.assign({ pause: { reason, from: params.from }, pauses });
      for (const call of runningCalls(context.round)) {
        if (call.kind === 'agent') enqueue.sendTo(call.childId, { type: 'PAUSE' });
      }
      enqueue.emit(pausedEvents(reason));
    }),
    // A limit reached with `onLimit: 'pause'`: the swarm waits, everything kept, for a client to
    // raise the limit (`EXTEND`) and resume, or to stop it.
    pauseForLimit: enqueueActions(({ context, enqueue }) => {
      const max = context.config.maxTurns;
      const { reason, pauses } = namedPause(context, 'limit', {
        type: LIMIT_PAUSE,
        message: `maxTurns (${max}) reached without a result: extend the swarm's limits to go on, or stop it`,
        limit: { limit: 'maxTurns', max, spent: context.turn, left: Math.max(0, max - context.turn) },
      });
      enqueue.assign({ pause: { reason, from: 'limit' }, pauses });
      enqueue.emit(pausedEvents(reason));
    }),
    extend: enqueueActions(({ context, event, enqueue }) => {
      if (event.type !== 'EXTEND') return;
      enqueue.assign({ config: { ...context.config, maxTurns: event.maxTurns } });
      const state = context.pause ? 'input-required' : 'working';
      enqueue.emit({
        type: 'swarm.events',
        events: [
          statusUpdate(state, {
            type: 'extended',
            maxTurns: event.maxTurns,
            previousMaxTurns: context.config.maxTurns,
            // The budget's new caps (the ledger holds them; the fact says when and what).
            ...(event.budget ? { budget: event.budget } : {}),
          }),
          checkpoint('extend'),
        ],
      });
    }),
    // Stall detection tripped (`stall`): a LIMIT pause saying `struggling`; what it showed is
    // not read again once resumed (`stallFrom`).
    pauseForStall: enqueueActions(({ context, enqueue }) => {
      const found = context.config.stall && findStall(context.messages, context.stallFrom ?? 0, context.config.stall);
      if (!found) return;
      const what = found.rule === 'repeats' ? `the same ${found.toolName} call ${found.spent} times` : `${found.spent} turns without a new tool result`;
      const { reason, pauses } = namedPause(context, 'limit', {
        type: LIMIT_PAUSE,
        message: `The swarm is struggling: ${what}. Resume with guidance to go on, or stop it`,
        limit: { limit: 'struggling', rule: found.rule, max: found.max, spent: found.spent, left: 0, ...(found.toolName ? { toolName: found.toolName } : {}) },
      });
      enqueue.assign({ pause: { reason, from: 'limit' }, pauses, stallFrom: context.messages.length });
      enqueue.emit(pausedEvents(reason));
    }),
    // A guardrail's pause resumed on a completion or a failure: the held verdict ends the swarm
    // (the outcome is taken before `resume` clears the pause, announced after its events).
    releaseOutcome: assign(({ context }) => {
      const then = context.pause?.then;
      return {
        outcome: then?.type === 'fail' ? { status: 'failed', reason: then.reason } : { status: 'completed', result: then?.type === 'complete' ? then.result : undefined },
      };
    }),
    announceReleased: emit(({ context }) => {
      const outcome = context.outcome;
      if (outcome?.status !== 'completed') {
        const reason = outcome && 'reason' in outcome ? outcome.reason : 'failed';
        // The held verdict was the model's `fail` call.
        return { type: 'swarm.events' as const, events: [turnCompleted(context), failedUpdate(reason, 'gave-up')] };
      }
      const result = outcome.result;
      return {
        type: 'swarm.events' as const,
        events: [
          turnCompleted(context),
          { kind: 'artifact-update', artifact: { artifactId: 'result', name: 'result', parts: valueParts(result) }, append: false, lastChunk: true },
          statusUpdate('completed', { type: 'completed', result }, valueText(result)),
        ],
      };
    }),
    // A guardrail's pause resumed on calls: they are announced now, as they start.
    announceRound: emit(({ context }) => ({
      type: 'swarm.events' as const,
      events: context.round ? roundStartEvents(context.definitionId, context.round) : [],
    })),
    pauseForModel: enqueueActions(({ context, enqueue }) => {
      // Runs behind the pausePending guard: the round has a pause call waiting. Its id is the
      // call's (what the answer becomes the result of), as `pendingApprovalId` is.
      const call = pendingPause(context.round);
      const reason: PauseReason = call ? { ...call.pauseReason, pauseId: call.id } : { type: 'HITL', message: 'The model asked for a human.' };
      enqueue.assign({ pause: { reason, from: 'model' } });
      enqueue.emit(pausedEvents(reason));
    }),
    resume: enqueueActions(({ context, event, enqueue }) => {
      if (event.type !== 'RESUME') return;
      const message = event.message?.trim() ? event.message : undefined;
      const from = context.pause?.from;
      if (from === 'model') {
        const round = context.round && answerPause(context.round, message ?? 'Resumed without a message.');
        enqueue.assign({ round, pause: null });
      } else if (from === 'thinking' || from === 'limit') {
        enqueue.assign({
          pause: null,
          messages: message ? [...context.messages, { role: 'user' as const, content: message }] : context.messages,
        });
      } else {
        enqueue.assign({ pause: null, notes: message ? [...context.notes, message] : context.notes });
        // A guardrail's held calls have not started: no agent waits for the resume.
        const waiting = from === 'guardrail' ? [] : runningCalls(context.round);
        for (const call of waiting) {
          if (call.kind === 'agent') enqueue.sendTo(call.childId, { type: 'RESUME' });
        }
      }
      enqueue.emit({
        type: 'swarm.events',
        events: [
          // The human's answer is the user's message of this status (A2A task history).
          message ? statusUpdate('working', { type: 'resumed', message }, message, 'user') : working({ type: 'resumed' }),
          checkpoint('resume'),
        ],
      });
    }),
    // An agent's completed steps: their model calls count in the swarm's usage.
    countReport: assign(({ context, event }) => (event.type === 'child.report' ? countEvents(context, event.events) : {})),
    relayReport: emit(({ event }) => ({
      type: 'swarm.events' as const,
      events: event.type === 'child.report' ? [...event.events, checkpoint('agent-step')] : [],
    })),
    // A step of an approval pause (see swarm-approvals.ts): pause, take an agent's, answer one.
    approvalStep: enqueueActions(({ context, event, enqueue }) => {
      const s = approvalStep(context, event);
      if (!s) return;
      enqueue.assign(s.update);
      for (const c of s.spawns) enqueue.spawnChild(c.src, { id: c.id, input: c.input as never });
      for (const m of s.sends) enqueue.sendTo(m.to, m.event);
      enqueue.emit({ type: 'swarm.events', events: s.events });
    }),
  },
}).createMachine({
  id: 'swarm',
  context: ({ input }) => ({
    swarmId: input.swarmId,
    contextId: input.contextId ?? input.swarmId,
    definitionId: input.definitionId,
    input: input.input,
    // Only when given: a swarm started without files keeps the context it always had.
    ...(input.inputParts ? { inputParts: input.inputParts } : {}),
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
    usageByModel: emptyLedger(),
    pauses: 0,
    // Only when given: a swarm started without a caller's trace keeps the context it always had.
    ...(input.trace ? { trace: input.trace } : {}),
  }),
  entry: emit(({ context }) => ({
    type: 'swarm.events' as const,
    events: [
      {
        kind: 'task',
        status: { state: 'submitted' },
        history: [{ kind: 'message', role: 'user', parts: context.inputParts ?? valueParts(context.input) }],
        metadata: context.config.label ? { definitionId: context.definitionId, label: context.config.label } : { definitionId: context.definitionId },
      },
      working({ type: 'started', definitionId: context.definitionId }),
      checkpoint('start'),
    ],
  })),
  on: {
    STOP: { target: '.stopped', actions: 'stop' },
    EXTEND: { actions: 'extend' },
    'child.report': { actions: ['countReport', 'relayReport'] },
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
            input: ({ context }) =>
              // With a history policy, its input too (the first user message is message 1).
              withHistory(
                {
                  swarmId: context.swarmId,
                  definitionId: context.definitionId,
                  speaker: context.definitionId,
                  orchestrator: true,
                  scope: '',
                  turn: context.turn + 1,
                  messages: context.messages,
                  tools: context.config.tools,
                  handoffs: context.config.handoffs,
                  ...(context.approvedTools ? { approvedTools: context.approvedTools } : {}),
                },
                context.config.history,
                1,
                context.summary,
              ),
            onDone: [
              { guard: 'verdictFail', target: '#swarm.failed', actions: takeResponse('fail') },
              { guard: 'verdictReject', target: '#swarm.failed', actions: takeResponse('reject') },
              { guard: 'verdictPause', target: '#swarm.paused', actions: takeResponse('pause') },
              { guard: 'verdictComplete', target: '#swarm.completed', actions: takeResponse('complete') },
              // Gated calls wait for a human: the swarm pauses at once, its other calls run meanwhile.
              { guard: 'wantsApproval', target: '#swarm.paused', actions: [...takeResponse('round'), 'spawnCalls', 'approvalStep'] },
              {
                guard: 'wantsHandoffs',
                target: '#swarm.awaitingHandoff',
                actions: [...takeResponse('round'), 'spawnCalls'],
              },
              { guard: 'wantsCalls', target: 'acting', actions: [...takeResponse('round'), 'spawnCalls'] },
              { target: 'deciding', actions: takeResponse('correct') },
            ],
            onError: {
              target: '#swarm.failed',
              actions: { type: 'fail', params: ({ event }) => ({ reason: `Model call failed: ${errorText(event.error)}`, kind: 'model-call' as const }) },
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
            { guard: 'struggling', target: '#swarm.paused', actions: ['closeRound', 'pauseForStall'] },
            {
              guard: 'failsAtLimit',
              target: '#swarm.failed',
              actions: [
                'closeRound',
                {
                  type: 'fail',
                  params: ({ context }) => ({
                    reason: `maxTurns (${context.config.maxTurns}) reached without a result`,
                    kind: 'max-turns' as const,
                  }),
                },
              ],
            },
            { guard: 'turnsExhausted', target: '#swarm.paused', actions: ['closeRound', 'pauseForLimit'] },
            { target: 'thinking', actions: 'closeRound' },
          ],
        },
      },
    },
    // Handoffs in flight (planned in actors/plan-handoff.ts; each run as its kind says, see spawnCalls and calls/).
    awaitingHandoff: {
      on: {
        PAUSE: { target: 'paused', actions: { type: 'pauseFrom', params: { from: 'round' } } },
        // An agent's gated calls: the swarm pauses and lists them.
        'child.approvals': { target: 'paused', actions: 'approvalStep' },
        ...callResults('running.deciding'),
      },
    },
    paused: {
      on: {
        'xstate.done.actor.*': [failingTimeout, { actions: takeCall(false) }],
        'xstate.error.actor.*': { actions: takeCall(false) },
        'child.approvals': { actions: 'approvalStep' },
        // The last pending approval answered: on as a resume from a round would go.
        APPROVE: answeredApproval,
        REJECT: answeredApproval,
        RESUME: [
          // Approvals are answered with approve/reject, never by a resume.
          { guard: 'pausedForApproval' },
          // A guardrail's pause: resuming carries out the step it held.
          { guard: 'releasesComplete', target: 'completed', actions: ['releaseOutcome', 'resume', 'announceReleased'] },
          { guard: 'releasesFail', target: 'failed', actions: ['releaseOutcome', 'resume', 'announceReleased'] },
          { guard: 'releasesGated', target: 'paused', actions: ['resume', 'announceRound', 'spawnCalls', 'approvalStep'] },
          { guard: 'releasesHandoffs', target: 'awaitingHandoff', actions: ['resume', 'announceRound', 'spawnCalls'] },
          { guard: 'releasesCalls', target: 'running.acting', actions: ['resume', 'announceRound', 'spawnCalls'] },
          // Back to deciding: with the limit raised it thinks again, else it pauses again.
          { guard: 'resumesLimitPause', target: 'running.deciding', actions: 'resume' },
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
