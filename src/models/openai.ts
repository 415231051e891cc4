/**
 * A {@link Model} backed by the official `openai` client speaking Chat Completions: OpenAI
 * itself or any OpenAI-compatible server (vLLM, llama.cpp, Ollama, LM Studio, gateways).
 *
 * @module
 */
// Types for the code below only: no exported declaration may name them (the core's .d.ts would
// then need the optional package), see OpenAIClientLike.
import type OpenAI from 'openai';
import type { ChatMessage, Model, ModelRequest, ModelResponse, ToolCall, ToolSpec } from './scripted.js';
import { errorText } from '../../machines/error-text.js';
import { abortable } from '../util/abort.js';
import { importIfInstalled, missingPackages } from '../util/optional.js';

type WireMessage = OpenAI.Chat.ChatCompletionMessageParam;
type WireTool = OpenAI.Chat.ChatCompletionFunctionTool;
type WireUsage = OpenAI.CompletionUsage;

// Imported only where installed, so that `xswarm` loads without the optional `openai` package;
// an ES import (not require) so a caller's `import OpenAI from 'openai'` sees the same classes
// (`error.cause instanceof OpenAI.APIError`).
const openai = await importIfInstalled('openai', () => import('openai'));

/**
 * The part of the `openai` package's `OpenAI` client that {@link openaiModel} uses: an `OpenAI`
 * (or `AzureOpenAI`) instance is one. Written out here rather than naming the class so that
 * xswarm's declarations type-check in a project that does not install the optional `openai`
 * package (the core re-exports {@link OpenAIModelOptions}).
 */
export interface OpenAIClientLike {
  /** The key the client sends, kept out of what the runtime persists. */
  apiKey?: string | null;
  chat: {
    completions: {
      /** `OpenAI#chat.completions.create`: a completion, or a stream of chunks with `stream: true`. */
      create(body: object, options?: object): PromiseLike<unknown>;
    };
  };
}

/** Options for {@link openaiModel}. */
export interface OpenAIModelOptions {
  /** The model id sent in every request; also the {@link Model.name}. */
  model: string;
  /** Defaults to `OPENAI_BASE_URL`, then to the OpenAI API. */
  baseURL?: string;
  /** Defaults to `OPENAI_API_KEY`. */
  apiKey?: string;
  /**
   * A preconfigured client (`new OpenAI({ ... })`); `baseURL`, `apiKey` and the environment are
   * then ignored.
   */
  client?: OpenAIClientLike;
  /** Retries of 408/409/429/5xx and connection failures, done by the client. Default 3. */
  maxRetries?: number;
  /** Per attempt, until response headers arrive (the client's notion of a timeout). */
  timeoutMs?: number;
  /** Stream the answer (default `true`) so `onText` sees text as it is generated. */
  stream?: boolean;
}

const DEFAULT_MAX_RETRIES = 3;
/** The key sent to a local server when none is configured (the client requires one). */
const NO_KEY = 'unset';

/**
 * Creates a {@link Model} that calls Chat Completions through the official `openai` client.
 *
 * Retries (with backoff, honouring `retry-after-ms` / `retry-after`) are left to the client so
 * they are never doubled. Aborting `request.signal` aborts the HTTP request and rejects with the
 * signal's reason. Any other failure rejects with an `Error` whose message names the model and
 * whose `cause` is the original error (an `OpenAI.APIError` for HTTP errors). The API key is
 * declared in `secrets`, so a runtime redacts it from everything it persists.
 *
 * @example
 * import { openaiModel } from 'xswarm'; // or from 'xswarm/openai'
 * const model = openaiModel({ model: 'gpt-4o-mini' }); // needs OPENAI_API_KEY
 * const local = openaiModel({ model: 'qwen2.5', baseURL: 'http://127.0.0.1:8000/v1', stream: false });
 * const answer = await model.call({ agentId: 'a', swarmId: 's', tools: [],
 *   messages: [{ role: 'user', content: 'Hi' }], signal: new AbortController().signal,
 *   onText: (chunk) => process.stdout.write(chunk) });
 */
