/** Failures on spans: a tool that throws, a model call that fails and the swarm it fails end with status ERROR and the message. */
import { SpanStatusCode } from '@opentelemetry/api';
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createRuntime, defineSwarm, type Runtime, scriptedModel, tool } from '../../src/index.js';
import { spanRecorder } from '../support/otel-recorder.js';
import { call } from '../support/script.js';

let runtime: Runtime | undefined;
afterEach(async () => {
  await runtime?.close();
  runtime = undefined;
});

describe('traces: errors', () => {
  it('a failing tool’s span and a failing model call’s span (and its swarm’s) have status ERROR with the message', async () => {
    const recorder = spanRecorder();
    const broken = tool({
      name: 'broken',
      description: 'Always fails.',
      parameters: z.object({}),
      execute: () => {
        throw new Error('disk full');
      },
    });
    const swarm = defineSwarm({ id: 'fragile', instructions: 'Try.', tools: [broken] });
    let calls = 0;
    const model = scriptedModel(() => {
      if (++calls === 1) return call('broken', {}, 't1');
      throw new Error('provider down');
    });
    runtime = createRuntime({ swarms: [swarm], model, tracing: { tracer: recorder.tracer } });
    const client = runtime.forSwarm(swarm, 'fails');
    await client.run('go');
    expect(await client.wait()).toMatchObject({ status: 'failed' });

    const spans = recorder.spans();
    const toolSpan = spans.find((s) => s.name === 'execute_tool broken')!;
    expect(toolSpan.status.code).toBe(SpanStatusCode.ERROR);
    expect(toolSpan.status.message).toContain('disk full');
    expect(toolSpan.attributes['gen_ai.tool.call.id']).toBe('t1');
    const failedCall = spans.filter((s) => s.attributes['gen_ai.operation.name'] === 'chat').at(-1)!;
    expect(failedCall.status).toMatchObject({ code: SpanStatusCode.ERROR, message: expect.stringContaining('provider down') });
    const swarmSpan = spans.find((s) => s.name === 'swarm fragile')!;
    expect(swarmSpan.status.code).toBe(SpanStatusCode.ERROR);
    expect(swarmSpan.attributes['xswarm.swarm.outcome']).toBe('failed');
  });
});
