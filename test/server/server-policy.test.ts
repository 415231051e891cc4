/**
 * The cross-origin policy of `serve()` on every door (REST, A2A, MCP, WebSocket), the bearer
 * token, refused oversized bodies, non-loopback binds and the CLI's token sources. Requests go
 * out through node:http with explicit headers (fetch cannot set `Host`) and `ws` with `Origin`.
 */
import { spawn } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { request as httpRequest } from 'node:http';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { afterEach, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { createRuntime, defineSwarm, type Runtime } from '../../src/index.js';
import { serve, type ServeOptions, type SwarmServer } from '../../src/server/index.js';
import { requestPolicy } from '../../src/server/policy.js';
import { call, queueModel } from '../support/script.js';
import { sleep } from '../support/sleep.js';
import { until } from '../support/wait.js';

const hitl = defineSwarm({ id: 'hitl', instructions: 'Ask the human.' });

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function start(options: ServeOptions = {}): Promise<{ url: string; port: number; runtime: Runtime }> {
  // Every start pauses at once and waits for a human: a started swarm stays visible.
  const runtime = createRuntime({ swarms: [hitl], model: queueModel({ hitl: Array.from({ length: 20 }, () => call('pause', { reason: 'Which day?' })) }) });
  const server: SwarmServer = await serve(runtime, options);
  cleanups.push(
    () => runtime.close(),
    () => server.close(),
  );
  return { url: server.url, port: Number(new URL(server.url).port), runtime };
}

interface Raw {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

/** One request with exactly these headers (Host included when given). */
function raw(port: number, method: string, path: string, headers: Record<string, string> = {}, body?: string): Promise<Raw> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      { host: '127.0.0.1', port, method, path, headers: { ...headers, ...(body !== undefined ? { 'content-length': String(Buffer.byteLength(body)) } : {}) } },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (d: string) => (text += d));
        res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body: text }));
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

const JSON_TYPE = { 'content-type': 'application/json' };
const MCP_ACCEPT = { accept: 'application/json, text/event-stream' };
const restStart = (id: string) => JSON.stringify({ input: 'x', swarmId: id });
const a2aSend = (id: string) =>
  JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'SendMessage', params: { message: { role: 'ROLE_USER', messageId: id, parts: [{ text: 'x' }] } } });
const mcpRun = (id: string) => JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'hitl_run', arguments: { input: 'x', swarmId: id } } });

/** The three ways to start a swarm over HTTP, each with the headers its clients send. */
const doors = [
  { name: 'REST', path: '/swarms/hitl', headers: {}, body: restStart },
  { name: 'A2A', path: '/a2a/hitl', headers: { 'a2a-version': '1.0' }, body: a2aSend },
  { name: 'MCP', path: '/mcp', headers: MCP_ACCEPT, body: mcpRun },
] as const;

/** Opens a WebSocket; resolves with the HTTP status of a refused upgrade or 101 when it opens. */
function upgrade(port: number, headers: Record<string, string> = {}, origin?: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(`ws://127.0.0.1:${port}/events`, { headers, ...(origin ? { origin } : {}) });
    ws.once('open', () => {
      ws.close();
      resolve(101);
    });
    ws.once('unexpected-response', (_req, res) => {
      resolve(res.statusCode!);
      ws.terminate();
    });
    ws.once('error', reject);
  });
}

const started = async (runtime: Runtime) => (await runtime.list()).map((s) => s.swarmId).sort();

describe('Host (DNS rebinding) on a loopback bind', () => {
  it('refuses a foreign Host with 403 on REST, A2A, agent cards, MCP and WebSocket; nothing starts', async () => {
    const { port, runtime } = await start();
    const host = { host: `rebound.example:${port}` };
    for (const door of doors) {
      const r = await raw(port, 'POST', door.path, { ...host, ...JSON_TYPE, ...door.headers }, door.body(`host-${door.name}`));
      expect([door.name, r.status]).toEqual([door.name, 403]);
      expect(r.body).toContain('Forbidden Host');
    }
    expect((await raw(port, 'GET', '/swarms', host)).status).toBe(403);
    expect((await raw(port, 'GET', '/a2a/hitl/.well-known/agent-card.json', host)).status).toBe(403);
    expect(await upgrade(port, host)).toBe(403);
    expect(await started(runtime)).toEqual([]);
    // /health says nothing and changes nothing: exempt.
    expect((await raw(port, 'GET', '/health', host)).status).toBe(200);
  });

  it('accepts the loopback names with any port, and the names in allowedHosts', async () => {
    const { port } = await start({ allowedHosts: ['xswarm.test'] });
    for (const host of [`127.0.0.1:${port}`, `localhost:${port}`, `[::1]:${port}`, 'LOCALHOST', `xswarm.test:${port}`, 'xswarm.test']) {
      expect([host, (await raw(port, 'GET', '/swarms', { host })).status]).toEqual([host, 200]);
    }
    expect(await upgrade(port, { host: `xswarm.test:${port}` })).toBe(101);
    expect((await raw(port, 'GET', '/swarms', { host: 'other.test' })).status).toBe(403);
  });
});

