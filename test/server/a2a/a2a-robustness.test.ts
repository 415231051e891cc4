/**
 * The A2A endpoint against hostile or careless JSON-RPC bodies, sent raw over HTTP: deep
 * nesting, ids of the wrong type, params of the wrong shape, for every method in v1.0 and
 * v0.3. Each must be a protocol error the client caused (-32600, -32602; HTTP 200, as the SDK
 * answers such errors), never an internal error, and must start nothing.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createRuntime, defineSwarm, type Runtime, scriptedModel } from '../../../src/index.js';
import { serve, type SwarmServer } from '../../../src/server/index.js';
import { request } from '../../support/server-clients.js';

const echo = defineSwarm({ id: 'echo', description: 'Repeats the request', instructions: 'Repeat.' });
const data = defineSwarm({ id: 'data', description: 'Takes any JSON', input: z.any(), instructions: 'Look at it.' });

let runtime: Runtime | undefined;
let server: SwarmServer | undefined;
afterEach(async () => {
  await server?.close();
  await runtime?.close();
  server = runtime = undefined;
});

async function start(): Promise<{ base: string; rt: Runtime }> {
  runtime = createRuntime({ swarms: [echo, data], model: scriptedModel(() => ({ text: 'ok' })) });
  server = await serve(runtime);
  return { base: server.url, rt: runtime };
}

const VERSIONS = [
  { name: 'v1.0', headers: { 'a2a-version': '1.0' }, send: 'SendMessage', stream: 'SendStreamingMessage', role: 'ROLE_USER' },
  { name: 'v0.3', headers: {}, send: 'message/send', stream: 'message/stream', role: 'user' },
] as const;

/** A raw POST of `body` (a string is sent as is) to an agent's JSON-RPC endpoint. */
function post(base: string, definitionId: string, body: unknown, headers: Record<string, string> = {}) {
  return request(base, 'POST', `/a2a/${definitionId}`, body, { accept: 'application/json, text/event-stream', ...headers });
}

/**
 * The JSON-RPC error of a response body: JSON, or an SSE stream's error event (v0.3
 * `tasks/resubscribe` always answers as a stream, errors from the handler included).
 */
function errorOf(body: unknown): { code: number; message: string } | undefined {
  if (typeof body !== 'string') return (body as { error?: { code: number; message: string } }).error;
  const line = body.split('\n').find((l) => l.startsWith('data: '));
  return line ? (JSON.parse(line.slice('data: '.length)) as { error?: { code: number; message: string } }).error : undefined;
}

const N = 100_000;
const nestedArray = '['.repeat(N) + ']'.repeat(N);
const nestedObject = '{"a":'.repeat(N) + '1' + '}'.repeat(N);

describe('deeply nested JSON', () => {
  it('a 100,000-level body is an invalid request (-32600), wherever the nesting is, in both versions', async () => {
    const { base, rt } = await start();
    for (const v of VERSIONS) {
      const part = v.name === 'v1.0' ? (d: string) => `{"data":${d}}` : (d: string) => `{"kind":"data","data":${d}}`;
      const message = (id: string, parts: string, extra = '') => `{"messageId":"${id}","role":"${v.role}","parts":[${parts}]${extra}}`;
      const bodies: [string, string, string][] = [
        ['the whole body', 'echo', nestedArray],
        ['a body of nested objects', 'echo', nestedObject],
        ['a data part', 'data', `{"jsonrpc":"2.0","id":7,"method":"${v.send}","params":{"message":${message(`deep-${v.name}`, part(nestedObject))}}}`],
        [
          'an array in a data part',
          'data',
          `{"jsonrpc":"2.0","id":7,"method":"${v.send}","params":{"message":${message(`deeper-${v.name}`, part(`{"x":${nestedArray}}`))}}}`,
        ],
        [
          'message metadata',
          'echo',
          `{"jsonrpc":"2.0","id":7,"method":"${v.send}","params":{"message":${message(`meta-${v.name}`, part('{}'), `,"metadata":${nestedObject}`)}}}`,
        ],
        [
          'request metadata',
          'echo',
          `{"jsonrpc":"2.0","id":7,"method":"${v.send}","params":{"metadata":${nestedObject},"message":${message(`rmeta-${v.name}`, part('{}'))}}}`,
        ],
        ['a streaming request', 'echo', `{"jsonrpc":"2.0","id":7,"method":"${v.stream}","params":{"message":${message(`s-${v.name}`, part(nestedObject))}}}`],
        ['the id', 'echo', `{"jsonrpc":"2.0","id":${nestedArray},"method":"GetTask","params":{"id":"x"}}`],
      ];
      for (const [where, def, body] of bodies) {
        const res = await post(base, def, body, v.headers);
        const label = `${v.name}: ${where}`;
        expect(res.status, label).toBe(200);
        expect(res.headers.get('content-type'), label).toMatch(/^application\/json/);
        expect(res.body.error, label).toEqual({ code: -32600, message: 'Invalid Request: the JSON nests deeper than 100 levels' });
        // The id is echoed when it can be read, else null (JSON-RPC 2.0 §5).
        expect(res.body.id, label).toBe(where === 'the id' || !body.includes('"id":7') ? null : 7);
      }
    }
    // Nothing was started, and the endpoint still answers normally.
    expect(await rt.list()).toEqual([]);
    const ok = await post(base, 'data', {
      jsonrpc: '2.0',
      id: 1,
      method: 'message/send',
      params: { message: { kind: 'message', messageId: 'fine', role: 'user', parts: [{ kind: 'data', data: { a: { b: { c: [1, [2, [3]]] } } } }] } },
    });
    expect(ok.body.result).toMatchObject({ kind: 'task', status: { state: 'completed' } });
  });
});

