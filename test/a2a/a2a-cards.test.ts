/**
 * What an agent card may make a remote handoff (`handoff.toRemoteAgent`) do, against real HTTP
 * servers on 127.0.0.1 that each test starts and stops: the A2A client's card fetches (the one
 * before a run and the re-read before each call) are bounded in bytes and in time, headers and
 * body; redirects stay within the card's origin; calls go only to http(s) service URLs on the
 * card's origin or on `allowedHosts`. A card breaking a rule makes the handoff's call a tool
 * error the model reads, naming the rule, and nothing is sent where the card pointed.
 *
 * "Another host" is another port of 127.0.0.1 here: the servers listen on 127.0.0.1 only, and
 * an origin is scheme, host *and* port (the loopback names count as one host).
 */
import { afterEach, describe, expect, it } from 'vitest';
import { a2aRemoteAgents, createRuntime, defineSwarm, handoff, scriptedModel, type A2ARemoteOptions } from '../../src/index.js';
import { agentFetch, cardLimits } from '../../src/a2a/agent-fetch.js';
import { a2aRemoteAgents as sdkRemoteAgents } from '../../src/a2a/client.js';
import { serve } from '../../src/server/index.js';
import { call, lastToolResult, queueModel } from '../support/script.js';
import { endlessBody, startRecordingServer, stalled, trickle, type RecordingHandler, type RecordingServer } from '../support/hostile-http.js';

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c().catch(() => undefined);
});

const MiB = 1024 * 1024;

/** Where every card of these tests is served: its last segment names the agent even when the card is refused. */
const CARD_PATH = '/a2a/weather/.well-known/agent-card.json';

type Handler = RecordingHandler;

/** A recording server and the URL of the card it would serve at {@link CARD_PATH}. */
type TestServer = RecordingServer & { cardUrl: string };

async function startServer(handle: Handler): Promise<TestServer> {
  const s = await startRecordingServer(handle, (close) => cleanups.push(close));
  return Object.assign(s, { cardUrl: `${s.base}${CARD_PATH}` });
}

/** Serves `card()` as JSON at {@link CARD_PATH}; anything else is a 404. */
const serving =
  (card: () => unknown): Handler =>
  (req, res) => {
    if (req.method === 'GET' && req.url === CARD_PATH) return void res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(card()));
    res.writeHead(404).end('not here');
  };

/** A valid v1.0 card named `weather` with these interfaces. */
const card = (supportedInterfaces: { url: string; protocolBinding: string; protocolVersion: string }[], extra: Record<string, unknown> = {}) => ({
  name: 'weather',
  description: 'Answers weather questions',
  version: '1',
  capabilities: { streaming: true },
  defaultInputModes: ['text/plain'],
  defaultOutputModes: ['text/plain'],
  skills: [{ id: 'forecast', name: 'forecast', description: 'd', tags: [] }],
  supportedInterfaces,
  ...extra,
});

/** A v0.3 card (read through the SDK's legacyCompat): its main interface is `url`. */
const v03Card = (url: string, additionalInterfaces?: { url: string; transport: string }[]) => {
  const { supportedInterfaces: _none, ...rest } = card([]);
  return { ...rest, url, protocolVersion: '0.3.0', preferredTransport: 'JSONRPC', ...(additionalInterfaces ? { additionalInterfaces } : {}) };
};

/** A real A2A agent: an xswarm `weather` swarm served on 127.0.0.1, answering `Sunny`. */
async function weatherAgent(description = 'Answers weather questions') {
  const weather = defineSwarm({ id: 'weather', description, instructions: 'Forecast.' });
  const runtime = createRuntime({ swarms: [weather], model: scriptedModel(() => ({ text: 'Sunny' })) });
  const server = await serve(runtime);
  cleanups.push(
    () => runtime.close(),
    () => server.close(),
  );
  const cardUrl = `${server.url}${CARD_PATH}`;
  return { runtime, cardUrl, port: Number(new URL(server.url).port), ran: async () => (await runtime.list({ definitionId: 'weather' })).length };
}

/**
 * Runs a `planner` swarm once: it hands off to the remote agent at `cardUrl` (through
 * `a2aRemoteAgents(options)`, the runtime's default client) and answers with the tool result
 * verbatim. Resolves with that answer; the swarm must complete.
 */
