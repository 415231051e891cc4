/**
 * A scripted, local OpenAI-compatible Chat Completions server for tests: the real client on
 * the real wire, without the internet.
 *
 * @module
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * The JSON body of a Chat Completions request, loosely typed: tests assert on what arrived.
 *
 * @example
 * const body: ChatCompletionRequestBody = { model: 'm', messages: [{ role: 'user', content: 'hi' }] };
 */
export interface ChatCompletionRequestBody {
  model: string;
  messages: Array<Record<string, unknown>>;
  tools?: Array<Record<string, unknown>>;
  stream?: boolean;
  stream_options?: { include_usage?: boolean };
  [key: string]: unknown;
}

/**
 * A successful completion. Answered as an SSE stream when the request says `stream: true`,
 * else as one JSON completion. `text` defaults to `chunks.join('')`; `chunkDelayMs` pauses
 * before each stream event after the first text chunk (to abort mid-stream).
 *
 * @example
 * const reply: CompletionReply = { chunks: ['Hel', 'lo'], usage: { prompt_tokens: 3, completion_tokens: 2 } };
 */
export interface CompletionReply {
  text?: string;
  toolCalls?: Array<{ id: string; name: string; arguments: string }>;
  usage?: { prompt_tokens: number; completion_tokens: number; prompt_tokens_details?: { cached_tokens: number } };
  chunks?: string[];
  chunkDelayMs?: number;
}

/**
 * A raw HTTP reply, for errors and malformed bodies. `content-type` defaults to JSON.
 *
 * @example
 * const reply: RawReply = { status: 429, headers: { 'retry-after-ms': '10' }, body: '{"error":{"message":"slow down"}}' };
 */
export interface RawReply {
  status: number;
  body?: string;
  headers?: Record<string, string>;
}

/**
 * Waits `delayMs` before answering with `then`; gives up if the client hangs up meanwhile.
 *
 * @example
 * const reply: DelayedReply = { delayMs: 2000, then: { text: 'late' } };
 */
export interface DelayedReply {
  delayMs: number;
  then: ScriptedReply;
}

/**
 * What the handler tells the server to answer.
 *
 * @example
 * const reply: ScriptedReply = { toolCalls: [{ id: 'c1', name: 'f', arguments: '{"a":1}' }] };
 */
export type ScriptedReply = CompletionReply | RawReply | DelayedReply;

/**
 * A running server. `requests` holds every received body in order (a raw string if it was
 * not JSON); `disconnects` the indices of requests whose client hung up before the reply ended.
 *
 * @example
 * const server: OpenAIServer = await startOpenAIServer(() => ({ text: 'hi' }));
 * await server.close();
 */
export interface OpenAIServer {
  url: string;
  requests: any[];
  disconnects: number[];
  close(): Promise<void>;
}

/**
 * Starts a server on 127.0.0.1 (random port) that answers `POST /v1/chat/completions` with
 * whatever `handler` scripts for each request (`requestIndex` counts from 0, retries included).
 *
 * @example
 * const server = await startOpenAIServer((body, i) =>
 *   i === 0 ? { status: 500, headers: { 'retry-after-ms': '10' } } : { chunks: ['Hi', '!'] });
 * try { const model = openaiModel({ model: 'm', baseURL: server.url, apiKey: 'k' }); }
 * finally { await server.close(); }
 */
