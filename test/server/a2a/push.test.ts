/**
 * A2A push notifications through the official @a2a-js/sdk client (v1.0 and v0.3): a receiver
 * that is down for a while gets every update once (by event id) and in order, authenticated by
 * bearer token or HMAC signature; the config methods; a server restart in the middle of a
 * backlog (SQLite file, new runtime and server) delivers the rest.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { type Task, TaskState } from '@a2a-js/sdk';
import { createRuntime, defineSwarm, type SwarmEvent } from '../../../src/index.js';
import { serve } from '../../../src/server/index.js';
import { pushSignature } from '../../../src/server/a2a/push-post.js';
import { verifyPushSignature } from '../../../src/entries/server.js';
import { MODES, sdkClient, sendRequest, streamed, userText } from '../../support/a2a-peers.js';
import { pushReceiver, seqOf, type PushReceiver } from '../../support/push-receiver.js';
import { queueModel, type Step } from '../../support/script.js';
import { servedPerTest } from '../../support/server-clients.js';
import { sleep } from '../../support/sleep.js';
import { sqliteFilePerTest } from '../../support/sqlite-file.js';
import { until } from '../../support/wait.js';

const echo = defineSwarm({ id: 'echo', name: 'Echo', description: 'Echoes the request', instructions: 'Repeat the request.' });
const FAST_RETRY = { initialDelayMs: 20, maxDelayMs: 80, timeoutMs: 2000 };

const served = servedPerTest();
const receivers: PushReceiver[] = [];

async function receiver(options: { down?: boolean } = {}): Promise<PushReceiver> {
  const r = await pushReceiver(options);
  receivers.push(r);
  return r;
}

async function start(script: Record<string, Step[]>) {
  served.runtime = createRuntime({ swarms: [echo], model: queueModel(script) });
  served.server = await serve(served.runtime, { allowedPushHosts: ['127.0.0.1'], pushRetry: FAST_RETRY });
  return { cardUrl: `${served.server.url}/a2a/echo/.well-known/agent-card.json`, rt: served.runtime };
}

/** The sequence numbers of a task's status and artifact updates: what must be pushed. */
async function updateSeqs(events: AsyncIterable<SwarmEvent>, after = 0): Promise<number[]> {
  const seqs: number[] = [];
  for await (const e of events) if ((e.kind === 'status-update' || e.kind === 'artifact-update') && e.seq > after) seqs.push(e.seq);
  return seqs;
}

/** The push config a message carries, in the SDK's shape. */
function pushConfig(url: string, authentication?: { scheme: string; credentials: string }, id = '') {
  return { tenant: '', id, taskId: '', url, token: '', authentication };
}

/** The task state a pushed body reports, whatever the version's shape. */
function pushedState(body: string): string | undefined {
  const b = JSON.parse(body) as Record<string, any>;
  return b.statusUpdate?.status?.state ?? b.status?.state;
}

afterEach(async () => {
  for (const r of receivers.splice(0)) await r.close();
});

