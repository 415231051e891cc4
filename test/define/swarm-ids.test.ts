/**
 * Swarm ids: what is not a valid id is refused before anything starts, at every door (Node
 * API, REST, WebSocket, A2A, MCP, CLI), and a valid id of the longest length still yields
 * child swarm ids that are valid and reachable by URL.
 */
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { afterEach, describe, expect, it } from 'vitest';
import { createRuntime, defineSwarm, handoff, isSwarmId, MAX_SWARM_ID_LENGTH, type Runtime } from '../../src/index.js';
import { serve, type SwarmServer } from '../../src/server/index.js';
import { call, queueModel } from '../support/script.js';
import { request, Subscriber } from '../support/server-clients.js';
import { tempDirs } from '../support/temp-dirs.js';
import { REPO_ROOT } from '../support/repo-root.js';
import { until } from '../support/wait.js';

const tempDir = tempDirs();

/** Ids that must be refused, each for another reason. */
const BAD: Record<string, string> = {
  'a lone surrogate': 'a\ud800b',
  'a 100 KB id': 'x'.repeat(100_000),
  'a/../b': 'a/../b',
  'a/b': 'a/b',
  '%2F': '%2F',
  'an empty id': '',
  '..': '..',
  'a space': 'a b',
  'a control character': 'a\u0000b',
  'a backslash': 'a\\b',
  'a question mark': 'a?b',
  'a hash': 'a#b',
  'a bidi override': 'a\u202eb',
};
const BAD_IDS = Object.entries(BAD);

/** The longest id a caller may choose, with characters that are allowed (colon, non-ASCII). */
const LONGEST = 'ü:'.repeat(MAX_SWARM_ID_LENGTH / 2);

const child = defineSwarm({ id: 'child', instructions: 'Do the child part.' });
const parent = defineSwarm({ id: 'parent', instructions: 'Delegate.', handoffs: [handoff.toSwarm(child)] });
const echo = defineSwarm({ id: 'echo', instructions: 'Repeat.' });

let runtime: Runtime | undefined;
let server: SwarmServer | undefined;
const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c().catch(() => undefined);
  await server?.close();
  await runtime?.close();
  server = undefined;
  runtime = undefined;
});

async function start() {
  const model = queueModel({
    parent: [call('handoff_to_child', { request: 'do it' }), { text: 'parent done' }],
    child: [{ text: 'child done' }],
    echo: Array.from({ length: 5 }, () => ({ text: 'echoed' })),
  });
  runtime = createRuntime({ swarms: [parent, child, echo], model });
  server = await serve(runtime);
  return { url: server.url, rt: runtime, model };
}

/** Nothing was started: no swarm in the store, no model call. */
async function expectNothingStarted(rt: Runtime, model: { requests: unknown[] }) {
  expect(await rt.list()).toEqual([]);
  expect(model.requests).toHaveLength(0);
}

describe('the Node API', () => {
  it('refuses every invalid id with SwarmError invalid-id, for definitions and ad-hoc swarms', async () => {
    const { rt, model } = await start();
    for (const [what, id] of BAD_IDS) {
      await expect(rt.forSwarm(echo, id).run('hi'), what).rejects.toMatchObject({ name: 'SwarmError', code: 'invalid-id' });
      await expect(rt.adhoc(id).run({ userMessage: 'hi', instructions: 'Answer.' }), what).rejects.toMatchObject({ code: 'invalid-id' });
    }
    await expect(rt.forSwarm(echo, `${LONGEST}x`).run('hi')).rejects.toThrow(`at most ${MAX_SWARM_ID_LENGTH} characters`);
    await expectNothingStarted(rt, model);
  });
});

