/**
 * What the composition examples share: a scripted demo model routed by speaker, helpers to
 * read a conversation the way a model would, and the choice between that demo model and
 * OpenAI (the same rule as the activity planner: `OPENAI_API_KEY` set means OpenAI).
 *
 * The scripts only read what a real model would read (the request's messages and tools), so
 * the examples exercise the runtime exactly as a live model would, just deterministically.
 *
 * @module
 */
import {
  openaiModel,
  scriptedModel,
  type ChatMessage,
  type Model,
  type ModelRequest,
  type ModelResponse,
  type Runtime,
  type SwarmStore,
  type ToolCall,
} from '../../src/index.js';

/**
 * Options of the examples' demo models.
 *
 * @example
 * const fast: DemoModelOptions = { latencyMs: [0, 0], chunkDelayMs: 0 };
 */
export interface DemoModelOptions {
  /** Simulated thinking time per call, drawn uniformly from `[min, max]`. Default `[20, 60]`. */
  latencyMs?: readonly [number, number];
  /** Pause between streamed text chunks. Default 6. */
  chunkDelayMs?: number;
}

/**
 * How one speaker (a swarm's orchestrator or an agent, by `req.agentId`) answers.
 *
 * @example
 * const echo: Script = (req) => ({ text: lastUserMessage(req.messages) });
 */
export type Script = (req: ModelRequest) => ModelResponse;

/**
 * A scripted model that answers each speaker with its script, after a little latency, and
 * streams text answers in word chunks. A speaker may also be served by another model (e.g.
 * the activity planner's own demo model), which then handles latency itself.
 *
 * @example
 * const model = createScriptedDemo('demo', { writer: () => ({ text: 'A draft.' }), critic: () => ({ text: 'APPROVED' }) }, { latencyMs: [0, 0] });
 */
export function createScriptedDemo(name: string, speakers: Record<string, Script | Model>, options: DemoModelOptions = {}): Model {
  const [min, max] = options.latencyMs ?? [20, 60];
  const chunkDelay = options.chunkDelayMs ?? 6;
  return scriptedModel(async (req) => {
    const speaker = speakers[req.agentId];
    // A model that cannot answer throws: the runtime turns it into a failed swarm or handoff.
    if (!speaker) throw new Error(`${name}: no script for speaker "${req.agentId}"`);
    if (typeof speaker !== 'function') return speaker.call(req);
    await sleep(min + Math.random() * (max - min), req.signal);
    const response = speaker(req);
    if (response.text && req.onText) {
      for (const chunk of response.text.match(/\S+\s*/g) ?? []) {
        req.onText(chunk);
        await sleep(chunkDelay, req.signal);
      }
    }
    return response;
  }, `${name} (scripted)`);
}

/**
 * One tool call of a conversation with its result (undefined while it has none).
 *
 * @example
 * const e: Exchange = { id: 'c1', name: 'get_forecast', args: { day: 'Saturday' }, result: '{"sky":"sunny"}' };
 */
export interface Exchange {
  id: string;
  name: string;
  args: Record<string, any>;
  result?: string;
}

/**
 * Every tool call of a conversation, in order, paired with its result.
 *
 * @example
 * exchanges(req.messages).filter((e) => e.name === 'handoff_to_critic').length // critic rounds so far
 */
export function exchanges(messages: readonly ChatMessage[]): Exchange[] {
  const results = new Map<string, string>();
  for (const m of messages) if (m.role === 'tool' && m.toolCallId) results.set(m.toolCallId, m.content);
  const out: Exchange[] = [];
  for (const m of messages) {
    for (const c of m.toolCalls ?? []) {
      let args: Record<string, any> = {};
      try {
        args = JSON.parse(c.arguments) as Record<string, any>;
      } catch {
        // A model's malformed arguments read as none, as the runtime rejected that call anyway.
      }
      const result = results.get(c.id);
      out.push({ id: c.id, name: c.name, args, ...(result !== undefined ? { result } : {}) });
    }
  }
  return out;
}

/**
 * The last result of a tool named `name`, or undefined.
 *
 * @example
 * lastResult(req.messages, 'lookup_customer') // '{"id":"C-1001",…}'
 */
export function lastResult(messages: readonly ChatMessage[], name: string): string | undefined {
  return exchanges(messages)
    .filter((e) => e.name === name && e.result !== undefined)
    .at(-1)?.result;
}

/**
 * The text of the last user message (an agent's request, a swarm's input).
 *
 * @example
 * lastUserMessage([{ role: 'user', content: 'hi' }]) // 'hi'
 */
