/**
 * The edge between xswarm's event stream and A2A: swarm events become A2A stream responses,
 * a swarm's event log becomes an A2A `Task`, and A2A messages become swarm input.
 *
 * The in-memory shapes here are the SDK's (ts-proto: numeric enums, `$case` parts); the SDK's
 * transports turn them into v1.0 ProtoJSON or, through its compat layer, into v0.3 JSON.
 * Nothing is dropped: every public swarm event becomes exactly one A2A event, and the swarm
 * fact, sequence number and timestamp travel in the event's `metadata.xswarm`. `internal:*`
 * events never leave.
 *
 * @module
 */
import { Role, TaskState, type Artifact, type Message, type Part, type StreamResponse, type Task } from '@a2a-js/sdk';
import type { Part as SwarmPart, SwarmEvent, SwarmFact, TaskState as SwarmTaskState } from '../../machines/events.js';
import type { SwarmStatus } from '../result.js';

/**
 * The metadata key under which xswarm's own data rides on A2A events and tasks.
 *
 * @example
 * const fact = update.metadata?.[METADATA_KEY]?.fact; // e.g. { type: 'turn-completed', turn: 2, … }
 */
export const METADATA_KEY = 'xswarm';

/**
 * The artifact id of a swarm's final result (set by the swarm machine).
 *
 * @example
 * const result = task.artifacts.find((a) => a.artifactId === RESULT_ARTIFACT_ID);
 */
export const RESULT_ARTIFACT_ID = 'result';

/**
 * Which task a mapped event belongs to.
 *
 * @example
 * const ids: TaskIds = { taskId: swarmId, contextId: swarmId };
 */
export interface TaskIds {
  taskId: string;
  contextId: string;
}

const STATES: Record<SwarmTaskState, TaskState> = {
  submitted: TaskState.TASK_STATE_SUBMITTED,
  working: TaskState.TASK_STATE_WORKING,
  'input-required': TaskState.TASK_STATE_INPUT_REQUIRED,
  completed: TaskState.TASK_STATE_COMPLETED,
  failed: TaskState.TASK_STATE_FAILED,
  canceled: TaskState.TASK_STATE_CANCELED,
};

/**
 * The A2A task state of a swarm event state (DESIGN.md: running → working, paused →
 * input-required, completed → completed, failed → failed, stopped → canceled).
 *
 * @example
 * toA2AState('input-required') // TaskState.TASK_STATE_INPUT_REQUIRED
 */
export function toA2AState(state: SwarmTaskState): TaskState {
  return STATES[state];
}

/**
 * The A2A task state of a swarm status as stored in a record.
 *
 * @example
 * statusToA2AState('stopped') // TaskState.TASK_STATE_CANCELED
 */
export function statusToA2AState(status: SwarmStatus): TaskState {
  switch (status) {
    case 'running':
    case 'awaitingHandoff':
      return TaskState.TASK_STATE_WORKING;
    case 'paused':
      return TaskState.TASK_STATE_INPUT_REQUIRED;
    case 'completed':
      return TaskState.TASK_STATE_COMPLETED;
    case 'failed':
      return TaskState.TASK_STATE_FAILED;
    case 'stopped':
      return TaskState.TASK_STATE_CANCELED;
  }
}

/**
 * Terminal A2A states: nothing follows them.
 *
 * @example
 * TERMINAL_STATES.has(TaskState.TASK_STATE_CANCELED) // true
 */
export const TERMINAL_STATES: ReadonlySet<TaskState> = new Set([
  TaskState.TASK_STATE_COMPLETED,
  TaskState.TASK_STATE_FAILED,
  TaskState.TASK_STATE_CANCELED,
  TaskState.TASK_STATE_REJECTED,
]);

/**
 * Whether an A2A interaction ends in this state: a terminal state, or one that waits for the
 * client (input or auth required). Message streams close here, and blocking sends return.
 *
 * @example
 * endsInteraction(TaskState.TASK_STATE_INPUT_REQUIRED) // true
 */
export function endsInteraction(state: TaskState | undefined): boolean {
  return (
    state !== undefined &&
    (TERMINAL_STATES.has(state) || state === TaskState.TASK_STATE_INPUT_REQUIRED || state === TaskState.TASK_STATE_AUTH_REQUIRED)
  );
}

/**
 * Whether a swarm event ends an A2A interaction (its final event, or the pause that asks for
 * input).
 *
 * @example
 * if (endsStream(event)) break;
 */
