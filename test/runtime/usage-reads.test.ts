/**
 * Where usage is read besides `client.usage()`: `getResult({ usage: true })`, REST's `?usage=1`
 * on a swarm and on a list, and a team's `usage()` summed over every task attempt (failed ones
 * included, since they spent tokens too).
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { createRuntime, defineSwarm, defineTeam, handoff, type ModelRequest, type Runtime, scriptedModel } from '../../src/index.js';
import { a2aRemoteAgents } from '../../src/entries/a2a.js';
import { serve, type SwarmServer } from '../../src/entries/server.js';
import { sdkClient, sendRequest, userText } from '../support/a2a-peers.js';
import { request } from '../support/server-clients.js';

let runtime: Runtime | undefined;
let server: SwarmServer | undefined;
const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
  await server?.close();
  await runtime?.close();
  server = undefined;
  runtime = undefined;
});

/**
 * Serves `cardUrl`'s agent card with `capabilities.streaming` false (everything else, the
 * endpoints included, as the real server says): a caller then sends without streaming and polls.
 */
async function withoutStreaming(cardUrl: string): Promise<string> {
  const proxy: Server = createServer(async (_req, res) => {
    const card = (await (await fetch(cardUrl)).json()) as { capabilities?: Record<string, unknown> };
    res.setHeader('content-type', 'application/json');
    res.end(JSON.stringify({ ...card, capabilities: { ...card.capabilities, streaming: false } }));
  });
  await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
  cleanups.push(() => new Promise((resolve) => proxy.close(resolve)));
  return `http://127.0.0.1:${(proxy.address() as AddressInfo).port}/.well-known/agent-card.json`;
}

const solo = defineSwarm({ id: 'solo', instructions: 'Answer.' });
const prices = { 'usage-model': { inputPerMTok: 1, outputPerMTok: 2 } };

/** Every call answers at once, reporting 10 input and 4 output tokens. */
const model = scriptedModel(() => ({ text: 'done', usage: { inputTokens: 10, outputTokens: 4 } }), 'usage-model');

