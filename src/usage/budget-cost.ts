/**
 * What a model call may cost at worst, for a budget to reserve before the call is made, and what
 * it did cost, to settle after.
 *
 * The prompt estimate is deterministic and an upper bound for byte-level BPE tokenizers (every
 * OpenAI, Anthropic and Llama tokenizer): a token covers at least one byte, so a prompt has at
 * most as many tokens as its UTF-8 bytes, plus what the chat template adds per message and tool
 * call. It is generous (English runs about four bytes a token), which makes a cap refuse early
 * rather than ever be overspent.
 *
 * @module
 */
import type { ChatMessage, ToolSpec, Usage } from '../../machines/messages.js';
import type { ModelPrice, Prices } from './report.js';

/** Tokens a chat template may add around one message (role markers, separators). */
const PER_MESSAGE = 8;

/**
 * Tokens a chat template may add around one tool call beyond its id, name and arguments: it is
 * rendered as a JSON object (`{"id":…,"type":"function","function":{"name":…,"arguments":…}}`,
 * about 60 bytes of keys and punctuation).
 */
const PER_TOOL_CALL = 64;

// Tool lists are shared by every step of a configuration: each is measured once.
const toolTokens = new WeakMap<readonly ToolSpec[], number>();

/** The tokens a prompt of `messages` and `tools` can take at most (see the module's note). */
export function promptTokensAtMost(messages: readonly ChatMessage[], tools: readonly ToolSpec[]): number {
  // Measured afresh on each call: a cache keyed by message (a WeakMap) cost the garbage
  // collector more than the native byte count it saves.
  let n = 0;
  for (const m of messages) {
    n += PER_MESSAGE + Buffer.byteLength(m.content, 'utf8');
    if (m.toolCalls) {
      for (const c of m.toolCalls) n += PER_TOOL_CALL + Buffer.byteLength(c.id, 'utf8') + Buffer.byteLength(c.name, 'utf8') + Buffer.byteLength(c.arguments, 'utf8');
    }
    if (m.toolCallId) n += Buffer.byteLength(m.toolCallId, 'utf8');
  }
  let t = toolTokens.get(tools);
  if (t === undefined) toolTokens.set(tools, (t = tools.length === 0 ? 0 : Buffer.byteLength(JSON.stringify(tools), 'utf8')));
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
