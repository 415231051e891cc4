/**
 * One round of the agent loop as plain data: the calls a model response asked for, which of
 * them are still running, and their results once they arrive. Shared by the swarm and agent
 * machines; every function here is pure.
 *
 * @module
 */
import type { PauseReason, SwarmEventBody } from './events.js';
import type { ChatMessage, ModelResponse } from './messages.js';

/**
 * A handoff as the machine knows it once a definition is resolved: names only, JSON-safe.
 *
 * @example
 * const h: HandoffTarget = { toolName: 'handoff_to_weather_agent', kind: 'agent', agentId: 'weather-agent', description: 'Forecasts' };
 */
export type HandoffTarget =
  | {
      /** The tool name the model calls, `handoff_to_<id>`. */
      toolName: string;
      kind: 'agent';
      agentId: string;
      description: string;
    }
  | {
      toolName: string;
      kind: 'remote';
      /** The remote agent's name (from its A2A agent card). */
      agentId: string;
      /** Where its agent card is. */
      url: string;
      description: string;
    }
  | {
      toolName: string;
      kind: 'swarm';
      /** The child swarm's definition id. */
      definitionId: string;
      description: string;
      /** The child takes structured input: the tool's parameters are its input schema. */
      structured: boolean;
      /** The tool has a `customization` argument. */
      customizable: boolean;
    };

/**
 * How a parent's model may extend a customizable child swarm for one run. It only ever adds
 * to the child's own configuration.
 *
 * @example
 * const c: Customization = { additional_instructions: 'The customer is a VIP.', max_turns_override: 4 };
 */
export interface Customization {
  additional_instructions?: string;
  additional_agents?: string[];
  additional_tools?: string[];
  max_turns_override?: number;
}

/**
 * Input of the `remoteAgent` actor: one request to a remote A2A agent.
 *
 * @example
 * const input: RemoteAgentInput = { swarmId: 's1', callId: 'c1', agentId: 'weather', url: cardUrl,
 *   request: 'forecast for Saturday', key: toolKey('s1', 1, 'c1') };
 */
export interface RemoteAgentInput {
  swarmId: string;
  callId: string;
  agentId: string;
  url: string;
  request: string;
  /** Stable across restarts: usable as the A2A message id. */
  key: string;
}

/**
 * Input of the `childSwarm` actor: everything needed to start (or re-attach to) the child.
 *
 * @example
 * const input: ChildSwarmInput = { parentId: 's1', callId: 'c1', key: toolKey('s1', 1, 'c1'),
 *   childSwarmId: 's1:t1:0', definitionId: 'ticketing', input: 'two seats on Saturday' };
 */
export interface ChildSwarmInput {
  parentId: string;
  callId: string;
  /** The call's idempotency key (stable across restarts). */
  key: string;
  childSwarmId: string;
  definitionId: string;
  input: unknown;
  customization?: Customization;
}

/**
 * A tool call after the runtime parsed and checked it against the definition.
 * `invalid` carries the error text that goes back to the model as the tool result.
 *
 * @example
 * const c: PlannedCall = { id: 'c1', name: 'get_forecast', kind: 'tool', arguments: '{"day":"Sat"}' };
 */
export type PlannedCall =
  | { id: string; name: string; kind: 'tool'; arguments: string }
  | { id: string; name: string; kind: 'agent'; agentId: string; request: string }
  | { id: string; name: string; kind: 'remote'; agentId: string; url: string; request: string }
  | { id: string; name: string; kind: 'swarm'; definitionId: string; input: unknown; customization?: Customization }
  | { id: string; name: string; kind: 'pause'; reason: PauseReason }
  | { id: string; name: string; kind: 'invalid'; error: string };

/**
 * What the runtime concluded from a model response, before any call runs.
 * `continue`: run the planned calls. `complete`/`fail`: terminate. `correct`: no calls to run;
 * feed `message` back to the model as a correction (it counts as a round).
 *
 * @example
 * const v: StepVerdict = { type: 'fail', reason: 'No forecast is available for that day.' };
 */
export type StepVerdict =
  | { type: 'continue' }
  | { type: 'complete'; result: unknown }
  | { type: 'fail'; reason: string }
  | { type: 'correct'; message: string };

/**
 * Output of the `modelStep` actor: the model's response (call ids normalized), the planned
 * calls in the order the model gave them, and the verdict.
 *
 * @example
 * const out: ModelStepOutput = { response: { text: 'hi' }, calls: [], verdict: { type: 'complete', result: 'hi' }, durationMs: 3 };
 */
