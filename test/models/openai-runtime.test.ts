/**
 * A swarm driven by the real `openai` client against a local OpenAI-compatible server:
 * streamed text becomes artifact-update events, streamed tool calls drive handoffs, a pause
 * aborts the HTTP request and resume re-issues it.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createRuntime, defineAgent, defineSwarm, factOf, handoff, openaiModel, type Runtime, tool } from '../../src/index.js';
import { startOpenAIServer, type OpenAIServer } from '../support/openai-server.js';
import { collect } from '../support/script.js';
import { sleep } from '../support/sleep.js';
import { until } from '../support/wait.js';

let runtime: Runtime | undefined;
let server: OpenAIServer | undefined;
afterEach(async () => {
  await runtime?.close();
  await server?.close();
  runtime = server = undefined;
});

const isAgent = (body: { messages: Array<Record<string, unknown>> }) => String(body.messages[0]?.content).startsWith('You are a weather');
const toolResults = (body: { messages: Array<Record<string, unknown>> }) => body.messages.filter((m) => m.role === 'tool');

describe('openaiModel in a swarm', () => {
  it('runs a handoff with a tool over the wire and streams text as artifact updates', async () => {
    server = await startOpenAIServer((body) => {
      if (isAgent(body)) {
        return toolResults(body).length === 0
          ? { toolCalls: [{ id: 'f1', name: 'get_forecast', arguments: '{"day":"Saturday"}' }] }
          : { text: 'Sunny on Saturday.', chunks: ['Sunny ', 'on ', 'Saturday.'] };
      }
      return toolResults(body).length === 0
        ? { toolCalls: [{ id: 'h1', name: 'handoff_to_weather_agent', arguments: '{"request":"Saturday?"}' }] }
        : { text: '{"day":"Saturday","activity":"hiking"}', chunks: ['{"day":"Saturday",', '"activity":"hiking"}'], usage: { prompt_tokens: 50, completion_tokens: 9 } };
    });
    const forecast = tool({ name: 'get_forecast', description: 'Forecast', parameters: z.object({ day: z.string() }), execute: ({ day }) => `${day}: sunny` });
    const weather = defineAgent({ id: 'weather-agent', description: 'Weather', instructions: 'You are a weather expert.', tools: [forecast] });
    const planner = defineSwarm({
      id: 'planner',
      instructions: 'Plan the weekend.',
      result: z.object({ day: z.string(), activity: z.string() }),
      handoffs: [handoff.toAgent(weather)],
    });
    runtime = createRuntime({ swarms: [planner], model: openaiModel({ model: 'test-model', baseURL: server.url, apiKey: 'k' }) });
    const c = runtime.forSwarm(planner);
    await c.run('weekend');
    expect(await c.wait()).toEqual({ status: 'completed', result: { day: 'Saturday', activity: 'hiking' } });

    const events = await collect(c.events());
    const chunks = events.filter((e) => e.kind === 'artifact-update' && e.artifact.name === 'stream');
    expect(chunks.map((e) => (e as { artifact: { parts: { text: string }[] } }).artifact.parts[0]!.text).join('')).toBe(
      'Sunny on Saturday.{"day":"Saturday","activity":"hiking"}',
    );
    expect(chunks[0]).toMatchObject({ append: false, metadata: { agent: 'weather-agent', turn: 2 } });
    expect(events.map((e) => factOf(e, 'agent-handoff')).find(Boolean)).toMatchObject({ from: 'planner', to: 'weather-agent', request: 'Saturday?' });
    expect(events.map((e) => factOf(e, 'tool-call')).find(Boolean)).toMatchObject({ agent: 'weather-agent', toolName: 'get_forecast' });
    const calls = events.filter((e) => e.kind === 'internal:llm-call');
    expect(calls).toHaveLength(4);
    expect(calls.at(-1)).toMatchObject({ usage: { inputTokens: 50, outputTokens: 9 } });

    // What went over the wire: the orchestrator's tools as function tools with JSON schemas.
    const first = server.requests[0]!;
    expect(first.stream).toBe(true);
    expect((first.tools as Array<{ function: { name: string } }>).map((t) => t.function.name)).toEqual(['handoff_to_weather_agent', 'complete', 'pause', 'fail']);
    const last = server.requests.at(-1)!;
    expect(toolResults(last)).toEqual([{ role: 'tool', tool_call_id: 'h1', content: 'Sunny on Saturday.' }]);
  });

  it('pause aborts the HTTP request in flight; resume re-issues it', async () => {
    let n = 0;
    server = await startOpenAIServer(() => (n++ === 0 ? { delayMs: 5_000, then: { text: 'too late' } } : { text: 'fresh answer' }));
    const s = defineSwarm({ id: 's', instructions: 'Answer.' });
    runtime = createRuntime({ swarms: [s], model: openaiModel({ model: 'm', baseURL: server.url, apiKey: 'k' }) });
    const c = runtime.forSwarm(s);
    await c.run('question');
    await sleep(100);
    await c.pause('coffee');
    await until('the aborted request to disconnect', () => server!.disconnects.length > 0);
    expect(server.disconnects).toHaveLength(1);
    await c.resume();
    expect(await c.wait()).toEqual({ status: 'completed', result: 'fresh answer' });
    expect(server.requests).toHaveLength(2);
  });
});
