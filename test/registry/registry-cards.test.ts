/**
 * The agent-card defects of issue 28, against real HTTP servers on 127.0.0.1 that each test
 * starts and stops: card fetches bounded in bytes and in time (headers and body, the
 * registry's own requests and the card its A2A client re-reads before each call), redirects
 * kept within the card's origin, health checks and calls only to http(s) endpoints the
 * operator allows, and an agent the registry cannot check never counted healthy.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import { createAgentRegistry, type AgentRegistry, type AgentRegistryOptions } from '../../src/registry/index.js';
import { TeamError } from '../../src/errors.js';
import { tickingClock } from '../support/registry-peers.js';
import { endlessBody, startRecordingServer, stalled, trickle, type RecordingServer } from '../support/hostile-http.js';

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c().catch(() => undefined);
});

const MiB = 1024 * 1024;

function registry(options: AgentRegistryOptions = {}): AgentRegistry {
  const r = createAgentRegistry({ healthIntervalMs: 0, timeoutMs: 2000, now: tickingClock(), ...options });
  cleanups.push(() => r.close());
  return r;
}

/** A recording server that also keeps the JSON-RPC methods its agent endpoint was called with. */
type TestServer = RecordingServer & { rpcMethods: string[] };
type Handler = (req: IncomingMessage, res: ServerResponse, server: TestServer) => void;

async function startServer(handle: Handler): Promise<TestServer> {
  const s = await startRecordingServer(
    (req, res, self) => handle(req, res, self as TestServer),
    (close) => cleanups.push(close),
  );
  return Object.assign(s, { rpcMethods: [] });
}

/** A valid v1.0 card whose JSON-RPC interface is `endpoint`. */
const card = (endpoint: string, extra: Record<string, unknown> = {}) => ({
  name: 'agent',
  description: 'An agent',
  version: '1',
  capabilities: {},
  defaultInputModes: ['text/plain'],
  defaultOutputModes: ['text/plain'],
  skills: [{ id: 'translate', name: 'translate', description: 'd', tags: [] }],
  supportedInterfaces: [{ url: endpoint, protocolBinding: 'JSONRPC', protocolVersion: '1.0' }],
  ...extra,
});

/**
 * An A2A agent as far as the registry can tell: its card at `/card.json` (what `cardOf` gives
 * now, `this` being the server), a JSON-RPC endpoint at `/rpc` that records each method and
 * answers "task not found" (what a health check needs; a sent task fails with it).
 */
function agentHandler(cardOf: (s: TestServer) => unknown, routes: Record<string, Handler> = {}): Handler {
  return (req, res, s) => {
    const route = routes[req.url ?? ''];
    if (route) return route(req, res, s);
    if (req.method === 'GET' && req.url === '/card.json') return void res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(cardOf(s)));
    if (req.method === 'POST' && req.url === '/rpc') return answerRpc(req, res, s);
    res.writeHead(404).end('not here');
  };
}

function answerRpc(req: IncomingMessage, res: ServerResponse, s: TestServer): void {
  let body = '';
  req.on('data', (c: Buffer) => (body += c.toString()));
  req.on('end', () => {
    const rpc = JSON.parse(body) as { id: unknown; method: string };
    s.rpcMethods.push(rpc.method);
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ jsonrpc: '2.0', id: rpc.id, error: { code: -32001, message: 'Task not found' } }));
  });
}

async function refusal(promise: Promise<unknown>): Promise<{ code: string; message: string; ms: number }> {
  const started = Date.now();
  try {
    await promise;
  } catch (e) {
    expect(e).toBeInstanceOf(TeamError);
    return { code: (e as TeamError).code, message: (e as TeamError).message, ms: Date.now() - started };
  }
  throw new Error('expected a rejection');
}

/** A fetch that, like some custom ones, ignores `signal`: only the registry's own bounds can stop it. */
const deafFetch: typeof fetch = (input, init) => {
  const { signal: _ignored, ...rest } = init ?? {};
  return fetch(input, rest);
};

const endless = endlessBody();

