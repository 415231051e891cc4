/**
 * The A2A request handler of one swarm definition, backed by the runtime: a task is a swarm.
 *
 * It implements the SDK's `A2ARequestHandler` interface, so the SDK's own transports (v1.0
 * JSON-RPC and the v0.3 compat layer) drive it. It does not use the SDK's
 * `DefaultRequestHandler` + `AgentExecutor`: that handler keeps its own copy of every task in
 * a `TaskStore` that it rebuilds from the events an executor publishes on an in-process bus,
 * while here the swarm's persisted, numbered event log already is the task. Tasks are
 * therefore read from the log (so they survive restarts and include swarms started over REST
 * or MCP), and every stream is "a snapshot at sequence N, then the events after N": concurrent
 * streams of one task see the same events in the same order, and none is lost or repeated.
 *
 * Ids: taskId = swarmId. A new task's id is derived from the definition id and the message id,
 * so re-sending a message (a client retrying after a crash) reaches the same task instead of
 * starting a second swarm. contextId = the client's contextId when its first message has one,
 * else the task id; the swarm keeps it with its state (every event carries it), so it survives
 * restarts and a follow-up naming another context is refused.
 *
 * @module
 */
import { createHash } from 'node:crypto';
import type {
  AgentCard,
  CancelTaskRequest,
  DeleteTaskPushNotificationConfigRequest,
  GetExtendedAgentCardRequest,
  GetTaskPushNotificationConfigRequest,
  GetTaskRequest,
  ListTaskPushNotificationConfigsRequest,
  ListTaskPushNotificationConfigsResponse,
  ListTasksRequest,
  ListTasksResponse,
  Message,
  SendMessageRequest,
  StreamResponse,
  SubscribeToTaskRequest,
  Task,
  TaskPushNotificationConfig,
} from '@a2a-js/sdk';
import { Role, TaskState } from '@a2a-js/sdk';
import { PushNotificationNotSupportedError, RequestMalformedError, TaskNotCancelableError, TaskNotFoundError, UnsupportedOperationError } from '@a2a-js/sdk/errors';
import type { A2ARequestHandler, ServerCallContext } from '@a2a-js/sdk/server';
import { answerOf, raiseLimits, resumeWith } from './answers.js';
import type { PushDelivery } from './push-delivery.js';
import { PushConfigs } from './push-configs.js';
import type { SwarmEvent } from '../../../machines/events.js';
import { abortable, untilAborted } from '../../util/abort.js';
import { lastStoredSeq } from '../../events/cursor.js';
import { SwarmError } from '../../errors.js';
import { answerApprovals, approvalAnswers, untilInputOrEnd } from './approval-answers.js';
import type { SwarmResult } from '../../store/result.js';
import type { UsageReport } from '../../usage/report.js';
import type { Runtime } from '../../runtime/types.js';
import { storedPages } from '../../store/pages.js';
import { CorruptEventError, type SwarmSummary } from '../../store/types.js';
import { MAX_DERIVED_SWARM_ID_LENGTH, swarmIdProblem } from '../../define/swarm-id.js';
import { withCallerTrace } from './trace-context.js';
import {
  endsInteraction,
  endsStream,
  inputFromMessage,
  inputPartsOf,
  statusToA2AState,
  taskFromEvents,
  TERMINAL_STATES,
  textMessage,
  toStreamResponse,
  type TaskIds,
} from '../../a2a/mapping.js';
import { type FailureError, type ResultDetails, resultDetails, withDetails } from '../../a2a/details.js';

/** Key in `ServerCallContext.state` of an AbortSignal that fires when the HTTP client goes away. */
export const REQUEST_SIGNAL_KEY = 'xswarm.requestSignal';

const DEFAULT_PAGE_SIZE = 50;
const MAX_CACHED_CONTEXTS = 100_000;
/** The longest contextId a client may give a new task (it is stamped on every event). */
const MAX_CONTEXT_ID_LENGTH = 256;

