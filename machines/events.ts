/**
 * The swarm event model: one ordered stream per swarm, made of A2A v0.3 objects.
 *
 * A public event is an A2A `Task`, `TaskStatusUpdateEvent` or `TaskArtifactUpdateEvent`, as the
 * A2A v0.3 JSON schema defines them, plus two fields of ours (`seq`, `swarmId`; A2A allows
 * extra fields): any A2A consumer reads the stream as it is. `internal:*` events are ours, for
 * observability and replay; they never leave over A2A.
 *
 * Machines emit {@link SwarmEventBody} values (built in `event-builders.ts`): the A2A object without what only the runtime
 * knows (the task and context ids, the time, the sequence number). The runtime stamps each body
 * in one place (`stampEvent` in `src/events/stamp.ts`) to make a {@link SwarmEvent}, persists it, and
 * hands it to subscribers.
 *
 * `src/events/schema.ts` describes the same model as a zod schema, for events read from outside;
 * it fails to compile unless it is exactly these types, so a change here goes there too.
 *
 * @module
 */
import type { ModelResponse, Usage } from './messages.js';
import type { UsageByModel } from './usage.js';
import type { LIMIT_PAUSE, LimitTrip, PauseType } from './pause.js';
import type { BudgetCaps } from './budget.js';
import type { StepVerdict } from './plan.js';
import type { PlannedCall } from './calls/index.js';
import type { GUARDRAIL_PAUSE, GuardrailRejection } from './guardrail.js';
import type { ApprovalAnswer, PendingApproval } from './approvals.js';

/**
 * The A2A v0.3 task states xswarm uses (`running` → working, `paused` → input-required, `stopped` → canceled,
 * `failed` by a guardrail's rejection → rejected).
 */
export type TaskState = 'submitted' | 'working' | 'input-required' | 'completed' | 'failed' | 'canceled' | 'rejected';

/** Why a swarm is paused. */
export interface PauseReason {
  type: PauseType | typeof LIMIT_PAUSE | typeof GUARDRAIL_PAUSE;
  message: string;
  pendingApprovalId?: string;
  /**
   * For an `APPROVAL_NEEDED` pause the runtime made (a tool with `needsApproval`): every call
   * still waiting for `approve`/`reject`, the first one's id also in `pendingApprovalId`.
   */
  pendingApprovals?: PendingApproval[];
  /** For a {@link LIMIT_PAUSE}: what tripped. */
  limit?: LimitTrip;
  /** For a {@link GUARDRAIL_PAUSE}: which guardrail paused the swarm, at which step. */
  guardrail?: GuardrailRejection;
  /**
   * The pause's id, which a resume may name (`resume(answer, { pauseId })`) and which a stale
   * one does not match: a model's pause is named by its call id; one from outside or at a limit
   * gets `pause:t<turn>:<n>` / `limit:t<turn>:<n>` from the machine. Absent only on pauses
   * stored before pauses had ids.
   */
  pauseId?: string;
  /**
   * The JSON Schema (an object, as `z.toJSONSchema` writes it) the answer must match: with one,
   * a resume is validated against it and the model reads the answer as JSON.
   */
  responseSchema?: Record<string, unknown>;
}

/**
 * The swarm-level facts carried in `metadata` of a status update, discriminated by `type`:
 * what happened, for programs (the status message, when there is one, says it for people).
 */