async function handOff(cardUrl: string, options?: A2ARemoteOptions): Promise<string> {
  const planner = defineSwarm({ id: 'planner', instructions: 'Plan with the weather.', handoffs: [handoff.toRemoteAgent(cardUrl)] });
  const model = queueModel({
    planner: [
      (req) => call(req.tools.find((t) => t.name.startsWith('handoff_to_'))!.name, { request: 'forecast for Saturday' }),
      (req) => ({ text: lastToolResult(req) }),
    ],
  });
  const runtime = createRuntime({ swarms: [planner], model, ...(options ? { remote: a2aRemoteAgents(options) } : {}) });
  cleanups.push(() => runtime.close());
  const client = runtime.forSwarm(planner);
  await client.run('Plan my Saturday');
  const result = await client.wait();
  if (result.status !== 'completed') throw new Error(`the planner ended ${JSON.stringify(result)}`);
  return result.result as string;
}

const unreachable = (cardUrl: string, why: string) => `Could not reach the remote agent at ${cardUrl}: ${why}`;

// Paced, so that a client without a byte limit fills its memory slowly, not at the speed of loopback.
const endless = endlessBody(5);

describe('the card fetches of a remote handoff are bounded in bytes and time', () => {
  it('a card whose body never ends is cut at maxCardBytes: the call is a tool error naming the limit, each request cut early', async () => {
    const s = await startServer((req, res, self) => (req.url === CARD_PATH ? endless(req, res, self) : res.writeHead(404).end()));
    const started = Date.now();
    const answer = await handOff(s.cardUrl, { timeoutMs: 4000 });

    expect(answer).toBe(unreachable(s.cardUrl, `the agent card at ${s.cardUrl} is too large: more than ${MiB} bytes (maxCardBytes)`));
    // Both card fetches (the one before the run, the re-read before the call) stopped at the
    // limit, far before the deadline, and hung up: nothing past the limit was asked for.
    expect(Date.now() - started).toBeLessThan(3000);
    expect(s.requests).toEqual([`GET ${CARD_PATH}`, `GET ${CARD_PATH}`]);
    await expect.poll(() => s.clientAborts, { timeout: 2000 }).toBe(2);
    expect(s.mostBytesSent).toBeLessThan(4 * MiB);
  });

  it('a 2 MiB card is refused naming the limit, announced by Content-Length or streamed; a larger maxCardBytes admits it', async () => {
    const big = 'x'.repeat(2 * MiB);
    // A real agent whose card is 2 MiB (its 1 MiB description is there twice), sent with a Content-Length.
    const agent = await weatherAgent('x'.repeat(MiB));
    const length = Number((await fetch(agent.cardUrl, { method: 'HEAD' })).headers.get('content-length'));
    expect(length).toBeGreaterThan(2 * MiB);
    expect(length).toBeLessThan(2.1 * MiB);
    expect(await handOff(agent.cardUrl)).toBe(unreachable(agent.cardUrl, `the agent card at ${agent.cardUrl} is too large: more than ${MiB} bytes (maxCardBytes)`));
    expect(await agent.ran()).toBe(0);

    // The same size streamed in chunks: no length announced, the limit is found while reading.
    const streamed = await startServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      const json = JSON.stringify(card([{ url: 'http://127.0.0.1:1/rpc', protocolBinding: 'JSONRPC', protocolVersion: '1.0' }], { description: big }));
      for (let i = 0; i < json.length; i += 64 * 1024) res.write(json.slice(i, i + 64 * 1024));
      res.end();
    });
    expect(await handOff(streamed.cardUrl)).toBe(
      unreachable(streamed.cardUrl, `the agent card at ${streamed.cardUrl} is too large: more than ${MiB} bytes (maxCardBytes)`),
    );

    expect(await handOff(agent.cardUrl, { maxCardBytes: 4 * MiB })).toBe('Sunny');
    expect(await agent.ran()).toBe(1);
  });

  it.each([
    ['never sends its headers', stalled],
    ['trickles its body forever', trickle],
  ])('a card server that %s is cut at timeoutMs: one deadline covers headers and body', async (_what, handler) => {
    const s = await startServer(handler);
    const started = Date.now();
    const answer = await handOff(s.cardUrl, { timeoutMs: 400 });
    expect(answer).toBe(unreachable(s.cardUrl, 'no complete answer within 400 ms (timeoutMs)'));
    // Two card fetches (before the run, before the call), each cut at 400 ms.
    expect(Date.now() - started).toBeGreaterThanOrEqual(780);
    expect(Date.now() - started).toBeLessThan(4000);
    await expect.poll(() => s.clientAborts, { timeout: 2000 }).toBe(2);
  });
});

