/**
 * Sessions of the 2025-era MCP leg (issue 32), through the official clients (v1
 * `@modelcontextprotocol/sdk` and v2 in legacy mode) and raw HTTP where the wire is the point:
 * an `initialize` issues an `Mcp-Session-Id` that later requests reuse; resource subscriptions
 * send `notifications/resources/updated` on the standalone stream as the swarm changes, and stop
 * on unsubscribe and when the session ends (no runtime listener left); `DELETE` ends a session
 * (404 after); idle sessions expire unless a stream is open; the max-sessions bound evicts the
 * least recently used idle session and refuses (503) when all are busy; the log level holds
 * across requests; a typed pause is elicited from a 2025 client that declared elicitation; a
 * standalone stream resumes from `Last-Event-ID` with what was sent while it was closed.
 */
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { Client as V1Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as V1Transport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ElicitRequestSchema, LoggingMessageNotificationSchema, ResourceUpdatedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { afterEach, describe, expect, it } from 'vitest';
import { createRuntime, type Runtime } from '../../../src/index.js';
import { serve } from '../../../src/server/index.js';
import type { ServeOptions } from '../../../src/server/options.js';
import { answerModel, dinner, notes } from '../../support/answer-swarms.js';

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c().catch(() => undefined);
});

/** A server of the answer swarms; `listeners` counts the runtime listeners open now. */
async function start(options: ServeOptions = {}) {
  const { model } = answerModel();
  const runtime = createRuntime({ swarms: [dinner, notes], model });
  cleanups.push(() => runtime.close());
  const listeners = { open: 0 };
  const subscribe = runtime.subscribe.bind(runtime);
  (runtime as { subscribe: Runtime['subscribe'] }).subscribe = (listener) => {
    listeners.open++;
    const stop = subscribe(listener);
    let stopped = false;
    return () => {
      if (!stopped) listeners.open--;
      stopped = true;
      stop();
    };
  };
  const server = await serve(runtime, options);
  cleanups.push(() => server.close());
  return { url: `${server.url}/mcp`, runtime, listeners, server };
}

async function v1(url: string, capabilities: Record<string, unknown> = {}): Promise<{ client: V1Client; transport: V1Transport }> {
  const client = new V1Client({ name: 'xswarm-test-v1', version: '1.0.0' }, { capabilities });
  const transport = new V1Transport(new URL(url));
  await client.connect(transport);
  cleanups.push(() => client.close());
  return { client, transport };
}

async function v2(url: string, capabilities: Record<string, unknown> = {}): Promise<{ client: Client; transport: StreamableHTTPClientTransport }> {
  const client = new Client({ name: 'xswarm-test', version: '1.0.0' }, { versionNegotiation: { mode: 'legacy' }, capabilities });
  const transport = new StreamableHTTPClientTransport(new URL(url));
  await client.connect(transport);
  cleanups.push(() => client.close());
  return { client, transport };
}

const VERSION = '2025-11-25';

/** A raw JSON-RPC POST of the 2025 era, in a session when `sessionId` is given. */
function post(url: string, body: unknown, sessionId?: string): Promise<Response> {
  return fetch(url, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-protocol-version': VERSION,
      ...(sessionId ? { 'mcp-session-id': sessionId } : {}),
    },
    body: JSON.stringify(body),
  });
}

/** Opens a session with raw HTTP; returns its id. */
async function initialize(url: string): Promise<string> {
  const res = await post(url, {
    jsonrpc: '2.0',
    id: 1,
    method: 'initialize',
    params: { protocolVersion: VERSION, capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
  });
  expect(res.status).toBe(200);
  const id = res.headers.get('mcp-session-id');
  expect(id).toMatch(/^[0-9a-f-]{36}$/);
  await res.text();
  await (await post(url, { jsonrpc: '2.0', method: 'notifications/initialized' }, id!)).text();
  return id!;
}

/** The HTTP status of a `tools/list` in session `id`. */
async function listStatus(url: string, id: string): Promise<number> {
  const res = await post(url, { jsonrpc: '2.0', id: 2, method: 'tools/list' }, id);
  await res.text();
  return res.status;
}

/** Opens the standalone stream of session `id`, from `lastEventId` when given. */
async function openStream(url: string, id: string, lastEventId?: string) {
  const controller = new AbortController();
  const res = await fetch(url, {
    headers: { accept: 'text/event-stream', 'mcp-session-id': id, 'mcp-protocol-version': VERSION, ...(lastEventId ? { 'last-event-id': lastEventId } : {}) },
    signal: controller.signal,
  });
  expect(res.status).toBe(200);
  const reader = res.body!.pipeThrough(new TextDecoderStream()).getReader();
  let text = '';
  cleanups.push(async () => controller.abort());
  return {
    /** Reads until `pattern` shows up in what the stream sent (fails after 5 s). */
    async until(pattern: RegExp): Promise<string> {
      const deadline = Date.now() + 5000;
      while (!pattern.test(text)) {
        const next = await Promise.race([reader.read(), new Promise<'late'>((r) => setTimeout(() => r('late'), Math.max(0, deadline - Date.now())))]);
        if (next === 'late' || next.done) throw new Error(`stream ended or timed out before ${pattern}: ${text}`);
        text += next.value;
      }
      return text;
    },
    close: () => controller.abort(),
  };
}

const until = async (check: () => boolean, ms = 5000) => {
  const deadline = Date.now() + ms;
  while (!check()) {
    if (Date.now() > deadline) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 10));
  }
};
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const RESULT = 'swarm://dinner/d1/result';

