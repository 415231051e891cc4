/**
 * The seam between the pure machines and the effectful actors: what each actor slot takes and
 * returns, and the placeholder each machine declares in `setup({ actors })`. The runtime fills
 * the slots with `machine.provide({ actors })` (`actors/index.ts`); declaring them by key keeps
 * every snapshot persistable (inline actor logic is not). The `agent` slot is not here: it is
 * the agent machine itself (`agent.ts`).
 *
 * @module
 */
import { fromPromise, type PromiseActorLogic } from 'xstate';
import type { ChatMessage, ModelResponse } from './messages.js';
import type { Customization, HandoffTarget, PlannedCall, StepVerdict } from './plan.js';

/** What a call produced: `content` is what the model reads as the tool result. */
export interface CallResult {
  ok: boolean;
  content: string;
  /**
   * The agent that answered a handoff whose agent is chosen when the call runs (the best
   * agent for a skill): the `handoff-result` event names it instead of the planned target.
   */
  agentId?: string;
}

/**
 * Input of the `modelStep` actor. `speaker` is the swarm definition id for the orchestrator
 * and the agent id for an agent; `orchestrator` decides whether built-ins and handoffs exist.
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
 * Output of the `modelStep` actor: the model's response (call ids normalized), the planned
 * calls in the order the model gave them, and the verdict.
 */
export interface ModelStepOutput {
  response: ModelResponse;
  calls: PlannedCall[];
  verdict: StepVerdict;
  durationMs: number;
}

/** Input of the `runTool` actor. `idempotencyKey` is stable across restarts of the same call. */
export interface ToolRunInput {
  swarmId: string;
  agentId: string;
  toolCallId: string;
  name: string;
  arguments: string;
  idempotencyKey: string;
}

/** Input of the `childSwarm` actor: everything needed to start (or re-attach to) the child. */
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

/** Input of the `remoteAgent` actor: one request to a remote A2A agent. */
export interface RemoteAgentInput {
  swarmId: string;
  callId: string;
  agentId: string;
  url: string;
  request: string;
  /** Stable across restarts: usable as the A2A message id. */
  key: string;
}

/** The actor logic behind each key the swarm machine declares, as `actors/` implements it. */
export interface SwarmActors {
  modelStep: PromiseActorLogic<ModelStepOutput, ModelStepInput>;
  runTool: PromiseActorLogic<CallResult, ToolRunInput>;
  childSwarm: PromiseActorLogic<CallResult, ChildSwarmInput>;
  remoteAgent: PromiseActorLogic<CallResult, RemoteAgentInput>;
}

/** Slot of a model call and the judgement of its response (swarm and agent machines). */
export const modelStepSlot = fromPromise<ModelStepOutput, ModelStepInput>(async () => {
  throw new Error('modelStep is provided by the runtime');
});

/** Slot of one regular tool call (swarm and agent machines). */
export const runToolSlot = fromPromise<CallResult, ToolRunInput>(async () => {
  throw new Error('runTool is provided by the runtime');
});

/**
 * Slot of a handoff to a child swarm. A child swarm is a swarm of its own (own id, store
 * record, events, client); this actor starts or re-attaches to it and resolves with its
 * outcome as the handoff's result.
 */
export const childSwarmSlot = fromPromise<CallResult, ChildSwarmInput>(async () => {
  throw new Error('childSwarm is provided by the runtime');
});

/** Slot of a handoff to an agent served by another process over A2A. */
export const remoteAgentSlot = fromPromise<CallResult, RemoteAgentInput>(async () => {
  throw new Error('remoteAgent is provided by the runtime');
});
