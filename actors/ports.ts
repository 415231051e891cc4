/**
 * The ports through which actors reach the outside world. The runtime implements them; actors
 * never import the runtime (arrows point src → actors → machines).
 *
 * @module
 */
import type { ChatMessage, ModelResponse, ToolSpec, Usage } from '../machines/messages.js';
import type { ModelStepInput } from '../machines/contracts.js';
import type { ToolRunInput } from '../machines/calls/tool.js';
import type { RemoteAgentInput } from '../machines/calls/remote.js';
import type { ChildSwarmInput } from '../machines/calls/swarm.js';
import type { CallResult } from '../machines/calls/kind.js';
import type { GuardrailAction, GuardrailStep } from '../machines/guardrail.js';

/** Whose step a guardrail guards: the orchestrator's (`speaker` is the definition id) or an agent's. */
export interface GuardSite {
  definitionId: string;
  swarmId: string;
  speaker: string;
  orchestrator: boolean;
}

/** A guardrail's rejection: which guardrail, why, and what the rejection does. */
export interface GuardDecision {
  guardrail: string;
  reason: string;
  action: GuardrailAction;
}

/**
 * One call to a model. `agentId` is the swarm definition id when the orchestrator speaks and
 * the agent id when an agent does. `onText` receives streamed text chunks when the model
 * streams; a model that does not stream may ignore it.
 */
export interface ModelRequest {
  agentId: string;
  swarmId: string;
  messages: readonly ChatMessage[];
  tools: readonly ToolSpec[];
  signal: AbortSignal;
  onText?: (chunk: string) => void;
  /**
   * Set on the calls the runtime makes for itself: `'summary'` asks for a summary of older turns
   * (a `history: { strategy: 'summarize' }` policy); absent on a speaker's own turns.
   */
  purpose?: 'summary';
  /**
   * The most output tokens the call may produce: set when a budget reserved the call's worst
   * case with this ceiling, so a model should pass it on to its provider (OpenAI: `max_tokens`).
   */
  maxOutputTokens?: number;
}

/**
 * A call's hold on its budgets, to settle once the call ended: with the usage the model
 * reported, else (it failed, or reported none) at the worst case reserved.
 */
export type BudgetSettle = (usage?: Usage) => void;

/** A model call's reservation: how to settle it, and the output ceiling it was reserved with. */
export interface ModelCallHold {
  settle: BudgetSettle;
  maxOutputTokens: number;
}

/**
 * Anything that can answer a {@link ModelRequest}. Implementations must honour `signal`
 * (pause and stop abort the in-flight call), must not mutate the request, and must throw on
 * failure; the runtime turns a thrown error into a failed swarm or a failed handoff.
 *
 * @example
 * import type { Model } from 'xswarm';
 * const echo: Model = { name: 'echo', call: async (req) => ({ text: req.messages.at(-1)?.content ?? '' }) };
 */
export interface Model {
  readonly name: string;
  /**
   * Credentials this model holds (an API key): the runtime redacts them from everything it
   * persists, since providers may echo them in error messages.
   */
  readonly secrets?: readonly string[];
  call(request: ModelRequest): Promise<ModelResponse>;
}

/** A check's outcome: the parsed value, or an error text meant for the model. */
export type Checked = { ok: true; value: unknown } | { ok: false; error: string };

/**
 * What the runtime offers actors. Every method is keyed by ids found in the actor's input,
 * so a restored actor reaches the same definitions as the original.
 */