describe('card fetches are bounded in bytes and time', () => {
  it('a card whose body never ends is refused at the byte limit, without buffering it: the request is cut, memory stays flat', async () => {
    const s = await startServer(endless);
    const r = registry({ timeoutMs: 1500 });
    const before = process.memoryUsage.rss();
    let peak = before;
    const sampler = setInterval(() => (peak = Math.max(peak, process.memoryUsage.rss())), 5);
    const refused = await refusal(r.register(`${s.base}/card.json`)).finally(() => clearInterval(sampler));
    peak = Math.max(peak, process.memoryUsage.rss());

    expect(peak - before).toBeLessThan(64 * MiB);
    expect(refused.code).toBe('invalid-card');
    expect(refused.message).toBe(`The agent card at ${s.base}/card.json is too large: more than ${MiB} bytes (maxCardBytes)`);
    expect(refused.ms).toBeLessThan(1500);
    // The registry hung up: the server's answer was cut, not finished.
    await expect.poll(() => s.clientAborts, { timeout: 2000 }).toBe(1);
    expect(r.agents()).toEqual([]);
  });

  it('a 2 MiB card is refused naming the limit, streamed or announced by Content-Length; a larger maxCardBytes admits it', async () => {
    const big = (s: TestServer) => card(`${s.base}/rpc`, { description: 'x'.repeat(2 * MiB) });
    const s = await startServer(
      agentHandler(big, {
        // Chunked: no length announced, so the limit is found while reading.
        '/streamed.json': (_req, res, self) => {
          res.writeHead(200, { 'content-type': 'application/json' });
          const json = JSON.stringify(big(self));
          for (let i = 0; i < json.length; i += 64 * 1024) res.write(json.slice(i, i + 64 * 1024));
          res.end();
        },
      }),
    );
    const r = registry();
    for (const path of ['/streamed.json', '/card.json']) {
      const refused = await refusal(r.register(`${s.base}${path}`));
      expect(refused).toMatchObject({ code: 'invalid-card', message: `The agent card at ${s.base}${path} is too large: more than ${MiB} bytes (maxCardBytes)` });
    }
    expect(r.agents()).toEqual([]);

    const roomy = registry({ maxCardBytes: 4 * MiB });
    expect(await roomy.register(`${s.base}/card.json`)).toMatchObject({ health: 'healthy' });
  });

  it('a server that never sends its headers is cut at the deadline, with the registry’s fetch or one that ignores signals', async () => {
    const s = await startServer(stalled);
    for (const fetch of [deafFetch, undefined]) {
      const r = registry({ timeoutMs: 400, ...(fetch ? { fetch } : {}) });
      const refused = await refusal(r.register(`${s.base}/card.json`));
      expect(refused).toMatchObject({
        code: 'card-unreachable',
        message: `The agent card at ${s.base}/card.json could not be read: no complete answer within 400 ms (timeoutMs)`,
      });
      expect(refused.ms).toBeGreaterThanOrEqual(390);
      expect(refused.ms).toBeLessThan(2000);
    }
  });

  it('a body that trickles forever is cut at the deadline: one deadline covers headers and body', async () => {
    const s = await startServer(trickle);
    for (const fetch of [deafFetch, undefined]) {
      const r = registry({ timeoutMs: 400, ...(fetch ? { fetch } : {}) });
      const refused = await refusal(r.register(`${s.base}/card.json`));
      expect(refused).toMatchObject({
        code: 'card-unreachable',
        message: `The agent card at ${s.base}/card.json could not be read: no complete answer within 400 ms (timeoutMs)`,
      });
      expect(refused.ms).toBeLessThan(2000);
    }
  });

  it('the card the A2A client re-reads before sending a task is bounded too: too large, or too slow, the task is not sent', async () => {
    let mode: 'ok' | 'huge' | 'stalled' = 'ok';
    const s = await startServer((req, res, self) => {
      if (req.url === '/card.json' && mode === 'stalled') return;
      const description = mode === 'huge' ? 'x'.repeat(2 * MiB) : 'An agent';
      agentHandler((x) => card(`${x.base}/rpc`, { description }))(req, res, self);
    });
    const r = registry({ timeoutMs: 400 });
    expect(await r.register(`${s.base}/card.json`)).toMatchObject({ health: 'healthy' });

    mode = 'huge';
    const huge = await r.wait(r.dispatch({ id: 'huge', skill: 'translate', message: 'hola' }).id);
    expect(huge.state).toBe('failed');
    expect(huge.error).toContain(`more than ${MiB} bytes (maxCardBytes)`);
    // The health check after the failure read the card again, bounded the same way.
    expect(r.agent('agent')?.lastError).toBe(`The agent card at ${s.base}/card.json is too large: more than ${MiB} bytes (maxCardBytes)`);

    expect(r.agent('agent')?.health).toBe('unhealthy');
    mode = 'ok';
    await r.checkHealth();
    expect(r.agent('agent')?.health).toBe('healthy');
    mode = 'stalled';
    const started = Date.now();
    const slow = await r.wait(r.dispatch({ id: 'slow', agent: 'agent', message: 'hola' }).id);
    expect(slow.state).toBe('failed');
    expect(slow.error).toContain('no complete answer within 400 ms (timeoutMs)');
    expect(Date.now() - started).toBeLessThan(3000);

    // Only health checks reached the endpoint: no task was ever sent.
    expect(s.rpcMethods.filter((m) => m !== 'GetTask')).toEqual([]);
  });
});

