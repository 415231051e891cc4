/**
 * The messages a model step sends under a history policy (`machines/history.ts`): the view of
 * the conversation, and, for `'summarize'`, the summary call that extends the summary first.
 * The summary call is the speaker's own model with `purpose: 'summary'` and no tools; the
 * machine records it as an `internal:llm-call` event marked as a summary (so a replay answers
 * it from the journal, and its usage counts).
 *
 * @module
 */
import type { ModelStepInput } from '../machines/contracts.js';
import { boundedSummary, historyView, type MadeSummary, summaryRequest } from '../machines/history.js';
import type { ChatMessage } from '../machines/messages.js';
import { withinDeadline } from './call-timeout.js';
import type { Model, SwarmPorts } from './ports.js';

/** What a step sends, and the summary it made to send it (if any). */
export interface SentHistory {
  messages: readonly ChatMessage[];
  summary?: MadeSummary;
}

/** The messages `input` sends to `model`, after a summary call when one is due. */
export async function sentHistory(input: ModelStepInput, model: Model, ports: SwarmPorts, signal: AbortSignal): Promise<SentHistory> {
  const history = input.history;
  if (!history) return { messages: input.messages };
  const view = historyView(input.messages, history);
  if (!view.summarize) return { messages: view.messages };
  const messages = summaryRequest(history.summary?.text, view.summarize.messages);
  // A summary call is budgeted like any model call, under a key of its own (its step's scope, marked).
  const reserving = ports.reserveModelCall?.({ ...input, scope: `${input.scope}#summary`, messages }, model.name, [], signal);
  const hold = reserving instanceof Promise ? await reserving : reserving;
  const started = performance.now();
  const limit = ports.modelTimeoutMs;
  const timeout = limit === undefined ? undefined : { ms: limit, deadline: Date.now() + limit };
  let raw: Awaited<ReturnType<Model['call']>>;
  try {
    raw = await withinDeadline(
      timeout,
      signal,
      (bounded) =>
        model.call({
          agentId: input.speaker,
          swarmId: input.swarmId,
          messages,
          tools: [],
          signal: bounded,
          purpose: 'summary',
          ...(hold ? { maxOutputTokens: hold.maxOutputTokens } : {}),
        }),
      (e) => {
        throw new Error(`${model.name}: the summary call timed out after ${e.timeoutMs} ms (modelTimeoutMs)`);
      },
    );
  } catch (e) {
    // A failed call counts: it settles at its worst case.
    hold?.settle();
    throw e;
  }
  hold?.settle(raw.usage);
  const text = boundedSummary(typeof raw.text === 'string' ? raw.text : '', history.policy);
  const summary: MadeSummary = { text, upTo: view.summarize.upTo, model: model.name, durationMs: performance.now() - started };
  if (raw.usage) summary.usage = raw.usage;
  return { messages: historyView(input.messages, { ...history, summary }).messages, summary };
}
