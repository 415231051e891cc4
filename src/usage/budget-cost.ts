/**
 * What a model call may cost at worst, for a budget to reserve before the call is made, and what
 * it did cost, to settle after.
 *
 * The prompt estimate is deterministic and an upper bound for byte-level BPE tokenizers (every
 * OpenAI, Anthropic and Llama tokenizer): a token covers at least one byte, so a prompt has at
 * most as many tokens as its UTF-8 bytes, plus a few per message for the chat template. It is
 * generous (English runs about four bytes a token), which makes a cap refuse early rather than
 * ever be overspent.
 *
 * @module
 */
import type { ChatMessage, ToolSpec, Usage } from '../../machines/messages.js';
import type { ModelPrice, Prices } from './report.js';

/** Tokens a chat template may add around one message (role markers, separators). */
const PER_MESSAGE = 8;

const encoder = new TextEncoder();
/** UTF-8 length without allocating for plain ASCII, the common case. */
function bytes(text: string): number {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: the ASCII range is what is tested
  return /^[\x00-\x7f]*$/.test(text) ? text.length : encoder.encode(text).length;
}

// Messages and tool lists are immutable and reused turn after turn: each is measured once.
const messageTokens = new WeakMap<ChatMessage, number>();
const toolTokens = new WeakMap<readonly ToolSpec[], number>();

/** The most tokens `messages` and `tools` can take as a prompt (see the module's note). */
export function promptTokensAtMost(messages: readonly ChatMessage[], tools: readonly ToolSpec[]): number {
  let n = 0;
  for (const m of messages) {
    let t = messageTokens.get(m);
    if (t === undefined) {
      t = PER_MESSAGE + bytes(m.content) + (m.toolCalls ? bytes(JSON.stringify(m.toolCalls)) : 0) + (m.toolCallId ? bytes(m.toolCallId) : 0);
      messageTokens.set(m, t);
    }
    n += t;
  }
  let t = toolTokens.get(tools);
  if (t === undefined) toolTokens.set(tools, (t = tools.length === 0 ? 0 : bytes(JSON.stringify(tools))));
  return n + t;
}

/** What `usage` cost at `price`, in USD (cached input at its own price when it has one). */
export function usdOf(price: ModelPrice, usage: Usage): number {
  const cached = Math.min(usage.cachedInputTokens ?? 0, usage.inputTokens);
  return ((usage.inputTokens - cached) * price.inputPerMTok + cached * (price.cachedInputPerMTok ?? price.inputPerMTok) + usage.outputTokens * price.outputPerMTok) / 1e6;
}

/** A model's price, or undefined when the table has none for it (no price is guessed). */
export function priceOf(prices: Prices | undefined, model: string): ModelPrice | undefined {
  return prices && Object.hasOwn(prices, model) ? prices[model] : undefined;
}