describe('2025-era MCP sessions', () => {
  it('initialize issues a session id that the v1 and v2 clients reuse; an unknown id answers 404', async () => {
    const { url } = await start();
    const a = await v1(url);
    const b = await v2(url);
    expect(a.transport.sessionId).toMatch(/^[0-9a-f-]{36}$/);
    expect(b.transport.sessionId).toMatch(/^[0-9a-f-]{36}$/);
    expect(a.transport.sessionId).not.toBe(b.transport.sessionId);
    // Both advertise subscriptions, which only a session can serve.
    expect(a.client.getServerCapabilities()?.resources?.subscribe).toBe(true);
    await a.client.listTools();
    await b.client.listTools();
    expect(await listStatus(url, a.transport.sessionId!)).toBe(200);
    expect(await listStatus(url, '00000000-0000-4000-8000-000000000000')).toBe(404);
  });

  it('a 2025 request without a session id is still served statelessly; GET without one is 405', async () => {
    const { url } = await start();
    const res = await post(url, { jsonrpc: '2.0', id: 1, method: 'tools/list' });
    expect(res.status).toBe(200);
    expect(res.headers.get('mcp-session-id')).toBeNull();
    expect(await res.text()).toContain('dinner_run');
    expect((await fetch(url, { headers: { accept: 'text/event-stream' } })).status).toBe(405);
  });

  it('a subscribed swarm result is notified as the swarm runs and resumes; unsubscribe stops it and the runtime listener', async () => {
    const { url, listeners } = await start();
    const { client } = await v1(url);
    const updates: string[] = [];
    client.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => void updates.push(n.params.uri));
    await client.subscribeResource({ uri: RESULT });
    // Another scheme can be subscribed to and never changes: no listener for it.
    await client.subscribeResource({ uri: 'test://watched-resource' });
    expect(listeners.open).toBe(1);

    const paused = await client.callTool({ name: 'dinner_run', arguments: { input: 'plan', swarmId: 'd1', wait: true } });
    expect(paused.structuredContent).toMatchObject({ status: 'paused' });
    await until(() => updates.length >= 2);
    expect(new Set(updates)).toEqual(new Set([RESULT]));
    const read = await client.readResource({ uri: RESULT });
    expect(JSON.parse((read.contents[0] as { text: string }).text)).toMatchObject({ status: 'paused' });

    const before = updates.length;
    await client.callTool({ name: 'dinner_resume', arguments: { swarmId: 'd1', answer: { guests: 2 } } });
    await until(() => updates.length > before);

    await client.unsubscribeResource({ uri: RESULT });
    expect(listeners.open).toBe(0);
    const after = updates.length;
    await client.callTool({ name: 'dinner_run', arguments: { input: 'again', swarmId: 'd2', wait: true } });
    await client.callTool({ name: 'dinner_stop', arguments: { swarmId: 'd2' } });
    await client.subscribeResource({ uri: 'swarm://dinner/d2/result' });
    await client.unsubscribeResource({ uri: 'swarm://dinner/d2/result' });
    await sleep(50);
    expect(updates.length).toBe(after);
  });

  it('DELETE ends the session: its listeners stop and its id answers 404', async () => {
    const { url, listeners } = await start();
    const { client, transport } = await v2(url);
    await client.subscribeResource({ uri: RESULT });
    expect(listeners.open).toBe(1);
    const id = transport.sessionId!;
    await transport.terminateSession();
    expect(listeners.open).toBe(0);
    expect(await listStatus(url, id)).toBe(404);
  });

  it('an idle session expires; one with its stream open does not', async () => {
    const { url } = await start({ mcpSessions: { idleTimeoutMs: 150 } });
    const idle = await initialize(url);
    const listening = await initialize(url);
    const stream = await openStream(url, listening);
    await sleep(400);
    expect(await listStatus(url, idle)).toBe(404);
    expect(await listStatus(url, listening)).toBe(200);
    stream.close();
    await sleep(400);
    expect(await listStatus(url, listening)).toBe(404);
  });

  it('at the max-sessions bound, initialize evicts the least recently used idle session, and is refused when all are busy', async () => {
    const { url } = await start({ mcpSessions: { maxSessions: 2 } });
    const a = await initialize(url);
    const b = await initialize(url);
    expect(await listStatus(url, a)).toBe(200); // a is now more recently used than b
    const c = await initialize(url);
    expect(await listStatus(url, b)).toBe(404);
    expect(await listStatus(url, a)).toBe(200);
    expect(await listStatus(url, c)).toBe(200);
    // Both held by an open stream: nothing to evict.
    await openStream(url, a);
    await openStream(url, c);
    const refused = await post(url, {
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: VERSION, capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
    });
    expect(refused.status).toBe(503);
    expect(await refused.json()).toMatchObject({ error: { message: expect.stringMatching(/Too many MCP sessions \(2\)/) } });
  });

  it('the log level set in a session holds for its later requests', async () => {
    const { url } = await start();
    const { client } = await v1(url);
    const logs: unknown[] = [];
    client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => void logs.push(n.params));
    await client.setLoggingLevel('error');
    await client.callTool({ name: 'notes_run', arguments: { input: 'take notes', swarmId: 'n1', wait: true } });
    expect(logs).toEqual([]);
    await client.setLoggingLevel('info');
    await client.callTool({ name: 'notes_extend', arguments: { swarmId: 'n1', maxTurns: 2 } });
    await client.callTool({ name: 'notes_resume', arguments: { swarmId: 'n1', message: 'go on', wait: true } });
    expect(logs).toContainEqual(expect.objectContaining({ level: 'info', logger: 'xswarm', data: expect.objectContaining({ swarmId: 'n1' }) }));
  });

  it.each(['v1', 'v2'] as const)('a %s client that declared elicitation is asked a typed pause; its answer resumes the swarm', async (line) => {
    const { url } = await start();
    const asked: { message: string; requestedSchema: unknown }[] = [];
    const answer = (params: { message: string; requestedSchema: unknown }) => {
      asked.push(params);
      return { action: 'accept' as const, content: { guests: 3 } };
    };
    let call: (args: { name: string; arguments: Record<string, unknown> }) => Promise<{ structuredContent?: unknown }>;
    if (line === 'v1') {
      const { client } = await v1(url, { elicitation: {} });
      client.setRequestHandler(ElicitRequestSchema, (r) => answer(r.params as never));
      call = async (args) => (await client.callTool(args)) as { structuredContent?: unknown };
    } else {
      const { client } = await v2(url, { elicitation: { form: {} } });
      client.setRequestHandler('elicitation/create', (r) => answer(r.params as never));
      call = (args) => client.callTool(args);
    }
    const done = await call({ name: 'dinner_run', arguments: { input: 'plan', swarmId: 'd1', wait: true } });
    expect(asked).toEqual([expect.objectContaining({ message: 'How many guests?', requestedSchema: expect.objectContaining({ required: ['guests'] }) })]);
    expect(done.structuredContent).toEqual({ swarmId: 'd1', status: 'completed', result: 'dinner for {"guests":3}' });
  });

  it('the standalone stream resumes from Last-Event-ID with the updates sent while it was closed', async () => {
    const { url } = await start();
    const id = await initialize(url);
    const sub = await post(url, { jsonrpc: '2.0', id: 3, method: 'resources/subscribe', params: { uri: RESULT } }, id);
    // A POST stream opens with the priming event: an id to resume from and the retry delay.
    expect(await sub.text()).toMatch(/^id: \S+\nretry: 1000\ndata: *\n\n[\s\S]*"result":\{\}/);
    const first = await openStream(url, id);
    const run = await post(
      url,
      { jsonrpc: '2.0', id: 4, method: 'tools/call', params: { name: 'dinner_run', arguments: { input: 'plan', swarmId: 'd1', wait: true } } },
      id,
    );
    expect(await run.text()).toContain('paused');
    const seen = await first.until(/id: (\S+)\ndata: .*notifications\/resources\/updated/);
    const lastEventId = [...seen.matchAll(/id: (\S+)/g)].at(-1)![1]!;
    first.close();
    // Sent while no stream is open: kept for the reconnect.
    const resume = await post(
      url,
      { jsonrpc: '2.0', id: 5, method: 'tools/call', params: { name: 'dinner_resume', arguments: { swarmId: 'd1', answer: { guests: 2 }, wait: true } } },
      id,
    );
    expect(await resume.text()).toContain('completed');
    const resumed = await openStream(url, id, lastEventId);
    const replayed = await resumed.until(/notifications\/resources\/updated/);
    expect(replayed).toContain(RESULT);
    expect(replayed).not.toContain(`id: ${lastEventId}\n`);
  });

  it('closing the server ends its sessions', async () => {
    const { url, listeners, server } = await start();
    const { client, transport } = await v1(url);
    await client.subscribeResource({ uri: RESULT });
    const id = transport.sessionId!;
    expect(listeners.open).toBe(1);
    await server.close();
    expect(listeners.open).toBe(0);
    await expect(listStatus(url, id)).rejects.toThrow();
  });
});