describe('redirects of a card stay within its origin', () => {
  it('a card URL redirecting to another origin is refused, naming where it pointed; that server is never asked', async () => {
    const other = await startServer(serving(() => card([{ url: `${other.base}/rpc`, protocolBinding: 'JSONRPC', protocolVersion: '1.0' }])));
    const s = await startServer((_req, res) => res.writeHead(302, { location: other.cardUrl }).end());
    expect(await handOff(s.cardUrl)).toBe(unreachable(s.cardUrl, `it redirects to ${other.cardUrl}, another origin (redirects are followed only within ${s.base})`));
    expect(s.requests).toEqual([`GET ${CARD_PATH}`, `GET ${CARD_PATH}`]);
    expect(other.requests).toEqual([]);
  });

  it('a call whose service URL redirects to another origin is refused there; the other origin receives nothing', async () => {
    const other = await startServer((_req, res) => res.writeHead(500).end());
    const s = await startServer((req, res, self) => {
      if (req.url === '/rpc') return void res.writeHead(307, { location: `${other.base}/rpc` }).end();
      serving(() => card([{ url: `${self.base}/rpc`, protocolBinding: 'JSONRPC', protocolVersion: '1.0' }]))(req, res, self);
    });
    expect(await handOff(s.cardUrl)).toBe(
      `The remote agent "weather" (${s.cardUrl}) failed: it redirects to ${other.base}/rpc, another origin (redirects are followed only within ${s.base})`,
    );
    expect(s.requests).toEqual([`GET ${CARD_PATH}`, `GET ${CARD_PATH}`, 'POST /rpc']);
    expect(other.requests).toEqual([]);
  });
});

describe('a card sends calls only to http(s) service URLs on its own origin or on allowedHosts', () => {
  it('a service URL on another host is refused, whichever way the card names it; that host receives nothing', async () => {
    const other = await startServer((_req, res) => res.writeHead(500).end());
    let served: unknown;
    const s = await startServer(serving(() => served));
    const cases: [card: unknown, refused: string][] = [
      [card([{ url: `${other.base}/rpc`, protocolBinding: 'JSONRPC', protocolVersion: '1.0' }]), `its JSONRPC interface ${other.base}/rpc`],
      [card([{ url: `${other.base}/rest`, protocolBinding: 'HTTP+JSON', protocolVersion: '1.0' }]), `its HTTP+JSON interface ${other.base}/rest`],
      // The SDK matches bindings case-insensitively: so does the rule.
      [card([{ url: `${other.base}/rpc`, protocolBinding: 'jsonrpc', protocolVersion: '1.0' }]), `its jsonrpc interface ${other.base}/rpc`],
      // A later interface the client might pick is checked as well as the first.
      [
        card([
          { url: `${s.base}/rpc`, protocolBinding: 'JSONRPC', protocolVersion: '0.3' },
          { url: `${other.base}/rpc`, protocolBinding: 'JSONRPC', protocolVersion: '1.0' },
        ]),
        `its JSONRPC interface ${other.base}/rpc`,
      ],
      [v03Card(`${other.base}/rpc`), `its JSONRPC interface ${other.base}/rpc`],
      [v03Card(`${s.base}/rpc`, [{ url: `${other.base}/rest`, transport: 'HTTP+JSON' }]), `its HTTP+JSON interface ${other.base}/rest`],
    ];
    for (const [json, refused] of cases) {
      served = json;
      const why = `the agent card at ${s.cardUrl} is refused: ${refused} is on another origin than the card (${s.base}) and not in allowedHosts`;
      expect(await handOff(s.cardUrl)).toBe(unreachable(s.cardUrl, why));
      // The card read before a run is refused the same way (the tool then gets a name from the URL).
      await expect(sdkRemoteAgents().card(s.cardUrl)).rejects.toThrow(why);
    }
    expect(other.requests).toEqual([]);
    // Nothing but card reads reached the card's own server either.
    expect(s.requests.filter((r) => r !== `GET ${CARD_PATH}`)).toEqual([]);
  });

  it('a service URL that is not http(s) (file:, data:) is refused before any request is made there', async () => {
    let served: unknown;
    const s = await startServer(serving(() => served));
    const asked: string[] = [];
    const recording: typeof fetch = (input, init) => {
      asked.push(input instanceof Request ? input.url : String(input));
      return fetch(input, init);
    };
    for (const url of ['file:///etc/passwd', 'data:application/json,{}']) {
      for (const json of [card([{ url, protocolBinding: 'JSONRPC', protocolVersion: '1.0' }]), v03Card(url)]) {
        served = json;
        expect(await handOff(s.cardUrl, { fetch: recording })).toBe(
          unreachable(s.cardUrl, `the agent card at ${s.cardUrl} is refused: its JSONRPC interface ${url} is not an http: or https: URL`),
        );
      }
    }
    expect(asked.length).toBeGreaterThan(0);
    expect(asked.filter((u) => u !== s.cardUrl)).toEqual([]);
  });

  it('a card served apart from its agent (another port) works once allowedHosts names the agent’s host', async () => {
    const agent = await weatherAgent();
    const cardJson = await (await fetch(agent.cardUrl)).json();
    // The agent's own card, served from another origin: its service URL is the agent's.
    const s = await startServer(serving(() => cardJson));
    const endpoint = `http://127.0.0.1:${agent.port}/a2a/weather`;
    expect(await handOff(s.cardUrl)).toBe(
      unreachable(
        s.cardUrl,
        `the agent card at ${s.cardUrl} is refused: its JSONRPC interface ${endpoint} is on another origin than the card (${s.base}) and not in allowedHosts`,
      ),
    );
    expect(await handOff(s.cardUrl, { allowedHosts: ['127.0.0.2', `127.0.0.1:${s.port}`] })).toMatch(/is refused: its JSONRPC interface/);
    expect(await agent.ran()).toBe(0);

    for (const allowedHosts of [[`127.0.0.1:${agent.port}`], ['127.0.0.1'], ['*']]) expect(await handOff(s.cardUrl, { allowedHosts })).toBe('Sunny');
    expect(await agent.ran()).toBe(3);
  });
});

