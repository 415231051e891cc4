/**
 * MCP at /mcp, driven only through real MCP SDK clients over HTTP (v2 `@modelcontextprotocol/client`
 * in both protocol eras, v1 `@modelcontextprotocol/sdk` for interop) plus raw `fetch` for the
 * HTTP-level refusals.
 */
import { Client, ProtocolError, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { Client as V1Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as V1Transport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createRuntime, defineAgent, defineSwarm, handoff, type Model, type Runtime } from '../../../src/index.js';
import { mcpBaseNames } from '../../../src/server/mcp/names.js';
import { serve, type ServeOptions, type SwarmServer } from '../../../src/server/index.js';
import { call, queueModel } from '../../support/script.js';
import { sleep } from '../../support/sleep.js';
import { until } from '../../support/wait.js';

const weather = defineAgent({ id: 'weather', instructions: 'You know the weather.' });
const booking = defineSwarm({ id: 'booking', description: 'Books things', instructions: 'Book it.' });
const echo = defineSwarm({ id: 'echo', description: 'Repeats the input', instructions: 'Repeat.' });
const trip = defineSwarm({
  id: 'trip',
  description: 'Plans trips',
  input: z.object({ city: z.string(), days: z.number().int() }),
  result: z.object({ plan: z.string() }),
  instructions: ({ input }) => `Plan ${input.days} days in ${input.city}.`,
  handoffs: [handoff.toAgent(weather), handoff.toSwarm(booking)],
});
const odd = defineSwarm({ id: 'planner.v2:eu', instructions: 'Odd id.' });

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c().catch(() => undefined);
});

async function start(model: Model, options: ServeOptions = {}): Promise<{ url: string; runtime: Runtime; server: SwarmServer }> {
  const runtime = createRuntime({ swarms: [echo, trip, booking, odd], agents: [weather], model });
  cleanups.push(() => runtime.close());
  const server = await serve(runtime, options);
  cleanups.push(() => server.close());
  return { url: `${server.url}/mcp`, runtime, server };
}

async function v2(url: string, mode: 'legacy' | 'auto' = 'legacy'): Promise<Client> {
  const client = new Client({ name: 'xswarm-test', version: '1.0.0' }, { versionNegotiation: { mode } });
  await client.connect(new StreamableHTTPClientTransport(new URL(url)));
  cleanups.push(() => client.close());
  return client;
}

async function v1(url: string): Promise<V1Client> {
  const client = new V1Client({ name: 'xswarm-test-v1', version: '1.0.0' });
  await client.connect(new V1Transport(new URL(url)));
  cleanups.push(() => client.close());
  return client;
}

const text = (r: { content?: unknown }) => (r.content as { type: string; text: string }[])[0]!.text;

/** A trip that hands off to the weather agent, then to the booking swarm, then completes. */
const tripScript = () =>
  queueModel({
    trip: [
      call('handoff_to_weather', { request: 'Forecast for Oslo?' }),
      call('handoff_to_booking', { request: 'Book a hotel' }),
      call('complete', { result: { plan: 'Hike, then museum' } }),
    ],
    weather: [{ text: 'Sunny' }],
    booking: [{ text: 'Booked' }],
  });

/** A trip that first asks a human, then hands off to the weather agent and completes. */
const hitlScript = () =>
  queueModel({
    trip: [
      call('pause', { reason: 'Which day?' }),
      call('handoff_to_weather', { request: 'Forecast for Saturday?' }),
      call('complete', { result: { plan: 'Saturday hike' } }),
    ],
    weather: [{ text: 'Sunny' }],
  });