export interface ModelStepOutput {
  response: ModelResponse;
  calls: PlannedCall[];
  verdict: StepVerdict;
  durationMs: number;
}

/**
 * Input of the `modelStep` actor. `speaker` is the swarm definition id for the orchestrator
 * and the agent id for an agent; `orchestrator` decides whether built-ins and handoffs exist.
 *
 * @example
 * const input: ModelStepInput = { swarmId: 's1', definitionId: 'planner', speaker: 'planner', orchestrator: true,
 *   scope: '', turn: 1, messages: [], tools: ['get_forecast'], handoffs: [] };
 */
export interface ModelStepInput {
  swarmId: string;
  definitionId: string;
  speaker: string;
  orchestrator: boolean;
  /** '' for the orchestrator; the handoff's scope for an agent. */
  scope: string;
  turn: number;
  messages: ChatMessage[];
  tools: string[];
  handoffs: HandoffTarget[];
}

/**
 * Input of the `runTool` actor. `idempotencyKey` is stable across restarts of the same call.
 *
 * @example
 * const input: ToolRunInput = { swarmId: 's1', agentId: 'planner', toolCallId: 'c1', name: 'get_forecast',
 *   arguments: '{"day":"Sat"}', idempotencyKey: toolKey('s1', 1, 'c1') };
 */
export interface ToolRunInput {
  swarmId: string;
  agentId: string;
  toolCallId: string;
  name: string;
  arguments: string;
  idempotencyKey: string;
}

/**
 * What a call produced: `content` is what the model reads as the tool result.
 *
 * @example
 * const r: CallResult = { ok: true, content: '{"sky":"sunny"}' };
 */
export interface CallResult {
  ok: boolean;
  content: string;
}

/**
 * A call of the current round; `childId` names the spawned actor running it.
 *
 * @example
 * const c: RoundCall = { id: 'c1', name: 'get_forecast', kind: 'tool', childId: 'tool:1:0', arguments: '{"day":"Sat"}' };
 */
export interface RoundCall {
  id: string;
  name: string;
  kind: PlannedCall['kind'];
  childId?: string;
  agentId?: string;
  request?: string;
  /** For a remote agent: where its card is. */
  url?: string;
  /** For a swarm handoff: the child's definition, id, input and customization. */
  definitionId?: string;
  childSwarmId?: string;
  input?: unknown;
  customization?: Customization;
  /** Raw JSON arguments of a tool call, as the tool actor receives them. */
  arguments?: string;
  /** For a `pause` call: why the model asked for a human. */
  pauseReason?: PauseReason;
  result?: CallResult;
}

/**
 * The round in flight: the turn that produced it and its calls in the model's order.
 *
 * @example
 * const r: Round = { turn: 1, calls: [{ id: 'c1', name: 'get_forecast', kind: 'tool', childId: 'tool:1:0' }] };
 */
export interface Round {
  turn: number;
  calls: RoundCall[];
}

/**
 * Child actor id for the call at `index` of the round produced at `turn`.
 * Turn-scoped so that a model reusing call ids across rounds never collides.
 *
 * @example
 * childIdFor('tool', 3, 0) // 'tool:3:0'
 */
export function childIdFor(kind: 'tool' | 'agent' | 'swarm' | 'remote', turn: number, index: number): string {
  return `${kind}:${turn}:${index}`;
}

/**
 * Builds the round for planned calls. Invalid calls get their error result at once; pause
 * calls wait for the human's answer.
 *
 * @example
 * openRound(1, [{ id: 'c1', name: 'nope', kind: 'invalid', error: 'Unknown tool "nope"' }]).calls[0].result
 * // { ok: false, content: 'Unknown tool "nope"' }
 */
export function openRound(turn: number, planned: readonly PlannedCall[], swarmId = ''): Round {
  const calls = planned.map((call, index): RoundCall => {
    switch (call.kind) {
      case 'tool':
        return {
          id: call.id,
          name: call.name,
          kind: 'tool',
          childId: childIdFor('tool', turn, index),
          arguments: call.arguments,
        };
      case 'agent':
        return {
          id: call.id,
          name: call.name,
          kind: 'agent',
          childId: childIdFor('agent', turn, index),
          agentId: call.agentId,
          request: call.request,
        };
      case 'remote':
        return {
          id: call.id,
          name: call.name,
          kind: 'remote',
          childId: childIdFor('remote', turn, index),
          agentId: call.agentId,
          url: call.url,
          request: call.request,
        };
      case 'swarm':
        return {
          id: call.id,
          name: call.name,
          kind: 'swarm',
          childId: childIdFor('swarm', turn, index),
          definitionId: call.definitionId,
          // Derived from the parent's snapshot, so a restored parent finds the same child.
          childSwarmId: `${swarmId}:t${turn}:${index}`,
          input: call.input,
          ...(call.customization ? { customization: call.customization } : {}),
        };
      case 'pause':
        return { id: call.id, name: call.name, kind: 'pause', pauseReason: call.reason };
      case 'invalid':
        return { id: call.id, name: call.name, kind: 'invalid', result: { ok: false, content: call.error } };
    }
  });
  return { turn, calls };
}