export type SwarmFact =
  | { type: 'started'; definitionId: string }
  | { type: 'agent-handoff'; from: string; to: string; callId: string; request: string }
  | { type: 'swarm-handoff'; from: string; to: string; childSwarmId: string; callId: string; input: unknown }
  | {
      type: 'handoff-result';
      from: string;
      to: string;
      callId: string;
      ok: boolean;
      childSwarmId?: string;
      /** What the orchestrator reads as the handoff's tool result (the replay journal). */
      content: string;
      key: string;
      /**
       * A child swarm's rolled-up usage by model (or a remote peer's, when it reported one),
       * counted once in the parent's usage with this result; a replay reads it from here.
       */
      usage?: UsageByModel;
      /** The handoff timed out with `onTimeout: 'fail'`: the swarm failed with it. */
      failsSwarm?: true;
    }
  | {
      type: 'child-swarm';
      childSwarmId: string;
      definitionId: string;
      callId: string;
      lifecycle: 'started' | 'paused' | 'resumed' | 'completed' | 'failed' | 'stopped';
      reason?: string;
      /** The `seq` of the child's own event this relays (a restarted parent resumes after it). */
      childSeq: number;
    }
  | { type: 'tool-call'; agent: string; toolName: string; callId: string }
  | { type: 'turn-completed'; turn: number; maxTurns: number; activeAgent: string }
  | { type: 'paused'; reason: PauseReason }
  | { type: 'resumed'; message?: string }
  /** A client raised the swarm's limits (`client.extend`): what they are now. */
  | { type: 'extended'; maxTurns: number; previousMaxTurns: number; budget?: BudgetCaps }
  /**
   * The runtime migrated the stored run from definition version `from` to `to` with the
   * definition's `migrate` (after a deploy): it continues on `to`.
   */
  | { type: 'migrated'; definitionId: string; from: number; to: number }
  /** A client approved or rejected a gated tool call (`client.approve` / `client.reject`). */
  | ({ type: 'approval' } & ApprovalAnswer)
  | { type: 'completed'; result: unknown }
  /**
   * The swarm failed; `rejected` says which guardrail rejected it (its A2A state is then
   * `rejected`); `error` says what kind of failure it is, recorded where it happened (absent
   * on failures recorded before it was).
   */
  | { type: 'failed'; reason: string; rejected?: GuardrailRejection; error?: SwarmFailure }
  | { type: 'stopped'; reason: string }
  /**
   * This swarm is a fork of another (`runtime.fork`): its events up to `forkedFrom.seq` are that
   * swarm's, replayed with no model or tool call; it runs live from here on. `sideEffects` lists
   * the source's calls after the fork point, which this branch may make again under new keys.
   */
  | { type: 'forked'; forkedFrom: { swarmId: string; seq: number }; turn: number; instructions?: string; sideEffects: ForkedCall[] };

/**
 * A call with side effects the source of a fork recorded after the fork point (a tool call, or a
 * child swarm started): the fork's branch may make it again, under its own idempotency key.
 */
export interface ForkedCall {
  /** A tool call, or a handoff to a child swarm (which runs its own tools). */
  kind: 'tool' | 'swarm';
  /** The tool's name, or the child swarm's definition id. */
  name: string;
  /** The call's id, as the model named it. */
  callId: string;
  /** Who made the call: the orchestrator (the swarm's definition id) or an agent. */
  agent: string;
  /** The call's arguments as the model wrote them (JSON text; a child swarm's input as JSON). */
  arguments: string;
  /** The seq of the recorded call in the source (its `internal:tool-start`, or its `swarm-handoff`). */
  seq: number;
  /** The seq of its recorded result in the source, when it completed there. */
  completedSeq?: number;
  /** The idempotency key it had in the source. */
  key: string;
  /** The idempotency key the same call has in the fork (it differs: the fork is a new swarm). */
  newKey: string;
}

/**
 * The kind of a swarm's failure: `guardrail` (a guardrail rejected the input, a response, a tool
 * call or the result), `model-call` (the model call failed), `max-turns` (the turn limit with
 * `onLimit: 'fail'`), `timeout` (a call past its deadline with `onTimeout: 'fail'`), `gave-up`
 * (the model called `fail`), `runtime` (the runtime could not go on: a crash, a store that
 * failed).
 */
export type SwarmFailureKind = 'guardrail' | 'model-call' | 'max-turns' | 'timeout' | 'gave-up' | 'runtime';