describe('REST and WebSocket', () => {
  it('POST with an invalid swarmId is a 400 and starts nothing', async () => {
    const { url, rt, model } = await start();
    for (const [what, id] of BAD_IDS) {
      const r = await request(url, 'POST', '/swarms/echo', JSON.stringify({ input: 'hi', swarmId: id }));
      expect(r.status, what).toBe(400);
      expect(r.body.error, what).toMatch(/^Invalid swarm id: /);
    }
    // The lone surrogate as it travels in JSON: an escape that JSON.parse turns into U+D800.
    const raw = await request(url, 'POST', '/swarms/echo', '{"input":"hi","swarmId":"a\\ud800"}');
    expect(raw).toMatchObject({ status: 400, body: { error: expect.stringContaining('U+D800') } });
    await expectNothingStarted(rt, model);
  });

  it('an invalid id in a path is a 400 (not a 404), on every route; so is a WebSocket swarmId', async () => {
    const { url, rt, model } = await start();
    // (`.` and `..` never reach a route: URLs resolve them, `%2E` included.)
    const segments = ['a%2Fb', '%25', 'a%20b', 'a%5Cb', 'x'.repeat(600), 'a%E2%80%AEb'];
    for (const s of segments) {
      for (const [method, path] of [
        ['GET', `/swarms/echo/${s}`],
        ['GET', `/swarms/echo/${s}/events`],
        ['POST', `/swarms/echo/${s}/stop`],
        ['POST', `/swarms/echo/${s}/resume`],
      ] as const) {
        const r = await request(url, method, path, method === 'POST' ? {} : undefined);
        expect(r.status, `${method} ${path.slice(0, 40)}`).toBe(400);
        expect(r.body.error).toMatch(/^Invalid swarm id: /);
      }
      await expect(Subscriber.open(`${url.replace(/^http/, 'ws')}/events?swarmId=${s}`)).rejects.toMatchObject({ status: 400 });
    }
    // A lone surrogate cannot even be written in a URL: its UTF-8 is malformed.
    expect((await request(url, 'GET', '/swarms/echo/a%ED%A0%80')).status).toBe(400);
    // A valid id that names nothing stays a 404.
    expect((await request(url, 'GET', '/swarms/echo/nobody')).status).toBe(404);
    await expectNothingStarted(rt, model);
  });

  it('the longest valid id works, and its child swarm id is valid and reachable by URL', async () => {
    const { url } = await start();
    const created = await request(url, 'POST', '/swarms/parent', { input: 'go', swarmId: LONGEST });
    expect(created.status).toBe(201);
    expect(created.headers.get('location')).toBe(`/swarms/parent/${encodeURIComponent(LONGEST)}`);
    const done = await until(
      'the swarm to complete',
      () => request(url, 'GET', created.headers.get('location')!),
      (r) => r.body.status === 'completed',
    );
    expect(done.body).toEqual({ status: 'completed', result: 'parent done' });

    const childId = `${LONGEST}:t1:0`;
    expect(childId.length).toBeGreaterThan(MAX_SWARM_ID_LENGTH);
    expect(isSwarmId(childId)).toBe(false); // longer than a caller may choose…
    const got = await request(url, 'GET', `/swarms/child/${encodeURIComponent(childId)}`); // …yet reachable
    expect(got).toMatchObject({ status: 200, body: { status: 'completed', result: 'child done' } });
    // One character more than the longest is refused.
    expect((await request(url, 'POST', '/swarms/echo', { input: 'hi', swarmId: `${LONGEST}x` })).status).toBe(400);
  });
});

describe('A2A', () => {
  it('a task id that is not a valid swarm id is an invalid-params JSON-RPC error', async () => {
    const { url, rt, model } = await start();
    const rpc = async (method: string, params: unknown) => {
      const res = await fetch(`${url}/a2a/echo`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'A2A-Version': '1.0' },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
      });
      return (await res.json()) as { error?: { code: number; message: string } };
    };
    for (const [what, id] of BAD_IDS.filter(([, id]) => id !== '')) {
      const got = await rpc('GetTask', { id });
      expect(got.error, what).toMatchObject({ code: -32602, message: expect.stringContaining('Invalid task id') });
      const sent = await rpc('SendMessage', { message: { messageId: 'm1', taskId: id, role: 'ROLE_USER', parts: [{ text: 'hi' }] } });
      expect(sent.error, what).toMatchObject({ code: -32602, message: expect.stringContaining('Invalid task id') });
    }
    await expectNothingStarted(rt, model);
  });
});

describe('MCP', () => {
  it('an invalid swarmId argument is an isError tool result and starts nothing', async () => {
    const { url, rt, model } = await start();
    const client = new Client({ name: 'ids-test', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${url}/mcp`)));
    cleanups.push(() => client.close());
    for (const [what, id] of BAD_IDS.filter(([, id]) => id !== '')) {
      for (const [name, args] of [
        ['echo_run', { input: 'hi', swarmId: id }],
        ['echo_get_result', { swarmId: id }],
        ['echo_stop', { swarmId: id }],
        ['echo_resume', { swarmId: id, message: 'go' }],
      ] as const) {
        const r = await client.callTool({ name, arguments: args });
        expect(r.isError, `${name} ${what}`).toBe(true);
        expect((r.content as { text: string }[])[0]!.text, `${name} ${what}`).toMatch(/Invalid swarm id/);
      }
    }
    // An empty id is refused by the tool's own argument schema.
    expect((await client.callTool({ name: 'echo_run', arguments: { input: 'hi', swarmId: '' } })).isError).toBe(true);
    await expectNothingStarted(rt, model);
  });
});

describe('the CLI', () => {
  it('`xswarm replay` refuses an invalid id before it opens the store', async () => {
    const db = join(tempDir('xswarm-ids-'), 'state.db');
    const { code, stderr } = await new Promise<{ code: number | null; stderr: string }>((resolve) => {
      const p = spawn(process.execPath, ['bin/xswarm.js', 'replay', 'a/../b', '--db', db], { cwd: REPO_ROOT, stdio: ['ignore', 'ignore', 'pipe'] });
      let err = '';
      p.stderr.on('data', (d) => (err += d));
      p.on('close', (c) => resolve({ code: c, stderr: err }));
    });
    expect(code).toBe(2); // bad usage (see xswarm --help)
    expect(stderr).toMatch(/xswarm replay: Invalid swarm id: a swarm id may not contain "\/"/);
    expect(existsSync(db)).toBe(false);
  });
});