/**
 * The context ids of tasks, read from their stored task events (where they live durably) and
 * cached: a task's context never changes, so ListTasks filters by context without reading
 * every task's events again. Shared by every definition's handler of one server.
 */
export class ContextIds {
  private readonly byTask = new Map<string, string>();

  /** The context of a task, from its first event (the task id when that cannot be read). */
  async of(store: Runtime['store'], taskId: string): Promise<string> {
    const known = this.byTask.get(taskId);
    if (known !== undefined) return known;
    const first = (await store.readEvents(taskId, 0, 1).catch((e: unknown) => (e instanceof CorruptEventError ? e.readable : [])))[0];
    if (first?.kind !== 'task') return taskId;
    this.byTask.set(taskId, first.contextId);
    // Bounded: the oldest entries go first (read again when asked for).
    if (this.byTask.size > MAX_CACHED_CONTEXTS) this.byTask.delete(this.byTask.keys().next().value!);
    return first.contextId;
  }
}

/**
 * The task id of a new task: a UUID-shaped (version 8) hash of the definition id and the
 * message id. A2A message ids are unique per message, so equal ids mean a re-sent message.
 */
export function taskIdFor(definitionId: string, messageId: string): string {
  const h = createHash('sha256').update(`xswarm.a2a\0${definitionId}\0${messageId}`).digest();
  h[6] = (h[6]! & 0x0f) | 0x80;
  h[8] = (h[8]! & 0x3f) | 0x80;
  const x = h.subarray(0, 16).toString('hex');
  return `${x.slice(0, 8)}-${x.slice(8, 12)}-${x.slice(12, 16)}-${x.slice(16, 20)}-${x.slice(20, 32)}`;
}

/** Where an accepted message leaves its task: the events after `cursor` are this interaction's. */
interface Accepted {
  ids: TaskIds;
  cursor: number;
  /** A resumed task is followed even though the snapshot at `cursor` says input-required. */
  resumed: boolean;
}

/** The `A2ARequestHandler` of one swarm definition. */
export class SwarmRequestHandler implements A2ARequestHandler {
  private readonly runtime: Runtime;
  private readonly definitionId: string;
  private readonly card: () => AgentCard;
  private readonly contexts: ContextIds;
  private readonly structuredInput: boolean;
  private readonly details: ResultDetails;
  /** Push notifications (push-configs.ts); without them, the config methods are not supported. */
  private readonly push: PushConfigs | undefined;

  constructor(options: { runtime: Runtime; definitionId: string; card: () => AgentCard; contexts: ContextIds; push?: PushDelivery }) {
    this.runtime = options.runtime;
    this.definitionId = options.definitionId;
    this.card = options.card;
    this.contexts = options.contexts;
    this.push = options.push ? new PushConfigs(options.push, options.definitionId) : undefined;
    const summary = this.runtime.definitions().find((c) => c.id === this.definitionId);
    this.structuredInput = summary?.inputSchema.type !== 'string';
    this.details = resultDetails(summary ? [summary] : [], this.definitionId);
  }

  async getAgentCard(): Promise<AgentCard> {
    return this.card();
  }

  async getAuthenticatedExtendedAgentCard(_params: GetExtendedAgentCardRequest, _context: ServerCallContext): Promise<AgentCard> {
    throw new UnsupportedOperationError('Agent does not support authenticated extended card.');
  }

  /**
   * Starts a swarm (new message), resumes it (follow-up to an input-required task), and
   * returns the task once it is completed, failed, canceled or input-required; at once with
   * `returnImmediately`.
   */
  async sendMessage(params: SendMessageRequest, context: ServerCallContext): Promise<Task> {
    // A swarm the message starts continues the caller's trace (trace-context.ts).
    const accepted = await withCallerTrace(context, () => this.acceptWithPush(params, context));
    if (!params.configuration?.returnImmediately) {
      // wait() resolves when the swarm is paused or has ended: the A2A "blocking" contract.
      // A child swarm asking for approvals makes the task input-required too (approval-answers.ts).
      await abortable(untilInputOrEnd(this.runtime.forSwarm(this.definitionId, accepted.ids.taskId), accepted.cursor, signalOf(context)), signalOf(context));
    }
    const { task } = await this.snapshot(accepted.ids);
    return withHistoryLength(await taskWithUsage(task, this.runtime.forSwarm(this.definitionId, accepted.ids.taskId)), params.configuration?.historyLength);
  }