export function openaiModel(options: OpenAIModelOptions): Model {
  // The structural type of the option is what users pass; inside, the client's own types.
  const client = (options.client as OpenAI | undefined) ?? createClient(options);
  const name = options.model;
  const stream = options.stream ?? true;
  // Per-request options so that `maxRetries`/`timeoutMs` also apply to a caller's own client.
  const requestOptions = {
    ...(options.maxRetries !== undefined ? { maxRetries: options.maxRetries } : {}),
    ...(options.timeoutMs !== undefined ? { timeout: options.timeoutMs } : {}),
  };

  // The key, so that the runtime keeps it out of what it persists: providers and proxies may
  // echo it in error messages. Not the placeholder sent to keyless local servers.
  const secrets = client.apiKey && client.apiKey !== NO_KEY ? [client.apiKey] : [];

  return {
    name,
    secrets,
    async call(request) {
      request.signal.throwIfAborted();
      const body = {
        model: name,
        messages: request.messages.map(toWireMessage),
        ...(request.tools.length > 0 ? { tools: request.tools.map(toWireTool) } : {}),
        // The ceiling a budget reserved the call with: the provider stops there.
        ...(request.maxOutputTokens !== undefined ? { max_tokens: request.maxOutputTokens } : {}),
      };
      const opts = { ...requestOptions, signal: request.signal };
      try {
        // The client checks the signal only between attempts: without this wait an abort during
        // a retry backoff would wait out the whole `retry-after`.
        const response = await abortable(stream ? streamed(client, body, opts, request) : unstreamed(client, body, opts), request.signal);
        // The client's stream iterator ends *silently* when aborted mid-body; never hand a
        // truncated answer to a caller that already gave up.
        request.signal.throwIfAborted();
        return response;
      } catch (error) {
        request.signal.throwIfAborted();
        // The client surfaces a non-JSON body as a bare SyntaxError; say what it means.
        const reason = error instanceof SyntaxError ? `malformed response (invalid JSON): ${error.message}` : errorText(error);
        throw new Error(`openaiModel(${name}): ${reason}`, { cause: error });
      }
    },
  };
}

function createClient(options: OpenAIModelOptions): OpenAI {
  // `||` rather than `??`: an exported-but-empty variable means "not set".
  const baseURL = options.baseURL || process.env['OPENAI_BASE_URL'] || undefined;
  let apiKey = options.apiKey || process.env['OPENAI_API_KEY'];
  if (!apiKey) {
    // Local servers usually ignore the key, but the client refuses to start without one.
    if (!baseURL) throw new Error('openaiModel: no API key; set OPENAI_API_KEY or pass apiKey');
    apiKey = NO_KEY;
  }
  if (!openai) throw missingPackages('openaiModel()', ['openai']);
  return new openai.OpenAI({
    apiKey,
    baseURL,
    maxRetries: options.maxRetries ?? DEFAULT_MAX_RETRIES,
    ...(options.timeoutMs !== undefined ? { timeout: options.timeoutMs } : {}),
  });
}

type Body = { model: string; messages: WireMessage[]; tools?: WireTool[] };
type Opts = { signal: AbortSignal; maxRetries?: number; timeout?: number };

async function unstreamed(client: OpenAI, body: Body, opts: Opts): Promise<ModelResponse> {
  // Typed as unknown: a non-JSON content type makes the client return the body as a string,
  // and a compatible server may omit anything.
  const completion: unknown = await client.chat.completions.create({ ...body, stream: false }, opts);
  const choice = (completion as { choices?: unknown } | null)?.choices;
  const message = Array.isArray(choice) ? (choice[0] as { message?: unknown } | undefined)?.message : undefined;
  if (!message || typeof message !== 'object') throw malformed('no choices in the completion');
  const m = message as { content?: unknown; refusal?: unknown; tool_calls?: unknown };
  const toolCalls = Array.isArray(m.tool_calls) ? m.tool_calls.map(fromWireToolCall) : [];
  // A refusal is the model's answer in words; surface it rather than an empty reply.
  const text = typeof m.content === 'string' ? m.content : typeof m.refusal === 'string' ? m.refusal : '';
  return toResponse(text, toolCalls, (completion as { usage?: WireUsage }).usage);
}

