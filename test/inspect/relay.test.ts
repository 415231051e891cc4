/**
 * The inspection relay (`inspectRelay`, `xswarm/inspect`) as `@statelyai/inspect`'s own receiver
 * sees it: the registrations and snapshots of a swarm, its agent and its tool call; a viewer
 * connecting late gets the current state of the live actors once each (no history, no
 * duplicates, finished actors gone); a swarm restored by a new runtime from a SQLite store is
 * registered again. The relay binds 127.0.0.1, checks its token and the Origin of browsers, and
 * closes a client that sends garbage without going down.
 */
import { request } from 'node:http';
import { createWebSocketInspector, createWebSocketReceiver } from '@statelyai/inspect';
import { afterEach, describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import { z } from 'zod';
import { createRuntime, defineAgent, defineSwarm, handoff, type Runtime, tool } from '../../src/index.js';
import { inspectRelay, type InspectRelay } from '../../src/entries/inspect.js';
import { call, queueModel } from '../support/script.js';
import { sqliteFilePerTest } from '../support/sqlite-file.js';
import { until } from '../support/wait.js';

/** A frame as the receiver hands it over (the fields the tests read). */
interface Frame {
  type: string;
  sessionId: string;
  name?: string;
  parentId?: string;
  rootId?: string;
  definition?: string;
  snapshot?: { status?: string; value?: unknown };
  event?: { type: string };
}

const file = sqliteFilePerTest('xswarm-inspect-relay-');
const opened: { close(): unknown }[] = [];
afterEach(async () => {
  for (const o of opened.splice(0).reverse()) await o.close();
});
async function relayOf(options: Parameters<typeof inspectRelay>[0] = {}): Promise<InspectRelay> {
  const relay = await inspectRelay(options);
  opened.push(relay);
  return relay;
}

/** `@statelyai/inspect`'s receiver on the relay, collecting what it hears. */
async function receiver(relay: InspectRelay): Promise<Frame[]> {
  const frames: Frame[] = [];
  createWebSocketReceiver({ server: relay.wsUrl }).subscribe((e) => frames.push(e as unknown as Frame));
  // It listens once open: a frame tells (the relay answers nothing else), or a short wait when nothing is live.
  await new Promise((r) => setTimeout(r, 100));
  return frames;
}

/** `top` hands off to `weather`, whose forecast tool waits until `release()`. */
function blockingSwarm() {
  let release!: () => void;
  const gate = new Promise<void>((r) => (release = r));
  const forecast = tool({
    name: 'get_forecast',
    description: 'Forecast',
    parameters: z.object({ day: z.string() }),
    execute: async ({ day }) => (await gate, { day, sky: 'sunny' }),
  });
  const weather = defineAgent({ id: 'weather', instructions: 'Forecast.', tools: [forecast] });
  const top = defineSwarm({ id: 'top', instructions: 'Plan.', handoffs: [handoff.toAgent(weather)] });
  const model = () =>
    queueModel({
      top: [call('handoff_to_weather', { request: 'weather?' }), { text: 'top done' }],
      weather: [call('get_forecast', { day: 'mon' }, 'f1'), { text: 'sunny' }],
    });
  return { top, weather, model, release };
}

const actorsOf = (frames: Frame[]) => frames.filter((f) => f.type === '@xstate.actor');
const names = (frames: Frame[]) => actorsOf(frames).map((f) => f.name!);

describe('the inspection relay, read by @statelyai/inspect', () => {
  it('relays registrations and snapshots; a late viewer gets the current state of the live actors once, again on reconnect', async () => {
    const relay = await relayOf();
    expect(relay.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/$/);
    const early = await receiver(relay);
    const { top, weather, model, release } = blockingSwarm();
    const rt: Runtime = createRuntime({ swarms: [top], agents: [weather], model: model(), inspect: relay.inspect });
    opened.push(rt);
    await rt.forSwarm(top, 'trip').run('go');
    // The tool call in flight: swarm → agent → tool, all live.
    await until('the tool call to register', () => names(early).some((n) => n.startsWith('tool:')));
    await until('the model actors to end', () => relay.liveActors() === 3);

    const root = actorsOf(early).find((f) => f.name === 'trip')!;
    expect(root.parentId).toBeUndefined();
    expect(root.rootId).toBe(root.sessionId);
    expect(JSON.parse(root.definition!)).toMatchObject({ id: 'swarm' });
    const agent = actorsOf(early).find((f) => f.name!.startsWith('agent:'))!;
    expect(agent.parentId).toBe(root.sessionId);
    const toolCall = actorsOf(early).find((f) => f.name!.startsWith('tool:'))!;
    expect(toolCall.parentId).toBe(agent.sessionId);
    expect(early.some((f) => f.type === '@xstate.snapshot' && f.sessionId === root.sessionId)).toBe(true);
    expect(early.some((f) => f.type === '@xstate.event')).toBe(true);

    // A viewer connecting now: each live actor once, registration then latest snapshot, no events.
    const late = await receiver(relay);
    await until('the late viewer to get the state', () => late.length >= 6);
    expect(late.map((f) => f.type)).toEqual(['@xstate.actor', '@xstate.snapshot', '@xstate.actor', '@xstate.snapshot', '@xstate.actor', '@xstate.snapshot']);
    expect(actorsOf(late).map((f) => f.sessionId)).toEqual([root.sessionId, agent.sessionId, toolCall.sessionId]);
    const latestRoot = early.filter((f) => f.type === '@xstate.snapshot' && f.sessionId === root.sessionId).at(-1);
    expect(late[1]).toEqual(latestRoot);
    // Reconnecting: the same, not twice.
    const again = await receiver(relay);
    await until('the reconnected viewer to get the state', () => again.length >= 6);
    await new Promise((r) => setTimeout(r, 50));
    expect(again).toEqual(late.slice(0, 6));

    release();
    await rt.forSwarm(top, 'trip').wait();
    await until('the finished actors to be dropped', () => relay.liveActors() === 0);
    await until('the viewer to see the swarm end', () =>
      ['done', 'stopped'].includes(early.filter((f) => f.type === '@xstate.snapshot' && f.sessionId === root.sessionId).at(-1)!.snapshot!.status!),
    );
    const afterEnd = await receiver(relay);
    expect(afterEnd).toEqual([]);
  });

  it('registers a restored swarm again: a runtime closed mid-run on SQLite, a new one adopts it', async () => {
    const relay = await relayOf();
    const { top, weather, model, release } = blockingSwarm();
    const first = createRuntime({ swarms: [top], agents: [weather], model: model(), store: file.open(), inspect: relay.inspect, owner: 'first' });
    await first.forSwarm(top, 'trip').run('go');
    await until('the tool call to be live', () => relay.liveActors() === 3);
    await first.close();
    // Stopped with their runtime: nothing of it is live.
    await until('the stopped actors to be dropped', () => relay.liveActors() === 0);

    const second = createRuntime({ swarms: [top], agents: [weather], model: model(), store: file.open(), inspect: relay.inspect, owner: 'second', leaseMs: 200 });
    opened.push(second);
    await second.start();
    await until('the restored swarm to register', () => relay.liveActors() >= 2, { timeout: 10_000 });
    const viewer = await receiver(relay);
    await until('the viewer to get the restored swarm', () => actorsOf(viewer).length >= 2);
    const root = actorsOf(viewer).find((f) => f.name === 'trip')!;
    expect(root.snapshot).toMatchObject({ status: 'active' });
    expect(actorsOf(viewer).find((f) => f.name!.startsWith('agent:'))!.parentId).toBe(root.sessionId);
    expect(viewer.find((f) => f.type === '@xstate.snapshot' && f.sessionId === root.sessionId)!.snapshot!.value).toBe('awaitingHandoff');

    release();
    expect(await second.forSwarm(top, 'trip').wait()).toEqual({ status: 'completed', result: 'top done' });
    await until('the restored actors to end', () => relay.liveActors() === 0);
  });

  it("takes another process's frames (createWebSocketInspector); a frame repeated word for word is not relayed again; a closed sender's actors go", async () => {
    const relay = await relayOf();
    const viewer = await receiver(relay);
    // A producer as another process would use it.
    const producer = createWebSocketInspector({ url: relay.wsUrl });
    producer.actor('remote-1', { status: 'active', value: 'idle' } as never);
    producer.snapshot('remote-1', { status: 'active', value: 'busy' } as never);
    await until('the producer frames', () => viewer.length === 2);
    expect(viewer.map((f) => [f.type, f.sessionId])).toEqual([
      ['@xstate.actor', 'remote-1'],
      ['@xstate.snapshot', 'remote-1'],
    ]);
    // Frames sent again word for word (what createWebSocketInspector does when it opens again: its
    // buffer re-sent as it was) are not relayed twice.
    const again = new WebSocket(relay.wsUrl);
    const kept: string[] = [];
    again.on('message', (m) => kept.push(m.toString()));
    await until('the current state on connect', () => kept.length === 2);
    for (const text of kept) again.send(text);
    again.send(JSON.stringify({ type: '@xstate.snapshot', sessionId: 'remote-1', snapshot: { status: 'active', value: 'later' } }));
    await until('the new snapshot', () => viewer.length === 3);
    await new Promise((r) => setTimeout(r, 50));
    expect(viewer.map((f) => f.snapshot?.value)).toEqual(['idle', 'busy', 'later']);
    expect(relay.liveActors()).toBe(1);
    // Its sender gone, the actor is not live any more: a viewer connecting now is not told of it.
    producer.stop();
    await until('the closed producer’s actors to be dropped', () => relay.liveActors() === 0);
    expect(await receiver(relay)).toEqual([]);
    again.close();
  });
});

describe('the relay guards its door', () => {
  it('closes a client sending garbled frames with a clear reason and keeps serving', async () => {
    const relay = await relayOf();
    for (const garbage of ['not json', '[1,2]', '{"type":"@xstate.actor"}', Buffer.from([1, 2, 3])]) {
      const ws = new WebSocket(relay.wsUrl);
      await new Promise((r) => ws.once('open', r));
      const closed = new Promise<[number, string]>((r) => ws.once('close', (code, reason) => r([code, reason.toString()])));
      ws.send(garbage);
      expect(await closed).toEqual([1007, 'xswarm inspect relay: expected JSON text frames of @statelyai/inspect events']);
    }
    const viewer = await receiver(relay);
    const ws = new WebSocket(relay.wsUrl);
    await new Promise((r) => ws.once('open', r));
    ws.send(JSON.stringify({ type: '@xstate.actor', sessionId: 'ok', name: 'ok', snapshot: { status: 'active' } }));
    await until('a good frame after the bad ones', () => viewer.length === 1);
    ws.close();
  });

  it('with a token, refuses clients and the page without it', async () => {
    const relay = await relayOf({ token: 's3cret' });
    expect(relay.wsUrl).toMatch(/^ws:\/\/127\.0\.0\.1:\d+\/\?token=s3cret$/);
    expect(await upgradeStatus(`ws://127.0.0.1:${relay.port}/`)).toBe(403);
    expect(await upgradeStatus(`ws://127.0.0.1:${relay.port}/?token=wrong`)).toBe(403);
    expect(await upgradeStatus(relay.wsUrl)).toBe(101);
    expect(await page(`http://127.0.0.1:${relay.port}/`)).toMatchObject({ status: 403 });
    const ok = await page(relay.url);
    expect(ok.status).toBe(200);
    expect(ok.body).toContain('<iframe id="inspector" src="https://stately.ai/inspect"');
  });

  it('without a token, refuses browser pages of other origins and foreign Host names; a non-loopback host needs a token', async () => {
    const relay = await relayOf();
    expect(await upgradeStatus(relay.wsUrl, { origin: 'https://evil.example' })).toBe(403);
    expect(await upgradeStatus(relay.wsUrl, { origin: `http://localhost:${relay.port}` })).toBe(101);
    expect(await page(relay.url, { host: `evil.example:${relay.port}` })).toMatchObject({ status: 403 });
    await expect(inspectRelay({ host: '0.0.0.0' })).rejects.toThrow(new TypeError('inspectRelay: host 0.0.0.0 is not loopback; give a token to expose the relay'));
  });
});

/** The status a WebSocket handshake gets (101 when accepted). */
function upgradeStatus(url: string, headers: Record<string, string> = {}): Promise<number> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url, { headers });
    ws.once('open', () => {
      ws.close();
      resolve(101);
    });
    ws.once('unexpected-response', (_req, res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    });
    ws.once('error', (e) => (e.message.includes('Unexpected server response') ? undefined : reject(e)));
  });
}

/** GETs a page (with extra headers), resolving with status and body. */
function page(url: string, headers: Record<string, string> = {}): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    request(url, { headers }, (res) => {
      let body = '';
      res.on('data', (c: Buffer) => (body += c.toString()));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    })
      .on('error', reject)
      .end();
  });
}