  /**
   * Like {@link sendMessage}, streamed: the task as it was when the message arrived, then one
   * update per swarm event, ending after the event that completes, fails, cancels or pauses it.
   */
  async *sendMessageStream(params: SendMessageRequest, context: ServerCallContext): AsyncGenerator<StreamResponse, void, undefined> {
    // A swarm the message starts continues the caller's trace (trace-context.ts).
    const accepted = await withCallerTrace(context, () => this.acceptWithPush(params, context));
    const { task } = await this.snapshot(accepted.ids, accepted.cursor);
    yield { payload: { $case: 'task', value: withHistoryLength(task, params.configuration?.historyLength) } };
    // A re-sent message reaches a task that may have finished or paused since: nothing follows.
    if (!accepted.resumed && endsInteraction(stateOf(task))) return;
    yield* this.follow(accepted.ids, accepted.cursor, signalOf(context));
  }

  async getTask(params: GetTaskRequest, _context: ServerCallContext): Promise<Task> {
    const ids = await this.locate(params.id);
    const { task } = await this.snapshot(ids);
    return withHistoryLength(await taskWithUsage(task, this.runtime.forSwarm(this.definitionId, ids.taskId)), params.historyLength);
  }

  /**
   * This definition's tasks, most recently updated first. Filters (status, time) apply to the
   * swarms as the runtime reports them; each listed task is then read from its events. A task
   * that cannot be read (a corrupt stored event, a swarm that cannot be restored) is listed,
   * not left out: as failed, its status message naming the problem, as GetTask answers for it.
   * (A status filter sees the swarm's own status: a finished swarm with a corrupt event is
   * found under its status, though it reads failed; reading every task's events to filter
   * would cost a full scan.)
   */
  async listTasks(params: ListTasksRequest, _context: ServerCallContext): Promise<ListTasksResponse> {
    const pageSize = params.pageSize ?? DEFAULT_PAGE_SIZE;
    if (!Number.isInteger(pageSize) || pageSize < 1 || pageSize > 100) throw new RequestMalformedError('pageSize must be between 1 and 100');
    if (params.status !== undefined && (params.status < 0 || params.status > TaskState.TASK_STATE_AUTH_REQUIRED)) {
      throw new RequestMalformedError(`Invalid status filter: ${String(params.status)}`);
    }
    const after = params.statusTimestampAfter ? Date.parse(params.statusTimestampAfter) : undefined;
    if (after !== undefined && Number.isNaN(after)) throw new RequestMalformedError('statusTimestampAfter must be a valid ISO 8601 date string');
    const offset = params.pageToken ? decodePageToken(params.pageToken) : 0;

    const matching: SwarmSummary[] = [];
    for (const s of await this.runtime.list({ definitionId: this.definitionId })) {
      if (params.status && statusToA2AState(s.status, 'rejected' in s.result) !== params.status) continue;
      if (after !== undefined && s.updatedAt <= after) continue;
      if (params.contextId && (await this.contextOf(s.swarmId)) !== params.contextId) continue;
      matching.push(s);
    }
    const page = matching.slice(offset, offset + pageSize);
    const tasks: Task[] = [];
    for (const s of page) {
      const { task } = await this.snapshot({ taskId: s.swarmId, contextId: await this.contextOf(s.swarmId) }, Infinity, s.result);
      if (!params.includeArtifacts) task.artifacts = [];
      tasks.push(withHistoryLength(task, params.historyLength));
    }
    const next = offset + page.length;
    return { tasks, nextPageToken: next < matching.length ? encodePageToken(next) : '', pageSize, totalSize: matching.length };
  }