describe('redirects stay within the card’s origin', () => {
  it('a card URL redirecting to another server is refused, naming the redirect; that server is never asked', async () => {
    const other = await startServer(agentHandler((x) => card(`${x.base}/rpc`)));
    const s = await startServer((_req, res) => res.writeHead(302, { location: `${other.base}/card.json` }).end());
    const r = registry();
    const refused = await refusal(r.register(`${s.base}/card.json`));
    expect(refused).toEqual({
      code: 'card-unreachable',
      message: `The agent card at ${s.base}/card.json could not be read: it redirects to ${other.base}/card.json, another origin (redirects are followed only within ${s.base})`,
      ms: expect.any(Number),
    });
    expect(other.requests).toEqual([]);
    expect(r.agents()).toEqual([]);
  });

  it('a redirect within the origin is followed, a few hops at most', async () => {
    const s = await startServer(
      agentHandler((x) => card(`${x.base}/rpc`), {
        '/old.json': (_req, res) => res.writeHead(301, { location: '/card.json' }).end(),
        '/loop.json': (_req, res) => res.writeHead(302, { location: '/loop.json' }).end(),
      }),
    );
    const r = registry();
    expect(await r.register(`${s.base}/old.json`)).toMatchObject({ health: 'healthy', endpoint: `${s.base}/rpc` });
    const loop = await refusal(r.register(`${s.base}/loop.json`));
    expect(loop).toMatchObject({ code: 'card-unreachable', message: `The agent card at ${s.base}/loop.json could not be read: more than 5 redirects` });
  });
});

describe('health checks and calls go only where the operator allows', () => {
  it('an endpoint that is not http(s) is refused at registration: file:, data:, ftp:', async () => {
    let endpoint = '';
    const s = await startServer(agentHandler(() => card(endpoint)));
    const r = registry();
    for (const url of ['file:///etc/passwd', 'data:application/json,{}', 'ftp://127.0.0.1/agent']) {
      endpoint = url;
      const refused = await refusal(r.register(`${s.base}/card.json`));
      expect(refused).toMatchObject({
        code: 'invalid-card',
        message: `The agent card at ${s.base}/card.json is refused: its JSONRPC interface ${url} is not an http: or https: URL`,
      });
    }
    expect(r.agents()).toEqual([]);
  });

  it('an endpoint on another host (here: another port) is refused unless allowedHosts names it; allowed, it is checked and used', async () => {
    const elsewhere = await startServer(agentHandler(() => ({})));
    const s = await startServer(agentHandler(() => card(`${elsewhere.base}/rpc`)));
    const cardUrl = `${s.base}/card.json`;

    const refused = await refusal(registry().register(cardUrl));
    expect(refused).toMatchObject({
      code: 'invalid-card',
      message: `The agent card at ${cardUrl} is refused: its JSONRPC interface ${elsewhere.base}/rpc is on another origin than the card (${s.base}) and not in allowedHosts`,
    });
    const otherHost = await refusal(registry({ allowedHosts: ['127.0.0.2', `127.0.0.1:${s.port}`] }).register(cardUrl));
    expect(otherHost.code).toBe('invalid-card');
    expect(elsewhere.requests).toEqual([]);

    for (const allowedHosts of [[`127.0.0.1:${elsewhere.port}`], ['127.0.0.1'], ['*']]) {
      const r = registry({ allowedHosts });
      expect(await r.register(cardUrl)).toMatchObject({ health: 'healthy', endpoint: `${elsewhere.base}/rpc` });
    }
    expect(elsewhere.rpcMethods).toEqual(['GetTask', 'GetTask', 'GetTask']);
  });

  it('localhost, 127.0.0.1 and [::1] count as one host on the same port', async () => {
    const s = await startServer(agentHandler((x) => card(`http://localhost:${x.port}/rpc`)));
    const info = await registry().register(`${s.base}/card.json`);
    expect(info.endpoint).toBe(`http://localhost:${s.port}/rpc`);
  });

  it('a card that turns to another host after registration: the health check marks the agent unhealthy, a call is refused, that host is never asked', async () => {
    const elsewhere = await startServer(agentHandler(() => ({})));
    let endpoint = '';
    const s = await startServer(agentHandler((x) => card(endpoint || `${x.base}/rpc`)));
    const r = registry();
    await r.register(`${s.base}/card.json`);

    endpoint = `${elsewhere.base}/rpc`;
    // A call made before any check sees the change: the client refuses to go there.
    const task = await r.wait(r.dispatch({ id: 'moved', agent: 'agent', message: 'hola' }).id);
    expect(task.state).toBe('failed');
    expect(task.error).toContain(`${elsewhere.base}/rpc is on another origin than the card (${s.base}) and not in allowedHosts`);

    const [checked] = await r.checkHealth('agent');
    expect(checked).toMatchObject({ health: 'unhealthy', endpoint: `${s.base}/rpc` });
    expect(checked!.lastError).toContain(`its JSONRPC interface ${elsewhere.base}/rpc is on another origin`);
    expect(elsewhere.requests).toEqual([]);
  });
});

