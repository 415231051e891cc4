/**
 * What the model sees of a long conversation: a history policy (`maxTokens`, `strategy`) shrinks
 * what is SENT, never what is stored (`context.messages` and the events stay whole). Pure: the
 * model step (`actors/model-step.ts`) builds each request's view with {@link historyView} and,
 * for `'summarize'`, asks the model for the summary the view then carries.
 *
 * Tokens are estimated, not counted: {@link estimateTokens} is deterministic (a replay and a
 * restored swarm see the same views) and needs no tokenizer, at the price of being approximate:
 * pick `maxTokens` with a margin below the model's context window.
 *
 * @module
 */
import type { ChatMessage, Usage } from './messages.js';

/**
 * How much of a conversation is sent to the model. Past `maxTokens` (estimated, see
 * {@link estimateTokens}), `'trim'` leaves the oldest turns out; `'summarize'` replaces them by a
 * summary the model writes (a recorded, replayable model call), extended as more turns age.
 * The system message and the first user message are always sent; an assistant message that
 * called tools is sent with all its tool results or not at all.
 */
export interface HistoryPolicy {
  maxTokens: number;
  strategy: 'trim' | 'summarize';
}

/**
 * The summary of a conversation's older turns, kept in the machine's context (so in every
 * snapshot): `text` covers every message before index `upTo` except the pinned ones.
 */
export interface HistorySummary {
  text: string;
  upTo: number;
}

/** What the model step passes on about a conversation's history policy. */
export interface HistoryInput {
  policy: HistoryPolicy;
  /** The summary so far (`'summarize'` only). */
  summary?: HistorySummary;
  /** Index of the first user message (the request, for an agent): always sent, as message 0 is. */
  pinned: number;
}

/**
 * `input` (a model step's, just built) with its speaker's history policy, when it has one: the
 * object itself, so a step without a policy costs nothing more than before policies existed.
 */
export function withHistory<T extends object>(
  input: T,
  policy: HistoryPolicy | undefined,
  pinned: number,
  summary: HistorySummary | undefined,
): T & { history?: HistoryInput } {
  if (policy) (input as T & { history?: HistoryInput }).history = summary ? { policy, pinned, summary } : { policy, pinned };
  return input;
}

/** A summary the model step made before its model call: what the machine keeps and records. */
export interface MadeSummary extends HistorySummary {
  usage?: Usage;
  model: string;
  durationMs: number;
}

/** The instructions of a summary call (its system message). */
export const SUMMARY_INSTRUCTIONS =
  'You summarize the earlier part of a conversation between a user, an assistant and its tools, so that the assistant can go on without it. ' +
  'Keep every fact, decision, result and open question the assistant still needs; drop pleasantries and repetition. Answer with the summary only.';

/** How a summary is introduced where it replaces older turns. */
const SUMMARY_HEADER = 'Summary of the earlier conversation (older turns are left out):\n';

/** Rough tokens of a string: one per 4 characters (a common rule of thumb for English and JSON). */
function textTokens(text: string): number {
  return Math.ceil(text.length / 4);
}

/**
 * The estimated tokens of one message: its text, its tool calls' names and arguments, and 4
 * for the message's own framing (role, separators). Deterministic; no tokenizer.
 */
export function estimateTokens(message: ChatMessage): number {
  let tokens = 4 + textTokens(message.content);
  for (const call of message.toolCalls ?? []) tokens += 4 + textTokens(call.name) + textTokens(call.arguments);
  return tokens;
}

/** The estimated tokens of a list of messages (see {@link estimateTokens}). */
export function estimateAll(messages: readonly ChatMessage[]): number {
  let sum = 0;
  for (const m of messages) sum += estimateTokens(m);
  return sum;
}

/** The message that stands for the summarized turns in a request. */
export function summaryMessage(text: string): ChatMessage {
  return { role: 'user', content: `${SUMMARY_HEADER}${text}` };
}

/** Most tokens a summary may take in a request: a quarter of the budget (a longer one is cut). */
export function summaryBudget(policy: HistoryPolicy): number {
  return Math.max(1, Math.floor(policy.maxTokens / 4));
}

/** `text` cut so that its summary message fits {@link summaryBudget} (deterministic). */
export function boundedSummary(text: string, policy: HistoryPolicy): string {
  const room = (summaryBudget(policy) - estimateTokens(summaryMessage(''))) * 4;
  return text.length <= room ? text : text.slice(0, Math.max(0, room));
}

/**
 * A turn as the view keeps or leaves it: message indices `from` (inclusive) to `to`
 * (exclusive), pinned ones excepted. An assistant message that called tools and its tool
 * results form one unit, so a request never holds a tool result without its call (the OpenAI
 * API rejects such orphans) nor a call without its results.
 */
interface Unit {
  from: number;
  to: number;
  tokens: number;
}

function unitsOf(messages: readonly ChatMessage[], start: number, pinned: ReadonlySet<number>): Unit[] {
  const units: Unit[] = [];
  let i = start;
  while (i < messages.length) {
    if (pinned.has(i)) {
      i++;
      continue;
    }
    const m = messages[i]!;
    // A tool result whose call is not sent (only possible with a malformed conversation): never sent alone.
    if (m.role === 'tool') {
      i++;
      continue;
    }
    let to = i + 1;
    let tokens = estimateTokens(m);
    if (m.role === 'assistant' && m.toolCalls && m.toolCalls.length > 0) {
      while (to < messages.length && messages[to]!.role === 'tool' && !pinned.has(to)) tokens += estimateTokens(messages[to++]!);
    }
    units.push({ from: i, to, tokens });
    i = to;
  }
  return units;
}