  /** Stops the swarm; canceling a canceled task returns it, a completed or failed one cannot be. */
  async cancelTask(params: CancelTaskRequest, _context: ServerCallContext): Promise<Task> {
    const ids = await this.locate(params.id);
    const client = this.runtime.forSwarm(this.definitionId, ids.taskId);
    const result = await client.getResult();
    if (result.status === 'completed' || result.status === 'failed') throw new TaskNotCancelableError(`Task not cancelable: ${ids.taskId} (${result.status})`);
    if (result.status !== 'stopped') {
      try {
        await client.stop('canceled by an A2A client');
      } catch (e) {
        // Not driven by this runtime (another process owns it, or it could not be restored).
        throw new TaskNotCancelableError(`Task not cancelable: ${ids.taskId}: ${(e as Error).message}`);
      }
    }
    return (await this.snapshot(ids)).task;
  }

  /**
   * The task now, then its updates until it ends or asks for input. Subscribing to a finished
   * task is an error (as in the SDK); to an input-required one yields the snapshot and ends,
   * since nothing happens until someone answers.
   */
  async *resubscribe(params: SubscribeToTaskRequest, context: ServerCallContext): AsyncGenerator<StreamResponse, void, undefined> {
    const ids = await this.locate(params.id);
    const { task, seq, problem } = await this.snapshot(ids);
    if (problem) throw new UnsupportedOperationError(`Task ${ids.taskId} cannot be subscribed to: ${problem}`);
    const state = stateOf(task);
    if (TERMINAL_STATES.has(state)) {
      throw new UnsupportedOperationError(`Task ${ids.taskId} is in a terminal state (${TaskState[state]}) and cannot be subscribed to.`);
    }
    yield { payload: { $case: 'task', value: task } };
    if (endsInteraction(state)) return;
    yield* this.follow(ids, seq, signalOf(context));
  }

  /** Registers a webhook for the task's updates from now on (push-configs.ts). */
  async createTaskPushNotificationConfig(params: TaskPushNotificationConfig, context: ServerCallContext): Promise<TaskPushNotificationConfig> {
    const push = await this.pushConfigs();
    const ids = await this.locate(params.taskId);
    await push.check(params);
    const { status } = await this.runtime.forSwarm(this.definitionId, ids.taskId).getResult();
    const ended = status === 'completed' || status === 'failed' || status === 'stopped';
    return push.register(ids.taskId, params, context, await this.lastSeq(ids.taskId), ended);
  }

  async getTaskPushNotificationConfig(params: GetTaskPushNotificationConfigRequest, _context: ServerCallContext): Promise<TaskPushNotificationConfig> {
    const push = await this.pushConfigs();
    return push.get((await this.locate(params.taskId)).taskId, params.id);
  }

  async listTaskPushNotificationConfigs(params: ListTaskPushNotificationConfigsRequest, _context: ServerCallContext): Promise<ListTaskPushNotificationConfigsResponse> {
    const push = await this.pushConfigs();
    return push.list((await this.locate(params.taskId)).taskId);
  }

  async deleteTaskPushNotificationConfig(params: DeleteTaskPushNotificationConfigRequest, _context: ServerCallContext): Promise<void> {
    const push = await this.pushConfigs();
    push.delete((await this.locate(params.taskId)).taskId, params.id);
  }

  // ---- internals ----------------------------------------------------------------------

  /**
   * The ids of an existing task of this definition, or TaskNotFound. The id's type is checked
   * too: v0.3 requests reach the handler with their JSON values as sent (a number, an object).
   */
  private async locate(id: unknown): Promise<TaskIds> {
    if (id === undefined || id === null || id === '') throw new RequestMalformedError('Task ID is required');
    const problem = swarmIdProblem(id, MAX_DERIVED_SWARM_ID_LENGTH);
    if (problem) throw new RequestMalformedError(`Invalid task id: ${problem}`);
    const taskId = id as string;
    const record = await this.runtime.store.load(taskId);
    if (!record || record.definitionId !== this.definitionId) throw new TaskNotFoundError(`Task not found: ${taskId}`);
    return { taskId, contextId: await this.contextOf(taskId) };
  }

