/**
 * The registry cancels a dispatched task (seed 003): the task is `canceled` at once, the peer it
 * went to gets an A2A cancel (an `@a2a-js/sdk` peer we did not write, and an xswarm peer whose
 * swarm stops), tasks blocked on it fail, a snapshot keeps it canceled, and the `cancel_task`
 * MCP tool does the same through the MCP SDK client.
 */
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { afterEach, describe, expect, it } from 'vitest';
import { createRuntime, defineSwarm, scriptedModel, serve } from '../../src/index.js';
import { createAgentRegistry, type AgentRegistry } from '../../src/registry/index.js';
import { peersClosedBy, tickingClock } from '../support/registry-peers.js';
import { type SdkPeer, startSdkPeer } from '../support/sdk-peer.js';
import { sleep } from '../support/sleep.js';

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c().catch(() => undefined);
});

const xswarmPeer = peersClosedBy(cleanups);

async function sdkPeer(): Promise<SdkPeer> {
  const p = await startSdkPeer();
  cleanups.push(() => p.close());
  return p;
}

function registry(): AgentRegistry {
  const r = createAgentRegistry({ healthIntervalMs: 0, timeoutMs: 2000, now: tickingClock() });
  cleanups.push(() => r.close());
  return r;
}

/** Resolves once `check()` holds (polled), or fails after 10 s saying `what`. */
async function until(check: () => boolean | Promise<boolean>, what: string): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(20);
  }
}

describe('registry.cancel', () => {
  it('cancels a working task: canceled at once, the @a2a-js/sdk peer receives CancelTask, dependents fail', async () => {
    const peer = await sdkPeer();
    const r = registry();
    await r.register(peer.cardUrl, { id: 'sdk' });
    const task = r.dispatch({ id: 't1', agent: 'sdk', message: 'hola' });
    const dependent = r.dispatch({ id: 't2', skill: 'translate', message: 'later', dependsOn: [{ taskId: 't1', kind: 'blocking' }] });
    await peer.working('hola');
    expect(r.task(task.id)?.state).toBe('working');

    const canceled = r.cancel('t1', 'not needed any more');
    expect(canceled).toMatchObject({ state: 'canceled', error: 'not needed any more', agentId: 'sdk', endedAt: expect.any(Number) });
    expect(canceled.history.map((h) => h.state)).toEqual(['submitted', 'working', 'canceled']);
    expect((await r.wait('t1')).state).toBe('canceled');
    // The peer's task is canceled on the peer, over A2A.
    await until(() => peer.canceled.includes('hola'), 'the peer to receive the cancel');
    // What the peer says afterwards does not change the task.
    peer.release('hola');
    await sleep(100);
    expect(r.task('t1')).toMatchObject({ state: 'canceled', error: 'not needed any more' });
    expect(r.task('t1')?.result).toBeUndefined();
    // The blocked task fails, saying why; it was never sent.
    expect(await r.wait(dependent.id)).toMatchObject({ state: 'failed', error: 'Blocking dependency "t1" was canceled: not needed any more' });
    expect(peer.received.size).toBe(1);

    // Again: the task as it is. A completed task cannot be canceled; an unknown one is unknown.
    expect(r.cancel('t1')).toMatchObject({ state: 'canceled', error: 'not needed any more' });
    peer.release('done soon');
    const done = await r.wait(r.dispatch({ id: 't3', agent: 'sdk', message: 'done soon' }).id);
    expect(done.state).toBe('completed');
    expect(() => r.cancel('t3')).toThrow(expect.objectContaining({ code: 'wrong-state' }));
    expect(() => r.cancel('nope')).toThrow(expect.objectContaining({ code: 'unknown-task' }));

    // A snapshot keeps it canceled: a registry restored from it does not send it again.
    const restored = createAgentRegistry({ healthIntervalMs: 0, restore: r.snapshot() });
    cleanups.push(() => restored.close());
    expect(restored.task('t1')).toMatchObject({ state: 'canceled', error: 'not needed any more' });
    expect((await restored.wait('t1')).state).toBe('canceled');
    await sleep(50);
    expect(peer.received.size).toBe(2);
  });

  it('cancels a task still waiting for its dependency: it is never sent', async () => {
    const peer = await sdkPeer();
    const r = registry();
    await r.register(peer.cardUrl, { id: 'sdk' });
    r.dispatch({ id: 'first', agent: 'sdk', message: 'first' });
    r.dispatch({ id: 'second', agent: 'sdk', message: 'second', dependsOn: [{ taskId: 'first', kind: 'blocking' }] });
    await peer.working('first');
    expect(r.cancel('second')).toMatchObject({ state: 'canceled', error: 'Canceled' });
    peer.release('first');
    expect((await r.wait('first')).state).toBe('completed');
    await sleep(100);
    expect([...peer.received.keys()]).toHaveLength(1);
    expect(r.task('second')?.state).toBe('canceled');
  });

  it("an xswarm peer's swarm stops when the registry cancels its task", async () => {
    const peer = await xswarmPeer('A', 'translator-a');
    const release = peer.model.hold('slow work');
    cleanups.push(async () => release());
    const r = registry();
    await r.register(peer.cardUrl);
    r.dispatch({ id: 'x1', skill: 'translator-a', message: 'slow work' });
    await until(() => peer.model.seen.includes('slow work'), 'the peer to start');
    expect(r.cancel('x1').state).toBe('canceled');
    await until(async () => (await peer.runtime.list()).some((s) => s.status === 'stopped'), "the peer's swarm to stop");
  });
});

describe('the cancel_task MCP tool', () => {
  it('cancels through the MCP SDK client; get_task_status then says canceled; errors are isError with their code', async () => {
    const peer = await sdkPeer();
    const r = registry();
    await r.register(peer.cardUrl, { id: 'sdk' });
    const runtime = createRuntime({ swarms: [defineSwarm({ id: 'echo', instructions: 'Repeat.' })], model: scriptedModel(() => ({ text: 'x' })) });
    cleanups.push(() => runtime.close());
    const server = await serve(runtime, { registry: r });
    cleanups.push(() => server.close());
    const mcp = new Client({ name: 'registry-cancel-test', version: '1.0.0' });
    await mcp.connect(new StreamableHTTPClientTransport(new URL(`${server.url}/mcp`)));
    cleanups.push(() => mcp.close());

    const tool = (await mcp.listTools()).tools.find((t) => t.name === 'cancel_task');
    expect(tool?.inputSchema).toMatchObject({ type: 'object', required: ['taskId'] });
    await mcp.callTool({ name: 'create_task', arguments: { id: 'm1', agent: 'sdk', message: 'por favor' } });
    await peer.working('por favor');
    const result = await mcp.callTool({ name: 'cancel_task', arguments: { taskId: 'm1', reason: 'changed my mind' } });
    expect(result.isError).toBeFalsy();
    expect(result.structuredContent).toMatchObject({ id: 'm1', state: 'canceled', error: 'changed my mind' });
    expect((await mcp.callTool({ name: 'get_task_status', arguments: { taskId: 'm1' } })).structuredContent).toMatchObject({ state: 'canceled' });
    await until(() => peer.canceled.includes('por favor'), 'the peer to receive the cancel');

    const unknown = await mcp.callTool({ name: 'cancel_task', arguments: { taskId: 'm9' } });
    expect(unknown.isError).toBe(true);
    expect((unknown.content as { text: string }[])[0]!.text).toMatch(/^unknown-task: /);
  });
});
