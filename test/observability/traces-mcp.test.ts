/**
 * An MCP call carries the trace: a `<name>_run` tool call whose `_meta` holds a W3C
 * `traceparent` (the official MCP client sending it) starts the swarm as a child of the
 * caller's span, in the caller's trace.
 */
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createRuntime, defineSwarm, scriptedModel } from '../../src/index.js';
import { serve } from '../../src/server/index.js';
import { parentId, registerOtelGlobals, spanRecorder } from '../support/otel-recorder.js';
import { until } from '../support/wait.js';

const cleanups: (() => Promise<unknown>)[] = [];
beforeAll(registerOtelGlobals);
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c().catch(() => undefined);
});

describe('traces over MCP', () => {
  it('a run whose _meta carries a traceparent is a child of the caller’s span', async () => {
    const recorder = spanRecorder();
    const echo = defineSwarm({ id: 'echo', description: 'Repeats the input', instructions: 'Repeat.' });
    const runtime = createRuntime({ swarms: [echo], model: scriptedModel(() => ({ text: 'hi' })), tracing: { tracer: recorder.tracer } });
    cleanups.push(() => runtime.close());
    const server = await serve(runtime);
    cleanups.push(() => server.close());
    const client = new Client({ name: 'xswarm-test', version: '1.0.0' }, { versionNegotiation: { mode: 'legacy' } });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${server.url}/mcp`)));
    cleanups.push(() => client.close());

    const traceId = '0af7651916cd43dd8448eb211c80319c';
    const spanId = 'b7ad6b7169203331';
    await client.callTool({ name: 'echo_run', arguments: { input: 'hello', swarmId: 'm1' }, _meta: { traceparent: `00-${traceId}-${spanId}-01` } });
    await until('the swarm span to end', () => recorder.spans().find((s) => s.name === 'swarm echo'));
    const swarm = recorder.spans().find((s) => s.name === 'swarm echo')!;
    expect(swarm.spanContext().traceId).toBe(traceId);
    expect(parentId(swarm)).toBe(spanId);
  });
});