  /** The push configs, once their outbox can be read (a JetStream store's loads first). */
  private async pushConfigs(): Promise<PushConfigs> {
    if (!this.push) throw new PushNotificationNotSupportedError();
    await this.push.ready();
    return this.push;
  }

  /**
   * {@link accept}, with the webhook a message may carry: checked before the task starts (a
   * refused URL starts nothing), registered for the updates of this interaction on.
   */
  private async acceptWithPush(params: SendMessageRequest, context: ServerCallContext): Promise<Accepted> {
    const config = params.configuration?.taskPushNotificationConfig;
    if (!config) return this.accept(params);
    const push = await this.pushConfigs();
    await push.check(config);
    const accepted = await this.accept(params);
    push.register(accepted.ids.taskId, config, context, accepted.cursor);
    return accepted;
  }

  private contextOf(taskId: string): Promise<string> {
    return this.contexts.of(this.runtime.store, taskId);
  }

  /** Starts or resumes the swarm a message is for. */
  private async accept(params: SendMessageRequest): Promise<Accepted> {
    const message = params.message;
    if (!message) throw new RequestMalformedError('request.message is required.');
    if (!message.messageId) throw new RequestMalformedError('message.messageId is required.');
    if (message.taskId) return this.resume(message);

    const taskId = taskIdFor(this.definitionId, message.messageId);
    const existing = async (): Promise<Accepted> => ({ ids: { taskId, contextId: await this.contextOf(taskId) }, cursor: await this.lastSeq(taskId), resumed: false });
    if (await this.runtime.store.load(taskId)) return existing();
    // v0.3 requests reach the handler with their JSON values as sent.
    const contextId: unknown = message.contextId;
    if (contextId !== undefined && contextId !== '' && (typeof contextId !== 'string' || contextId.length > MAX_CONTEXT_ID_LENGTH)) {
      throw new RequestMalformedError(`message.contextId must be a string of at most ${MAX_CONTEXT_ID_LENGTH} characters`);
    }
    try {
      // A message with files: its task keeps them as sent, the model reads them as text.
      const inputParts = inputPartsOf(message);
      await this.runtime
        .forSwarm(this.definitionId, taskId)
        .run(inputFromMessage(message, this.structuredInput), { ...(contextId ? { contextId } : {}), ...(inputParts ? { inputParts } : {}) });
    } catch (e) {
      if (!(e instanceof SwarmError)) throw e;
      // Two deliveries of one message raced: the other one started it.
      if (/already in use/.test(e.message)) return existing();
      throw new RequestMalformedError(e.message);
    }
    // The first event is the task itself (submitted): everything after it is this interaction.
    return { ids: { taskId, contextId: contextId || taskId }, cursor: 1, resumed: false };
  }