describe('Origin', () => {
  it('refuses a foreign Origin (and Origin: null) with 403 on every door; no swarm is started', async () => {
    const { port, runtime } = await start();
    for (const origin of ['http://evil.example', `http://localhost:${port + 1}`, 'null']) {
      for (const door of doors) {
        const r = await raw(port, 'POST', door.path, { origin, ...JSON_TYPE, ...door.headers }, door.body(`origin-${door.name}`));
        expect([origin, door.name, r.status]).toEqual([origin, door.name, 403]);
      }
      expect((await raw(port, 'GET', '/swarms', { origin })).status).toBe(403);
      expect(await upgrade(port, {}, origin)).toBe(403);
    }
    expect(await started(runtime)).toEqual([]);
  });

  it("accepts the server's own origin, allowedOrigins entries, and requests without an Origin", async () => {
    const { url, port, runtime } = await start({ allowedOrigins: ['http://localhost:5173'] });
    // Same origin as the Host named, whichever loopback name it is.
    const own = { origin: url };
    const ownByName = { origin: `http://localhost:${port}`, host: `localhost:${port}` };
    const allowed = { origin: 'http://localhost:5173' };
    const cases: Record<string, string>[] = [own, ownByName, allowed, {}];
    for (const [i, headers] of cases.entries()) {
      expect((await raw(port, 'POST', '/swarms/hitl', { ...headers, ...JSON_TYPE }, restStart(`rest-${i}`))).status).toBe(201);
      const a2a = await raw(port, 'POST', '/a2a/hitl', { ...headers, ...JSON_TYPE, 'a2a-version': '1.0' }, a2aSend(`a2a-${i}`));
      expect(a2a.status).toBe(200);
      expect(JSON.parse(a2a.body).error).toBeUndefined();
      expect(await upgrade(port, headers.host ? { host: headers.host } : {}, headers.origin)).toBe(101);
    }
    // An MCP SDK client from an allowed page works end to end.
    const mcp = new Client({ name: 'page', version: '1' });
    await mcp.connect(new StreamableHTTPClientTransport(new URL(`${url}/mcp`), { requestInit: { headers: allowed } }));
    cleanups.push(() => mcp.close());
    expect((await mcp.callTool({ name: 'hitl_run', arguments: { input: 'x', swarmId: 'mcp-ok' } })).isError).toBeFalsy();
    expect(await started(runtime)).toHaveLength(9);
    // A neighbour of an allowed origin is still foreign.
    expect((await raw(port, 'GET', '/swarms', { origin: 'http://localhost:5174' })).status).toBe(403);
  });
});