/**
 * The round with `result` recorded for the call run by `childId` (unchanged if unknown).
 *
 * @example
 * recordResult(round, 'tool:1:0', { ok: true, content: 'sunny' }).calls[0].result // { ok: true, content: 'sunny' }
 */
export function recordResult(round: Round, childId: string, result: CallResult): Round {
  const index = round.calls.findIndex((c) => c.childId === childId && c.result === undefined);
  if (index < 0) return round;
  const calls = round.calls.slice();
  calls[index] = { ...calls[index]!, result };
  return { ...round, calls };
}

/**
 * Calls still waiting for a child actor (pause calls wait for a human, not a child).
 *
 * @example
 * runningCalls(openRound(1, [{ id: 'c1', name: 'get_forecast', kind: 'tool', arguments: '{}' }])).length // 1
 */
export function runningCalls(round: Round | null): RoundCall[] {
  return round ? round.calls.filter((c) => c.result === undefined && c.kind !== 'pause') : [];
}

/**
 * Whether `childId` is the last running call of the round.
 *
 * @example
 * isLastRunning(openRound(1, [{ id: 'c1', name: 'get_forecast', kind: 'tool', arguments: '{}' }]), 'tool:1:0') // true
 */
export function isLastRunning(round: Round | null, childId: string): boolean {
  const running = runningCalls(round);
  return running.length === 1 && running[0]!.childId === childId;
}

/**
 * The pause call of the round that still waits for a human, if any.
 *
 * @example
 * const round = openRound(2, [{ id: 'c1', name: 'pause', kind: 'pause', reason: { type: 'HITL', message: 'Which day?' } }]);
 * pendingPause(round)?.id // 'c1'
 */
export function pendingPause(round: Round | null): RoundCall | undefined {
  return round?.calls.find((c) => c.kind === 'pause' && c.result === undefined);
}

/**
 * Tool messages for every call of a finished round, in the model's call order.
 *
 * @example
 * resultMessages({ turn: 1, calls: [{ id: 'c1', name: 'get_forecast', kind: 'tool', result: { ok: true, content: 'sunny' } }] })
 * // [{ role: 'tool', toolCallId: 'c1', content: 'sunny' }]
 */
export function resultMessages(round: Round): ChatMessage[] {
  return round.calls.map((c) => ({
    role: 'tool' as const,
    toolCallId: c.id,
    content: c.result?.content ?? 'No result.',
  }));
}

/**
 * The assistant message that records a model response in a conversation.
 *
 * @example
 * assistantMessage({ text: 'Checking the weather.' }) // { role: 'assistant', content: 'Checking the weather.' }
 */
export function assistantMessage(response: ModelResponse): ChatMessage {
  const message: ChatMessage = { role: 'assistant', content: response.text ?? '' };
  if (response.toolCalls && response.toolCalls.length > 0) message.toolCalls = response.toolCalls;
  return message;
}

/**
 * The `internal:llm-call` event for one model response.
 *
 * @example
 * const events: SwarmEventBody[] = [llmCallEvent(context.definitionId, '', turn, step)];
 */
export function llmCallEvent(agent: string, scope: string, turn: number, step: ModelStepOutput): SwarmEventBody {
  return {
    kind: 'internal:llm-call',
    agent,
    scope,
    turn,
    response: step.response,
    ...(step.response.usage ? { usage: step.response.usage } : {}),
    durationMs: step.durationMs,
    calls: step.calls,
    verdict: step.verdict,
  };
}

/**
 * The idempotency key of a tool call: stable across restarts because every part is in the
 * snapshot. `prefix` is the swarm id for the orchestrator's tools and the handoff scope plus
 * agent id for an agent's.
 *
 * @example
 * toolKey('swarm-7', 1, 'c9') // 'swarm-7:t1:c9'
 */
export function toolKey(prefix: string, turn: number, callId: string): string {
  return `${prefix}:t${turn}:${callId}`;
}