describe('usage in results', () => {
  it('getResult({ usage: true }) adds the usage report; getResult() keeps its shape', async () => {
    runtime = createRuntime({ swarms: [solo], model, prices });
    const client = runtime.forSwarm(solo, 'r1');
    await client.run('go');
    await client.wait();
    expect(await client.getResult()).toEqual({ status: 'completed', result: 'done' });
    const withUsage = await client.getResult({ usage: true });
    expect(withUsage).toMatchObject({ status: 'completed', result: 'done', usage: { inputTokens: 10, outputTokens: 4, modelCalls: 1 } });
    expect(withUsage.usage).toEqual(await client.usage());
    expect(withUsage.usage.total.usd).toBeCloseTo((10 * 1 + 4 * 2) / 1_000_000, 12);
  });

  it('REST: ?usage=1 on a swarm and on a list; anything but 1/true/0/false is a 400', async () => {
    runtime = createRuntime({ swarms: [solo], model, prices });
    server = await serve(runtime);
    const client = runtime.forSwarm(solo, 'r2');
    await client.run('go');
    await client.wait();
    const plain = await request(server.url, 'GET', '/swarms/solo/r2');
    expect(plain.body).toEqual({ status: 'completed', result: 'done' });
    const one = await request(server.url, 'GET', '/swarms/solo/r2?usage=1');
    expect(one.body).toMatchObject({ status: 'completed', usage: { inputTokens: 10, outputTokens: 4, total: { modelCalls: 1 } } });
    const listed = await request(server.url, 'GET', '/swarms/solo?usage=true');
    expect(listed.body).toEqual([expect.objectContaining({ swarmId: 'r2', usage: expect.objectContaining({ inputTokens: 10, outputTokens: 4 }) })]);
    const unlisted = await request(server.url, 'GET', '/swarms/solo?usage=0');
    expect(unlisted.body[0]).not.toHaveProperty('usage');
    const bad = await request(server.url, 'GET', '/swarms/solo/r2?usage=yes');
    expect(bad).toMatchObject({ status: 400, body: { error: expect.stringContaining('usage must be') } });
  });

  it("a team's usage sums every attempt of every task, a failed attempt included", async () => {
    const worker = defineSwarm({ id: 'worker', instructions: 'Do the task.' });
    const tries = new Map<string, number>();
    const teamModel = scriptedModel((req: ModelRequest) => {
      const task = /Task: (\S+)/.exec(String(req.messages.find((m) => m.role === 'user')?.content))?.[1] ?? '?';
      const n = (tries.get(task) ?? 0) + 1;
      tries.set(task, n);
      // The first attempt of "b" fails its swarm, after its model call reported usage.
      if (task === 'b' && n === 1) return { toolCalls: [{ id: 'f', name: 'fail', arguments: '{"reason":"first try"}' }], usage: { inputTokens: 3, outputTokens: 1 } };
      return { text: `built ${task}`, usage: { inputTokens: 10, outputTokens: 4 } };
    }, 'usage-model');
    const team = defineTeam({ id: 'crew', workers: [{ type: 'dev', swarm: worker }] });
    runtime = createRuntime({ teams: [team], model: teamModel, prices });
    const client = runtime.forTeam(team);
    await client.run([
      { id: 'a', subject: 'a', metadata: { type: 'dev' } },
      { id: 'b', subject: 'b', metadata: { type: 'dev' } },
    ]);
    expect((await client.wait()).status).toBe('completed');
    expect(client.board().tasks.find((t) => t.id === 'b')?.attempts).toBe(2);
    const usage = await client.usage();
    // a: one call; b: a failed attempt (3 + 1) and a good one.
    expect(usage).toMatchObject({ inputTokens: 10 + 3 + 10, outputTokens: 4 + 1 + 4, modelCalls: 3 });
    expect(usage.usd).toBeCloseTo((23 * 1 + 9 * 2) / 1_000_000, 12);
  });

  it("A2A without streaming: a finished task reports the swarm's usage in its metadata, and a caller that polls counts it", async () => {
    const weather = defineSwarm({ id: 'weather', description: 'Answers weather questions', instructions: 'Forecast.' });
    const peer = createRuntime({ swarms: [weather], model: scriptedModel(() => ({ text: 'Sunny', usage: { inputTokens: 30, outputTokens: 3 } }), 'peer-model') });
    cleanups.push(() => peer.close());
    const peerServer = await serve(peer);
    cleanups.push(() => peerServer.close());
    const cardUrl = `${peerServer.url}/a2a/weather/.well-known/agent-card.json`;

    // The official client, message/send (blocking): the completed task carries the usage, and tasks/get too.
    const sdk = await sdkClient(cardUrl, 'v1.0');
    const sent = await sdk.sendMessage(sendRequest(userText('m1', 'weekend?')));
    const task = sent as { id: string; status?: { state: number }; metadata?: Record<string, unknown> };
    expect(task.metadata?.usage).toEqual({ 'peer-model': { calls: 1, inputTokens: 30, outputTokens: 3, cachedInputTokens: 0 } });
    const got = await sdk.getTask({ tenant: '', id: task.id, historyLength: undefined });
    expect((got.metadata as Record<string, unknown>).usage).toEqual(task.metadata?.usage);

    // Our remote-agent handoff to the same peer through a card without streaming: it polls, and counts the peer's usage once.
    const planner = defineSwarm({ id: 'planner', instructions: 'Plan.', handoffs: [handoff.toRemoteAgent(await withoutStreaming(cardUrl))] });
    runtime = createRuntime({
      swarms: [planner],
      // The card is served from another port than the agent: allowed here, as an operator would.
      remote: a2aRemoteAgents({ allowedHosts: ['127.0.0.1'], pollIntervalMs: 20 }),
      model: scriptedModel(
        (req) =>
          req.messages.some((m) => m.role === 'tool')
            ? { text: 'Plan: sunny', usage: { inputTokens: 6, outputTokens: 2 } }
            : // The handoff tool is named after the card's host until the card is read: take the one offered.
              {
                toolCalls: [{ id: 'w1', name: req.tools.find((t) => t.name.startsWith('handoff_to_'))!.name, arguments: '{"request":"weekend?"}' }],
                usage: { inputTokens: 5, outputTokens: 1 },
              },
        'big',
      ),
    });
    const client = runtime.forSwarm(planner, 'p1');
    await client.run('weekend');
    expect(await client.wait()).toEqual({ status: 'completed', result: 'Plan: sunny' });
    expect((await client.usage()).total.byModel['peer-model']).toEqual({ calls: 1, inputTokens: 30, outputTokens: 3, cachedInputTokens: 0 });
  });
});