async function streamed(client: OpenAI, body: Body, opts: Opts, request: ModelRequest): Promise<ModelResponse> {
  const chunks = await client.chat.completions.create({ ...body, stream: true, stream_options: { include_usage: true } }, opts);
  let text = '';
  let sawChoice = false;
  let usage: WireUsage | undefined;
  const calls = new Map<number, { id: string; name: string; arguments: string }>();
  for await (const chunk of chunks) {
    if (!chunk || typeof chunk !== 'object') throw malformed('a stream chunk is not an object');
    if (chunk.usage) usage = chunk.usage;
    // The final usage chunk has `choices: []`; garbage may have no `choices` at all.
    const delta = Array.isArray(chunk.choices) ? chunk.choices[0]?.delta : undefined;
    if (!delta) continue;
    sawChoice = true;
    const piece = delta.content ?? delta.refusal;
    if (piece) {
      text += piece;
      request.onText?.(piece);
    }
    delta.tool_calls?.forEach((d, position) => {
      // Arguments arrive in pieces keyed by `index`; calls may interleave.
      const index = d.index ?? position;
      const call = calls.get(index) ?? { id: '', name: '', arguments: '' };
      // Some compatible servers repeat id/name in every delta: first one wins.
      call.id ||= d.id ?? '';
      call.name ||= d.function?.name ?? '';
      call.arguments += d.function?.arguments ?? '';
      calls.set(index, call);
    });
  }
  if (!sawChoice) throw malformed('the stream carried no choices');
  const toolCalls = [...calls.entries()]
    .sort(([a], [b]) => a - b)
    .map(([index, call]) => {
      if (!call.name) throw malformed(`streamed tool call #${index} has no name`);
      return { ...call, id: call.id || `call_${index}` };
    });
  return toResponse(text, toolCalls, usage);
}

function toResponse(text: string, toolCalls: ToolCall[], usage: WireUsage | undefined): ModelResponse {
  const response: ModelResponse = {};
  // Always say *something*: text when there is any, or when there is nothing else.
  if (text || toolCalls.length === 0) response.text = text;
  if (toolCalls.length > 0) response.toolCalls = toolCalls;
  if (usage) {
    response.usage = { inputTokens: usage.prompt_tokens ?? 0, outputTokens: usage.completion_tokens ?? 0 };
    // Part of `prompt_tokens`, read from the provider's prompt cache (billed at a lower price).
    const cached = usage.prompt_tokens_details?.cached_tokens;
    if (typeof cached === 'number') response.usage.cachedInputTokens = cached;
  }
  return response;
}

function fromWireToolCall(raw: unknown, index: number): ToolCall {
  const call = raw as { id?: unknown; function?: { name?: unknown; arguments?: unknown } } | null;
  const name = call?.function?.name;
  if (typeof name !== 'string' || !name) throw malformed(`tool call #${index} has no function name`);
  const args = call?.function?.arguments;
  return {
    id: typeof call?.id === 'string' && call.id ? call.id : `call_${index}`,
    name,
    arguments: typeof args === 'string' ? args : JSON.stringify(args ?? {}),
  };
}

function toWireMessage(message: ChatMessage): WireMessage {
  switch (message.role) {
    case 'system':
    case 'user':
      return { role: message.role, content: message.content };
    case 'tool':
      return { role: 'tool', tool_call_id: message.toolCallId ?? '', content: message.content };
    case 'assistant': {
      if (!message.toolCalls?.length) return { role: 'assistant', content: message.content };
      return {
        role: 'assistant',
        // OpenAI wants null, not "", beside tool calls.
        content: message.content || null,
        tool_calls: message.toolCalls.map((c) => ({
          id: c.id,
          type: 'function' as const,
          function: { name: c.name, arguments: c.arguments },
        })),
      };
    }
  }
}

function toWireTool(tool: ToolSpec): WireTool {
  return { type: 'function', function: { name: tool.name, description: tool.description, parameters: tool.parameters } };
}

function malformed(detail: string): Error {
  return new Error(`malformed response: ${detail}`);
}