describe('A2A push notifications', () => {
  for (const mode of MODES) {
    it(`${mode}: a receiver down for a while gets every update once, in order, with the bearer token`, async () => {
      const { cardUrl, rt } = await start({ echo: [streamed(['one ', 'two ', 'three'], 10)] });
      const hook = await receiver({ down: true });
      const client = await sdkClient(cardUrl, mode);
      const request = sendRequest(userText(crypto.randomUUID(), 'count'));
      request.configuration.taskPushNotificationConfig = pushConfig(hook.url, { scheme: 'Bearer', credentials: 'hook-secret' }) as never;
      const task = (await client.sendMessage(request)) as Task;
      expect(task.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);

      const expected = await updateSeqs(rt.forSwarm('echo', task.id).events(), 1);
      expect(expected.length).toBeGreaterThanOrEqual(3);
      // Down for a few retries, then up: the backlog arrives.
      await sleep(200);
      expect(hook.received).toHaveLength(0);
      await hook.up();
      await until('every update to arrive', () => hook.unique().length === expected.length, { timeout: 5000 });
      await sleep(150);
      const unique = hook.unique();
      expect(unique.map((r) => r.eventId)).toEqual(expected.map((seq) => `${task.id}:${seq}`));
      expect(hook.received).toHaveLength(expected.length);
      for (const r of hook.received) expect(r.headers.authorization).toBe('Bearer hook-secret');
      // The payload per version: v1.0 a StreamResponse, v0.3 the bare event.
      const last = JSON.parse(unique.at(-1)!.body) as Record<string, any>;
      // The result artifact is pushed as it is streamed: described (docs/a2a.md).
      const bodies = unique.map((r) => JSON.parse(r.body) as Record<string, any>);
      if (mode === 'v1.0') {
        expect(unique[0]!.headers['content-type']).toContain('application/a2a+json');
        expect(last.statusUpdate).toMatchObject({ taskId: task.id, status: { state: 'TASK_STATE_COMPLETED' } });
        const result = bodies.find((b) => b.artifactUpdate?.artifact?.name === 'result');
        expect(result?.artifactUpdate.artifact).toMatchObject({ description: expect.any(String), metadata: { swarmId: task.id, definitionId: 'echo' } });
      } else {
        expect(last).toMatchObject({ kind: 'status-update', taskId: task.id, status: { state: 'completed' }, final: true });
        const result = bodies.find((b) => b.kind === 'artifact-update' && b.artifact?.name === 'result');
        expect(result?.artifact).toMatchObject({ description: expect.any(String), metadata: { swarmId: task.id, definitionId: 'echo' } });
      }
    });
  }

  it('signs each body with HMAC-SHA256 when asked; the config methods set, get, list and delete', async () => {
    let open!: () => void;
    const gate = new Promise<void>((resolve) => (open = resolve));
    const { cardUrl, rt } = await start({ echo: [async () => (await gate, { text: 'done' })] });
    const hook = await receiver();
    const client = await sdkClient(cardUrl, 'v1.0');
    const task = (await client.sendMessage(sendRequest(userText(crypto.randomUUID(), 'go'), { returnImmediately: true }))) as Task;

    const created = await client.createTaskPushNotificationConfig({
      ...pushConfig(hook.url, { scheme: 'HMAC-SHA256', credentials: 'shared-key' }, 'signed'),
      taskId: task.id,
    });
    expect(created).toMatchObject({ id: 'signed', taskId: task.id, url: hook.url });
    expect(await client.getTaskPushNotificationConfig({ tenant: '', taskId: task.id, id: 'signed' })).toMatchObject({ id: 'signed', url: hook.url });
    const other = await client.createTaskPushNotificationConfig({ ...pushConfig(`${hook.url}?other`), taskId: task.id });
    expect(other.id).not.toBe('');
    expect((await client.listTaskPushNotificationConfig({ tenant: '', taskId: task.id, pageSize: 0, pageToken: '' })).configs.map((c) => c.id)).toEqual([
      'signed',
      other.id,
    ]);
    await client.deleteTaskPushNotificationConfig({ tenant: '', taskId: task.id, id: other.id });
    expect((await client.listTaskPushNotificationConfig({ tenant: '', taskId: task.id, pageSize: 0, pageToken: '' })).configs.map((c) => c.id)).toEqual(['signed']);
    await expect(client.getTaskPushNotificationConfig({ tenant: '', taskId: task.id, id: other.id })).rejects.toThrow(/not found/);

    open();
    await until('the completed update', () => hook.received.some((r) => pushedState(r.body) === 'TASK_STATE_COMPLETED'));
    for (const r of hook.received) {
      // The body-only signature, as receivers written before the timestamp check it.
      expect(r.headers['x-a2a-signature']).toBe(pushSignature('shared-key', r.body));
      expect(r.headers.authorization).toBeUndefined();
      // The timestamped one: valid now, over the timestamp the header names.
      const timestamp = Number(r.headers['x-a2a-signature-timestamp']);
      expect(Math.abs(timestamp - Date.now() / 1000)).toBeLessThan(60);
      expect(r.headers['x-a2a-signature-v2']).toMatch(new RegExp(`^t=${timestamp},sha256=[0-9a-f]{64}$`));
      expect(verifyPushSignature({ secret: 'shared-key', body: r.body, headers: r.headers })).toBe(true);
      expect(verifyPushSignature({ secret: 'shared-key', body: Buffer.from(r.body), headers: r.headers })).toBe(true);
      // The same request sent again ten minutes later (a replay): refused.
      expect(verifyPushSignature({ secret: 'shared-key', body: r.body, headers: r.headers, now: Date.now() + 600_000 })).toBe(false);
      expect(verifyPushSignature({ secret: 'other-key', body: r.body, headers: r.headers })).toBe(false);
    }
    // Only the remaining config delivered: each update once.
    expect(new Set(hook.received.map((r) => r.eventId)).size).toBe(hook.received.length);
    expect(hook.received.map((r) => seqOf(r.eventId))).toEqual(await updateSeqs(rt.forSwarm('echo', task.id).events(), seqOf(hook.received[0]!.eventId) - 1));
  });
});

describe('A2A push across a server restart', () => {
  const file = sqliteFilePerTest('xswarm-push-');

  it('a backlog left by a closed server is delivered by the next one on the same file, each update once by id', async () => {
    const hook = await receiver();
    // The receiver takes two deliveries, then refuses (503) until the restart.
    hook.takeOnly(2);
    const rt1 = createRuntime({ swarms: [echo], model: queueModel({ echo: [streamed(['a ', 'b ', 'c ', 'd'], 10)] }), store: file.open() });
    const server1 = await serve(rt1, { allowedPushHosts: ['127.0.0.1'], pushRetry: FAST_RETRY });
    const client = await sdkClient(`${server1.url}/a2a/echo/.well-known/agent-card.json`, 'v0.3');
    const request = sendRequest(userText(crypto.randomUUID(), 'letters'));
    request.configuration.taskPushNotificationConfig = pushConfig(hook.url, { scheme: 'Bearer', credentials: 't' }) as never;
    const task = (await client.sendMessage(request)) as Task;
    expect(task.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    const expected = await updateSeqs(rt1.forSwarm('echo', task.id).events(), 1);
    await until('two deliveries', () => hook.received.length === 2);
    await sleep(100);
    await server1.close();
    await rt1.close();
    expect(hook.received).toHaveLength(2);

    hook.takeOnly(undefined);
    const rt2 = file.runtime({ swarms: [echo], model: queueModel({}), store: file.open() });
    const server2 = await serve(rt2, { allowedPushHosts: ['127.0.0.1'], pushRetry: FAST_RETRY });
    file.track(server2);
    await until('the backlog', () => hook.unique().length === expected.length, { timeout: 5000 });
    expect(hook.unique().map((r) => seqOf(r.eventId))).toEqual(expected);
    expect(pushedState(hook.unique().at(-1)!.body)).toBe('completed');
  });
});