describe('ids and params of the wrong type', () => {
  const TASK_METHODS: { name: string; headers: Record<string, string>; methods: string[] }[] = [
    { name: 'v1.0', headers: { 'a2a-version': '1.0' }, methods: ['GetTask', 'CancelTask', 'SubscribeToTask'] },
    { name: 'v0.3', headers: {}, methods: ['tasks/get', 'tasks/cancel', 'tasks/resubscribe'] },
  ];

  it('a task id that is not a string is invalid params (-32602) naming the field, for every task method of both versions', async () => {
    const { base } = await start();
    for (const { name, headers, methods } of TASK_METHODS) {
      for (const method of methods) {
        for (const [id, kind] of [
          [123, 'number'],
          [['a'], 'array'],
          [{}, 'object'],
          [true, 'boolean'],
        ] as const) {
          const res = await post(base, 'echo', { jsonrpc: '2.0', id: 1, method, params: { id } }, headers);
          const label = `${name} ${method} id=${JSON.stringify(id)}`;
          expect(res.status, label).toBe(200);
          expect(res.body.id, label).toBe(1);
          expect(res.body.error.code, label).toBe(-32602);
          expect(res.body.error.message, label).toBe(`Invalid params: params.id must be a string, not ${kind}`);
        }
        // Missing params, params that are not an object, a missing id: invalid params too.
        for (const params of [undefined, [], 'x', null, {}]) {
          const res = await post(base, 'echo', { jsonrpc: '2.0', id: 2, method, ...(params === undefined ? {} : { params }) }, headers);
          expect(errorOf(res.body)?.code, `${name} ${method} params=${JSON.stringify(params)}`).toBe(-32602);
        }
      }
    }
  });

  it('message fields of the wrong type are invalid params naming the field; nothing is started', async () => {
    const { base, rt } = await start();
    for (const v of VERSIONS) {
      const msg = (extra: Record<string, unknown>) => ({ kind: 'message', messageId: `m-${v.name}`, role: v.role, parts: [{ kind: 'text', text: 'hi' }], ...extra });
      const cases: [string, unknown, string][] = [
        ['message.taskId', { message: msg({ taskId: 7 }) }, 'params.message.taskId must be a string, not number'],
        ['message.contextId', { message: msg({ contextId: { a: 1 } }) }, 'params.message.contextId must be a string, not object'],
        ['message.messageId', { message: msg({ messageId: 5 }) }, 'params.message.messageId must be a string, not number'],
        ['message.parts', { message: msg({ parts: 'hi' }) }, 'params.message.parts must be an array, not string'],
        ['message', { message: [msg({})] }, 'params.message must be an object, not array'],
        ['configuration', { message: msg({}), configuration: [] }, 'params.configuration must be an object, not array'],
      ];
      for (const method of [v.send, v.stream]) {
        for (const [field, params, message] of cases) {
          const res = await post(base, 'echo', { jsonrpc: '2.0', id: 'r1', method, params }, v.headers);
          const label = `${v.name} ${method} ${field}`;
          expect(res.status, label).toBe(200);
          expect(res.body, label).toMatchObject({ jsonrpc: '2.0', id: 'r1', error: { code: -32602, message: `Invalid params: ${message}` } });
        }
      }
    }
    const list = await post(base, 'echo', { jsonrpc: '2.0', id: 3, method: 'ListTasks', params: { contextId: 5 } }, { 'a2a-version': '1.0' });
    expect(list.body.error).toMatchObject({ code: -32602, message: 'Invalid params: params.contextId must be a string, not number' });
    expect(await rt.list()).toEqual([]);
  });

  it('a request id that is not a string, an integer or null is an invalid request answered with id null', async () => {
    const { base } = await start();
    for (const v of VERSIONS) {
      for (const [id, kind] of [
        [{}, 'object'],
        [true, 'boolean'],
        [[1], 'array'],
        [1.5, 'number'],
      ] as const) {
        const res = await post(base, 'echo', { jsonrpc: '2.0', id, method: 'GetTask', params: { id: 'x' } }, v.headers);
        expect(res.status).toBe(200);
        expect(res.body, `${v.name} id=${JSON.stringify(id)}`).toEqual({
          jsonrpc: '2.0',
          id: null,
          error: { code: -32600, message: `Invalid Request: the id must be a string, an integer or null, not ${kind}` },
        });
      }
    }
  });
});
