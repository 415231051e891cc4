/**
 * The 2025-11-25 utilities the MCP server offers besides tools, resources and prompts, through
 * the official SDK clients: logging (`logging/setLevel`, a wait's progress lines as
 * `notifications/message`) and completion of a result template's `swarmId`.
 */
import { Client, LOG_LEVEL_META_KEY, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { Client as V1Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as V1Transport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { LoggingMessageNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { afterEach, describe, expect, it } from 'vitest';
import { createRuntime, defineAgent, defineSwarm, handoff, type Model, type Runtime } from '../../../src/index.js';
import { serve } from '../../../src/server/index.js';
import { call, queueModel } from '../../support/script.js';

const helper = defineAgent({ id: 'helper', instructions: 'Help.' });
const echo = defineSwarm({ id: 'echo', instructions: 'Repeat.', handoffs: [handoff.toAgent(helper)] });
const other = defineSwarm({ id: 'other', instructions: 'Other.' });

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c().catch(() => undefined);
});

async function start(model: Model): Promise<{ url: string; runtime: Runtime }> {
  const runtime = createRuntime({ swarms: [echo, other], agents: [helper], model });
  cleanups.push(() => runtime.close());
  const server = await serve(runtime);
  cleanups.push(() => server.close());
  return { url: `${server.url}/mcp`, runtime };
}

async function v1(url: string): Promise<V1Client> {
  const client = new V1Client({ name: 'xswarm-test-v1', version: '1.0.0' });
  await client.connect(new V1Transport(new URL(url)));
  cleanups.push(() => client.close());
  return client;
}

async function v2(url: string, mode: 'legacy' | 'auto'): Promise<Client> {
  const client = new Client({ name: 'xswarm-test', version: '1.0.0' }, { versionNegotiation: { mode } });
  await client.connect(new StreamableHTTPClientTransport(new URL(url)));
  cleanups.push(() => client.close());
  return client;
}

/** A handoff to the helper agent, then `complete`: turns and a handoff to report. */
const script = (...results: string[]) =>
  queueModel({
    echo: results.flatMap((result) => [call('handoff_to_helper', { request: 'Help?' }), call('complete', { result })]),
    helper: results.map(() => ({ text: 'ok' })),
  });

describe('MCP logging', () => {
  it('a 2025-11-25 client: the server declares logging, accepts logging/setLevel, and sends the progress lines of a wait as info messages', async () => {
    const { url } = await start(script('done'));
    const client = await v1(url);
    expect(client.getServerCapabilities()).toMatchObject({ logging: {}, completions: {} });
    expect(await client.setLoggingLevel('info')).toEqual({});

    const logs: { level: string; logger?: string; data: unknown }[] = [];
    client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => void logs.push(n.params));
    const progress: string[] = [];
    const result = await client.callTool({ name: 'echo_run', arguments: { input: 'hi', swarmId: 'l1', wait: true } }, undefined, {
      onprogress: (p) => void progress.push(p.message ?? ''),
      timeout: 10_000,
    });
    expect(result.structuredContent).toEqual({ swarmId: 'l1', status: 'completed', result: 'done' });
    expect(progress.length).toBeGreaterThan(0);
    // Every progress line is also a log message, in order, naming the swarm.
    expect(logs).toEqual(progress.map((message) => ({ level: 'info', logger: 'xswarm', data: { swarmId: 'l1', message } })));
  });

  it('a 2026-07-28 client gets log messages only for a request whose envelope names a level', async () => {
    const { url } = await start(script('one', 'two'));
    const client = await v2(url, 'auto');
    expect(client.getProtocolEra()).toBe('modern');
    const logs: unknown[] = [];
    client.setNotificationHandler('notifications/message', (n) => void logs.push(n.params.data));

    await client.callTool({ name: 'echo_run', arguments: { input: 'x', swarmId: 'm1', wait: true } });
    expect(logs).toEqual([]);

    const r = await client.callTool({ name: 'echo_run', arguments: { input: 'x', swarmId: 'm2', wait: true }, _meta: { [LOG_LEVEL_META_KEY]: 'info' } });
    expect(r.structuredContent).toMatchObject({ status: 'completed', result: 'two' });
    expect(logs.length).toBeGreaterThan(0);
    expect(logs).toContainEqual({ swarmId: 'm2', message: expect.stringMatching(/^Turn 1\/\d+ completed/) });
  });
});

describe('MCP streams', () => {
  it('concurrent waits of one client each get their own progress and logs on their own response stream', async () => {
    const { url } = await start(script('r0', 'r1', 'r2'));
    const client = await v1(url);
    const logs: { swarmId: string; message: string }[] = [];
    client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => void logs.push(n.params.data as { swarmId: string; message: string }));
    const progress: string[][] = [[], [], []];
    const results = await Promise.all(
      [0, 1, 2].map((i) =>
        client.callTool({ name: 'echo_run', arguments: { input: 'hi', swarmId: `c${i}`, wait: true } }, undefined, {
          onprogress: (p) => void progress[i]!.push(p.message ?? ''),
          timeout: 10_000,
        }),
      ),
    );
    // The model's replies go to whichever swarm asks first: each completes with one of them.
    expect(results.map((r) => (r.structuredContent as { swarmId: string }).swarmId)).toEqual(['c0', 'c1', 'c2']);
    expect(results.map((r) => (r.structuredContent as { status: string }).status)).toEqual(['completed', 'completed', 'completed']);
    for (const i of [0, 1, 2]) {
      // Each stream carried exactly its own swarm's lines: the logs naming c<i>, in order.
      expect(progress[i]!.length).toBeGreaterThan(0);
      expect(progress[i]).toEqual(logs.filter((l) => l.swarmId === `c${i}`).map((l) => l.message));
    }
    expect(logs).toHaveLength(progress.flat().length);
  });
});

describe('MCP completion', () => {
  it("completes a result template's swarmId to the ids of that definition's swarms with the typed prefix", async () => {
    const { url, runtime } = await start(queueModel({}));
    for (const id of ['alpha-1', 'alpha-2', 'beta-1']) await runtime.forSwarm('echo', id).run('x');
    // A swarm of another definition is not offered for echo's template.
    await runtime.forSwarm('other', 'alpha-other').run('x');

    const ref = { type: 'ref/resource' as const, uri: 'swarm://echo/{swarmId}/result' };
    const client = await v1(url);
    const alpha = await client.complete({ ref, argument: { name: 'swarmId', value: 'alpha' } });
    expect([...alpha.completion.values].sort()).toEqual(['alpha-1', 'alpha-2']);
    const all = await client.complete({ ref, argument: { name: 'swarmId', value: '' } });
    expect([...all.completion.values].sort()).toEqual(['alpha-1', 'alpha-2', 'beta-1']);

    const modern = await v2(url, 'auto');
    const beta = await modern.complete({ ref, argument: { name: 'swarmId', value: 'b' } });
    expect(beta.completion.values).toEqual(['beta-1']);
    // Each value reads as a resource of the template.
    const read = await modern.readResource({ uri: `swarm://echo/${beta.completion.values[0]}/result` });
    expect(read.contents).toHaveLength(1);
  });
});
