/**
 * Remote A2A agents as handoff targets: a swarm in server A hands off to a swarm in server B
 * over A2A (the SDK client on one side, the SDK server building blocks on the other).
 */
import { createServer } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { createRuntime, defineSwarm, handoff, type Runtime, type SwarmDefinition } from '../../src/index.js';
import { a2aRemoteAgents, type A2ARemoteOptions } from '../../src/a2a/client.js';
import { serve } from '../../src/server/index.js';
import { call, lastToolResult, queueModel, type Step } from '../support/script.js';
import { until } from '../support/wait.js';

const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close();
});

/** Server B: a `weather` swarm answering from `script`. */
async function serverB(script: Step[], options: { token?: string } = {}) {
  const weather = defineSwarm({ id: 'weather', description: 'Answers weather questions', instructions: 'Forecast.' });
  const model = queueModel({ weather: script });
  const runtime = createRuntime({ swarms: [weather], model });
  const server = await serve(runtime, options);
  closers.push(
    () => runtime.close(),
    () => server.close(),
  );
  return { runtime, server, model, cardUrl: `${server.url}/a2a/weather/.well-known/agent-card.json` };
}

/** Server A: a `planner` swarm handing off to the remote agent at `cardUrl`. */
async function serverA(cardUrl: string, script: Step[], remote?: A2ARemoteOptions) {
  const planner: SwarmDefinition = defineSwarm({ id: 'planner', instructions: 'Plan with the weather.', handoffs: [handoff.toRemoteAgent(cardUrl)] });
  const model = queueModel({ planner: script });
  const runtime: Runtime = createRuntime({ swarms: [planner], model, ...(remote ? { remote: a2aRemoteAgents(remote) } : {}) });
  const server = await serve(runtime);
  closers.push(
    () => runtime.close(),
    () => server.close(),
  );
  return { runtime, server, model };
}

/** A port nothing listens on. */
async function closedPort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((resolve) => s.listen(0, '127.0.0.1', resolve));
  const { port } = s.address() as { port: number };
  await new Promise<void>((resolve) => s.close(() => resolve()));
  return port;
}