/** What a failure is, recorded with it: its kind, its reason, the guardrail that rejected the swarm. */
export interface SwarmFailure {
  kind: SwarmFailureKind;
  /** The failure's reason (the fact's `reason`). */
  message: string;
  /** The guardrail that rejected the swarm, for a `guardrail` failure. */
  guardrail?: string;
}

/** An A2A text part. */
export interface TextPart {
  kind: 'text';
  text: string;
  metadata?: Record<string, unknown>;
}

/**
 * An A2A data part. A2A v0.3 requires `data` to be an object: a value that is not one (an
 * array, a number, a boolean, null) travels as `{ value }` with `metadata.data_part_compat`
 * set, the convention of the A2A JavaScript SDK, whose v1.0 translation unwraps it again.
 */
export interface DataPart {
  kind: 'data';
  data: Record<string, unknown>;
  metadata?: Record<string, unknown>;
}

/**
 * An A2A v0.3 file part: its content as `bytes` (base64) or a `uri`, with its name and media
 * type. A run's input keeps the files of the message that started it; a tool's files become an
 * artifact (see `file-parts.ts`).
 */
export interface FilePart {
  kind: 'file';
  file: { name?: string; mimeType?: string; bytes: string } | { name?: string; mimeType?: string; uri: string };
  metadata?: Record<string, unknown>;
}

/** A part of a message or an artifact (file parts only in a run's input and a tool's files). */
export type Part = TextPart | DataPart | FilePart;

/** An A2A message: the human's input, a question, an answer, a result, a reason. */
export interface Message {
  kind: 'message';
  role: 'agent' | 'user';
  /** `<swarm id>#<seq>` of the event that carries it: stable, so re-reading never duplicates it. */
  messageId: string;
  parts: Part[];
  taskId: string;
  contextId: string;
}

/**
 * An A2A artifact: the result (`artifactId: 'result'`), a stream of model text (`name: 'stream'`)
 * or a tool's files (`artifactId: 'tool:<callId>'`, with a `description` and `metadata`
 * naming the tool and the call).
 */
export interface Artifact {
  artifactId: string;
  name?: string;
  description?: string;
  metadata?: Record<string, unknown>;
  parts: Part[];
}

/**
 * What a caller named a run (an ad-hoc swarm's `name`, `description` and `componentId`): shown
 * by listings, the inspector and the CLI, and carried by the run's `task` event.
 */
export interface SwarmLabel {
  name?: string;
  description?: string;
  /** An id the caller chose for the component (a feature, a job, a UI widget) that started the run. */
  componentId?: string;
}

/**
 * The first event of every swarm: the A2A `Task`, submitted, with the input as the first
 * message of its history.
 */
export interface TaskEvent {
  kind: 'task';
  /** The task id: the swarm id. */
  id: string;
  contextId: string;
  status: { state: 'submitted'; timestamp: string };
  history?: Message[];
  /** `label`: what the caller named the run, when it did (runs recorded before named runs never carry it). */
  metadata: { definitionId: string; label?: SwarmLabel };
  seq: number;
  swarmId: string;
}

/**
 * An A2A `TaskStatusUpdateEvent`. `metadata` is the {@link SwarmFact}; `status.message` says
 * it for a person when there is something to say (a pause's question, the human's answer, the
 * result, the failure or stop reason). The final event (`final: true`) is the last of the
 * stream and always carries a message.
 */
export interface StatusUpdateEvent {
  kind: 'status-update';
  taskId: string;
  contextId: string;
  status: { state: TaskState; timestamp: string; message?: Message };
  final: boolean;
  metadata: SwarmFact;
  seq: number;
  swarmId: string;
}

/** An A2A `TaskArtifactUpdateEvent`: the result, or a chunk of streamed model text. */
export interface ArtifactUpdateEvent {
  kind: 'artifact-update';
  taskId: string;
  contextId: string;
  artifact: Artifact;
  append?: boolean;
  lastChunk?: boolean;
  /** Who streamed a chunk, in which of its turns. */
  metadata?: { agent: string; turn: number };
  seq: number;
  swarmId: string;
}