  /** A follow-up message: resumes an input-required task with the message's answer. */
  private async resume(message: Message): Promise<Accepted> {
    const ids = await this.locate(message.taskId);
    if (message.contextId && message.contextId !== ids.contextId) {
      throw new RequestMalformedError(`contextId mismatch: message contextId '${message.contextId}' does not match task '${ids.taskId}' contextId '${ids.contextId}'`);
    }
    const client = this.runtime.forSwarm(this.definitionId, ids.taskId);
    const result = await client.getResult();
    if (result.status === 'completed' || result.status === 'failed' || result.status === 'stopped') {
      throw new UnsupportedOperationError(`Task ${ids.taskId} is in a terminal state (${result.status}) and cannot be modified.`);
    }
    // A running task whose child swarms wait for approvals takes their answers (approval-answers.ts).
    if (result.status !== 'paused' && !(result.status === 'running' && result.pendingApprovals?.length && approvalAnswers(message).length > 0)) {
      throw new UnsupportedOperationError(`Task ${ids.taskId} is working; it accepts a message only when it is input-required.`);
    }
    // Data parts `{ approve }` / `{ reject, reason }` answer approvals (approval-answers.ts).
    if (approvalAnswers(message).length > 0) {
      const cursor = await this.lastSeq(ids.taskId);
      try {
        await answerApprovals(client, message);
      } catch (e) {
        if (e instanceof SwarmError) throw new UnsupportedOperationError(`Task ${ids.taskId} cannot be resumed: ${e.message}`);
        throw e;
      }
      return { ids, cursor, resumed: true };
    }
    if (result.status !== 'paused') throw new UnsupportedOperationError(`Task ${ids.taskId} is working; it accepts a message only when it is input-required.`);
    // A data part is a typed answer, metadata.pauseId names the pause, a limit pause may be extended (./answers.ts).
    const answer = answerOf(message, result.reason);
    await raiseLimits(client, ids.taskId, answer, result.reason);
    // After the limits are raised: the interaction is the resumed run.
    const cursor = await this.lastSeq(ids.taskId);
    await resumeWith(client, ids.taskId, answer);
    return { ids, cursor, resumed: true };
  }

  /** The sequence number of a task's latest event: its record's, or a later one of the events after it. */
  private async lastSeq(taskId: string): Promise<number> {
    const record = await this.runtime.store.load(taskId);
    if (!record) return 0;
    return lastStoredSeq(this.runtime.store, record);
  }

  /**
   * The task as its events up to `upTo` (default: all) describe it, in the state the runtime
   * reports (`reported`, else its current result): a swarm the runtime reports failed while its
   * events say otherwise (its data cannot be read, it cannot be restored) is a failed task. So
   * is one whose events cannot all be read: the events before the unreadable one, with the
   * status message and `metadata.problem` naming it.
   */
  private async snapshot(ids: TaskIds, upTo = Infinity, reported?: SwarmResult): Promise<{ task: Task; seq: number; problem?: string }> {
    // Read page by page up to `upTo`, keeping only the events a task is built from (the task,
    // its status updates and artifacts): a long stream's model calls and tool runs are never
    // held, and what is kept is what the task itself holds.
    const events: SwarmEvent[] = [];
    let seq = 0;
    let problem: string | undefined;
    try {
      read: for await (const page of storedPages(this.runtime.store, ids.taskId, 0)) {
        for (const e of page) {
          if (e.seq > upTo) break read;
          seq = e.seq;
          if (e.kind === 'task' || e.kind === 'status-update' || e.kind === 'artifact-update') events.push(withDetails(e, this.details));
        }
      }
    } catch (e) {
      // The pages gave the events before the unreadable one; past `upTo` it does not matter.
      if (!(e instanceof CorruptEventError)) throw e;
      if (e.seq <= upTo) problem = e.message;
    }
    // Not even the task event can be read: the task as submitted, failed below for the problem.
    const task: Task =
      events[0]?.kind === 'task'
        ? taskFromEvents(events)
        : { id: ids.taskId, contextId: ids.contextId, status: undefined, artifacts: [], history: [], metadata: undefined };
    // The swarm's reported result says what its events cannot (an unrestorable swarm reads
    // failed); it describes the task now, so it applies to a full snapshot, not to the task as
    // it was at an earlier cursor (the start of a stream).
    if (!problem && upTo === Infinity) {
      const result = reported ?? (await this.runtime.forSwarm(this.definitionId, ids.taskId).getResult());
      if (result.status === 'failed' && !TERMINAL_STATES.has(stateOf(task))) problem = result.reason;
    }
    return { task: problem ? failedTask(task, problem, ids) : task, seq, ...(problem ? { problem } : {}) };
  }