describe('an agent the registry cannot check is not healthy', () => {
  it('a card offering only gRPC is registered unhealthy, and never selected', async () => {
    const s = await startServer(agentHandler((x) => card('', { supportedInterfaces: [{ url: `${x.base}/grpc`, protocolBinding: 'GRPC', protocolVersion: '1.0' }] })));
    const r = registry();
    const info = await r.register(`${s.base}/card.json`);
    expect(info).toMatchObject({
      health: 'unhealthy',
      lastError: `The agent offers no interface the registry speaks (JSONRPC, HTTP+JSON), only GRPC at ${s.base}/grpc: it cannot be checked, so it is not healthy`,
    });
    expect(info.lastHealthy).toBeUndefined();
    expect(r.select('translate')).toBeUndefined();
    expect((await r.checkHealth('agent'))[0]!.health).toBe('unhealthy');
    expect(await r.wait(r.dispatch({ id: 't', skill: 'translate', message: 'hola' }).id)).toMatchObject({
      state: 'failed',
      error: 'No healthy agent has the skill "translate"',
    });
    expect(s.requests.filter((q) => !q.startsWith('GET /card.json'))).toEqual([]);
  });
});

describe('options', () => {
  it('bad maxCardBytes or allowedHosts are refused when the registry is created', () => {
    expect(() => createAgentRegistry({ maxCardBytes: 0 })).toThrow(new TypeError('createAgentRegistry: maxCardBytes must be a positive integer, not 0'));
    for (const entry of ['http://example.com/', 'example.com/path', '', 'a b']) {
      expect(() => createAgentRegistry({ allowedHosts: [entry] })).toThrow(
        new TypeError(`createAgentRegistry: allowedHosts entry ${JSON.stringify(entry)} is not a host, host:port or "*"`),
      );
    }
  });

  it('the registry’s own fetch is used for cards, health checks and calls', async () => {
    const s = await startServer(agentHandler((x) => card(`${x.base}/rpc`)));
    const seen: string[] = [];
    const counting: typeof fetch = (input, init) => {
      seen.push(`${init?.method ?? 'GET'} ${String(input instanceof Request ? input.url : input)}`);
      return fetch(input, init);
    };
    const r = registry({ fetch: counting });
    await r.register(`${s.base}/card.json`);
    await r.wait(r.dispatch({ id: 't', agent: 'agent', message: 'hola' }).id);
    expect(seen.slice(0, 3)).toEqual([`GET ${s.base}/card.json`, `POST ${s.base}/rpc`, `GET ${s.base}/card.json`]);
    expect(seen).toContain(`POST ${s.base}/rpc`);
  });
});