/** An event any A2A consumer can read: a task, a status update or an artifact update. */
export type PublicSwarmEvent = TaskEvent | StatusUpdateEvent | ArtifactUpdateEvent;

/**
 * Internal observability payloads. They are part of the stream (and persisted) but never leave
 * over A2A.
 */
export type InternalEventBody =
  | {
      kind: 'internal:llm-call';
      agent: string;
      /** '' for the orchestrator; the handoff's scope for an agent (tells parallel agents apart). */
      scope: string;
      turn: number;
      response: ModelResponse;
      usage?: Usage;
      /** The model that answered (`Model.name`); absent in events recorded before models were named. */
      model?: string;
      durationMs: number;
      /** The calls the runtime planned from the response and its verdict: the replay journal. */
      calls: PlannedCall[];
      verdict: StepVerdict;
      /**
       * Set on a summary call (a `'summarize'` history policy): the summary (`response.text`)
       * covers the speaker's messages before index `upTo`. Recorded before its step's own call.
       */
      summary?: { upTo: number };
    }
  | { kind: 'internal:tool-start'; agent: string; toolName: string; callId: string; arguments: string }
  | {
      kind: 'internal:tool-complete';
      agent: string;
      toolName: string;
      callId: string;
      ok: boolean;
      content: string;
      /** The call's idempotency key ('' for calls rejected before running). */
      key: string;
      /** The call timed out with `onTimeout: 'fail'`: the swarm failed with it. */
      failsSwarm?: true;
      /** The files the tool returned (its artifact's parts): a replay emits that artifact again. */
      files?: FilePart[];
    }
  | { kind: 'internal:checkpoint'; step: CheckpointStep };

/** An internal event as stored: its body, numbered, with the time in milliseconds since the epoch. */
export type InternalEvent = InternalEventBody & { seq: number; swarmId: string; timestamp: number };

/** The kinds of completed steps after which the swarm is persisted. */
export type CheckpointStep = 'start' | 'model-response' | 'tool-result' | 'handoff-result' | 'agent-step' | 'pause' | 'resume' | 'extend' | 'stop' | 'approval';

/** A message as a machine says it: the runtime adds its id and the task and context ids. */
export type MessageBody = Omit<Message, 'messageId' | 'taskId' | 'contextId'>;

/**
 * An event as a machine emits it: the A2A object without the task and context ids, the
 * timestamps and the sequence number, which the runtime stamps.
 */
export type SwarmEventBody =
  | { kind: 'task'; status: { state: 'submitted' }; history?: MessageBody[]; metadata: { definitionId: string; label?: SwarmLabel } }
  | { kind: 'status-update'; status: { state: TaskState; message?: MessageBody }; final: boolean; metadata: SwarmFact }
  | Omit<ArtifactUpdateEvent, 'taskId' | 'contextId' | 'seq' | 'swarmId'>
  | InternalEventBody;

/** Fields the runtime adds to every event, public or internal. */
export interface EventStamp {
  /** 1, 2, 3 … per swarm, without gaps. */
  seq: number;
  swarmId: string;
}

/**
 * One event of a swarm's stream.
 *
 * @example
 * for await (const e of client.events()) {
 *   if (e.kind === 'status-update') console.log(e.status.state, e.metadata.type);
 * }
 */
export type SwarmEvent = PublicSwarmEvent | InternalEvent;

/** Names of the swarm facts, for {@link SwarmFact} narrowing helpers. */
export type SwarmFactType = SwarmFact['type'];

/**
 * The version of the stored event format: 1 was xswarm's own A2A-like shape (`state` and a
 * numeric `timestamp` at the top), 2 is the A2A v0.3 objects. Stores refuse events of another
 * format instead of misreading them.
 */
export const EVENT_FORMAT = 2;

/** The flag of a data part whose value is wrapped as `{ value }` (see {@link DataPart}). */
export const DATA_PART_COMPAT_FLAG = 'data_part_compat';
