/**
 * A swarm started under a caller's trace keeps it across a restart: the caller's W3C context is
 * kept with the swarm, so the runtime that adopts it (same SQLite file) records its spans in the
 * caller's trace, its `swarm` span a child of the same parent. A history policy's summary call
 * is a `chat` span of its own, marked as a summary.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Tracer } from '@opentelemetry/api';
import type { ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createRuntime, defineAgent, defineSwarm, handoff, type Model, type ModelRequest, type Runtime, scriptedModel, sqliteStore, tool } from '../../src/index.js';
import { serve } from '../../src/server/index.js';
import { parentId, registerOtelGlobals, spanRecorder } from '../support/otel-recorder.js';
import { request } from '../support/server-clients.js';
import { until } from '../support/wait.js';

const cleanup: (() => Promise<unknown> | unknown)[] = [];
beforeAll(registerOtelGlobals);
afterEach(async () => {
  for (const c of cleanup.splice(0).reverse()) await c();
});

/** A SQLite file in a temp folder, removed after the test. */
function sqliteFile(): string {
  const dir = mkdtempSync(join(tmpdir(), 'xswarm-tracecarry-'));
  cleanup.push(() => rmSync(dir, { recursive: true, force: true }));
  return join(dir, 'swarms.db');
}

/** A call that never answers until its runtime closes (aborts it). */
function hang(req: ModelRequest): Promise<never> {
  return new Promise((_, reject) => req.signal.addEventListener('abort', () => reject(req.signal.reason), { once: true }));
}

/** A model that answers `who`'s calls from `answer`, and hangs on the call `hangAt` of `who` (counted from 1). */
function stalling(
  who: string,
  hangAt: number,
  answer: (req: ModelRequest, n: number) => ReturnType<Parameters<typeof scriptedModel>[0]>,
): Model & { calls: () => number } {
  let n = 0;
  const model = scriptedModel((req) => {
    if (req.agentId !== who) return answer(req, 0);
    n++;
    return n === hangAt ? hang(req) : answer(req, n);
  });
  return Object.assign(model, { calls: () => n });
}

const TRACE_ID = '4bf92f3577b34da6a3ce929d0e0e4736';
const CALLER_SPAN = '00f067aa0ba902b7';