describe('media type', () => {
  it('answers 415 to text/plain, form and untyped bodies on every door, before anything starts', async () => {
    const { port, runtime } = await start();
    for (const type of ['text/plain', 'text/plain;charset=UTF-8', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=x', undefined]) {
      for (const door of doors) {
        const headers: Record<string, string> = { ...door.headers, ...(type ? { 'content-type': type } : {}) };
        const r = await raw(port, 'POST', door.path, headers, door.body(`type-${door.name}`));
        expect([type, door.name, r.status]).toEqual([type, door.name, 415]);
      }
    }
    expect(await started(runtime)).toEqual([]);
  });

  it('takes application/json with parameters, and a POST without a body needs no type', async () => {
    const { port, runtime } = await start();
    const created = await raw(port, 'POST', '/swarms/hitl', { 'content-type': 'Application/JSON; charset=utf-8' }, restStart('typed'));
    expect(created.status).toBe(201);
    await until(
      'the swarm to be paused',
      () => runtime.list(),
      (list) => list[0]?.status === 'paused',
    );
    // curl -X POST …/stop: no body, no Content-Type.
    expect((await raw(port, 'POST', '/swarms/hitl/typed/stop')).status).toBe(200);
    // A declared non-JSON type is refused even without a body (an empty form post).
    expect((await raw(port, 'POST', '/swarms/hitl', { 'content-type': 'application/x-www-form-urlencoded' }, '')).status).toBe(415);
  });
});

describe('bearer token', () => {
  it('takes the scheme in any case and refuses wrong tokens of the same and of another length', async () => {
    const token = 's3cret-token';
    const { port } = await start({ token });
    for (const scheme of ['Bearer', 'bearer', 'BEARER']) {
      expect([scheme, (await raw(port, 'GET', '/swarms', { authorization: `${scheme} ${token}` })).status]).toEqual([scheme, 200]);
    }
    expect(await upgrade(port, { authorization: `bearer ${token}` })).toBe(101);
    for (const wrong of ['Bearer s3cret-tokem', 'Bearer s3cret', `Bearer ${token}x`, `Basic ${token}`, token, 'Bearer']) {
      const r = await raw(port, 'GET', '/swarms', { authorization: wrong });
      expect([wrong, r.status]).toEqual([wrong, 401]);
    }
    expect(await upgrade(port, { authorization: 'Bearer s3cret-tokem' })).toBe(401);
  });
});

/**
 * Posts `total` bytes slowly (64 KiB every 2 ms) over a raw socket, chunked or with that
 * Content-Length, and keeps writing whatever the response says until the server closes the
 * connection (an HTTP client would close it itself once the response is in). Resolves with
 * the response head and body and how much was sent.
 */
function slowUpload(port: number, path: string, total: number, declared: boolean): Promise<{ head: string; body: string; sent: number; closed: boolean }> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    const out = { head: '', body: '', sent: 0, closed: false };
    let received = '';
    socket.setEncoding('utf8');
    socket.on('data', (d: string) => (received += d));
    // Writing into a connection the server closed fails; that is the point.
    socket.on('error', () => undefined);
    const done = () => {
      [out.head = '', out.body = ''] = received.split('\r\n\r\n');
      resolve(out);
    };
    socket.on('close', () => {
      out.closed = true;
      done();
    });
    const framing = declared ? `content-length: ${total}` : 'transfer-encoding: chunked';
    socket.write(
      `POST ${path} HTTP/1.1\r\nhost: 127.0.0.1:${port}\r\ncontent-type: application/json\r\naccept: application/json, text/event-stream\r\n${framing}\r\n\r\n`,
    );
    const chunk = Buffer.alloc(64 * 1024, 0x20);
    void (async () => {
      while (!out.closed && out.sent < total) {
        const frame = declared ? chunk : Buffer.concat([Buffer.from(`${chunk.length.toString(16)}\r\n`), chunk, Buffer.from('\r\n')]);
        if (!socket.write(frame)) await sleep(20);
        out.sent += chunk.length;
        await sleep(2);
      }
      if (out.closed) return;
      // Everything went out and the connection is still open: the server read it all.
      if (!declared) socket.write('0\r\n\r\n');
      await sleep(200);
      socket.destroy();
    })();
  });
}

describe('oversized bodies', () => {
  it('/mcp answers 413 and closes the connection without reading the rest (chunked and declared)', async () => {
    const { port } = await start();
    const total = 5 * 1024 * 1024;
    for (const declared of [false, true]) {
      const r = await slowUpload(port, '/mcp', total, declared);
      expect(r.head).toMatch(/^HTTP\/1\.1 413 /);
      expect(r.head.toLowerCase()).toContain('connection: close');
      expect(JSON.parse(r.body)).toMatchObject({ jsonrpc: '2.0', error: { code: -32000 }, id: null });
      // The server closed it near the 1 MiB limit, far from the 5 MiB the client would send.
      expect([declared, r.closed, r.sent < 3 * 1024 * 1024]).toEqual([declared, true, true]);
    }
    const rest = await slowUpload(port, '/swarms/hitl', total, true);
    expect([rest.head.split('\r\n')[0], rest.closed, rest.sent < 3 * 1024 * 1024]).toEqual(['HTTP/1.1 413 Payload Too Large', true, true]);
    // The server keeps serving.
    expect((await raw(port, 'GET', '/swarms')).status).toBe(200);
  });
});

