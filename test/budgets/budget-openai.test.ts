/**
 * A budget on the real wire (issue 30, "a run against the local OpenAI-compatible server through
 * the real `openai` client"): an orchestrator hands off to three agents in parallel, each looping
 * on a tool, every call a real Chat Completions request. The server reports usage as a provider
 * would (prompt tokens from the request's size, output up to `max_tokens`); the root's budget is
 * never overspent, and every request carried the output ceiling the call was reserved with.
 */
import { afterEach, expect, it } from 'vitest';
import { z } from 'zod';
import { createRuntime, defineAgent, defineSwarm, handoff, handoffToolName, memoryStore, openaiModel, type Runtime, tool } from '../../src/index.js';
import { type ChatCompletionRequestBody, type OpenAIServer, startOpenAIServer } from '../support/openai-server.js';
import { until } from '../support/wait.js';

let server: OpenAIServer | undefined;
let runtime: Runtime | undefined;
afterEach(async () => {
  await runtime?.close();
  await server?.close();
  runtime = undefined;
  server = undefined;
});

const dig = tool({ name: 'dig', description: 'Digs', parameters: z.object({ n: z.number() }), execute: ({ n }) => `dug ${n}` });
const agents = ['north', 'south', 'east'].map((id) => defineAgent({ id, instructions: `Dig ${id}.`, tools: [dig], maxTurns: 100 }));
const root = defineSwarm({ id: 'root', instructions: 'Fan out.', maxTurns: 100, budget: { tokens: 20_000 }, handoffs: agents.map((a) => handoff.toAgent(a)) });

it('parallel handoffs over the openai client never overspend the root budget', async () => {
  const completed: { prompt: number; completion: number }[] = [];
  server = await startOpenAIServer((body: ChatCompletionRequestBody, i) => {
    const system = String(body.messages[0]?.content ?? '');
    const tools = body.messages.filter((m) => m.role === 'tool').length;
    // A provider's count: about a token per 4 bytes of prompt; output up to max_tokens.
    const usage = { prompt_tokens: Math.ceil(JSON.stringify(body.messages).length / 4), completion_tokens: 1 + (i % Number(body.max_tokens ?? 1)) };
    completed.push({ prompt: usage.prompt_tokens, completion: usage.completion_tokens });
    if (system.startsWith('Fan out.') && tools === 0) {
      return { toolCalls: agents.map((a, k) => ({ id: `h${k}`, name: handoffToolName(a.id), arguments: '{"request":"dig"}' })), usage };
    }
    return { delayMs: i % 3, then: { toolCalls: [{ id: `d${tools + 1}`, name: 'dig', arguments: JSON.stringify({ n: tools + 1 }) }], usage } };
  });
  const store = memoryStore();
  const model = openaiModel({ model: 'local-model', baseURL: server.url, apiKey: 'k', stream: false });
  runtime = createRuntime({ swarms: [root], agents, model, store, maxOutputTokens: 64 });
  const client = runtime.forSwarm(root, 'wire');
  await client.run('Go');
  await until(
    'the root to pause at its budget',
    () => client.getResult(),
    (r) => r.status === 'paused',
    { timeout: 20_000 },
  );
  const account = await until(
    'the calls in flight to settle',
    () => store.budgets!.account('swarm:wire'),
    (a) => a?.reserved.tokens === 0,
  );
  expect(account!.spent.tokens).toBeLessThanOrEqual(20_000);
  // What the server reported for the calls it answered is counted (calls cut short by the pause at their worst case).
  const reported = completed.reduce((n, c) => n + c.prompt + c.completion, 0);
  // (A reservation is never smaller than what the server reports: the prompt's bytes bound its tokens.)
  expect(account!.spent.tokens).toBeGreaterThanOrEqual(reported);
  // Every request asked for at most the ceiling its call reserved.
  expect(server.requests.length).toBeGreaterThan(4);
  expect(server.requests.every((b: ChatCompletionRequestBody) => b.max_tokens === 64)).toBe(true);
  await client.stop();
}, 30_000);