describe('a swarm handing off to a swarm on another server', () => {
  it('completes with the remote result inside its tool result', async () => {
    const b = await serverB([{ text: 'Sunny on Saturday' }]);
    const a = await serverA(b.cardUrl, [call('handoff_to_weather', { request: 'forecast for Saturday' }), (req) => ({ text: `Plan: ${lastToolResult(req)}` })]);
    const client = a.runtime.forSwarm('planner');
    await client.run('Plan my weekend');
    expect(await client.wait()).toEqual({ status: 'completed', result: 'Plan: Sunny on Saturday' });
    // The card named the tool and described it.
    const tools = a.model.requests[0]!.tools.map((t) => t.name);
    expect(tools).toContain('handoff_to_weather');
    expect(a.model.requests[0]!.tools.find((t) => t.name === 'handoff_to_weather')?.description).toBe('Answers weather questions');
    // B ran one swarm, with A's request as its input.
    const [task] = await b.runtime.list({ definitionId: 'weather' });
    expect(task?.status).toBe('completed');
    expect(b.model.requests[0]!.messages.find((m) => m.role === 'user')?.content).toBe('forecast for Saturday');
  });

  it('a remote input-required pauses the calling swarm; its resume is forwarded and both complete', async () => {
    const b = await serverB([call('pause', { reason: 'Which city?' }), (req) => ({ text: `Sunny in ${lastToolResult(req)}` })]);
    const a = await serverA(b.cardUrl, [call('handoff_to_weather', { request: 'forecast' }), (req) => ({ text: `Plan: ${lastToolResult(req)}` })]);
    const client = a.runtime.forSwarm('planner');
    await client.run('Plan my weekend');
    const paused = await client.wait();
    expect(paused).toMatchObject({ status: 'paused', reason: { type: 'HITL', message: 'Which city?' } });
    const [remoteTask] = await b.runtime.list({ definitionId: 'weather' });
    expect(await b.runtime.forSwarm('weather', remoteTask!.swarmId).getResult()).toMatchObject({ status: 'paused' });

    await client.resume('Paris');
    expect(await client.wait()).toEqual({ status: 'completed', result: 'Plan: Sunny in Paris' });
    expect(await b.runtime.forSwarm('weather', remoteTask!.swarmId).getResult()).toEqual({ status: 'completed', result: 'Sunny in Paris' });
  });

  it('an unreachable remote is a tool error fed back to the model, and the swarm still completes', async () => {
    const url = `http://127.0.0.1:${await closedPort()}/a2a/weather/.well-known/agent-card.json`;
    const a = await serverA(url, [call('handoff_to_weather', { request: 'forecast' }), (req) => ({ text: `No forecast: ${lastToolResult(req)}` })]);
    const client = a.runtime.forSwarm('planner');
    await client.run('Plan my weekend');
    const result = await client.wait();
    expect(result.status).toBe('completed');
    expect(lastToolResult(a.model.requests[1]!)).toMatch(
      /^Could not reach the remote agent at http:\/\/127\.0\.0\.1:\d+\/a2a\/weather\/\.well-known\/agent-card\.json: fetch failed/,
    );
  });

  it('a failing remote swarm is a tool error naming the reason', async () => {
    const b = await serverB([call('fail', { reason: 'no satellite data' })]);
    const a = await serverA(b.cardUrl, [call('handoff_to_weather', { request: 'forecast' }), (req) => ({ text: `Fallback: ${lastToolResult(req)}` })]);
    const client = a.runtime.forSwarm('planner');
    await client.run('Plan my weekend');
    expect(await client.wait()).toEqual({ status: 'completed', result: 'Fallback: The remote agent "weather" failed: no satellite data' });
  });

  it('sends bearer headers to a server with a token (and without them gets a clear tool error)', async () => {
    const b = await serverB([{ text: 'Dry' }], { token: 'b-token' });
    const seen: string[] = [];
    const withToken = await serverA(b.cardUrl, [call('handoff_to_weather', { request: 'forecast' }), (req) => ({ text: lastToolResult(req) })], {
      headers: (url) => {
        seen.push(url);
        return { authorization: 'Bearer b-token' };
      },
    });
    const ok = withToken.runtime.forSwarm('planner');
    await ok.run('go');
    expect(await ok.wait()).toEqual({ status: 'completed', result: 'Dry' });
    expect(seen).toContain(b.cardUrl);
    expect(seen).toContain(`${b.server.url}/a2a/weather`);

    const without = await serverA(b.cardUrl, [call('handoff_to_weather', { request: 'forecast' }), (req) => ({ text: lastToolResult(req) })]);
    const refused = without.runtime.forSwarm('planner');
    await refused.run('go');
    const result = await refused.wait();
    expect(result).toMatchObject({ status: 'completed' });
    expect((result as { result: string }).result).toBe(
      `The remote agent "weather" (${b.cardUrl}) failed: HTTP 401 Unauthorized from ${b.server.url}/a2a/weather: {"message":"Missing or wrong bearer token","status":401}`,
    );
  });

  it('works with a v0.3-only peer through the SDK’s legacyCompat', async () => {
    const b = await serverB([{ text: 'Windy' }]);
    const methods: string[] = [];
    // The peer looks like a v0.3 server: its card has no v1.0 interfaces.
    const v03Peer: typeof fetch = async (input, init) => {
      const url = typeof input === 'string' ? input : input instanceof URL ? input.href : input.url;
      if (init?.body && typeof init.body === 'string') methods.push((JSON.parse(init.body) as { method: string }).method);
      const headers = new Headers(init?.headers);
      headers.delete('A2A-Version');
      const res = await fetch(input, { ...init, headers: url.endsWith('agent-card.json') ? headers : init?.headers });
      if (!url.endsWith('agent-card.json')) return res;
      const { supportedInterfaces: _drop, ...card } = (await res.json()) as Record<string, unknown>;
      return new Response(JSON.stringify(card), { status: 200, headers: { 'content-type': 'application/json' } });
    };
    const a = await serverA(b.cardUrl, [call('handoff_to_weather', { request: 'forecast' }), (req) => ({ text: lastToolResult(req) })], { fetch: v03Peer });
    const client = a.runtime.forSwarm('planner');
    await client.run('go');
    expect(await client.wait()).toEqual({ status: 'completed', result: 'Windy' });
    expect(methods).toEqual(['message/stream']);
  });

  it('stopping the calling swarm cancels the remote task', async () => {
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const b = await serverB([
      (req) =>
        new Promise((resolve, reject) => {
          req.signal.addEventListener('abort', () => reject(req.signal.reason), { once: true });
          void gate.then(() => resolve({ text: 'late' }));
        }),
    ]);
    const a = await serverA(b.cardUrl, [call('handoff_to_weather', { request: 'forecast' })]);
    const client = a.runtime.forSwarm('planner');
    await client.run('go');
    // Wait until B is working on it.
    const remoteId = await until('B to work on it', async () => (await b.runtime.list({ definitionId: 'weather' }))[0]?.swarmId, { interval: 20 });
    expect(remoteId).toBeDefined();
    await client.stop('user gave up');
    const status = await until(
      'the remote swarm to stop',
      async () => (await b.runtime.forSwarm('weather', remoteId!).getResult()).status,
      (s) => s === 'stopped',
      { interval: 20 },
    );
    expect(status).toBe('stopped');
    release();
  });
});

describe('a2aRemoteAgents().card', () => {
  it('reads name and description; an unreadable card throws', async () => {
    const b = await serverB([]);
    const remote = a2aRemoteAgents();
    expect(await remote.card(b.cardUrl)).toEqual({ name: 'weather', description: 'Answers weather questions' });
    await expect(remote.card(`${b.server.url}/a2a/nope/.well-known/agent-card.json`)).rejects.toThrow();
  });
});
