import OpenAI from 'openai';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { ModelRequest } from '../../src/models/scripted.js';
import { openaiModel } from '../../src/models/openai.js';
import { startOpenAIServer, type OpenAIServer, type ScriptedReply } from '../support/openai-server.js';

const servers: OpenAIServer[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

async function serve(handler: (body: any, index: number) => ScriptedReply): Promise<OpenAIServer> {
  const server = await startOpenAIServer(handler);
  servers.push(server);
  return server;
}

function request(overrides: Partial<ModelRequest> = {}): ModelRequest {
  return {
    agentId: 'agent',
    swarmId: 'swarm',
    messages: [{ role: 'user', content: 'Hello' }],
    tools: [],
    signal: new AbortController().signal,
    ...overrides,
  };
}

const fast = { 'retry-after-ms': '10' };

describe('openaiModel', () => {
  it('streams text through onText in order and maps usage', async () => {
    const server = await serve(() => ({ chunks: ['Hel', 'lo, ', 'world'], usage: { prompt_tokens: 11, completion_tokens: 3 } }));
    const model = openaiModel({ model: 'test-model', baseURL: server.url, apiKey: 'k' });
    const seen: string[] = [];

    const response = await model.call(request({ onText: (c) => seen.push(c) }));

    expect(model.name).toBe('test-model');
    expect(response).toEqual({ text: 'Hello, world', usage: { inputTokens: 11, outputTokens: 3 } });
    expect(seen).toEqual(['Hel', 'lo, ', 'world']);
  });

  it('accumulates two streamed tool calls whose arguments arrive in interleaved pieces', async () => {
    const toolCalls = [
      { id: 'call_a', name: 'get_forecast', arguments: '{"day":"Saturday","units":"metric"}' },
      { id: 'call_b', name: 'handoff_to_planner', arguments: '{"request":"plan a hike"}' },
    ];
    const server = await serve(() => ({ toolCalls }));
    const model = openaiModel({ model: 'm', baseURL: server.url, apiKey: 'k' });

    const response = await model.call(request());

    expect(response.toolCalls).toEqual(toolCalls);
    expect(response.text).toBeUndefined();
  });

  it('sends mapped messages, function tools and stream: true', async () => {
    const server = await serve(() => ({ text: 'ok' }));
    const model = openaiModel({ model: 'm', baseURL: server.url, apiKey: 'k' });
    const parameters = { type: 'object', properties: { day: { type: 'string' } }, required: ['day'] };

    await model.call(
      request({
        messages: [
          { role: 'system', content: 'Be brief.' },
          { role: 'user', content: 'Weather?' },
          { role: 'assistant', content: '', toolCalls: [{ id: 'c1', name: 'get_forecast', arguments: '{"day":"Sat"}' }] },
          { role: 'tool', toolCallId: 'c1', content: '{"sky":"sunny"}' },
          { role: 'assistant', content: 'Sunny.' },
        ],
        tools: [{ name: 'get_forecast', description: 'Forecast for a day', parameters }],
      }),
    );

    const body = server.requests[0];
    expect(body.model).toBe('m');
    expect(body.stream).toBe(true);
    expect(body.stream_options).toEqual({ include_usage: true });
    expect(body.messages).toEqual([
      { role: 'system', content: 'Be brief.' },
      { role: 'user', content: 'Weather?' },
      {
        role: 'assistant',
        content: null,
        tool_calls: [{ id: 'c1', type: 'function', function: { name: 'get_forecast', arguments: '{"day":"Sat"}' } }],
      },
      { role: 'tool', tool_call_id: 'c1', content: '{"sky":"sunny"}' },
      { role: 'assistant', content: 'Sunny.' },
    ]);
    expect(body.tools).toEqual([{ type: 'function', function: { name: 'get_forecast', description: 'Forecast for a day', parameters } }]);
  });

  it('omits tools when there are none', async () => {
    const server = await serve(() => ({ text: 'ok' }));
    await openaiModel({ model: 'm', baseURL: server.url, apiKey: 'k' }).call(request());
    expect(server.requests[0]).not.toHaveProperty('tools');
  });

  it('works without streaming', async () => {
    const toolCalls = [{ id: 'c9', name: 'complete', arguments: '{"result":"done"}' }];
    const server = await serve((_, i) => (i === 0 ? { text: 'plain answer', usage: { prompt_tokens: 5, completion_tokens: 2 } } : { toolCalls }));
    const model = openaiModel({ model: 'm', baseURL: server.url, apiKey: 'k', stream: false });
    const seen: string[] = [];

    expect(await model.call(request({ onText: (c) => seen.push(c) }))).toEqual({
      text: 'plain answer',
      usage: { inputTokens: 5, outputTokens: 2 },
    });
    expect(await model.call(request())).toEqual({ toolCalls });
    expect(server.requests[0].stream).toBeFalsy();
    expect(seen).toEqual([]);
  });

  it('retries a 429 honouring retry-after-ms', async () => {
    const server = await serve((_, i) => (i === 0 ? { status: 429, headers: fast, body: '{"error":{"message":"rate limited"}}' } : { text: 'after 429' }));
    const model = openaiModel({ model: 'm', baseURL: server.url, apiKey: 'k' });

    expect((await model.call(request())).text).toBe('after 429');
    expect(server.requests).toHaveLength(2);
  });

  it('retries a 500', async () => {
    const server = await serve((_, i) => (i === 0 ? { status: 500, headers: fast } : { chunks: ['a', 'b'] }));
    const model = openaiModel({ model: 'm', baseURL: server.url, apiKey: 'k' });

    expect((await model.call(request())).text).toBe('ab');
    expect(server.requests).toHaveLength(2);
  });

  it('gives up on a persistent 500 after maxRetries + 1 attempts', async () => {
    const server = await serve(() => ({ status: 500, headers: fast, body: '{"error":{"message":"boom"}}' }));
    const model = openaiModel({ model: 'm', baseURL: server.url, apiKey: 'k', maxRetries: 1 });

    const error = await model.call(request()).catch((e: unknown) => e);

    expect(error).toBeInstanceOf(Error);
    expect((error as Error).message).toMatch(/^openaiModel\(m\): 500 boom/);
    expect((error as Error).cause).toBeInstanceOf(OpenAI.InternalServerError);
    expect(server.requests).toHaveLength(2);
  });

  it('does not retry a 400', async () => {
    const server = await serve(() => ({ status: 400, body: '{"error":{"message":"bad tool schema"}}' }));
    const model = openaiModel({ model: 'm', baseURL: server.url, apiKey: 'k' });

    await expect(model.call(request())).rejects.toThrow(/openaiModel\(m\): 400 bad tool schema/);
    expect(server.requests).toHaveLength(1);
  });

  describe('rejects a malformed reply with a clear Error', () => {
    // A quiet client: the openai client logs unparsable SSE data at level "error".
    const quiet = (url: string) => new OpenAI({ baseURL: url, apiKey: 'k', logLevel: 'off', maxRetries: 0 });
    const cases: Array<[string, boolean, ScriptedReply, RegExp]> = [
      ['non-JSON body labelled JSON', false, { status: 200, body: 'not json' }, /malformed response \(invalid JSON\)/],
      ['non-JSON body as text/plain', false, { status: 200, body: 'not json', headers: { 'content-type': 'text/plain' } }, /malformed response: no choices/],
      ['a completion without choices', false, { status: 200, body: '{"id":"x","choices":[]}' }, /malformed response: no choices/],
      ['garbage SSE data', true, { status: 200, body: 'data: {garbage\n\n', headers: { 'content-type': 'text/event-stream' } }, /malformed response \(invalid JSON\)/],
      [
        'an SSE stream of non-chunks',
        true,
        { status: 200, body: 'data: {"foo":1}\n\ndata: [DONE]\n\n', headers: { 'content-type': 'text/event-stream' } },
        /malformed response: the stream carried no choices/,
      ],
      [
        'a stream that is not SSE',
        true,
        { status: 200, body: 'not json', headers: { 'content-type': 'text/event-stream' } },
        /malformed response: the stream carried no choices/,
      ],
    ];
    it.each(cases)('%s', async (_, stream, reply, message) => {
      const server = await serve(() => reply);
      const model = openaiModel({ model: 'broken-model', client: quiet(server.url), stream });

      const error = await model.call(request()).catch((e: unknown) => e);

      expect(error).toBeInstanceOf(Error);
      expect(error).not.toBeInstanceOf(TypeError);
      expect((error as Error).message).toContain('openaiModel(broken-model)');
      expect((error as Error).message).toMatch(message);
    });
  });

  it('aborts a slow request promptly and the server sees the disconnect', async () => {
    const server = await serve(() => ({ delayMs: 2000, then: { text: 'too late' } }));
    const model = openaiModel({ model: 'm', baseURL: server.url, apiKey: 'k' });
    const controller = new AbortController();
    const started = Date.now();
    setTimeout(() => controller.abort(), 50);

    await expect(model.call(request({ signal: controller.signal }))).rejects.toThrow(/abort/i);

    expect(Date.now() - started).toBeLessThan(1000);
    expect(server.requests).toHaveLength(1); // an abort is not retried
    await vi.waitFor(() => expect(server.disconnects).toEqual([0]), { timeout: 500 });
  });

  it('rejects (not a truncated answer) when aborted mid-stream', async () => {
    // The openai stream iterator ends silently on abort; the model must still reject.
    const server = await serve(() => ({ chunks: ['first', 'second'], chunkDelayMs: 2000 }));
    const model = openaiModel({ model: 'm', baseURL: server.url, apiKey: 'k' });
    const controller = new AbortController();
    const started = Date.now();

    const call = model.call(request({ signal: controller.signal, onText: () => controller.abort() }));

    await expect(call).rejects.toThrow(/abort/i);
    expect(Date.now() - started).toBeLessThan(1000);
    await vi.waitFor(() => expect(server.disconnects).toEqual([0]), { timeout: 500 });
  });

  it('aborts promptly during a retry backoff', async () => {
    const server = await serve(() => ({ status: 503, headers: { 'retry-after-ms': '3000' } }));
    const model = openaiModel({ model: 'm', baseURL: server.url, apiKey: 'k' });
    const controller = new AbortController();
    const started = Date.now();
    setTimeout(() => controller.abort(), 100);

    await expect(model.call(request({ signal: controller.signal }))).rejects.toThrow(/abort/i);
    expect(Date.now() - started).toBeLessThan(1000);
  });

  it('throws a clear error on construction without an API key or base URL', () => {
    const saved = { key: process.env['OPENAI_API_KEY'], url: process.env['OPENAI_BASE_URL'] };
    delete process.env['OPENAI_API_KEY'];
    delete process.env['OPENAI_BASE_URL'];
    try {
      expect(() => openaiModel({ model: 'm' })).toThrow('openaiModel: no API key; set OPENAI_API_KEY or pass apiKey');
      // A local server needs no key.
      expect(() => openaiModel({ model: 'm', baseURL: 'http://127.0.0.1:1/v1' })).not.toThrow();
    } finally {
      if (saved.key !== undefined) process.env['OPENAI_API_KEY'] = saved.key;
      if (saved.url !== undefined) process.env['OPENAI_BASE_URL'] = saved.url;
    }
  });
});
