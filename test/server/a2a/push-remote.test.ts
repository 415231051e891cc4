/**
 * Our remote-agent client asking peers for push instead of holding a stream open
 * (`a2aRemoteAgents({ pushInbox })` + `serve(runtime, { pushInbox })`), against our own server
 * as the peer and against a peer built on the @a2a-js/sdk server (its own push sender). The
 * inbox's fallback poll is set far beyond the tests' timeouts: a call completes only because a
 * notification woke it.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { a2aPushInbox, createRuntime, defineSwarm, handoff, type Runtime } from '../../../src/index.js';
import { a2aRemoteAgents } from '../../../src/a2a/client.js';
import { serve } from '../../../src/server/index.js';
import { call, lastToolResult, queueModel, type Step } from '../../support/script.js';
import { startSdkPeer } from '../../support/sdk-peer.js';
import { until } from '../../support/wait.js';
import { recordingFetch } from '../../support/recording-fetch.js';

const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close();
  vi.restoreAllMocks();
});

/** The caller: a `planner` handing off to the agent at `cardUrl`, its remote calls made with push. */
async function caller(cardUrl: string, tool: string, methods: string[]) {
  const inbox = a2aPushInbox({ fallbackPollMs: 600_000 });
  const planner = defineSwarm({ id: 'planner', instructions: 'Plan.', handoffs: [handoff.toRemoteAgent(cardUrl)] });
  const runtime: Runtime = createRuntime({
    swarms: [planner],
    model: queueModel({ planner: [call(tool, { request: 'forecast' }), (req) => ({ text: `Plan: ${lastToolResult(req)}` })] }),
    remote: a2aRemoteAgents({ pushInbox: inbox, fetch: recordingFetch(methods) }),
  });
  const server = await serve(runtime, { pushInbox: inbox });
  closers.push(
    () => runtime.close(),
    () => server.close(),
  );
  return { runtime, server, inbox };
}

function gated(gate: Promise<void>, text: string): Step {
  return async () => {
    await gate;
    return { text };
  };
}

describe('remote calls with push notifications', () => {
  it('our own server as the peer: the message carries a webhook, no stream is opened, the push wakes the call', async () => {
    let open!: () => void;
    const gate = new Promise<void>((resolve) => (open = resolve));
    const weather = defineSwarm({ id: 'weather', description: 'Answers weather questions', instructions: 'Forecast.' });
    const peerRuntime = createRuntime({ swarms: [weather], model: queueModel({ weather: [gated(gate, 'Sunny')] }) });
    const peer = await serve(peerRuntime, { allowedPushHosts: ['127.0.0.1'], pushRetry: { initialDelayMs: 20, maxDelayMs: 100 } });
    closers.push(
      () => peerRuntime.close(),
      () => peer.close(),
    );
    const methods: string[] = [];
    const a = await caller(`${peer.url}/a2a/weather/.well-known/agent-card.json`, 'handoff_to_weather', methods);
    const client = a.runtime.forSwarm('planner');
    await client.run('Plan my weekend');
    // The remote task works (gated) while the call waits for a notification.
    await new Promise((r) => setTimeout(r, 200));
    expect(await client.getResult()).toMatchObject({ status: 'running' });
    open();
    expect(await client.wait()).toEqual({ status: 'completed', result: 'Plan: Sunny' });
    expect(methods[0]).toBe('SendMessage+push');
    expect(methods).toContain('GetTask');
    expect(methods.some((m) => m === 'SendStreamingMessage' || m === 'SubscribeToTask' || m.startsWith('message/'))).toBe(false);
    // The peer kept the webhook in its outbox, a URL of our server.
    const [task] = await peerRuntime.list({ definitionId: 'weather' });
    const configs = peerRuntime.store.pushOutbox!.list(task!.swarmId);
    expect(configs).toHaveLength(1);
    expect(configs[0]!.url.startsWith(`${a.server.url}/a2a-push/`)).toBe(true);
    expect(configs[0]!.authentication?.scheme).toBe('Bearer');
    // Nothing keeps retrying once the call is over: the final update was taken, or refused with 410 Gone.
    await until('the peer to finish with the webhook', () => peerRuntime.store.pushOutbox!.pending().length === 0);
  });

  it('a peer on the @a2a-js/sdk server, with its own push sender', async () => {
    // The SDK's push sender logs each delivery (and the last one, refused once the call is over).
    const logged = [vi.spyOn(console, 'info').mockImplementation(() => undefined), vi.spyOn(console, 'error').mockImplementation(() => undefined)];
    const sdkPeer = await startSdkPeer({ push: true });
    closers.push(() => sdkPeer.close());
    const methods: string[] = [];
    const a = await caller(sdkPeer.cardUrl, 'handoff_to_sdk_translator', methods);
    const client = a.runtime.forSwarm('planner');
    await client.run('Plan');
    await sdkPeer.working('forecast');
    sdkPeer.release('forecast');
    expect(await client.wait()).toEqual({ status: 'completed', result: 'Plan: done: forecast' });
    expect(methods[0]).toBe('SendMessage+push');
    expect(methods.filter((m) => m === 'SendStreamingMessage')).toHaveLength(0);
    expect(methods).toContain('GetTask');
    // The SDK sends one notification per event (the task, then its completion), in the background: both over before the test ends.
    await until('the SDK peer to have sent both notifications', () => logged.reduce((n, spy) => n + spy.mock.calls.length, 0) >= 2);
  });

  it('the inbox route answers only a waiting call with its secret', async () => {
    const methods: string[] = [];
    const a = await caller('http://127.0.0.1:9/a2a/x/.well-known/agent-card.json', 'unused', methods);
    const hook = a.inbox.open();
    const post = (url: string, authorization?: string) =>
      fetch(url, { method: 'POST', headers: { 'content-type': 'application/a2a+json', ...(authorization ? { authorization } : {}) }, body: '{}' }).then((r) => r.status);
    expect(await post(hook.url, `Bearer ${hook.secret}`)).toBe(204);
    expect(await post(hook.url, 'Bearer wrong')).toBe(401);
    expect(await post(hook.url)).toBe(401);
    expect(await post(`${a.server.url}/a2a-push/unknown`, `Bearer ${hook.secret}`)).toBe(410);
    // The notification that came first is kept for the next wait.
    await hook.wait(AbortSignal.timeout(1000));
    hook.close();
    expect(await post(hook.url, `Bearer ${hook.secret}`)).toBe(410);
  });
});
