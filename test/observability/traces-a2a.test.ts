/**
 * An A2A call carries the trace: a swarm handing off to an agent served by another runtime (our
 * A2A server, called through the official @a2a-js/sdk client inside our remote-agent client)
 * sends the W3C `traceparent` of its handoff span; the server extracts it, and the served
 * swarm's span is a child of the caller's handoff span, in the caller's trace.
 */
import { createHash } from 'node:crypto';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createRuntime, defineSwarm, handoff, type Runtime } from '../../src/index.js';
import { serve } from '../../src/server/index.js';
import { parentId, registerOtelGlobals, spanRecorder } from '../support/otel-recorder.js';
import { call, lastToolResult, queueModel } from '../support/script.js';

const closers: (() => Promise<void>)[] = [];
beforeAll(registerOtelGlobals);
afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close();
});

describe('traces over A2A', () => {
  it('the served swarm’s span is a child of the caller’s handoff span, in one trace', async () => {
    const caller = spanRecorder();
    const served = spanRecorder();
    const weather = defineSwarm({ id: 'weather', description: 'Answers weather questions', instructions: 'Forecast.' });
    const b: Runtime = createRuntime({ swarms: [weather], model: queueModel({ weather: [{ text: 'Sunny on Saturday' }] }), tracing: { tracer: served.tracer } });
    const server = await serve(b);
    closers.push(
      () => b.close(),
      () => server.close(),
    );
    const cardUrl = `${server.url}/a2a/weather/.well-known/agent-card.json`;
    const planner = defineSwarm({ id: 'planner', instructions: 'Plan with the weather.', handoffs: [handoff.toRemoteAgent(cardUrl)] });
    const a: Runtime = createRuntime({
      swarms: [planner],
      model: queueModel({ planner: [call('handoff_to_weather', { request: 'forecast for Saturday' }), (req) => ({ text: `Plan: ${lastToolResult(req)}` })] }),
      tracing: { tracer: caller.tracer },
    });
    closers.push(() => a.close());
    const client = a.forSwarm('planner', 'a2a-traced');
    await client.run('Plan my weekend');
    expect(await client.wait()).toEqual({ status: 'completed', result: 'Plan: Sunny on Saturday' });

    const handoffSpan = caller.spans().find((s) => s.attributes['xswarm.handoff.to'] !== undefined);
    expect(handoffSpan).toBeDefined();
    const servedSwarm = served.spans().find((s) => s.name === 'swarm weather');
    expect(servedSwarm).toBeDefined();
    expect(servedSwarm!.spanContext().traceId).toBe(handoffSpan!.spanContext().traceId);
    expect(parentId(servedSwarm!)).toBe(handoffSpan!.spanContext().spanId);
    expect(
      served
        .spans()
        .find((s) => s.attributes['gen_ai.operation.name'] === 'chat')
        ?.spanContext().traceId,
    ).toBe(handoffSpan!.spanContext().traceId);
  });

  it('a request without a traceparent starts the served swarm in a trace of its own', async () => {
    const served = spanRecorder();
    const weather = defineSwarm({ id: 'weather', description: 'Answers weather questions', instructions: 'Forecast.' });
    const b: Runtime = createRuntime({ swarms: [weather], model: queueModel({ weather: [{ text: 'Sunny' }] }), tracing: { tracer: served.tracer } });
    const server = await serve(b);
    closers.push(
      () => b.close(),
      () => server.close(),
    );
    const cardUrl = `${server.url}/a2a/weather/.well-known/agent-card.json`;
    const planner = defineSwarm({ id: 'planner', instructions: 'Plan.', handoffs: [handoff.toRemoteAgent(cardUrl)] });
    // The caller does not trace: it sends no traceparent.
    const a: Runtime = createRuntime({ swarms: [planner], model: queueModel({ planner: [call('handoff_to_weather', { request: 'x' }), { text: 'done' }] }) });
    closers.push(() => a.close());
    const client = a.forSwarm('planner', 'untraced');
    await client.run('Plan');
    await client.wait();
    const servedSwarm = served.spans().find((s) => s.name === 'swarm weather');
    expect(servedSwarm).toBeDefined();
    // Its trace is the one derived from its own id (the same in any process that drives it), not a caller's.
    const id = String(servedSwarm!.attributes['xswarm.swarm.id']);
    expect(servedSwarm!.spanContext().traceId).toBe(createHash('sha256').update(`xswarm:${id}`).digest('hex').slice(0, 32));
  });
});