/**
 * Events announcing the calls of a new round: a `tool-call` fact and `internal:tool-start`
 * for tools, an `agent-handoff` fact for handoffs, `internal:tool-complete` for calls that
 * were rejected before running.
 *
 * @example
 * roundStartEvents('planner', openRound(1, [{ id: 'c1', name: 'get_forecast', kind: 'tool', arguments: '{}' }])).map((e) => e.kind)
 * // ['status-update', 'internal:tool-start']
 */
export function roundStartEvents(agent: string, round: Round): SwarmEventBody[] {
  const events: SwarmEventBody[] = [];
  round.calls.forEach((call) => {
    if (call.kind === 'tool') {
      events.push(
        { kind: 'status-update', state: 'working', final: false, metadata: { type: 'tool-call', agent, toolName: call.name, callId: call.id } },
        { kind: 'internal:tool-start', agent, toolName: call.name, callId: call.id, arguments: call.arguments ?? '{}' },
      );
    } else if (call.kind === 'agent' || call.kind === 'remote') {
      events.push({
        kind: 'status-update',
        state: 'working',
        final: false,
        metadata: { type: 'agent-handoff', from: agent, to: call.agentId!, callId: call.id, request: call.request ?? '' },
      });
    } else if (call.kind === 'swarm') {
      events.push({
        kind: 'status-update',
        state: 'working',
        final: false,
        metadata: {
          type: 'swarm-handoff',
          from: agent,
          to: call.definitionId!,
          childSwarmId: call.childSwarmId!,
          callId: call.id,
          input: call.input,
        },
      });
    } else if (call.kind === 'invalid') {
      events.push({ kind: 'internal:tool-complete', agent, toolName: call.name, callId: call.id, ok: false, content: call.result!.content, key: '' });
    }
  });
  return events;
}

/**
 * The event that reports a finished call: a handoff result fact or `internal:tool-complete`.
 *
 * @example
 * callDoneEvent('planner', call, result, toolKey('s1', 1, call.id)).kind // 'internal:tool-complete' for a tool call
 */
export function callDoneEvent(agent: string, call: RoundCall, result: CallResult, key: string): SwarmEventBody {
  if (call.kind === 'agent' || call.kind === 'remote' || call.kind === 'swarm') {
    return {
      kind: 'status-update',
      state: 'working',
      final: false,
      metadata: {
        type: 'handoff-result',
        from: call.agentId ?? call.definitionId!,
        to: agent,
        callId: call.id,
        ok: result.ok,
        ...(call.childSwarmId ? { childSwarmId: call.childSwarmId } : {}),
        content: result.content,
        key,
      },
    };
  }
  return { kind: 'internal:tool-complete', agent, toolName: call.name, callId: call.id, ok: result.ok, content: result.content, key };
}

/**
 * A child actor's done or error event, as a machine receives it.
 *
 * @example
 * const e: ChildEvent = { type: 'xstate.done.actor.tool:1:0', actorId: 'tool:1:0', output: { ok: true, content: 'sunny' } };
 */
export type ChildEvent = { type: string; actorId: string; output?: unknown; error?: unknown };

/**
 * The result of a finished child actor: its output, or its error as a failed result. The
 * same text for every machine, so a model reads failures one way.
 *
 * @example
 * callResultOf({ type: 'xstate.error.actor.tool:1:0', actorId: 'tool:1:0', error: new Error('boom') }) // { ok: false, content: 'Call failed: boom' }
 */
export function callResultOf(event: ChildEvent): CallResult {
  if (event.type.startsWith('xstate.error.actor.')) return { ok: false, content: `Call failed: ${errorText(event.error)}` };
  return toCallResult(event.output);
}

/**
 * Readable text for anything thrown.
 *
 * @example
 * errorText(new Error('timeout')) // 'timeout'
 */
export function errorText(error: unknown): string {
  if (error instanceof Error) return error.message;
  if (typeof error === 'string') return error;
  try {
    return JSON.stringify(error);
  } catch {
    return String(error);
  }
}

/**
 * Normalizes what a finished child actor produced into a {@link CallResult}.
 *
 * @example
 * toCallResult(undefined) // { ok: false, content: 'The call produced no result.' }
 */
export function toCallResult(output: unknown): CallResult {
  if (output && typeof output === 'object' && 'ok' in output && 'content' in output) {
    const o = output as { ok: unknown; content: unknown };
    return { ok: o.ok === true, content: String(o.content) };
  }
  return { ok: false, content: 'The call produced no result.' };
}
