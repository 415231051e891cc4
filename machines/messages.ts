/**
 * The conversation vocabulary shared by machines, actors and model adapters.
 *
 * These are plain JSON shapes (OpenAI Chat Completions style) because they live in the
 * swarm machine's context and therefore in every persisted snapshot.
 *
 * @module
 */

/**
 * One tool call as a model asked for it. `arguments` is the raw JSON text the model produced;
 * it is parsed and validated by the runtime, never trusted.
 */
export interface ToolCall {
  id: string;
  name: string;
  arguments: string;
}

/**
 * One message of a conversation. `toolCalls` only on assistant messages, `toolCallId` only on
 * tool messages.
 */
export interface ChatMessage {
  role: 'system' | 'user' | 'assistant' | 'tool';
  content: string;
  toolCalls?: ToolCall[];
  toolCallId?: string;
}

/** Token usage as reported by a model. */
export interface Usage {
  inputTokens: number;
  outputTokens: number;
  /** Of `inputTokens`, those read from the provider's prompt cache (OpenAI: `prompt_tokens_details.cached_tokens`). */
  cachedInputTokens?: number;
}

/** What a model answered: text, tool calls, or both. */
export interface ModelResponse {
  text?: string;
  toolCalls?: ToolCall[];
  usage?: Usage;
}

/** A tool as the model sees it: a name, a description and a JSON Schema for its arguments. */
export interface ToolSpec {
  name: string;
  description: string;
  parameters: Record<string, unknown>;
}