/** How many of `units`' last ones fit in `room` tokens: at least the last one (the newest turn is always sent). */
function fitting(units: readonly Unit[], room: number): number {
  let used = 0;
  let kept = 0;
  for (let i = units.length - 1; i >= 0; i--) {
    used += units[i]!.tokens;
    if (used > room && kept > 0) break;
    kept++;
  }
  return kept;
}

/** The request's messages: the pinned ones and the kept units in their order, the summary before the first kept unit. */
function assemble(messages: readonly ChatMessage[], pinned: ReadonlySet<number>, kept: readonly Unit[], summary: string | undefined): ChatMessage[] {
  const out: ChatMessage[] = [];
  const firstKept = kept[0]?.from ?? messages.length;
  let summarized = summary === undefined;
  let k = 0;
  for (let i = 0; i < messages.length; i++) {
    if (!summarized && i >= firstKept) {
      out.push(summaryMessage(summary!));
      summarized = true;
    }
    if (pinned.has(i)) out.push(messages[i]!);
    else if (k < kept.length && i >= kept[k]!.from && i < kept[k]!.to) {
      out.push(messages[i]!);
      if (i === kept[k]!.to - 1) k++;
    }
  }
  if (!summarized) out.push(summaryMessage(summary!));
  return out;
}

/** What a request sends, and, when older turns must first be summarized, which. */
export interface HistoryView {
  messages: readonly ChatMessage[];
  /** The messages a new summary must cover (with the summary so far) and where it ends. */
  summarize?: { messages: ChatMessage[]; upTo: number };
}

/**
 * The messages sent for `messages` under `history`: all of them (the same array) while they
 * fit `maxTokens`; else, for `'trim'`, the pinned messages and the newest turns that fit; for
 * `'summarize'`, the pinned messages, the summary and the newest turns — and, when turns not
 * yet summarized no longer fit, `summarize` says which to summarize first (then build the view
 * again with the new summary). A summary drops turns down to half of the room left, so the next
 * one is needed only several turns later.
 */
export function historyView(messages: readonly ChatMessage[], history: HistoryInput): HistoryView {
  const { policy } = history;
  const pinned = new Set([0, history.pinned].filter((i) => i < messages.length));
  const summary = policy.strategy === 'summarize' ? history.summary : undefined;
  const start = summary?.upTo ?? 0;
  let pinnedTokens = 0;
  for (const i of pinned) pinnedTokens += estimateTokens(messages[i]!);
  const units = unitsOf(messages, start, pinned);
  const summaryTokens = summary ? estimateTokens(summaryMessage(summary.text)) : 0;
  let total = pinnedTokens + summaryTokens;
  for (const u of units) total += u.tokens;
  if (total <= policy.maxTokens) {
    // Nothing left out: the conversation as stored (no copy), or with its summary.
    if (!summary && start === 0 && units.reduce((n, u) => n + (u.to - u.from), 0) + pinned.size === messages.length) return { messages };
    return { messages: assemble(messages, pinned, units, summary?.text) };
  }
  if (policy.strategy === 'trim') {
    const kept = units.slice(units.length - fitting(units, policy.maxTokens - pinnedTokens));
    return { messages: assemble(messages, pinned, kept, undefined) };
  }
  const room = Math.floor((policy.maxTokens - pinnedTokens - summaryBudget(policy)) / 2);
  const keep = fitting(units, room);
  const dropped = units.slice(0, units.length - keep);
  const kept = units.slice(units.length - keep);
  // Only the newest turn, and it alone is over the budget: nothing to summarize, it is sent as it is.
  if (dropped.length === 0) return { messages: assemble(messages, pinned, kept, summary?.text) };
  const upTo = units[units.length - keep]!.from;
  const covered: ChatMessage[] = [];
  for (const u of dropped) for (let i = u.from; i < u.to; i++) covered.push(messages[i]!);
  return { messages: assemble(messages, pinned, kept, summary?.text), summarize: { messages: covered, upTo } };
}

/** The conversation turns a summary call reads, as one text (tool calls and results included). */
function transcript(messages: readonly ChatMessage[]): string {
  return messages
    .map((m) => {
      const calls = (m.toolCalls ?? []).map((c) => `\n[calls ${c.name}(${c.arguments})]`).join('');
      return `${m.role === 'tool' ? `tool result (${m.toolCallId ?? ''})` : m.role}: ${m.content}${calls}`;
    })
    .join('\n\n');
}

/** The request of a summary call: the summary so far, extended by the turns it must now cover. */
export function summaryRequest(previous: string | undefined, turns: readonly ChatMessage[]): ChatMessage[] {
  const before = previous ? `The summary so far:\n${previous}\n\nExtend it with these later turns:\n` : 'Summarize these turns:\n';
  return [
    { role: 'system', content: SUMMARY_INSTRUCTIONS },
    { role: 'user', content: `${before}${transcript(turns)}` },
  ];
}
