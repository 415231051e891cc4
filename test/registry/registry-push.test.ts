/**
 * The agent registry asking peers for push instead of holding a stream open
 * (`createAgentRegistry({ pushInbox })`, the inbox served by `serve(runtime, { pushInbox })`),
 * against our own server as the peer and a peer on the @a2a-js/sdk server. The inbox's fallback
 * poll is far beyond the tests' timeouts: a task completes only because a notification woke it.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { a2aPushInbox, createRuntime, defineSwarm, scriptedModel } from '../../src/index.js';
import { createAgentRegistry } from '../../src/registry/index.js';
import { serve } from '../../src/server/index.js';
import { startPeer, tickingClock } from '../support/registry-peers.js';
import { startSdkPeer } from '../support/sdk-peer.js';
import { until } from '../support/wait.js';
import { recordingFetch } from '../support/recording-fetch.js';

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c().catch(() => undefined);
  vi.restoreAllMocks();
});

/** A registry whose tasks go with push: its inbox served by a server of our own. */
async function pushRegistry(methods: string[]) {
  const inbox = a2aPushInbox({ fallbackPollMs: 600_000 });
  const home = createRuntime({ swarms: [defineSwarm({ id: 'home', instructions: 'Idle.' })], model: scriptedModel(() => ({ text: 'ok' })) });
  const server = await serve(home, { pushInbox: inbox });
  const registry = createAgentRegistry({ healthIntervalMs: 0, timeoutMs: 2000, now: tickingClock(), pushInbox: inbox, fetch: recordingFetch(methods) });
  cleanups.push(
    () => home.close(),
    () => server.close(),
    () => registry.close(),
  );
  return { registry, server };
}

/** No stream was opened: neither a streaming send nor a resubscription (v1.0 or v0.3). */
const streamed = (methods: string[]) =>
  methods.some((m) => m.startsWith('SendStreamingMessage') || m === 'SubscribeToTask' || m.startsWith('message/stream') || m === 'tasks/resubscribe');

describe('agent registry with push notifications', () => {
  it('our own server as the peer: the dispatched task completes by push, no stream opened', async () => {
    const methods: string[] = [];
    const { registry, server } = await pushRegistry(methods);
    const peer = await startPeer('A', 'translator', undefined, { allowedPushHosts: ['127.0.0.1'], pushRetry: { initialDelayMs: 20, maxDelayMs: 100 } });
    cleanups.push(() => peer.close());
    const release = peer.model.hold('hola');
    await registry.register(peer.cardUrl);
    const task = registry.dispatch({ skill: 'translate', message: 'hola' });
    await until('the peer to work on the task', () => peer.model.seen.includes('hola'));
    // The task works (held) while the registry waits for a notification.
    await new Promise((r) => setTimeout(r, 150));
    expect(registry.task(task.id)?.state).toBe('working');
    release();
    expect(await registry.wait(task.id)).toMatchObject({ state: 'completed', result: 'A did: hola' });
    expect(methods.filter((m) => m.startsWith('SendMessage'))).toEqual(['SendMessage+push']);
    expect(methods).toContain('GetTask');
    expect(streamed(methods)).toBe(false);
    // The peer kept one webhook, a URL of our server, and is done with it (taken, or 410 Gone).
    const [swarm] = await peer.runtime.list({ definitionId: 'translator' });
    const configs = peer.runtime.store.pushOutbox!.list(swarm!.swarmId);
    expect(configs.map((c) => c.url.startsWith(`${server.url}/a2a-push/`))).toEqual([true]);
    await until('the peer to finish with the webhook', () => peer.runtime.store.pushOutbox!.pending().length === 0);
  });

  it('a peer on the @a2a-js/sdk server, with its own push sender', async () => {
    // The SDK's push sender logs each delivery (and the one refused once the task is over).
    const logged = [vi.spyOn(console, 'info').mockImplementation(() => undefined), vi.spyOn(console, 'error').mockImplementation(() => undefined)];
    const methods: string[] = [];
    const { registry } = await pushRegistry(methods);
    const sdkPeer = await startSdkPeer({ push: true });
    cleanups.push(() => sdkPeer.close());
    await registry.register(sdkPeer.cardUrl);
    const task = registry.dispatch({ skill: 'translate', message: 'bonjour' });
    await sdkPeer.working('bonjour');
    sdkPeer.release('bonjour');
    expect(await registry.wait(task.id)).toMatchObject({ state: 'completed', result: 'done: bonjour' });
    expect(methods.filter((m) => m.startsWith('SendMessage'))).toEqual(['SendMessage+push']);
    expect(methods).toContain('GetTask');
    expect(streamed(methods)).toBe(false);
    await until('the SDK peer to have sent both notifications', () => logged.reduce((n, spy) => n + spy.mock.calls.length, 0) >= 2);
  });

  it('without an inbox the registry streams, as before', async () => {
    const methods: string[] = [];
    const registry = createAgentRegistry({ healthIntervalMs: 0, timeoutMs: 2000, now: tickingClock(), fetch: recordingFetch(methods) });
    cleanups.push(() => registry.close());
    const peer = await startPeer('B', 'translator-b');
    cleanups.push(() => peer.close());
    await registry.register(peer.cardUrl);
    const task = registry.dispatch({ skill: 'translate', message: 'ciao' });
    expect(await registry.wait(task.id)).toMatchObject({ state: 'completed', result: 'B did: ciao' });
    expect(streamed(methods)).toBe(true);
    expect(methods.some((m) => m.endsWith('+push'))).toBe(false);
  });
});
