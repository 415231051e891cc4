/**
 * The edge between xswarm's event stream and A2A v1.0. A swarm's public events already are
 * A2A v0.3 objects (`Task`, `TaskStatusUpdateEvent`, `TaskArtifactUpdateEvent`): the v1.0 shapes
 * the SDK's transports serve are made from them by the SDK's own v0.3 → v1.0 translation (state
 * names `TASK_STATE_*`, `$case` parts); the one addition is the data part a pause's status
 * message carries with its structured request (`pause-request.ts`). `internal:*` events never leave.
 *
 * @module
 */
import { type Role, TaskState, type Message, type Part, type StreamResponse, type Task } from '@a2a-js/sdk';
import { legacyPushNotificationToV1StreamResponse } from '@a2a-js/sdk/compat/v0_3';
import type { Artifact, Part as SwarmPart, Message as SwarmMessage, StatusUpdateEvent, SwarmEvent, TaskEvent } from '../../machines/events.js';
import { DATA_PART_COMPAT_FLAG } from '../../machines/events.js';
import type { SwarmStatus } from '../store/result.js';
import { withPauseRequest } from './pause-request.js';
import { fileText, isTextual } from './files.js';

/** The artifact id of a swarm's final result (set by the swarm machine). */
export const RESULT_ARTIFACT_ID = 'result';

/** Which task a mapped message belongs to. */
export interface TaskIds {
  taskId: string;
  contextId: string;
}

/**
 * The A2A task state of a swarm status as stored in a record; `rejected`: the swarm failed
 * because a guardrail rejected it (its result says `rejected`).
 */
export function statusToA2AState(status: SwarmStatus, rejected = false): TaskState {
  switch (status) {
    case 'running':
    case 'awaitingHandoff':
      return TaskState.TASK_STATE_WORKING;
    case 'paused':
      return TaskState.TASK_STATE_INPUT_REQUIRED;
    case 'completed':
      return TaskState.TASK_STATE_COMPLETED;
    case 'failed':
      return rejected ? TaskState.TASK_STATE_REJECTED : TaskState.TASK_STATE_FAILED;
    case 'stopped':
      return TaskState.TASK_STATE_CANCELED;
  }
}

/** Terminal A2A states: nothing follows them. */
export const TERMINAL_STATES: ReadonlySet<TaskState> = new Set([
  TaskState.TASK_STATE_COMPLETED,
  TaskState.TASK_STATE_FAILED,
  TaskState.TASK_STATE_CANCELED,
  TaskState.TASK_STATE_REJECTED,
]);

/**
 * Whether an A2A interaction ends in this state: a terminal state, or one that waits for the
 * client (input or auth required). Message streams close here, and blocking sends return.
 */
export function endsInteraction(state: TaskState | undefined): boolean {
  return state !== undefined && (TERMINAL_STATES.has(state) || state === TaskState.TASK_STATE_INPUT_REQUIRED || state === TaskState.TASK_STATE_AUTH_REQUIRED);
}

/**
 * Whether a swarm event ends an A2A interaction (its final event, or the pause that asks for
 * input).
 */
export function endsStream(event: SwarmEvent): boolean {
  return event.kind === 'status-update' && (event.final || event.status.state === 'input-required');
}

/** A text part. */
export function textPart(text: string): Part {
  return { content: { $case: 'text', value: text }, metadata: undefined, filename: '', mediaType: 'text/plain' };
}

/** A message with one text part. */
export function textMessage(messageId: string, role: Role, text: string, ids: TaskIds): Message {
  return {
    messageId,
    contextId: ids.contextId,
    taskId: ids.taskId,
    role,
    parts: [textPart(text)],
    metadata: undefined,
    extensions: [],
    referenceTaskIds: [],
  };
}

/**
 * The v1.0 stream response of a swarm event: the SDK's translation of the A2A v0.3 object it is,
 * or undefined for events that do not leave over A2A (`internal:*`, and the initial `task`
 * event, which a Task snapshot stands for).
 */
export function toStreamResponse(event: SwarmEvent): StreamResponse | undefined {
  if (event.kind !== 'status-update' && event.kind !== 'artifact-update') return undefined;
  return legacyPushNotificationToV1StreamResponse(withPauseRequest(event));
}

/**
 * The A2A `Task` a swarm's events describe, as the A2A SDK's own result manager folds a v0.3
 * stream: the task event, then each status replacing the status (its message added to the
 * history), each artifact update adding or replacing an artifact (appending parts when
 * `append`). Returned as the v1.0 `Task`.
 */