export async function startOpenAIServer(
  handler: (body: ChatCompletionRequestBody, requestIndex: number) => ScriptedReply | Promise<ScriptedReply>,
): Promise<OpenAIServer> {
  const requests: any[] = [];
  const disconnects: number[] = [];

  const server = createServer((req, res) => {
    void serve(req, res).catch((error: unknown) => {
      if (!res.headersSent) res.writeHead(599, { 'content-type': 'text/plain' });
      res.end(`test server failure: ${String(error)}`);
    });
  });

  async function serve(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const raw = await readBody(req);
    if (req.method !== 'POST' || req.url !== '/v1/chat/completions') {
      res.writeHead(404, { 'content-type': 'application/json' }).end('{"error":{"message":"not found"}}');
      return;
    }
    let body: ChatCompletionRequestBody;
    try {
      body = JSON.parse(raw) as ChatCompletionRequestBody;
    } catch {
      requests.push(raw);
      res.writeHead(400, { 'content-type': 'application/json' }).end('{"error":{"message":"bad json"}}');
      return;
    }
    const index = requests.push(body) - 1;
    // 'close' before the reply finished means the client went away (abort, timeout).
    res.on('close', () => {
      if (!res.writableFinished) disconnects.push(index);
    });
    let reply = await handler(body, index);
    while ('delayMs' in reply) {
      await sleep(reply.delayMs, res);
      if (res.destroyed) return;
      reply = reply.then;
    }
    if ('status' in reply) {
      res.writeHead(reply.status, { 'content-type': 'application/json', ...reply.headers }).end(reply.body ?? '');
    } else if (body.stream) {
      await writeStream(res, body, reply);
    } else {
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(completion(body, reply)));
    }
  }

  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/v1`,
    requests,
    disconnects,
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.close((error) => (error ? reject(error) : resolve()));
        // Keep-alive sockets and delayed replies would otherwise hold close() open.
        server.closeAllConnections();
      }),
  };
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const parts: Buffer[] = [];
    req.on('data', (part: Buffer) => parts.push(part));
    req.on('end', () => resolve(Buffer.concat(parts).toString('utf8')));
    req.on('error', reject);
  });
}

/** Sleeps, but wakes early when the client disconnects so nothing is written to a dead socket. */
function sleep(ms: number, res: ServerResponse): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      res.off('close', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    res.on('close', done);
  });
}

function textOf(reply: CompletionReply): string {
  return reply.text ?? reply.chunks?.join('') ?? '';
}

function completion(body: ChatCompletionRequestBody, reply: CompletionReply) {
  const toolCalls = reply.toolCalls ?? [];
  return {
    id: 'chatcmpl-test',
    object: 'chat.completion',
    created: Math.floor(Date.now() / 1000),
    model: body.model,
    choices: [
      {
        index: 0,
        message: {
          role: 'assistant',
          content: toolCalls.length > 0 && !textOf(reply) ? null : textOf(reply),
          refusal: null,
          ...(toolCalls.length > 0 ? { tool_calls: toolCalls.map((c) => ({ id: c.id, type: 'function', function: { name: c.name, arguments: c.arguments } })) } : {}),
        },
        finish_reason: toolCalls.length > 0 ? 'tool_calls' : 'stop',
        logprobs: null,
      },
    ],
    ...(reply.usage ? { usage: { ...reply.usage, total_tokens: reply.usage.prompt_tokens + reply.usage.completion_tokens } } : {}),
  };
}

/**
 * Streams like OpenAI does: a role delta, one delta per text chunk, then every tool call's
 * id+name followed by its arguments in ≥2 pieces (interleaved across calls, so a client that
 * ignores `index` gets them wrong), a finish delta, a usage chunk when asked for, and [DONE].
 */
async function writeStream(res: ServerResponse, body: ChatCompletionRequestBody, reply: CompletionReply): Promise<void> {
  const base = { id: 'chatcmpl-test', object: 'chat.completion.chunk', created: Math.floor(Date.now() / 1000), model: body.model };
  const chunk = (delta: object, finish_reason: string | null = null) => ({
    ...base,
    choices: [{ index: 0, delta, finish_reason, logprobs: null }],
  });
  const toolCalls = reply.toolCalls ?? [];
  const events: object[] = [chunk({ role: 'assistant', content: '' })];
  for (const text of reply.chunks ?? (reply.text ? [reply.text] : [])) events.push(chunk({ content: text }));
  toolCalls.forEach((c, index) => events.push(chunk({ tool_calls: [{ index, id: c.id, type: 'function', function: { name: c.name, arguments: '' } }] })));
  const pieces = toolCalls.map((c) => split(c.arguments));
  for (let round = 0; round < Math.max(0, ...pieces.map((p) => p.length)); round++) {
    pieces.forEach((p, index) => {
      const piece = p[round];
      if (piece !== undefined) events.push(chunk({ tool_calls: [{ index, function: { arguments: piece } }] }));
    });
  }
  events.push(chunk({}, toolCalls.length > 0 ? 'tool_calls' : 'stop'));
  if (reply.usage && body.stream_options?.include_usage) {
    events.push({ ...base, choices: [], usage: { ...reply.usage, total_tokens: reply.usage.prompt_tokens + reply.usage.completion_tokens } });
  }

  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  for (const [i, event] of events.entries()) {
    // Events 0 and 1 (role, first text) go out at once, so a test can abort mid-stream.
    if (i > 1 && reply.chunkDelayMs) await sleep(reply.chunkDelayMs, res);
    if (res.destroyed) return;
    res.write(`data: ${JSON.stringify(event)}\n\n`);
  }
  res.end('data: [DONE]\n\n');
}

/** Splits into three roughly equal pieces (at least two when there are ≥2 characters). */
function split(text: string): string[] {
  if (text.length < 2) return [text];
  const size = Math.max(1, Math.ceil(text.length / 3));
  const pieces: string[] = [];
  for (let i = 0; i < text.length; i += size) pieces.push(text.slice(i, i + size));
  return pieces;
}