export function endsStream(event: SwarmEvent): boolean {
  return event.kind === 'status-update' && (event.final || event.state === 'input-required');
}

/**
 * A text part.
 *
 * @example
 * textPart('Go hiking on Saturday.')
 */
export function textPart(text: string): Part {
  return { content: { $case: 'text', value: text }, metadata: undefined, filename: '', mediaType: 'text/plain' };
}

/**
 * A structured-data part.
 *
 * @example
 * dataPart({ day: 'Saturday' })
 */
export function dataPart(data: unknown): Part {
  return { content: { $case: 'data', value: data }, metadata: undefined, filename: '', mediaType: 'application/json' };
}

/**
 * The A2A parts of swarm artifact parts.
 *
 * @example
 * toA2AParts([{ kind: 'text', text: 'hi' }])
 */
export function toA2AParts(parts: readonly SwarmPart[]): Part[] {
  return parts.map((p) => (p.kind === 'text' ? textPart(p.text) : dataPart(p.data)));
}

/**
 * A message with one text part.
 *
 * @example
 * textMessage('s1#4', Role.ROLE_AGENT, 'Which day suits you?', { taskId: 's1', contextId: 's1' })
 */
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

/** What a person should read about a status fact, and who says it; undefined when nothing. */
function spokenText(fact: SwarmFact): { role: Role; text: string } | undefined {
  switch (fact.type) {
    case 'paused':
      return { role: Role.ROLE_AGENT, text: fact.reason.message };
    case 'failed':
    case 'stopped':
      return { role: Role.ROLE_AGENT, text: fact.reason };
    case 'resumed':
      return fact.message ? { role: Role.ROLE_USER, text: fact.message } : undefined;
    default:
      return undefined;
  }
}

/**
 * The agent's final word on a completed swarm: its result as text (JSON when structured), or
 * undefined for other facts. v0.3 clients (Strands, for one) read a finished task's answer
 * from its final status message, and without one concatenate every artifact they saw.
 */
function finalText(fact: SwarmFact): string | undefined {
  if (fact.type !== 'completed' || fact.result === undefined) return undefined;
  return typeof fact.result === 'string' ? fact.result : JSON.stringify(fact.result);
}

/** The message id of the message an event carries: stable, so re-reading a task never duplicates it. */
function messageIdOf(event: SwarmEvent): string {
  return `${event.swarmId}#${event.seq}`;
}

/**
 * The A2A stream response for one swarm event, or undefined for events that do not leave over
 * A2A (`internal:*`, and the initial `task` event, which a Task snapshot stands for).
 *
 * Status updates carry a status message when the fact has words for a person (the pause
 * question, the failure or stop reason, the result of a completed swarm); the swarm fact
 * itself, the sequence number and the timestamp are in `metadata.xswarm`.
 *
 * @example
 * const r = toStreamResponse(event, { taskId: event.swarmId, contextId: event.swarmId });
 * if (r?.payload?.$case === 'statusUpdate') console.log(r.payload.value.metadata?.xswarm.fact.type);
 */
export function toStreamResponse(event: SwarmEvent, ids: TaskIds): StreamResponse | undefined {
  if (event.kind === 'status-update') {
    const spoken = spokenText(event.metadata);
    // A user's words (a resume message) are history, not the agent's status message.
    const said = spoken?.role === Role.ROLE_AGENT ? spoken.text : finalText(event.metadata);
    const message = said !== undefined ? textMessage(messageIdOf(event), Role.ROLE_AGENT, said, ids) : undefined;
    return {
      payload: {
        $case: 'statusUpdate',
        value: {
          taskId: ids.taskId,
          contextId: ids.contextId,
          status: { state: toA2AState(event.state), message, timestamp: iso(event.timestamp) },
          metadata: { [METADATA_KEY]: { seq: event.seq, timestamp: event.timestamp, fact: event.metadata } },
        },
      },
    };
  }
  if (event.kind === 'artifact-update') {
    return {
      payload: {
        $case: 'artifactUpdate',
        value: {
          taskId: ids.taskId,
          contextId: ids.contextId,
          artifact: artifactOf(event.artifact.artifactId, event.artifact.name, toA2AParts(event.artifact.parts)),
          append: event.append,
          lastChunk: event.lastChunk,
          metadata: { [METADATA_KEY]: { seq: event.seq, timestamp: event.timestamp, ...(event.metadata ?? {}) } },
        },
      },
    };
  }
  return undefined;
}