describe('a caller’s trace across a restart', () => {
  it('an A2A task started with a traceparent: the adopter’s spans are all in the caller’s trace', async () => {
    const file = sqliteFile();
    const forecaster = defineAgent({ id: 'forecaster', description: 'Forecasts', instructions: 'Forecast.' });
    const weather = defineSwarm({ id: 'weather', description: 'Answers weather questions', instructions: 'Answer.', handoffs: [handoff.toAgent(forecaster)] });
    // The orchestrator hands off, then (second call) hangs in the first runtime.
    const answer = (req: ModelRequest) => {
      if (req.agentId === 'forecaster') return { text: 'Sunny' };
      return req.messages.some((m) => m.role === 'tool')
        ? { text: 'It will be sunny.' }
        : { toolCalls: [{ id: 'f1', name: 'handoff_to_forecaster', arguments: '{"request":"Saturday"}' }] };
    };
    const first = spanRecorder();
    const model = stalling('weather', 2, answer);
    const a: Runtime = createRuntime({ swarms: [weather], agents: [forecaster], model, store: sqliteStore(file), tracing: { tracer: first.tracer } });
    const server = await serve(a);
    let closed = false;
    const closeA = async () => {
      if (closed) return;
      closed = true;
      await server.close();
      await a.close();
    };
    cleanup.push(closeA);
    const sent = await request(
      server.url,
      'POST',
      '/a2a/weather',
      {
        jsonrpc: '2.0',
        id: 1,
        method: 'message/send',
        params: {
          message: { kind: 'message', messageId: 'm1', role: 'user', parts: [{ kind: 'text', text: 'Weather on Saturday?' }] },
          configuration: { blocking: false },
        },
      },
      { accept: 'application/json', traceparent: `00-${TRACE_ID}-${CALLER_SPAN}-01`, tracestate: 'caller=1' },
    );
    const taskId = sent.body.result?.id as string;
    expect(taskId).toBeTruthy();
    await until('the second orchestrator call', () => model.calls() >= 2);
    await closeA();
    const before = first.spans();
    const firstSwarm = before.find((s) => s.name === 'swarm weather')!;
    expect(firstSwarm.attributes['xswarm.swarm.outcome']).toBe('released');
    expect(parentId(firstSwarm)).toBe(CALLER_SPAN);

    const second = spanRecorder();
    const b = createRuntime({ swarms: [weather], agents: [forecaster], model: scriptedModel(answer), store: sqliteStore(file), tracing: { tracer: second.tracer } });
    cleanup.push(() => b.close());
    await b.start();
    const done = await until(
      'b to finish it',
      () => b.forSwarm('weather', taskId).getResult(),
      (r) => r.status === 'completed',
      { timeout: 5_000 },
    );
    expect(done).toMatchObject({ status: 'completed', result: 'It will be sunny.' });
    await b.close();

    const after = second.spans();
    expect(after.length).toBeGreaterThan(2);
    expect(new Set([...before, ...after].map((s) => s.spanContext().traceId))).toEqual(new Set([TRACE_ID]));
    const adopted = after.find((s) => s.name === 'swarm weather')!;
    expect(adopted.attributes['xswarm.swarm.adopted']).toBe(true);
    expect(adopted.attributes['xswarm.swarm.outcome']).toBe('completed');
    // A child of the caller's span, as the first runtime's was, with the caller's trace state.
    expect(parentId(adopted)).toBe(CALLER_SPAN);
    expect(adopted.parentSpanContext?.traceState?.get('caller')).toBe('1');
    // The adopter's model call hangs under its swarm span.
    const chat = after.find((s) => s.attributes['gen_ai.operation.name'] === 'chat')!;
    expect(ancestors(chat, after)).toContain(adopted.spanContext().spanId);
  });

  it('a child swarm across a restart: parent and child, in both runtimes, in the caller’s trace', async () => {
    const file = sqliteFile();
    const booking = defineSwarm({ id: 'booking', description: 'Books things', instructions: 'Book it.' });
    const trip = defineSwarm({ id: 'trip', instructions: 'Plan.', handoffs: [handoff.toSwarm(booking)] });
    const answer = (req: ModelRequest) => {
      if (req.agentId === 'booking') return { text: 'room 12' };
      const result = [...req.messages].reverse().find((m) => m.role === 'tool');
      return result ? { text: `Booked: ${result.content}` } : { toolCalls: [{ id: 'b1', name: 'handoff_to_booking', arguments: '{"request":"a room"}' }] };
    };
    const caller = spanRecorder();
    const first = spanRecorder();
    // The child's first call hangs in the first runtime.
    const model = stalling('booking', 1, answer);
    const a = createRuntime({ swarms: [trip, booking], model, store: sqliteStore(file), tracing: { tracer: first.tracer } });
    let closed = false;
    const closeA = () => (closed ? undefined : ((closed = true), a.close()));
    cleanup.push(closeA);
    let callerTrace = '';
    await (caller.tracer as Tracer).startActiveSpan('handle request', async (span) => {
      callerTrace = span.spanContext().traceId;
      await a.forSwarm(trip, 'trip-1').run('Plan a trip');
      span.end();
    });
    await until('the child’s model call', () => model.calls() >= 1);
    await closeA();
    const before = first.spans();
    expect(before.find((s) => s.name === 'swarm booking')?.attributes['xswarm.swarm.outcome']).toBe('released');

    const second = spanRecorder();
    const b = createRuntime({ swarms: [trip, booking], model: scriptedModel(answer), store: sqliteStore(file), tracing: { tracer: second.tracer } });
    cleanup.push(() => b.close());
    await b.start();
    const done = await until(
      'b to finish the parent',
      () => b.forSwarm(trip, 'trip-1').getResult(),
      (r) => r.status === 'completed',
      { timeout: 5_000 },
    );
    expect(done).toMatchObject({ status: 'completed', result: 'Booked: room 12' });
    await b.close();

    const after = second.spans();
    expect(new Set([...before, ...after].map((s) => s.spanContext().traceId))).toEqual(new Set([callerTrace]));
    const callerSpan = caller.spans().find((s) => s.name === 'handle request')!;
    const adoptedTrip = after.find((s) => s.name === 'swarm trip')!;
    expect(adoptedTrip.attributes['xswarm.swarm.adopted']).toBe(true);
    expect(parentId(adoptedTrip)).toBe(callerSpan.spanContext().spanId);
    const adoptedChild = after.find((s) => s.name === 'swarm booking')!;
    expect(adoptedChild.attributes['xswarm.swarm.adopted']).toBe(true);
    expect(adoptedChild.attributes['xswarm.swarm.outcome']).toBe('completed');
    // Under a handoff span of the parent (the first runtime's, kept; or the adopter's own).
    const handoffs = [...before, ...after].filter((s) => s.attributes['xswarm.handoff.to'] === 'booking').map((s) => s.spanContext().spanId);
    expect(handoffs).toContain(parentId(adoptedChild));
    expect(after.some((s) => s.attributes['gen_ai.agent.name'] === 'booking' && s.attributes['gen_ai.operation.name'] === 'chat')).toBe(true);
  });

  it('a swarm stored without a kept trace (as before) is still adopted, in its derived trace', async () => {
    const file = sqliteFile();
    const echo = defineSwarm({ id: 'echo', instructions: 'Echo.' });
    // Started by an untraced runtime: nothing is kept, as in records written before traces were.
    const model = stalling('echo', 1, () => ({ text: 'hello' }));
    const a = createRuntime({ swarms: [echo], model, store: sqliteStore(file) });
    let closed = false;
    cleanup.push(() => (closed ? undefined : a.close()));
    await a.forSwarm(echo, 'plain').run('hi');
    await until('the call', () => model.calls() >= 1);
    closed = true;
    await a.close();
    const second = spanRecorder();
    const b = createRuntime({ swarms: [echo], model: scriptedModel(() => ({ text: 'hello' })), store: sqliteStore(file), tracing: { tracer: second.tracer } });
    cleanup.push(() => b.close());
    await b.start();
    await until(
      'b to finish it',
      () => b.forSwarm(echo, 'plain').getResult(),
      (r) => r.status === 'completed',
      { timeout: 5_000 },
    );
    await b.close();
    const adopted = second.spans().find((s) => s.name === 'swarm echo')!;
    expect(adopted.attributes['xswarm.swarm.adopted']).toBe(true);
    const { createHash } = await import('node:crypto');
    expect(adopted.spanContext().traceId).toBe(createHash('sha256').update('xswarm:plain').digest('hex').slice(0, 32));
  });
});

