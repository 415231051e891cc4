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
import { budgetedModelCall } from './model-call.js';
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
  const reserveFor = { ...input, scope: `${input.scope}#summary`, messages };
  const call = () =>
    budgetedModelCall(ports, model, reserveFor, [], signal, 'summary call', () => ({
      agentId: input.speaker,
      swarmId: input.swarmId,
      messages,
      purpose: 'summary',
    }));
  // Traced like the step's own call (a `chat` span, marked as a summary) when the runtime traces.
  const { raw, durationMs } = await (ports.traceModelCall ? ports.traceModelCall(input, model.name, call, 'summary') : call());
  const text = boundedSummary(typeof raw.text === 'string' ? raw.text : '', history.policy);
  const summary: MadeSummary = { text, upTo: view.summarize.upTo, model: model.name, durationMs };
  if (raw.usage) summary.usage = raw.usage;
  return { messages: historyView(input.messages, { ...history, summary }).messages, summary };
}