export function taskFromEvents(events: readonly SwarmEvent[]): Task {
  const first = events[0];
  if (first?.kind !== 'task') throw new Error("a swarm's events start with its task event");
  let status: TaskEvent['status'] | StatusUpdateEvent['status'] = first.status;
  const history: SwarmMessage[] = [...(first.history ?? [])];
  const artifacts = new Map<string, Artifact>();
  for (const raw of events) {
    const event = withPauseRequest(raw);
    if (event.kind === 'status-update') {
      status = event.status;
      if (event.status.message) history.push(event.status.message);
    } else if (event.kind === 'artifact-update') {
      const existing = artifacts.get(event.artifact.artifactId);
      if (existing && event.append) artifacts.set(existing.artifactId, { ...existing, parts: [...existing.parts, ...event.artifact.parts] });
      else artifacts.set(event.artifact.artifactId, event.artifact);
    }
  }
  const task = { kind: 'task', id: first.id, contextId: first.contextId, status, history, artifacts: [...artifacts.values()], metadata: first.metadata };
  const { payload } = legacyPushNotificationToV1StreamResponse(task);
  return payload!.value as Task;
}

/**
 * The text of a message's parts: text parts joined by newlines; data parts as JSON when there
 * is no text.
 */
export function messageText(message: Pick<Message, 'parts'>): string {
  return partsText(message.parts);
}

/**
 * The text of parts: text parts and files (`<file>` elements, see `./files.ts`) joined by
 * newlines, in order; without them, data parts as JSON.
 */
export function partsText(parts: readonly Part[]): string {
  const texts: string[] = [];
  const others: string[] = [];
  for (const p of parts) {
    const c = p.content;
    if (!c) continue;
    if (c.$case === 'text') texts.push(c.value);
    else if (c.$case === 'data') others.push(JSON.stringify(c.value));
    else texts.push(fileText(p)!);
  }
  return (texts.length > 0 ? texts : others).join('\n');
}

/**
 * A swarm's input from an A2A message. A swarm with text input gets the message's text (its
 * files in it, see {@link partsText}); one with structured input gets the first data part, else
 * the first JSON file's content parsed, or the text parsed as JSON (left as text when it is not
 * JSON, so the swarm's input validation names the problem).
 */
export function inputFromMessage(message: Pick<Message, 'parts'>, structured: boolean): unknown {
  if (!structured) return messageText(message);
  for (const p of message.parts) if (p.content?.$case === 'data') return p.content.value;
  const json = message.parts.find((p) => p.content?.$case === 'raw' && isTextual(p.mediaType) && /json/i.test(p.mediaType));
  const text = json?.content?.$case === 'raw' ? Buffer.from(json.content.value).toString('utf8') : messageText(message);
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

/**
 * A message's parts as a swarm's stored events keep them (A2A v0.3), when it holds files: the
 * run's task then shows the files as sent (name, type, bytes or URL) while the model reads them
 * as `<file>` elements (see {@link inputFromMessage}). Undefined for a message without files,
 * whose task shows its input as it always did.
 */
export function inputPartsOf(message: Pick<Message, 'parts'>): SwarmPart[] | undefined {
  if (!message.parts.some((p) => p.content?.$case === 'raw' || p.content?.$case === 'url')) return undefined;
  const parts: SwarmPart[] = [];
  for (const p of message.parts) {
    const c = p.content;
    const meta = { ...(p.filename ? { name: p.filename } : {}), ...(p.mediaType ? { mimeType: p.mediaType } : {}) };
    if (c?.$case === 'text') parts.push({ kind: 'text', text: c.value });
    else if (c?.$case === 'raw') parts.push({ kind: 'file', file: { ...meta, bytes: Buffer.from(c.value).toString('base64') } });
    else if (c?.$case === 'url') parts.push({ kind: 'file', file: { ...meta, uri: c.value } });
    else if (c?.$case === 'data') {
      const v = c.value as unknown;
      // A v0.3 data part is an object; another value travels wrapped (see `DataPart`).
      if (typeof v === 'object' && v !== null && !Array.isArray(v)) parts.push({ kind: 'data', data: v as Record<string, unknown> });
      else parts.push({ kind: 'data', data: { value: v }, metadata: { [DATA_PART_COMPAT_FLAG]: true } });
    }
  }
  return parts;
}