describe('summary calls', () => {
  it('a summarize policy’s summary call is a chat span under its turn, marked as a summary', async () => {
    const page = tool({
      name: 'read_page',
      description: 'Reads a page',
      parameters: z.object({ n: z.number() }),
      execute: ({ n }) => `page ${n}: ${'lorem ipsum '.repeat(60)}`,
    });
    const reader = defineSwarm({ id: 'reader', instructions: 'Read.', tools: [page], maxTurns: 20, history: { maxTokens: 600, strategy: 'summarize' } });
    // Counted here: what the step is sent is shrunk by the policy.
    let read = 0;
    const model = scriptedModel((req) => {
      if (req.purpose === 'summary') return { text: 'Pages read so far.', usage: { inputTokens: 100, outputTokens: 4 } };
      read++;
      return read > 6 ? { text: 'done' } : { toolCalls: [{ id: `p${read}`, name: 'read_page', arguments: JSON.stringify({ n: read }) }] };
    });
    const recorder = spanRecorder();
    const rt = createRuntime({ swarms: [reader], model, tracing: { tracer: recorder.tracer } });
    cleanup.push(() => rt.close());
    const client = rt.forSwarm(reader, 'long');
    await client.run('Read the document.');
    expect(await client.wait()).toMatchObject({ status: 'completed' });
    const spans = recorder.spans();
    const summaries = spans.filter((s) => s.attributes['xswarm.purpose'] === 'summary');
    expect(summaries.length).toBeGreaterThan(0);
    const summary = summaries[0]!;
    expect(summary.name).toBe('chat scripted');
    expect(summary.attributes['gen_ai.operation.name']).toBe('chat');
    expect(summary.attributes['gen_ai.agent.name']).toBe('reader');
    expect(summary.attributes['gen_ai.usage.input_tokens']).toBe(100);
    // Under the turn whose step it was made for, next to that step's own call.
    const turn = spans.find((s) => s.spanContext().spanId === parentId(summary))!;
    expect(turn.name).toBe(`turn ${summary.attributes['xswarm.turn']}`);
    const own = spans.filter((s) => parentId(s) === turn.spanContext().spanId && s.attributes['gen_ai.operation.name'] === 'chat');
    expect(own.map((s) => s.attributes['xswarm.purpose'] ?? 'step').sort()).toEqual(['step', 'summary']);
  });
});

/** The span ids above `span` among `spans`. */
function ancestors(span: ReadableSpan, spans: readonly ReadableSpan[]): string[] {
  const out: string[] = [];
  let at: ReadableSpan | undefined = span;
  while (at !== undefined && parentId(at) !== undefined) {
    const id: string = parentId(at)!;
    out.push(id);
    at = spans.find((s) => s.spanContext().spanId === id);
  }
  return out;
}
