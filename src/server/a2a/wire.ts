/**
 * Checks of a raw A2A JSON-RPC request, made before the SDK reads it, for what the SDK lets
 * through and then answers with an internal error (-32603, or a 500) or a crash:
 *
 * - JSON nested deeper than {@link MAX_JSON_DEPTH} levels: -32600 Invalid Request. `JSON.parse`
 *   reads such a body (V8's parser does not recurse), but code that walks the value afterwards
 *   does (the SDK's conversion of data parts and metadata, `JSON.stringify` of an echoed id)
 *   and overflows the stack.
 * - An `id` that is not a string, an integer or null: -32600 with `id: null`, as JSON-RPC 2.0
 *   says for a request whose id cannot be read (the SDK echoes the bad id back).
 * - Params of a known method with a field of the wrong type (a task id that is a number, a
 *   message that is an array): -32602 Invalid params, naming the field. The SDK's v1.0 reader
 *   would coerce them (`123` becomes the task id `"123"`, `{}` becomes `"[object Object]"`),
 *   its v0.3 layer hands them over as sent.
 *
 * The answers travel with HTTP 200, as the SDK sends every JSON-RPC error a client caused.
 *
 * @module
 */
import { RequestMalformedError } from '@a2a-js/sdk/errors';

/**
 * How deeply a request's JSON may nest (the envelope counts as one level). Real requests
 * need a handful of levels, structured input a few more; Python's protobuf JSON reader has the
 * same default limit.
 */
export const MAX_JSON_DEPTH = 100;

/** A JSON-RPC error response, as sent on the wire. */
export interface JsonRpcErrorResponse {
  jsonrpc: '2.0';
  id: string | number | null;
  error: { code: number; message: string; data?: unknown[] };
}

type Kind = 'string' | 'object' | 'array';

const TASK_ID: Record<string, Kind> = { id: 'string' };
const MESSAGE: Record<string, Kind> = {
  message: 'object',
  'message.messageId': 'string',
  'message.taskId': 'string',
  'message.contextId': 'string',
  'message.parts': 'array',
  'message.metadata': 'object',
  configuration: 'object',
  metadata: 'object',
};
/** The typed fields of each method's params, by v1.0 and v0.3 name (absent and null pass). */
const PARAMS: Record<string, Record<string, Kind>> = {
  GetTask: TASK_ID,
  CancelTask: TASK_ID,
  SubscribeToTask: TASK_ID,
  'tasks/get': TASK_ID,
  'tasks/cancel': TASK_ID,
  'tasks/resubscribe': TASK_ID,
  ListTasks: { contextId: 'string', pageToken: 'string', statusTimestampAfter: 'string' },
  SendMessage: MESSAGE,
  SendStreamingMessage: MESSAGE,
  'message/send': MESSAGE,
  'message/stream': MESSAGE,
};

/**
 * The error response for a parsed request body the SDK must not see, or undefined to hand it
 * over. `legacy`: the request speaks v0.3 (its errors carry no `google.rpc.ErrorInfo`).
 */
export function refuseRequest(body: unknown, legacy: boolean): JsonRpcErrorResponse | undefined {
  const envelope = isObject(body) ? body : undefined;
  const id = envelope && 'id' in envelope ? envelope.id : null;
  const validId = id === null || typeof id === 'string' || (typeof id === 'number' && Number.isInteger(id));
  const answerId = validId ? (id as string | number | null) : null;
  if (tooDeep(body, MAX_JSON_DEPTH)) {
    return { jsonrpc: '2.0', id: answerId, error: { code: -32600, message: `Invalid Request: the JSON nests deeper than ${MAX_JSON_DEPTH} levels` } };
  }
  if (!envelope) return undefined;
  if (!validId) {
    return { jsonrpc: '2.0', id: null, error: { code: -32600, message: `Invalid Request: the id must be a string, an integer or null, not ${kindOf(id)}` } };
  }
  const fields = typeof envelope.method === 'string' ? PARAMS[envelope.method] : undefined;
  if (!fields || !isObject(envelope.params)) return undefined;
  for (const [path, kind] of Object.entries(fields)) {
    const value = at(envelope.params, path);
    if (value === undefined || value === null || kindOf(value) === kind) continue;
    const message = `Invalid params: params.${path} must be ${kind === 'array' ? 'an array' : `a${kind === 'object' ? 'n' : ''} ${kind}`}, not ${kindOf(value)}`;
    const data = legacy ? {} : { data: [new RequestMalformedError(message).toErrorInfo()] };
    return { jsonrpc: '2.0', id: answerId, error: { code: -32602, message, ...data } };
  }
  return undefined;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function kindOf(value: unknown): string {
  return value === null ? 'null' : Array.isArray(value) ? 'array' : typeof value;
}

/** The value at a dotted path (`message.taskId`), or undefined where the path leaves objects. */
function at(value: Record<string, unknown>, path: string): unknown {
  let v: unknown = value;
  for (const key of path.split('.')) {
    if (!isObject(v)) return undefined;
    v = v[key];
  }
  return v;
}

/** Whether a JSON value nests deeper than `max` levels; iterative, so any depth is safe to ask. */
function tooDeep(value: unknown, max: number): boolean {
  const stack: [unknown, number][] = [[value, 1]];
  while (stack.length > 0) {
    const [v, depth] = stack.pop()!;
    if (typeof v !== 'object' || v === null) continue;
    if (depth > max) return true;
    for (const child of Array.isArray(v) ? v : Object.values(v)) {
      if (typeof child === 'object' && child !== null) stack.push([child, depth + 1]);
    }
  }
  return false;
}
