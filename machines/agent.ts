/**
 * The agent machine: what runs when an orchestrator hands off to an agent. It has its own
 * instructions, tools and tool loop, sees the earlier agent exchanges of its swarm's session,
 * and ends with a text answer that becomes the handoff's tool result.
 *
 * Pure: all I/O goes through the `modelStep` and `runTool` actors, which the runtime provides.
 * It reports completed steps to its parent swarm (`child.report`) so that the swarm can make
 * them durable and publish their events; an agent never emits events of its own.
 *
 * @module
 */
import { assign, enqueueActions, sendParent, setup } from 'xstate';
import { callDoneEvents, roundStartEvents, spawnOf } from './calls/index.js';
import type { CallResult, CallTimeout } from './calls/kind.js';
import { AGENT_DEADLINE_ID, agentDeadlineSlot } from './agent-deadline.js';
import { runToolSlot, type ToolRunInput } from './calls/tool.js';
import { type ModelStepOutput, modelStepSlot } from './contracts.js';
import { llmCallEvent, summaryCallEvent } from './event-builders.js';
import { type HistoryPolicy, type HistorySummary, withHistory } from './history.js';
import type { SwarmEventBody } from './events.js';
import type { ChatMessage } from './messages.js';
import {
  assistantMessage,
  callResultOf,
  type ChildEvent,
  isLastRunning,
  openRound,
  recordResult,
  resultMessages,
  type Round,
  runningCall,
  runningCalls,
  toolKey,
} from './round.js';
import { errorText } from './error-text.js';
import { type ApprovalCommand, answerRound, awaitsApproval, pendingOf, withApproved } from './approvals.js';

/** One earlier exchange between the orchestrator and an agent of the same swarm. */
export interface SessionEntry {
  agentId: string;
  request: string;
  answer: string;
}

/** What a swarm passes to an agent it hands off to. */
export interface AgentInput {
  swarmId: string;
  definitionId: string;
  agentId: string;
  instructions: string;
  tools: string[];
  maxTurns: number;
  request: string;
  session: SessionEntry[];
  /** Prefix for idempotency keys of this agent's tool calls: stable across restarts. */
  scope: string;
  /** Tools approved for the rest of the run when the agent started (its swarm's). */
  approvedTools?: string[];
  /** What the agent's model sees of its conversation (`history.ts`); absent: all of it. */
  history?: HistoryPolicy;
  /** The handoff's deadline (`defineAgent({ timeoutMs })`), counted from the round that handed off. */
  timeout?: CallTimeout;
}

/** The agent's result: the handoff's tool result plus events it has not reported yet. */
export interface AgentOutput extends CallResult {
  events: SwarmEventBody[];
}

/** Events an agent machine accepts. */
export type AgentEvent = { type: 'PAUSE' } | { type: 'RESUME' } | ApprovalCommand;

/** The agent machine's context; exported because the machine's declared type names it. */
export interface AgentContext {
  swarmId: string;
  definitionId: string;
  agentId: string;
  scope: string;
  tools: string[];
  maxTurns: number;
  messages: ChatMessage[];
  turn: number;
  round: Round | null;
  /** Where to go back to on RESUME. */
  pausedFrom: 'thinking' | 'acting' | null;
  answer: CallResult | null;
  /** Events produced since the last report to the parent. */
  outbox: SwarmEventBody[];
  /** Tools approved for the rest of the run; absent until there is one. */
  approvedTools?: string[];
  /** The agent's history policy, if it has one (absent in snapshots stored before policies). */
  history?: HistoryPolicy;
  /** The summary of its older turns under a `'summarize'` policy (see `SwarmContext.summary`). */
  summary?: HistorySummary;
  /** Index of its request among its messages (after the session's exchanges): always sent. Set with `history`. */
  request?: number;
  /** The handoff's deadline, if the agent has a `timeoutMs`. */
  timeout?: CallTimeout;
}

/** Conversation an agent starts with: its instructions, the session so far, the request. */
function initialMessages(input: AgentInput): ChatMessage[] {
  const messages: ChatMessage[] = [{ role: 'system', content: input.instructions }];
  for (const entry of input.session) {
    messages.push({ role: 'user', content: `(to ${entry.agentId}) ${entry.request}` }, { role: 'assistant', content: `(${entry.agentId}) ${entry.answer}` });
  }
  messages.push({ role: 'user', content: input.request });
  return messages;
}