function artifactOf(artifactId: string, name: string, parts: Part[]): Artifact {
  return { artifactId, name, description: '', parts, metadata: undefined, extensions: [] };
}

function iso(ms: number): string {
  return new Date(ms).toISOString();
}

/**
 * The A2A `Task` a swarm's events describe: the state of its last status update, every
 * artifact (streamed chunks appended in order, the result replacing nothing else), and a
 * history of the conversation (the input, the pause questions, the human's answers, the
 * failure or stop reason). The status message is the last status update's (see
 * {@link toStreamResponse}). `metadata.xswarm` holds the definition id and the sequence number
 * the task reflects.
 *
 * @example
 * const task = taskFromEvents(await store.readEvents(id, 0), { taskId: id, contextId: id });
 */
export function taskFromEvents(events: readonly SwarmEvent[], ids: TaskIds): Task {
  let state = TaskState.TASK_STATE_SUBMITTED;
  let statusMessage: Message | undefined;
  let timestamp: string | undefined;
  let definitionId: string | undefined;
  const artifacts = new Map<string, Artifact>();
  const history: Message[] = [];
  let seq = 0;
  for (const event of events) {
    seq = event.seq;
    if (event.kind === 'task') {
      definitionId = event.definitionId;
      timestamp = iso(event.timestamp);
      const part = typeof event.input === 'string' ? textPart(event.input) : dataPart(event.input);
      history.push({ ...textMessage(messageIdOf(event), Role.ROLE_USER, '', ids), parts: [part] });
    } else if (event.kind === 'status-update') {
      state = toA2AState(event.state);
      timestamp = iso(event.timestamp);
      const spoken = spokenText(event.metadata);
      const message = spoken ? textMessage(messageIdOf(event), spoken.role, spoken.text, ids) : undefined;
      if (message) history.push(message);
      // The result is the status message of a completed task (its artifact already holds it, so not history).
      const result = finalText(event.metadata);
      statusMessage =
        message?.role === Role.ROLE_AGENT ? message : result !== undefined ? textMessage(messageIdOf(event), Role.ROLE_AGENT, result, ids) : undefined;
    } else if (event.kind === 'artifact-update') {
      const parts = toA2AParts(event.artifact.parts);
      const existing = artifacts.get(event.artifact.artifactId);
      if (existing && event.append) existing.parts.push(...parts);
      else artifacts.set(event.artifact.artifactId, artifactOf(event.artifact.artifactId, event.artifact.name, parts));
    }
  }
  return {
    id: ids.taskId,
    contextId: ids.contextId,
    status: { state, message: statusMessage, timestamp },
    artifacts: [...artifacts.values()],
    history,
    metadata: { [METADATA_KEY]: { ...(definitionId ? { definitionId } : {}), seq } },
  };
}

/**
 * The text of a message's parts: text parts joined by newlines; data parts as JSON when there
 * is no text.
 *
 * @example
 * messageText(message) // 'Saturday works'
 */
export function messageText(message: Pick<Message, 'parts'>): string {
  return partsText(message.parts);
}

/**
 * The text of parts: text parts joined by newlines; without text parts, data parts as JSON,
 * URLs as themselves and raw bytes by file name.
 *
 * @example
 * partsText([dataPart({ a: 1 })]) // '{"a":1}'
 */
export function partsText(parts: readonly Part[]): string {
  const texts: string[] = [];
  const others: string[] = [];
  for (const p of parts) {
    const c = p.content;
    if (!c) continue;
    if (c.$case === 'text') texts.push(c.value);
    else if (c.$case === 'data') others.push(JSON.stringify(c.value));
    else if (c.$case === 'url') others.push(c.value);
    else others.push(`[file ${p.filename || 'unnamed'}, ${c.value.length} bytes]`);
  }
  return (texts.length > 0 ? texts : others).join('\n');
}

/**
 * A swarm's input from an A2A message. A swarm with text input gets the message's text; one
 * with structured input gets the first data part, or the text parsed as JSON (left as text
 * when it is not JSON, so the swarm's input validation names the problem).
 *
 * @example
 * inputFromMessage(message, false) // 'Plan my Saturday'
 */
export function inputFromMessage(message: Pick<Message, 'parts'>, structured: boolean): unknown {
  if (!structured) return messageText(message);
  for (const p of message.parts) if (p.content?.$case === 'data') return p.content.value;
  const text = messageText(message);
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}
