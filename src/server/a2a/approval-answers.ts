/**
 * Approvals answered over A2A: a swarm paused for approvals is an `input-required` task whose
 * status message carries `{ pauseId, pendingApprovals }` as a data part; a follow-up message
 * answers with data parts `{ approve: <approvalId>, always?: true }` or `{ reject: <approvalId>,
 * reason }` (several parts answer several approvals, in order).
 *
 * @module
 */
import type { Message } from '@a2a-js/sdk';
import type { SwarmClient } from '../../client/client.js';
import { SwarmError } from '../../errors.js';

/** One answer a follow-up message carries. */
type ApprovalAnswer = { approve: string; always: boolean } | { reject: string; reason: string };

/** The approval answers among a message's data parts (none: the message is a plain resume). */
export function approvalAnswers(message: Pick<Message, 'parts'>): ApprovalAnswer[] {
  const answers: ApprovalAnswer[] = [];
  for (const part of message.parts) {
    const c = part.content;
    if (c?.$case !== 'data' || !c.value || typeof c.value !== 'object') continue;
    const data = c.value as Record<string, unknown>;
    if ('approve' in data) {
      if (typeof data.approve !== 'string') throw new SwarmError('`approve` names the approval id (a string)', 'invalid-input');
      answers.push({ approve: data.approve, always: data.always === true });
    } else if ('reject' in data) {
      if (typeof data.reject !== 'string') throw new SwarmError('`reject` names the approval id (a string)', 'invalid-input');
      if (typeof data.reason !== 'string' || !data.reason.trim()) throw new SwarmError('`reject` needs a `reason` (the model reads it)', 'invalid-input');
      answers.push({ reject: data.reject, reason: data.reason });
    }
  }
  return answers;
}

/** Answers the approvals a follow-up message carries; false when it carries none. */
export async function answerApprovals(client: Pick<SwarmClient, 'approve' | 'reject'>, message: Pick<Message, 'parts'>): Promise<boolean> {
  const answers = approvalAnswers(message);
  for (const a of answers) {
    if ('approve' in a) await client.approve(a.approve, a.always ? { always: true } : {});
    else await client.reject(a.reject, a.reason);
  }
  return answers.length > 0;
}

/**
 * Resolves once the swarm pauses or ends (`wait()`), or a child swarm it waits on asks for
 * approvals (its relayed `input-required` status after `since`): where a blocking A2A send
 * returns, since the root task then waits for a human too.
 */
export async function untilInputOrEnd(client: Pick<SwarmClient, 'wait' | 'events'>, since: number, signal?: AbortSignal): Promise<void> {
  const stop = new AbortController();
  const linked = signal ? AbortSignal.any([signal, stop.signal]) : stop.signal;
  const asked = (async () => {
    for await (const e of client.events({ since, signal: linked })) if (e.kind === 'status-update' && (e.final || e.status.state === 'input-required')) return;
  })();
  try {
    await Promise.race([client.wait(), asked]);
  } finally {
    stop.abort();
    await asked.catch(() => undefined);
  }
}
