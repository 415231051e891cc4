/**
 * Helpers for scripting models in tests: per-speaker queues of responses, with a record of
 * every request so tests can assert what the model saw.
 */
import { scriptedModel, type Model, type ModelRequest, type ModelResponse } from '../../src/index.js';

export type Step = ModelResponse | ((req: ModelRequest) => ModelResponse | Promise<ModelResponse>);

/** A scripted model answering each speaker (`agentId`) from its own queue, in order. */
export function queueModel(script: Record<string, Step[]>): Model & { requests: ModelRequest[] } {
  const queues = new Map(Object.entries(script).map(([k, v]) => [k, [...v]]));
  const requests: ModelRequest[] = [];
  const model = scriptedModel(async (req) => {
    requests.push({ ...req, messages: [...req.messages] });
    const next = queues.get(req.agentId)?.shift();
    if (!next) throw new Error(`script for "${req.agentId}" is exhausted`);
    return typeof next === 'function' ? next(req) : next;
  });
  return Object.assign(model, { requests });
}

/** A tool call response. */
export function call(name: string, args: unknown, id = `call_${name}_${Math.random().toString(36).slice(2, 8)}`): ModelResponse {
  return { toolCalls: [{ id, name, arguments: typeof args === 'string' ? args : JSON.stringify(args) }] };
}

/** Several tool calls in one response. */
export function calls(...list: [name: string, args: unknown, id?: string][]): ModelResponse {
  return {
    toolCalls: list.map(([name, args, id], i) => ({
      id: id ?? `call_${i}`,
      name,
      arguments: typeof args === 'string' ? args : JSON.stringify(args),
    })),
  };
}

/** The tool results a request carries (role `tool`), in order. */
export const toolMessages = (req: ModelRequest) => req.messages.filter((m) => m.role === 'tool');

/** The content of the last tool result a request carries, or `''` when it has none. */
export function lastToolResult(req: ModelRequest): string {
  return [...req.messages].reverse().find((m) => m.role === 'tool')?.content ?? '';
}

/** Collects all events of a client until its final event. */
export async function collect<T>(it: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const e of it) out.push(e);
  return out;
}

/**
 * A model that asks a human which day (`pause`, call id `p1`) and then books the day the human
 * answered. Stateless, so any runtime can continue the conversation; records its requests.
 */
export function askerModel(): Model & { requests: ModelRequest[] } {
  const requests: ModelRequest[] = [];
  const model = scriptedModel((req) => {
    requests.push(req);
    const answer = req.messages.find((m) => m.role === 'tool');
    return answer ? { text: `Booked for ${answer.content}.` } : call('pause', { reason: 'Which day?' }, 'p1');
  });
  return Object.assign(model, { requests });
}