describe('MCP with the v2 client', () => {
  it('lists per-definition tools, result resource templates and instruction prompts', async () => {
    const { url } = await start(queueModel({}));
    const client = await v2(url);
    const tools = await client.listTools();
    const names = tools.tools.map((t) => t.name);
    for (const base of ['echo', 'trip', 'booking', 'planner_v2_eu']) {
      for (const suffix of ['run', 'get_result', 'resume', 'stop']) expect(names).toContain(`${base}_${suffix}`);
    }
    // An object input is spread into the arguments; anything else travels as { input }.
    const tripRun = tools.tools.find((t) => t.name === 'trip_run')!;
    expect(tripRun.inputSchema).toMatchObject({ type: 'object', required: ['city', 'days'] });
    expect(Object.keys(tripRun.inputSchema.properties!)).toEqual(['city', 'days', 'swarmId', 'wait']);
    const echoRun = tools.tools.find((t) => t.name === 'echo_run')!;
    expect(echoRun.inputSchema).toMatchObject({ type: 'object', properties: { input: { type: 'string' } }, required: ['input'] });
    expect(echoRun.description).toContain('Repeats the input');
    expect(tools.tools.find((t) => t.name === 'trip_get_result')!.outputSchema).toMatchObject({
      properties: { result: { type: 'object', properties: { plan: { type: 'string' } } } },
    });

    const templates = await client.listResourceTemplates();
    expect(templates.resourceTemplates.map((t) => t.uriTemplate)).toEqual(
      expect.arrayContaining(['swarm://echo/{swarmId}/result', 'swarm://trip/{swarmId}/result', 'swarm://planner.v2%3Aeu/{swarmId}/result']),
    );
    expect(templates.resourceTemplates.find((t) => t.uriTemplate.startsWith('swarm://echo/'))!.mimeType).toBe('application/json');

    const prompts = await client.listPrompts();
    expect(prompts.prompts.find((p) => p.name === 'echo_instructions')!.arguments ?? []).toEqual([]);
    expect(prompts.prompts.find((p) => p.name === 'trip_instructions')!.arguments).toEqual([expect.objectContaining({ name: 'input', required: true })]);
  });

  it('runs a swarm to completed with <id>_run and <id>_get_result, and reads the result resource', async () => {
    const { url } = await start(queueModel({ echo: [{ text: 'hello back' }] }));
    const client = await v2(url);
    const started = await client.callTool({ name: 'echo_run', arguments: { input: 'hello', swarmId: 'e1' } });
    expect(started.isError).toBeFalsy();
    expect(started.structuredContent).toMatchObject({ swarmId: 'e1' });
    expect(JSON.parse(text(started))).toMatchObject({ swarmId: 'e1' });

    const result = await until(
      'e1 to end',
      () => client.callTool({ name: 'echo_get_result', arguments: { swarmId: 'e1' } }),
      (r) => (r.structuredContent as { status: string }).status !== 'running',
      { interval: 5 },
    );
    expect(result.structuredContent).toEqual({ status: 'completed', result: 'hello back' });
    expect(JSON.parse(text(result))).toEqual({ status: 'completed', result: 'hello back' });

    const read = await client.readResource({ uri: 'swarm://echo/e1/result' });
    expect(read.contents).toEqual([{ uri: 'swarm://echo/e1/result', mimeType: 'application/json', text: JSON.stringify({ status: 'completed', result: 'hello back' }) }]);
    const listed = await client.listResources();
    expect(listed.resources.map((r) => r.uri)).toContain('swarm://echo/e1/result');
    await expect(client.readResource({ uri: 'swarm://echo/nope/result' })).rejects.toThrow(/Unknown swarm "nope"/);
  });

  it('<id>_run with wait: true reports turns and handoffs as progress and returns the completed result', async () => {
    const { url } = await start(tripScript());
    const client = await v2(url);
    const progress: { progress: number; message?: string }[] = [];
    const result = await client.callTool(
      { name: 'trip_run', arguments: { city: 'Oslo', days: 2, swarmId: 't1', wait: true } },
      { onprogress: (p) => void progress.push(p), resetTimeoutOnProgress: true, timeout: 10_000 },
    );
    expect(result.isError).toBeFalsy();
    expect(result.structuredContent).toEqual({ swarmId: 't1', status: 'completed', result: { plan: 'Hike, then museum' } });
    const messages = progress.map((p) => p.message);
    expect(messages).toEqual([
      'trip handed off to agent weather: Forecast for Oslo?',
      'Turn 1/10 completed (active agent: trip)',
      expect.stringMatching(/^trip handed off to swarm booking \(child swarm t1:.+\)$/),
      expect.stringMatching(/^Child swarm booking \(t1:.+\) started$/),
      expect.stringMatching(/^Child swarm booking \(t1:.+\) completed$/),
      'Turn 2/10 completed (active agent: trip)',
      'Turn 3/10 completed (active agent: trip)',
    ]);
    expect(progress.map((p) => p.progress)).toEqual(progress.map((_, i) => i + 1));
    // The child swarm's id (`t1:…`) travels percent-encoded in its resource URI.
    const child = (await client.listResources()).resources.find((r) => r.uri.startsWith('swarm://booking/'))!;
    expect(child.uri).toMatch(/^swarm:\/\/booking\/t1%3A.+\/result$/);
    const read = await client.readResource({ uri: child.uri });
    expect(JSON.parse((read.contents[0] as { text: string }).text)).toEqual({ status: 'completed', result: 'Booked' });
  });

  it('a HITL swarm: wait returns paused, <id>_resume continues it to completed', async () => {
    const { url } = await start(hitlScript());
    const client = await v2(url);
    const paused = await client.callTool({ name: 'trip_run', arguments: { city: 'Oslo', days: 1, swarmId: 'h1', wait: true } });
    expect(paused.structuredContent).toEqual({
      swarmId: 'h1',
      status: 'paused',
      reason: { type: 'HITL', message: 'Which day?', pauseId: expect.any(String) },
      currentTurn: 1,
      maxTurns: 10,
    });

    const progress: string[] = [];
    const done = await client.callTool(
      { name: 'trip_resume', arguments: { swarmId: 'h1', message: 'Saturday', wait: true } },
      { onprogress: (p) => void progress.push(p.message ?? '') },
    );
    expect(done.structuredContent).toEqual({ swarmId: 'h1', status: 'completed', result: { plan: 'Saturday hike' } });
    // Only what happened after the resume is reported.
    expect(progress).toEqual([
      'trip handed off to agent weather: Forecast for Saturday?',
      'Turn 2/10 completed (active agent: trip)',
      'Turn 3/10 completed (active agent: trip)',
    ]);
    const again = await client.callTool({ name: 'trip_resume', arguments: { swarmId: 'h1', message: 'x' } });
    expect(again.isError).toBe(true);
    expect(text(again)).toMatch(/it has ended \(completed\)/);
  });

  it('<id>_stop stops a running swarm; stopping it again is an isError result', async () => {
    const { url } = await start(queueModel({ echo: [async (req) => (await sleep(10_000, req.signal), { text: 'late' })] }));
    const client = await v2(url);
    await client.callTool({ name: 'echo_run', arguments: { input: 'slow', swarmId: 's1' } });
    const stopped = await client.callTool({ name: 'echo_stop', arguments: { swarmId: 's1', reason: 'enough' } });
    expect(stopped.structuredContent).toEqual({ swarmId: 's1', status: 'stopped', reason: 'enough' });
    const again = await client.callTool({ name: 'echo_stop', arguments: { swarmId: 's1' } });
    expect(again.isError).toBe(true);
  });

  it('a cancelled wait leaves the swarm running: its result is there later', async () => {
    const { url } = await start(queueModel({ echo: [async (req) => (await sleep(150, req.signal), { text: 'late' })] }));
    const client = await v2(url);
    const cancel = new AbortController();
    const waiting = client.callTool({ name: 'echo_run', arguments: { input: 'x', swarmId: 'c1', wait: true } }, { signal: cancel.signal });
    await sleep(30);
    cancel.abort();
    await expect(waiting).rejects.toThrow(/abort/i);
    const result = await until(
      'c1 to end',
      () => client.callTool({ name: 'echo_get_result', arguments: { swarmId: 'c1' } }),
      (r) => (r.structuredContent as { status: string }).status !== 'running',
      { interval: 5 },
    );
    expect(result.structuredContent).toEqual({ status: 'completed', result: 'late' });
  });

  it('serves the instructions as prompts, evaluating input-dependent ones', async () => {
    const { url } = await start(queueModel({}));
    const client = await v2(url);
    expect((await client.getPrompt({ name: 'echo_instructions' })).messages).toEqual([{ role: 'user', content: { type: 'text', text: 'Repeat.' } }]);
    const tripPrompt = await client.getPrompt({ name: 'trip_instructions', arguments: { input: '{"city":"Oslo","days":2}' } });
    expect(tripPrompt.messages[0]!.content).toEqual({ type: 'text', text: 'Plan 2 days in Oslo.' });
    await expect(client.getPrompt({ name: 'trip_instructions', arguments: { input: '{"city":"Oslo"}' } })).rejects.toThrow(
      /Invalid input for swarm "trip": days: Invalid input: expected number, received undefined/,
    );
  });

  it('serves the 2026-07-28 era too (server/discover, no initialize), progress included', async () => {
    const { url } = await start(hitlScript());
    const client = await v2(url, 'auto');
    expect(client.getProtocolEra()).toBe('modern');
    expect((await client.listTools()).tools.map((t) => t.name)).toContain('trip_run');
    const paused = await client.callTool({ name: 'trip_run', arguments: { city: 'Oslo', days: 1, swarmId: 'm1', wait: true } });
    expect(paused.structuredContent).toMatchObject({ status: 'paused' });
    const progress: string[] = [];
    const done = await client.callTool(
      { name: 'trip_resume', arguments: { swarmId: 'm1', message: 'Saturday', wait: true } },
      { onprogress: (p) => void progress.push(p.message ?? '') },
    );
    expect(done.structuredContent).toEqual({ swarmId: 'm1', status: 'completed', result: { plan: 'Saturday hike' } });
    expect(progress).toEqual([
      'trip handed off to agent weather: Forecast for Saturday?',
      'Turn 2/10 completed (active agent: trip)',
      'Turn 3/10 completed (active agent: trip)',
    ]);
    const read = await client.readResource({ uri: 'swarm://trip/m1/result' });
    expect(JSON.parse((read.contents[0] as { text: string }).text)).toEqual({ status: 'completed', result: { plan: 'Saturday hike' } });
  });
});

