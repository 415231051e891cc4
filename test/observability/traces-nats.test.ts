/**
 * A distributed run over a real nats-server (127.0.0.1) is one trace: the orchestrating runtime's
 * handoff to an agent a worker runtime hosts carries the trace context in the NATS request's
 * headers, and the worker's spans hang from the caller's handoff span.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRuntime, type Runtime } from '../../src/index.js';
import { type NatsServer, natsServerMissing, startNatsServer } from '../support/nats-server.js';
import { parentId, registerOtelGlobals, spanRecorder } from '../support/otel-recorder.js';
import { call, queueModel } from '../support/script.js';
import { weatherAndPlanner } from '../support/weather-planner.js';

let nats: NatsServer | undefined;
const runtimes: Runtime[] = [];
beforeAll(async () => {
  if (!natsServerMissing) nats = await startNatsServer();
  registerOtelGlobals();
});
afterAll(async () => {
  for (const r of runtimes.splice(0).reverse()) await r.close();
  await nats?.stop();
});

describe.skipIf(natsServerMissing)('traces over NATS', () => {
  it('a handoff to a worker runtime continues the caller’s trace under its handoff span', async () => {
    const recorder = spanRecorder();
    const { weather, planner } = weatherAndPlanner(() => undefined);
    const hosting = { deadlineMs: 5_000, heartbeatMs: 100, heartbeatTimeoutMs: 1_000 };
    const worker = createRuntime({
      agents: [weather],
      model: queueModel({ weather: [call('get_forecast', { day: 'Saturday' }), { text: 'Saturday: sunny' }] }),
      nats: { servers: nats!.url },
      hosting,
      tracing: { tracer: recorder.tracer },
    });
    runtimes.push(worker);
    await worker.start();
    const home = createRuntime({
      swarms: [planner],
      model: queueModel({
        planner: [call('handoff_to_weather', { request: 'Weather on Saturday?' }, 'h1'), (req) => ({ text: `Plan: ${req.messages.at(-1)?.content}` })],
      }),
      nats: { servers: nats!.url },
      hosting,
      tracing: { tracer: recorder.tracer },
    });
    runtimes.push(home);
    await home.start();
    const client = home.forSwarm(planner, 'traced-trip');
    await client.run('Plan Saturday');
    expect(await client.wait()).toEqual({ status: 'completed', result: 'Plan: Saturday: sunny' });

    const spans = recorder.spans();
    expect(new Set(spans.map((s) => s.spanContext().traceId)).size).toBe(1);
    const handoffSpan = spans.find((s) => s.attributes['xswarm.handoff.to'] !== undefined && s.attributes['xswarm.swarm.id'] === 'traced-trip');
    expect(handoffSpan).toBeDefined();
    // The worker's swarm span: another swarm id, parented to the caller's handoff.
    const workerSwarm = spans.find((s) => s.name.startsWith('swarm ') && s.attributes['xswarm.swarm.id'] !== 'traced-trip');
    expect(workerSwarm).toBeDefined();
    expect(parentId(workerSwarm!)).toBe(handoffSpan!.spanContext().spanId);
    // The worker's model and tool calls sit under its own swarm's spans.
    const workerCalls = spans.filter(
      (s) => s.attributes['xswarm.swarm.id'] === workerSwarm!.attributes['xswarm.swarm.id'] && s.attributes['gen_ai.operation.name'] === 'chat',
    );
    expect(workerCalls).toHaveLength(2);
    const tool = spans.find((s) => s.attributes['gen_ai.tool.name'] === 'get_forecast');
    expect(tool?.attributes['gen_ai.operation.name']).toBe('execute_tool');
    expect(tool?.spanContext().traceId).toBe(handoffSpan!.spanContext().traceId);
  });
});
