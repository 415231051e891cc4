/**
 * How an A2A follow-up message answers an `input-required` task (a paused swarm):
 *
 * - a data part is the typed answer (checked against the pause's response schema);
 * - else its text is the plain answer (for a typed pause, JSON text that matches is taken parsed);
 * - `metadata.pauseId` names the pause it answers: a stale one is refused;
 * - to a limit pause (`type: 'LIMIT'`), a data part `{ "extend": { "maxTurns": 12 } }` raises the
 *   limits first; the message's text, if any, is then the answer.
 *
 * A refused answer changes nothing: the pause id is checked before limits are raised, and the
 * runtime checks the answer before it records the resume. The refusal is an A2A error:
 * `-32602` (invalid params) for an answer of the wrong shape or bad limits, `-32004`
 * (unsupported operation) for a stale pause id or a task that is not waiting for this answer.
 *
 * @module
 */
import type { Message } from '@a2a-js/sdk';
import { RequestMalformedError, UnsupportedOperationError } from '@a2a-js/sdk/errors';
import type { PauseReason } from '../../../machines/events.js';
import { LIMIT_PAUSE } from '../../../machines/pause.js';
import { messageText } from '../../a2a/mapping.js';
import type { SwarmClient, SwarmLimits } from '../../client/client.js';
import { SwarmError } from '../../errors.js';

/** What a follow-up message says: its answer, the pause it names, the limits it raises. */
export interface A2AAnswer {
  /** The answer: a data part's value, else the text (undefined for a limit pause answered with data only). */
  answer: unknown;
  pauseId?: string;
  extend?: SwarmLimits;
}

/** Reads a follow-up message as the answer to `pause` (the task's current pause). */
export function answerOf(message: Pick<Message, 'parts' | 'metadata'>, pause: PauseReason | undefined): A2AAnswer {
  const meta: unknown = message.metadata;
  const named = meta && typeof meta === 'object' ? (meta as Record<string, unknown>).pauseId : undefined;
  if (named !== undefined && typeof named !== 'string') throw new RequestMalformedError('message.metadata.pauseId must be a string');
  const pauseId = named === undefined ? {} : { pauseId: named };
  const data = message.parts.find((p) => p.content?.$case === 'data')?.content?.value as unknown;
  // Text and files (as `<file>` elements) are what a person says; data parts are read apart.
  const said = message.parts.filter((p) => p.content !== undefined && p.content.$case !== 'data');
  const text = said.length > 0 ? messageText({ parts: said }) : undefined;
  if (pause?.type === LIMIT_PAUSE && isObject(data) && 'extend' in data) {
    const extend = data.extend;
    if (!isObject(extend)) throw new RequestMalformedError('extend must be an object of limits to raise, such as {"extend":{"maxTurns":12}}');
    return { answer: text, extend: extend as SwarmLimits, ...pauseId };
  }
  if (data !== undefined) return { answer: data, ...pauseId };
  return { answer: text ?? messageText(message), ...pauseId };
}

/**
 * The first half of answering a paused swarm with a follow-up: refuses a stale pause id, then
 * raises the limits the message raises (a limit pause). Refused (an A2A error, nothing changed)
 * as the module says. The events it records (`extended`) precede the resume's, so a stream of
 * the resumed run starts after them ({@link resumeWith} is the second half).
 */
export async function raiseLimits(client: SwarmClient, taskId: string, { pauseId, extend }: A2AAnswer, pause: PauseReason | undefined): Promise<void> {
  try {
    if (pauseId !== undefined && pause?.pauseId !== undefined && pauseId !== pause.pauseId) {
      throw new SwarmError(`Swarm "${taskId}" is not paused at "${pauseId}" (a stale pause id): its current pause is "${pause.pauseId}"`, 'wrong-state');
    }
    if (extend) await client.extend(extend);
  } catch (e) {
    throw a2aError(taskId, e);
  }
}

/** Resumes the paused swarm with the answer (refused as an A2A error, nothing changed). */
export async function resumeWith(client: SwarmClient, taskId: string, { answer, pauseId }: A2AAnswer): Promise<void> {
  try {
    await client.resume(answer, pauseId === undefined ? {} : { pauseId });
  } catch (e) {
    throw a2aError(taskId, e);
  }
}

/** The A2A error for a refused answer; other errors as they are. */
export function a2aError(taskId: string, e: unknown): unknown {
  if (!(e instanceof SwarmError)) return e;
  if (e.code === 'invalid-input') return new RequestMalformedError(`Task ${taskId}: the answer is refused: ${e.message}`);
  return new UnsupportedOperationError(`Task ${taskId} cannot be resumed: ${e.message}`);
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