export function lastUserMessage(messages: readonly ChatMessage[]): string {
  return messages.filter((m) => m.role === 'user').at(-1)?.content ?? '';
}

/**
 * An orchestrator's input: the first user message. (Later user messages may be the runtime's
 * corrections, e.g. after an empty answer.)
 *
 * @example
 * inputOf(req.messages) // 'Plan my Saturday'
 */
export function inputOf(messages: readonly ChatMessage[]): string {
  return messages.find((m) => m.role === 'user')?.content ?? '';
}

/**
 * A tool call response. The id is unique within the conversation (the runtime keys calls by
 * id): it counts the assistant messages so far.
 *
 * @example
 * const response: ModelResponse = { toolCalls: [toolCall(req, 'get_forecast', { day: 'Saturday' })] };
 */
export function toolCall(req: ModelRequest, name: string, args: unknown, index = 0): ToolCall {
  const turn = req.messages.filter((m) => m.role === 'assistant').length;
  return { id: `call_${turn}_${index}_${name}`, name, arguments: JSON.stringify(args) };
}

/**
 * A response with these tool calls (several run concurrently), and optional text.
 *
 * @example
 * const both = calls(req, [['swarm_registry_search', { query: 'weather' }], ['swarm_registry_search', { query: 'tickets' }]]);
 */
export function calls(req: ModelRequest, list: readonly [name: string, args: unknown][], text?: string): ModelResponse {
  return { ...(text ? { text } : {}), toolCalls: list.map(([name, args], i) => toolCall(req, name, args, i)) };
}

/**
 * Parses a JSON tool result, or returns undefined when it is not JSON (e.g. an error text).
 *
 * @example
 * parseJson<{ total: number }>('{"total":50}')?.total // 50
 */
export function parseJson<T = any>(text: string | undefined): T | undefined {
  if (text === undefined) return undefined;
  try {
    return JSON.parse(text) as T;
  } catch {
    return undefined;
  }
}

/**
 * A small stable hash (FNV-1a), for deterministic fake ids and prices.
 *
 * @example
 * hash('kayaking|Saturday|3').toString(36).toUpperCase().slice(0, 6) // same every run
 */
export function hash(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 0x01000193) >>> 0;
  return h;
}

/**
 * Resolves after `ms`; rejects when the swarm aborts the call (pause, stop).
 *
 * @example
 * await sleep(50, req.signal);
 */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  if (ms <= 0) return Promise.resolve();
  return new Promise((resolve, reject) => {
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal!.reason);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

/**
 * Options of every example's `create…Runtime`.
 *
 * @example
 * const options: ExampleRuntimeOptions = { env: {} }; // always the offline demo
 */
export interface ExampleRuntimeOptions {
  /** Overrides the environment's choice. */
  model?: Model;
  store?: SwarmStore;
  /** Lease of the runtime on its swarms (see `createRuntime`). */
  leaseMs?: number;
  /** Where to look for `OPENAI_API_KEY`, `OPENAI_BASE_URL`, `XSWARM_MODEL`; default `process.env`. */
  env?: Record<string, string | undefined>;
  /** Latency and streaming of the demo model (when it is chosen). */
  demo?: DemoModelOptions;
}

/**
 * A runtime with an example's definitions, plus the model it chose.
 *
 * @example
 * const describe = ({ model, offline }: ExampleRuntime) => (offline ? 'offline demo' : model.name);
 */
export interface ExampleRuntime {
  runtime: Runtime;
  model: Model;
  /** True when running on the example's own scripted demo model (false for `options.model`). */
  offline: boolean;
}

/**
 * The model an example runs on: `options.model`, else OpenAI when `OPENAI_API_KEY` is set,
 * else the demo model `demo()` builds (built lazily so a live run never creates it).
 *
 * @example
 * const { model, offline } = chooseModel({ env: process.env }, () => createScriptedDemo('demo', { planner: () => ({ text: 'Done.' }) }));
 */
export function chooseModel(options: ExampleRuntimeOptions, demo: () => Model): { model: Model; offline: boolean } {
  if (options.model) return { model: options.model, offline: false };
  const env = options.env ?? process.env;
  const apiKey = env['OPENAI_API_KEY'];
  // `||`: an exported-but-empty variable means "not set", as in openaiModel.
  if (apiKey) {
    const model = openaiModel({ model: env['XSWARM_MODEL'] || 'gpt-4o-mini', apiKey, ...(env['OPENAI_BASE_URL'] ? { baseURL: env['OPENAI_BASE_URL'] } : {}) });
    return { model, offline: false };
  }
  return { model: demo(), offline: true };
}