  /** The A2A updates of the swarm events after `since`, until one ends the interaction. */
  private async *follow(ids: TaskIds, since: number, signal: AbortSignal | undefined): AsyncGenerator<StreamResponse> {
    const client = this.runtime.forSwarm(this.definitionId, ids.taskId);
    const events = client.events({ since, signal });
    for await (const event of untilAborted(events, signal)) {
      const response = toStreamResponse(withDetails(event.kind === 'status-update' && event.final ? await withUsage(event, client) : event, this.details));
      if (response) yield response;
      if (endsStream(event)) return;
    }
  }
}

/**
 * A final status update with the swarm's usage, rolled up over its children, by model, in its
 * metadata (`usage`): what a calling xswarm counts once as its remote call's usage. Unchanged
 * when the swarm made no model call, or its usage cannot be read.
 */
async function withUsage(event: Extract<SwarmEvent, { kind: 'status-update' }>, client: { usage(): Promise<UsageReport> }): Promise<SwarmEvent> {
  const usage = await usageByModel(client);
  return usage ? { ...event, metadata: { ...event.metadata, usage } as typeof event.metadata } : event;
}

/**
 * A finished task (completed, failed, canceled) with the swarm's usage by model in its
 * `metadata.usage`, as the streamed final update carries it: a peer that sends messages without
 * streaming, or polls the task, counts it as one that streams does.
 */
async function taskWithUsage(task: Task, client: { usage(): Promise<UsageReport> }): Promise<Task> {
  const state = stateOf(task);
  if (state !== TaskState.TASK_STATE_COMPLETED && state !== TaskState.TASK_STATE_FAILED && state !== TaskState.TASK_STATE_CANCELED) return task;
  const usage = await usageByModel(client);
  return usage ? { ...task, metadata: { ...task.metadata, usage } } : task;
}

/** The swarm's usage rolled up over its children, by model; undefined when it made no model call or cannot be read. */
async function usageByModel(client: { usage(): Promise<UsageReport> }): Promise<Record<string, unknown> | undefined> {
  const byModel = await client.usage().then(
    (u) => u.total.byModel,
    () => ({}),
  );
  if (Object.keys(byModel).length === 0) return undefined;
  return Object.fromEntries(
    Object.entries(byModel).map(([name, { calls, inputTokens, outputTokens, cachedInputTokens }]) => [name, { calls, inputTokens, outputTokens, cachedInputTokens }]),
  );
}

/** A task reported failed for `problem`: its status message and `metadata.problem` name it. */
function failedTask(task: Task, problem: string, ids: TaskIds): Task {
  return {
    ...task,
    status: {
      state: TaskState.TASK_STATE_FAILED,
      message: {
        ...textMessage(`${ids.taskId}#problem`, Role.ROLE_AGENT, problem, ids),
        metadata: { error: { kind: 'problem', message: problem } satisfies FailureError },
      },
      timestamp: task.status?.timestamp,
    },
    metadata: { ...task.metadata, problem },
  };
}

function stateOf(task: Task): TaskState {
  return task.status?.state ?? TaskState.TASK_STATE_UNSPECIFIED;
}

/** The SDK's history-length rule: undefined keeps all, 0 or less keeps none, n keeps the last n. */
function withHistoryLength(task: Task, historyLength: number | undefined): Task {
  if (historyLength === undefined) return task;
  return { ...task, history: historyLength <= 0 ? [] : task.history.slice(-historyLength) };
}

function signalOf(context: ServerCallContext): AbortSignal | undefined {
  const s = context.state.get(REQUEST_SIGNAL_KEY);
  return s instanceof AbortSignal ? s : undefined;
}

function encodePageToken(offset: number): string {
  return Buffer.from(JSON.stringify({ offset })).toString('base64url');
}

function decodePageToken(token: string): number {
  try {
    const { offset } = JSON.parse(Buffer.from(token, 'base64url').toString('utf8')) as { offset?: unknown };
    if (typeof offset === 'number' && Number.isInteger(offset) && offset >= 0) return offset;
  } catch {
    // fall through
  }
  throw new RequestMalformedError('Invalid pageToken');
}