describe('agentFetch, behind the card check', () => {
  it('whatever the SDK asks for, a request off the card’s rule is refused before it goes out', async () => {
    const asked: string[] = [];
    const base: typeof fetch = async (input) => {
      asked.push(String(input));
      return new Response('{}');
    };
    const guarded = agentFetch('http://127.0.0.1:4000/card.json', base, cardLimits({ allowedHosts: ['api.example.com:443'] }, 'test'));
    await expect(guarded('http://127.0.0.1:4001/rpc', { method: 'POST' })).rejects.toThrow(
      'no request goes there: http://127.0.0.1:4001/rpc is on another origin than the card (http://127.0.0.1:4000) and not in allowedHosts',
    );
    await expect(guarded(new Request('file:///etc/passwd'))).rejects.toThrow('no request goes there: file:///etc/passwd is not an http: or https: URL');
    expect(asked).toEqual([]);
    await guarded('http://localhost:4000/rpc', { method: 'POST' });
    await guarded('https://api.example.com/v1', { method: 'POST' });
    expect(asked).toEqual(['http://localhost:4000/rpc', 'https://api.example.com/v1']);
  });
});

describe('options', () => {
  it('bad timeoutMs, maxCardBytes or allowedHosts are refused when the client is made', () => {
    for (const make of [a2aRemoteAgents, sdkRemoteAgents]) {
      expect(() => make({ maxCardBytes: 0 })).toThrow(new TypeError('a2aRemoteAgents: maxCardBytes must be a positive integer, not 0'));
      expect(() => make({ maxCardBytes: 1.5 })).toThrow(new TypeError('a2aRemoteAgents: maxCardBytes must be a positive integer, not 1.5'));
      expect(() => make({ timeoutMs: -1 })).toThrow(new TypeError('a2aRemoteAgents: timeoutMs must be a positive number of ms, not -1'));
      for (const entry of ['http://example.com/', 'example.com/path', '', 'a b']) {
        expect(() => make({ allowedHosts: [entry] })).toThrow(
          new TypeError(`a2aRemoteAgents: allowedHosts entry ${JSON.stringify(entry)} is not a host, host:port or "*"`),
        );
      }
    }
  });
});
