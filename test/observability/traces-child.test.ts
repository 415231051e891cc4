/** A child swarm's span tree: its `swarm` span is a child of the parent's handoff span, in the parent's trace. */
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createRuntime, defineSwarm, handoff, type Runtime } from '../../src/index.js';
import { parentId, registerOtelGlobals, spanRecorder } from '../support/otel-recorder.js';
import { call, lastToolResult, queueModel } from '../support/script.js';

let runtime: Runtime | undefined;
beforeAll(registerOtelGlobals);
afterEach(async () => {
  await runtime?.close();
  runtime = undefined;
});

describe('traces: child swarms', () => {
  it('the child’s swarm span hangs from the parent’s handoff span, its calls under it', async () => {
    const recorder = spanRecorder();
    const booking = defineSwarm({ id: 'booking', description: 'Books things', instructions: 'Book it.' });
    const trip = defineSwarm({ id: 'trip', instructions: 'Plan.', handoffs: [handoff.toSwarm(booking)] });
    const model = queueModel({
      trip: [call('handoff_to_booking', { request: 'a room' }, 'b1'), (req) => ({ text: `Booked: ${lastToolResult(req)}` })],
      booking: [{ text: 'room 12' }],
    });
    runtime = createRuntime({ swarms: [trip, booking], model, tracing: { tracer: recorder.tracer } });
    const client = runtime.forSwarm(trip, 'with-child');
    await client.run('Plan a trip');
    expect(await client.wait()).toMatchObject({ status: 'completed' });

    const spans = recorder.spans();
    expect(new Set(spans.map((s) => s.spanContext().traceId)).size).toBe(1);
    const handoffSpan = spans.find((s) => s.attributes['xswarm.handoff.to'] === 'booking')!;
    expect(handoffSpan.attributes['xswarm.handoff.kind']).toBe('swarm');
    const child = spans.find((s) => s.name === 'swarm booking')!;
    expect(parentId(child)).toBe(handoffSpan.spanContext().spanId);
    expect(child.attributes['xswarm.swarm.id']).toBe(handoffSpan.attributes['xswarm.child_swarm.id']);
    const childCall = spans.find((s) => s.attributes['gen_ai.agent.name'] === 'booking' && s.attributes['gen_ai.operation.name'] === 'chat')!;
    expect(childCall.spanContext().traceId).toBe(child.spanContext().traceId);
  });
});