export interface SwarmPorts {
  /** The model that answers `speaker` (an agent's own model, else the runtime's). */
  modelFor(definitionId: string, speaker: string): Model;
  /** Every tool the model may call in this step: tools, handoffs and built-ins. */
  toolSpecs(input: ModelStepInput): readonly ToolSpec[];
  /** Validates a regular tool's parsed arguments against its schema. */
  checkToolArgs(name: string, args: unknown): Checked;
  /** Validates a final result against the swarm's result schema. */
  checkResult(definitionId: string, swarmId: string, value: unknown): Checked;
  /** Whether the swarm's result is plain text (clean text completes it). */
  resultIsText(definitionId: string, swarmId: string): boolean;
  /**
   * Turns a swarm handoff's arguments (without `customization`) into the child's input and
   * validates it against the child's input schema.
   */
  childInput(definitionId: string, args: Record<string, unknown>): Checked;
  /** Validates a customization: its shape, and that every agent and tool it adds exists. */
  checkCustomization(value: unknown): Checked;
  /** Whether a swarm definition accepts customization through the swarm registry. */
  isCustomizable(definitionId: string): boolean;
  /**
   * Why a model's `pause` call cannot ask for an answer of this JSON Schema (`response_schema`),
   * or undefined when it can. Without it, any JSON object is taken as a schema.
   */
  responseSchemaProblem?(schema: Record<string, unknown>): string | undefined;
  /**
   * A tool's approval rule (`tool({ needsApproval })`), or undefined when its calls need none (as
   * for most tools: then nothing is evaluated).
   */
  approvalRule?(name: string): ((args: unknown, ctx: { swarmId: string; agentId: string; toolCallId: string }) => boolean | Promise<boolean>) | undefined;
  /** A tool's `timeoutMs`, if it has one. */
  toolTimeoutMs(name: string): number | undefined;
  /** A tool's `onTimeout`, if it has one (absent: `'result'`). */
  toolOnTimeout?(name: string): 'result' | 'fail' | undefined;
  /** A swarm definition's own `timeoutMs` as a child (a definition of this runtime), if it has one. */
  swarmTimeoutMs(definitionId: string): number | undefined;
  /** A swarm definition's own `onTimeout` as a child, if it has one (absent: `'result'`). */
  swarmOnTimeout?(definitionId: string): 'result' | 'fail' | undefined;
  /**
   * How long one model call may take (the runtime's `modelTimeoutMs`), if bounded: past it the
   * call's signal aborts and the call fails.
   */
  readonly modelTimeoutMs?: number;
  /** Starts (or re-attaches to) a child swarm and resolves with its outcome. */
  runChild(input: ChildSwarmInput, signal: AbortSignal): Promise<CallResult>;
  /** Sends a request to a remote A2A agent and resolves with its answer. */
  runRemote(input: RemoteAgentInput, signal: AbortSignal): Promise<CallResult>;
  /**
   * Runs the input guardrails; a string is the rejection reason. Answers at once (no promise)
   * when there are none, as for most swarms.
   */
  guardInput(definitionId: string, swarmId: string): string | undefined | Promise<string | undefined>;
  /** Runs the output guardrails on a result about to complete the swarm (at once when there are none). */
  guardOutput(definitionId: string, swarmId: string, result: unknown): string | undefined | Promise<string | undefined>;
  /**
   * Runs the guardrails of `step` for `site` on `value` (the model response, the tool call
   * `{ name, arguments, callId, agentId }` with its arguments as the JSON text the model sent,
   * which the ports parse for the guardrails, or the result; the input's are read from the swarm)
   * and returns the first rejection. Answers at once with undefined when there are none, as for
   * most swarms. Without it, only `guardInput` and `guardOutput` run, and they reject.
   */
  guard?(step: GuardrailStep, site: GuardSite, value: unknown): GuardDecision | undefined | Promise<GuardDecision | undefined>;
  /** Executes a tool with validated arguments. */
  executeTool(input: ToolRunInput, args: unknown, signal: AbortSignal): Promise<unknown>;
  /**
   * Publishes a streamed text chunk of `speaker`'s model call. `first` marks the first chunk of
   * a call attempt: it replaces what an interrupted attempt streamed before.
   */
  onText(swarmId: string, speaker: string, turn: number, chunk: string, first: boolean): void;
  /**
   * Told that `speaker`'s model call of `turn` streamed its last chunk (the call returned after
   * streaming text): the stream's last artifact update carries `lastChunk: true`, as A2A expects.
   * Optional: without it a stream simply never says it ended.
   */
  onTextEnd?(swarmId: string, speaker: string, turn: number): void;
  /** Resolves once everything the swarm recorded so far is durable. */
  durable(swarmId: string): Promise<void>;
  /**
   * Told that a model, tool or remote call of `swarmId` passed its durability gate and begins its
   * work; returns what to call once that work has settled. A draining runtime waits for the
   * calls in flight to end (their results committed) before it lets its swarms go. Optional.
   */
  callBegins?(swarmId: string): () => void;
  /**
   * Reserves a model call's worst case (its prompt estimated, plus the output ceiling) against
   * every budget the swarm draws from, before the call is made. Undefined, at once, when no
   * budget applies; the hold itself, at once, when a ledger that answers at once grants it. While a cap would be exceeded it does not resolve: the swarm pauses at its
   * limit and the reservation is tried again once it is resumed; it rejects under
   * `onLimit: 'fail'`, and for a model without a price under a `usd` cap.
   */
  reserveModelCall?(input: ModelStepInput, model: string, tools: readonly ToolSpec[], signal: AbortSignal): ModelCallHold | Promise<ModelCallHold> | undefined;
  /** Reserves one tool call against the swarm's `toolCalls` caps, as {@link reserveModelCall} does. */
  reserveToolCall?(input: ToolRunInput, signal: AbortSignal): Promise<BudgetSettle> | undefined;
  /**
   * Runs a step's model call (`work`) inside a trace span of its own (`createRuntime({ tracing })`),
   * its span's context active while it runs. Absent (no tracing, and in a replay): the call is made
   * as it is. `purpose` marks a history policy's summary call (made for the step `input`).
   */
  traceModelCall?(input: ModelStepInput, model: string, work: () => Promise<TracedModelCall>, purpose?: 'summary'): Promise<TracedModelCall>;
  /** Runs a tool call (`work`) inside a trace span of its own, as {@link traceModelCall} does. */
  traceToolCall?(input: ToolRunInput, work: () => Promise<CallResult>): Promise<CallResult>;
}

/** What a traced model call resolves with: the raw response (its usage and tool calls go on the span). */
export interface TracedModelCall {
  raw: ModelResponse;
  durationMs: number;
}