const childDone = ({ event }: { event: { type: string } }): string => (event as unknown as { actorId: string }).actorId;

/** The agent machine. Provide `modelStep` and `runTool` with `agentMachine.provide({ actors })`. */
export const agentMachine = setup({
  types: {} as {
    context: AgentContext;
    input: AgentInput;
    output: AgentOutput;
    events: AgentEvent;
  },
  actors: {
    modelStep: modelStepSlot,
    runTool: runToolSlot,
    agentDeadline: agentDeadlineSlot,
  },
  guards: {
    wantsCalls: ({ event }) => (event as unknown as { output: ModelStepOutput }).output.calls.length > 0,
    // One of the agent's guardrails rejected the response or a tool call: its handoff fails.
    rejected: ({ event }) => (event as unknown as { output: ModelStepOutput }).output.verdict.type === 'reject',
    wantsApproval: ({ event }) => (event as unknown as { output: ModelStepOutput }).output.calls.some((c) => c.kind === 'gated'),
    answered: ({ event }) => {
      const text = (event as unknown as { output: ModelStepOutput }).output.response.text;
      return typeof text === 'string' && text.trim().length > 0;
    },
    lastCall: ({ context, event }) => isLastRunning(context.round, childDone({ event })) && !awaitsApproval(context.round),
    turnsLeft: ({ context }) => context.turn < context.maxTurns,
    // Guards of a response run before it is counted: this one counts it.
    turnsLeftAfterResponse: ({ context }) => context.turn + 1 < context.maxTurns,
    // Gated calls wait for their approval (which surfaces on the swarm) before the round can end.
    roundDone: ({ context }) => runningCalls(context.round).length === 0 && !awaitsApproval(context.round),
    pausedInThinking: ({ context }) => context.pausedFrom === 'thinking',
    deadlinePassed: ({ event }) => childDone({ event }) === AGENT_DEADLINE_ID,
    // A tool that timed out with `onTimeout: 'fail'`: the agent ends with it, and its swarm fails.
    toolFailsSwarm: ({ context, event }) =>
      ((event as unknown as ChildEvent).output as { failsSwarm?: unknown } | undefined)?.failsSwarm === true &&
      runningCall(context.round, childDone({ event })) !== undefined,
  },
  actions: {
    // One static context update per model response; a step that continues the loop is then
    // reported to the parent (which makes it durable) by `sendOutbox` and `clearOutbox`, while
    // a final answer travels with the agent's output instead. Static actions spare XState the
    // enqueue helpers and fresh action objects `enqueueActions` builds on every response.
    takeResponse: assign(({ context, event }, params: { then: 'round' | 'answer' | 'correct' | 'give-up' | 'reject' }) => {
      const step = (event as unknown as { output: ModelStepOutput }).output;
      const turn = context.turn + 1;
      const messages = [...context.messages, assistantMessage(step.response)];
      const outbox = [...context.outbox];
      if (step.summary) outbox.push(summaryCallEvent(context.agentId, context.scope, turn, step.summary));
      outbox.push(llmCallEvent(context.agentId, context.scope, turn, step));
      const next: Partial<AgentContext> = { turn, messages, outbox };
      if (step.summary) next.summary = { text: step.summary.text, upTo: step.summary.upTo };
      if (params.then === 'round') {
        next.round = openRound(turn, step.calls, '', step.at);
        outbox.push(...roundStartEvents(context.agentId, next.round));
      } else if (params.then === 'answer') {
        next.answer = { ok: true, content: step.response.text ?? '' };
      } else if (params.then === 'correct') {
        messages.push({ role: 'user', content: 'Please answer the request in plain text.' });
      } else if (params.then === 'reject') {
        next.answer = { ok: false, content: step.verdict.type === 'reject' ? step.verdict.reason : 'Rejected by a guardrail.' };
      } else {
        next.answer = { ok: false, content: 'Agent gave no answer within its turn limit.' };
      }
      return next;
    }),
    sendOutbox: sendParent(({ context }) => ({ type: 'child.report', events: context.outbox })),
    clearOutbox: assign({ outbox: [] }),
    spawnTools: enqueueActions(({ context, enqueue }) => {
      const round = context.round;
      if (!round) return;
      for (const call of runningCalls(round)) {
        // An agent's responses plan tool calls only: handoffs are the orchestrator's (actors/plan-handoff.ts).
        if (call.kind !== 'tool') continue;
        const { input } = spawnOf(call, {
          swarmId: context.swarmId,
          definitionId: context.definitionId,
          speaker: context.agentId,
          key: toolKey(`${context.scope}:${context.agentId}`, round.turn, call.id),
          ...(round.openedAt !== undefined ? { openedAt: round.openedAt } : {}),
        });
        enqueue.spawnChild('runTool', { id: call.childId, input: input as ToolRunInput });
      }
    }),
    recordCall: enqueueActions(({ context, event, enqueue }) => {
      const childId = childDone({ event });
      const round = context.round;
      const call = runningCall(round, childId);
      if (!round || !call) return;
      const result = callResultOf(event as unknown as ChildEvent);
      enqueue.assign({
        round: recordResult(round, call, result),
        outbox: [...context.outbox, ...callDoneEvents(context.agentId, call, result, toolKey(`${context.scope}:${context.agentId}`, round.turn, call.id))],
      });
      enqueue.stopChild(childId);
    }),
    closeRound: assign(({ context }) => ({
      messages: [...context.messages, ...(context.round ? resultMessages(context.round) : [])],
      round: null,
    })),
    failWith: assign((_, params: { reason: string }) => ({ answer: { ok: false, content: params.reason } })),
    failFromError: assign(({ event }) => ({
      answer: { ok: false, content: `Agent failed: ${errorText((event as unknown as { error: unknown }).error)}` },
    })),
    report: enqueueActions(({ context, enqueue }) => {
      if (context.outbox.length === 0) return;
      enqueue(sendParent({ type: 'child.report', events: context.outbox }));
      enqueue.assign({ outbox: [] });
    }),
    // Gated calls of a new round: the swarm pauses and lists them (see swarm-approvals.ts).
    // Static, on its own branch: a round without gated calls runs no action for approvals.
    askApprovals: sendParent(({ context }) => ({ type: 'child.approvals', approvals: pendingOf(context.round, context.agentId, context.scope) })),
    // An answer the swarm passed on: an approved call runs now, a rejected one has its result.
    answerApproval: enqueueActions(({ context, event, enqueue }) => {
      if ((event.type !== 'APPROVE' && event.type !== 'REJECT') || !context.round) return;
      const { round, approved } = answerRound(context.round, event);
      if (round === context.round) return;
      enqueue.assign({
        round,
        ...(event.type === 'APPROVE' && event.always && approved[0] ? { approvedTools: withApproved(context.approvedTools, approved[0].name) } : {}),
      });
      for (const call of approved) {
        const { input } = spawnOf(call, {
          swarmId: context.swarmId,
          definitionId: context.definitionId,
          speaker: context.agentId,
          key: toolKey(`${context.scope}:${context.agentId}`, round.turn, call.id),
        });
        enqueue.spawnChild('runTool', { id: call.childId, input: input as ToolRunInput });
      }
    }),
    // The tool's failing timeout is the agent's answer (recorded first by recordCall).
    failWithCall: assign(({ event }) => ({ answer: callResultOf(event as unknown as ChildEvent) })),
    // The deadline child answered first: its timeout is the agent's answer.
    timedOut: assign(({ event }) => ({ answer: (event as unknown as { output: CallResult }).output })),
    markPaused: assign((_, params: { from: 'thinking' | 'acting' }) => ({ pausedFrom: params.from })),
  },
}).createMachine({
  id: 'agent',
  context: ({ input }) => ({
    swarmId: input.swarmId,
    definitionId: input.definitionId,
    agentId: input.agentId,
    scope: input.scope,
    tools: input.tools,
    maxTurns: input.maxTurns,
    messages: initialMessages(input),
    turn: 0,
    round: null,
    pausedFrom: null,
    answer: null,
    outbox: [],
    ...(input.approvedTools ? { approvedTools: input.approvedTools } : {}),
    ...(input.history ? { history: input.history, request: 1 + 2 * input.session.length } : {}),
    ...(input.timeout ? { timeout: input.timeout } : {}),
  }),
  // Only an agent with a `timeoutMs` has a deadline child (spawned once; a restore brings it back).
  entry: enqueueActions(({ context, enqueue }) => {
    const timeout = context.timeout;
    if (timeout) enqueue.spawnChild('agentDeadline', { id: AGENT_DEADLINE_ID, input: { agentId: context.agentId, key: context.scope, timeout } });
  }),
  on: { APPROVE: { actions: 'answerApproval' }, REJECT: { actions: 'answerApproval' } },
  initial: 'thinking',
  states: {
    thinking: {
      on: {
        PAUSE: { target: 'paused', actions: { type: 'markPaused', params: { from: 'thinking' } } },
        // The model's answer is `xstate.done.actor.model` (the invoke's); the deadline's is the agent's end.
        'xstate.done.actor.*': { guard: 'deadlinePassed', target: 'done', actions: 'timedOut' },
      },
      invoke: {
        id: 'model',
        src: 'modelStep',
        input: ({ context }) =>
          withHistory(
            {
              swarmId: context.swarmId,
              definitionId: context.definitionId,
              speaker: context.agentId,
              orchestrator: false,
              scope: context.scope,
              turn: context.turn + 1,
              messages: context.messages,
              tools: context.tools,
              handoffs: [],
              ...(context.approvedTools ? { approvedTools: context.approvedTools } : {}),
            },
            context.history,
            context.request ?? 1,
            context.summary,
          ),
        onDone: [
          { guard: 'rejected', target: 'done', actions: { type: 'takeResponse', params: { then: 'reject' } } },
          {
            guard: 'wantsApproval',
            target: 'acting',
            actions: [{ type: 'takeResponse', params: { then: 'round' } }, 'sendOutbox', 'clearOutbox', 'spawnTools', 'askApprovals'],
          },
          {
            guard: 'wantsCalls',
            target: 'acting',
            actions: [{ type: 'takeResponse', params: { then: 'round' } }, 'sendOutbox', 'clearOutbox', 'spawnTools'],
          },
          { guard: 'answered', target: 'done', actions: { type: 'takeResponse', params: { then: 'answer' } } },
          {
            guard: 'turnsLeftAfterResponse',
            target: 'thinking',
            reenter: true,
            actions: [{ type: 'takeResponse', params: { then: 'correct' } }, 'sendOutbox', 'clearOutbox'],
          },
          { target: 'done', actions: { type: 'takeResponse', params: { then: 'give-up' } } },
        ],
        onError: { target: 'done', actions: 'failFromError' },
      },
    },
    acting: {
      // A round whose calls were all rejected up front has nothing to wait for.
      always: { guard: 'roundDone', target: 'deciding' },
      on: {
        PAUSE: { target: 'paused', actions: { type: 'markPaused', params: { from: 'acting' } } },
        // The deadline first: the other done events are the tools' results.
        'xstate.done.actor.*': [
          { guard: 'deadlinePassed', target: 'done', actions: 'timedOut' },
          { guard: 'toolFailsSwarm', target: 'done', actions: ['recordCall', 'failWithCall'] },
          { guard: 'lastCall', target: 'deciding', actions: 'recordCall' },
          { actions: ['recordCall', 'report'] },
        ],
        'xstate.error.actor.*': [{ guard: 'lastCall', target: 'deciding', actions: 'recordCall' }, { actions: ['recordCall', 'report'] }],
      },
    },
    deciding: {
      always: [
        { guard: 'turnsLeft', target: 'thinking', actions: ['closeRound', 'report'] },
        {
          target: 'done',
          actions: ['closeRound', { type: 'failWith', params: { reason: 'Agent exceeded its turn limit.' } }],
        },
      ],
    },
    paused: {
      on: {
        'xstate.done.actor.*': [
          { guard: 'deadlinePassed', target: 'done', actions: 'timedOut' },
          { guard: 'toolFailsSwarm', target: 'done', actions: ['recordCall', 'failWithCall'] },
          { actions: ['recordCall', 'report'] },
        ],
        'xstate.error.actor.*': { actions: ['recordCall', 'report'] },
        RESUME: [{ guard: 'pausedInThinking', target: 'thinking' }, { guard: 'roundDone', target: 'deciding' }, { target: 'acting' }],
      },
    },
    done: { type: 'final' },
  },
  output: ({ context }) => ({
    ...(context.answer ?? { ok: false, content: 'Agent ended without an answer.' }),
    events: context.outbox,
  }),
});
