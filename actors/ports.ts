/**
 * The ports through which actors reach the outside world. The runtime implements them; actors
 * never import the runtime (arrows point src → actors → machines).
 *
 * @module
 */
import type { ChatMessage, ModelResponse, ToolSpec } from '../machines/messages.js';
import type { ModelStepInput } from '../machines/contracts.js';
import type { ToolRunInput } from '../machines/calls/tool.js';
import type { RemoteAgentInput } from '../machines/calls/remote.js';
import type { ChildSwarmInput } from '../machines/calls/swarm.js';
import type { CallResult } from '../machines/calls/kind.js';

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
  /** Executes a tool with validated arguments. */
  executeTool(input: ToolRunInput, args: unknown, signal: AbortSignal): Promise<unknown>;
  /**
   * Publishes a streamed text chunk of `speaker`'s model call. `first` marks the first chunk of
   * a call attempt: it replaces what an interrupted attempt streamed before.
   */
  onText(swarmId: string, speaker: string, turn: number, chunk: string, first: boolean): void;
  /** Resolves once everything the swarm recorded so far is durable. */
  durable(swarmId: string): Promise<void>;
}
