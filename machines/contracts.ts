/**
 * The seam between the pure machines and the effectful actors: the model step's input and
 * output and its slot, and the table of actor logic the runtime provides. Each kind of call
 * brings its own input and slot (`calls/`); the `agent` slot is the agent machine itself
 * (`agent.ts`). The runtime fills the slots with `machine.provide({ actors })`
 * (`actors/index.ts`); declaring them by key keeps every snapshot persistable (inline actor
 * logic is not).
 *
 * @module
 */
import { fromPromise, type PromiseActorLogic } from 'xstate';
import type { CALL_SLOTS, PlannedCall } from './calls/index.js';
import type { AgentDeadlineInput } from './agent-deadline.js';
import type { CallResult } from './calls/kind.js';
import type { HistoryInput, MadeSummary } from './history.js';
import type { ChatMessage, ModelResponse } from './messages.js';
import type { HandoffTarget, StepVerdict } from './plan.js';

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
  /** Tools approved for the rest of the run (`approve(id, { always: true })`): never gated again. */
  approvedTools?: string[];
  /** The speaker's history policy and summary so far, when it has a policy (`history.ts`). */
  history?: HistoryInput;
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
  /** The name of the model that answered (`Model.name`), recorded in the step's `internal:llm-call` event. */
  model?: string;
  /**
   * When the response was taken (ms since the epoch): the calls it plans count their deadlines
   * (`timeoutMs`) from it. Carried into the round, so a restored call keeps its deadline.
   */
  at?: number;
  /** A summary of older turns made for this step (`'summarize'` policy): recorded before the step's own call. */
  summary?: MadeSummary;
}

/** The actor logic behind each key the swarm machine declares, as `actors/` implements it. */
export type SwarmActors = {
  modelStep: PromiseActorLogic<ModelStepOutput, ModelStepInput>;
  /** An agent's deadline (`agent-deadline.ts`); default the live timer (`actors/agent-deadline.ts`). */
  agentDeadline?: PromiseActorLogic<CallResult, AgentDeadlineInput>;
} & {
  [K in keyof typeof CALL_SLOTS]: (typeof CALL_SLOTS)[K];
};

/** Slot of a model call and the judgement of its response (swarm and agent machines). */
export const modelStepSlot = fromPromise<ModelStepOutput, ModelStepInput>(async () => {
  throw new Error('modelStep is provided by the runtime');
});