describe('MCP with the v1 client (@modelcontextprotocol/sdk)', () => {
  it('lists tools and runs a swarm to completed with progress', async () => {
    const { url } = await start(tripScript());
    const client = await v1(url);
    const names = (await client.listTools()).tools.map((t) => t.name);
    expect(names).toEqual(expect.arrayContaining(['trip_run', 'trip_get_result', 'trip_resume', 'trip_stop']));
    const progress: string[] = [];
    const result = await client.callTool({ name: 'trip_run', arguments: { city: 'Bergen', days: 1, swarmId: 'v1', wait: true } }, undefined, {
      onprogress: (p) => void progress.push(p.message ?? ''),
    });
    expect(result.structuredContent).toEqual({ swarmId: 'v1', status: 'completed', result: { plan: 'Hike, then museum' } });
    expect(progress).toContain('trip handed off to agent weather: Forecast for Oslo?');
    const got = await client.callTool({ name: 'trip_get_result', arguments: { swarmId: 'v1' } });
    expect(got.structuredContent).toEqual({ status: 'completed', result: { plan: 'Hike, then museum' } });
  });
});

describe('MCP bad requests', () => {
  it('unknown swarms, swarms of another definition, invalid input and wrong states are isError results', async () => {
    const { url } = await start(queueModel({ echo: [call('pause', { reason: 'q' })] }));
    const client = await v2(url);
    const unknown = await client.callTool({ name: 'echo_get_result', arguments: { swarmId: 'nope' } });
    expect(unknown).toMatchObject({ isError: true, content: [{ type: 'text', text: 'Unknown swarm "nope" of definition "echo"' }] });

    const invalid = await client.callTool({ name: 'trip_run', arguments: { city: 3, days: 1 } });
    expect(invalid).toMatchObject({
      isError: true,
      content: [{ type: 'text', text: 'Invalid input for swarm "trip": city: Invalid input: expected string, received number' }],
    });
    const envelope = await client.callTool({ name: 'echo_run', arguments: { input: 'x', wait: 'yes' } });
    expect(envelope.isError).toBe(true);
    expect(text(envelope)).toMatch(/wait must be a boolean/);

    await client.callTool({ name: 'echo_run', arguments: { input: 'x', swarmId: 'b1', wait: true } });
    const other = await client.callTool({ name: 'trip_stop', arguments: { swarmId: 'b1' } });
    expect(other).toMatchObject({ isError: true, content: [{ text: 'Unknown swarm "b1" of definition "trip"' }] });
    const inUse = await client.callTool({ name: 'echo_run', arguments: { input: 'x', swarmId: 'b1' } });
    expect(inUse).toMatchObject({ isError: true, content: [{ text: 'Swarm id "b1" is already in use' }] });

    // An unknown tool is a protocol error in the v2 SDK (spec 2025-11-25), not a tool result.
    await expect(client.callTool({ name: 'nope_run', arguments: {} })).rejects.toBeInstanceOf(ProtocolError);
  });

  it('with a token, /mcp without the bearer is 401 and with it works', async () => {
    const { url } = await start(queueModel({}), { token: 'secret' });
    const res = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' }, body: '{}' });
    expect(res.status).toBe(401);
    expect(res.headers.get('www-authenticate')).toBe('Bearer');
    await expect(v2(url)).rejects.toThrow();

    const client = new Client({ name: 't', version: '1' });
    await client.connect(new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers: { authorization: 'Bearer secret' } } }));
    cleanups.push(() => client.close());
    expect((await client.listTools()).tools.length).toBeGreaterThan(0);
  });

  it('a body over 1 MiB is 413, malformed JSON is a JSON-RPC parse error, a foreign Origin is 403', async () => {
    const { url } = await start(queueModel({}));
    const headers = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
    const big = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping', params: { pad: 'x'.repeat(1024 * 1024) } });
    const tooLarge = await fetch(url, { method: 'POST', headers, body: big });
    expect(tooLarge.status).toBe(413);
    expect(await tooLarge.json()).toMatchObject({ jsonrpc: '2.0', error: { code: -32000 }, id: null });

    const malformed = await fetch(url, { method: 'POST', headers, body: '{"jsonrpc": "2.0", "id": 1, "method": ' });
    expect(malformed.status).toBe(400);
    expect(await malformed.json()).toMatchObject({ jsonrpc: '2.0', error: { code: -32700 }, id: null });

    const foreign = await fetch(url, { method: 'POST', headers: { ...headers, origin: 'http://evil.example' }, body: '{}' });
    expect(foreign.status).toBe(403);

    // Stateless: no standalone stream, no session to delete.
    expect((await fetch(url, { headers: { accept: 'text/event-stream' } })).status).toBe(405);
    // The server is still fine.
    expect((await (await v2(url)).listTools()).tools.length).toBeGreaterThan(0);
  });

  it('maps definition ids to valid, distinct tool names', () => {
    const names = mcpBaseNames(['activity-planner', 'planner.v2', 'planner_v2', 'a.b', 'a:b', 'eu:x', 'x-', 'x'.repeat(80)]);
    expect(names.get('activity-planner')).toBe('activity-planner');
    expect(names.get('planner_v2')).toBe('planner_v2');
    expect(names.get('planner.v2')).toMatch(/^planner_v2_[0-9a-f]{8}$/);
    expect(names.get('a.b')).toMatch(/^a_b_[0-9a-f]{8}$/);
    expect(names.get('a:b')).toMatch(/^a_b_[0-9a-f]{8}$/);
    expect(names.get('a:b')).not.toBe(names.get('a.b'));
    expect(names.get('eu:x')).toBe('eu_x');
    expect(names.get('x-')).toBe('x_');
    expect(names.get('x'.repeat(80))!.length).toBeLessThanOrEqual(53);
    for (const n of names.values()) expect(`${n}_get_result`).toMatch(/^[A-Za-z0-9_-]{1,64}$/);
  });
});