describe('binding beyond loopback', () => {
  it('refuses a non-loopback host without a token before listening', async () => {
    const runtime = createRuntime({ swarms: [hitl], model: queueModel({}) });
    cleanups.push(() => runtime.close());
    for (const host of ['0.0.0.0', '::', '192.168.1.10']) {
      await expect(serve(runtime, { host, port: 0 })).rejects.toThrow(/not a loopback address, without a token.*insecureNoToken/);
    }
  });

  it('checks Host there only against allowedHosts; Origin rules stay', () => {
    const req = (headers: Record<string, string>) => ({ headers }) as never;
    const open = requestPolicy({ bindHost: '0.0.0.0' });
    expect(() => open.check(req({ host: 'swarms.example.com' }))).not.toThrow();
    expect(() => open.check(req({ host: 'swarms.example.com', origin: 'https://swarms.example.com' }))).not.toThrow();
    expect(() => open.check(req({ host: 'swarms.example.com', origin: 'https://evil.example' }))).toThrow(/Forbidden Origin/);
    const named = requestPolicy({ bindHost: '0.0.0.0', allowedHosts: ['swarms.example.com'] });
    expect(() => named.check(req({ host: 'swarms.example.com:8443' }))).not.toThrow();
    expect(() => named.check(req({ host: 'localhost:4000' }))).not.toThrow();
    expect(() => named.check(req({ host: 'rebound.example' }))).toThrow(/Forbidden Host/);
    expect(() => requestPolicy({ bindHost: '127.0.0.1', allowedOrigins: ['localhost:5173'] })).toThrow(/not an origin/);
  });
});

/** `xswarm serve examples/serve.ts` on a free port; resolves once it prints its URL. */
async function cli(args: string[], env: Record<string, string> = {}): Promise<{ url?: string; code: Promise<number | null>; stderr: () => string; stop: () => void }> {
  const dir = await mkdtemp(join(tmpdir(), 'xswarm-policy-'));
  const childEnv: NodeJS.ProcessEnv = { ...process.env, ...env };
  delete childEnv.OPENAI_API_KEY;
  if (!('XSWARM_TOKEN' in env)) delete childEnv.XSWARM_TOKEN;
  const child = spawn(process.execPath, ['bin/xswarm.js', 'serve', 'examples/serve.ts', '--port', '0', '--db', join(dir, 'state.db'), ...args], {
    cwd: process.cwd(),
    env: childEnv,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  const code = new Promise<number | null>((resolve) => child.on('close', resolve));
  cleanups.push(async () => {
    child.kill('SIGTERM');
    await code;
    await rm(dir, { recursive: true, force: true });
  });
  const url = await new Promise<string | undefined>((resolve) => {
    child.stdout.on('data', (d: Buffer) => {
      stdout += d.toString();
      const m = / at (http:\/\/\S+) \(state:/.exec(stdout);
      if (m) resolve(m[1]);
    });
    void code.then(() => resolve(undefined));
  });
  return { url, code, stderr: () => stderr, stop: () => child.kill('SIGTERM') };
}

describe('xswarm serve token sources', () => {
  it('reads the token from XSWARM_TOKEN and from --token-file, and refuses 0.0.0.0 without one', { timeout: 60_000 }, async () => {
    const dir = await mkdtemp(join(tmpdir(), 'xswarm-token-'));
    cleanups.push(() => rm(dir, { recursive: true, force: true }));
    const file = join(dir, 'token');
    await writeFile(file, 'from-file\n', { mode: 0o600 });
    const [fromEnv, fromFile, open, missing] = await Promise.all([
      cli([], { XSWARM_TOKEN: 'from-env' }),
      cli(['--token-file', file]),
      cli(['--host', '0.0.0.0']),
      cli(['--token-file', join(dir, 'missing')]),
    ]);
    for (const [server, token] of [
      [fromEnv, 'from-env'],
      [fromFile, 'from-file'],
    ] as const) {
      expect(server.url, server.stderr()).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
      const port = Number(new URL(server.url!).port);
      expect((await raw(port, 'GET', '/swarms')).status).toBe(401);
      expect((await raw(port, 'GET', '/swarms', { authorization: 'Bearer wrong' })).status).toBe(401);
      expect((await raw(port, 'GET', '/swarms', { authorization: `Bearer ${token}` })).status).toBe(200);
    }
    expect(open.url).toBeUndefined();
    expect(await open.code).toBe(1);
    expect(open.stderr()).toMatch(/Refusing to serve on 0\.0\.0\.0, not a loopback address, without a token/);
    expect(await missing.code).toBe(1);
    expect(missing.stderr()).toMatch(/cannot read the token file/);
  });
});
