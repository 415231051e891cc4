/**
 * The JetStream store's push outbox (a KV bucket of its own, `<prefix>_push`) on a real
 * nats-server: subscriptions and cursors kept across a reopen, a cursor advance racing another
 * store's (compare-and-set on the key's revision: never back), a delete not undone by a late
 * advance; and a server restart over the same NATS in the middle of a webhook's backlog, the
 * receiver down meanwhile, delivering every update exactly once by event id.
 */
import { Kvm } from '@nats-io/kv';
import { jetstream } from '@nats-io/jetstream';
import { describe, expect, it } from 'vitest';
import { type Task, TaskState } from '@a2a-js/sdk';
import { createRuntime, defineSwarm, type SwarmEvent } from '../../src/index.js';
import { serve } from '../../src/server/index.js';
import type { PushSubscription } from '../../src/store/push-outbox.js';
import { sdkClient, sendRequest, streamed, userText } from '../support/a2a-peers.js';
import { jetstreamNamespace } from '../support/jetstream-namespace.js';
import { natsServerMissing } from '../support/nats-server.js';
import { pushReceiver, seqOf } from '../support/push-receiver.js';
import { queueModel } from '../support/script.js';
import { sleep } from '../support/sleep.js';
import { until } from '../support/wait.js';

const ns = jetstreamNamespace('p');

function sub(taskId: string, configId: string, extra: Partial<PushSubscription> = {}): PushSubscription {
  return { taskId, configId, definitionId: 'echo', url: `https://hooks.example/${configId}`, wireVersion: '1.0', cursor: 1, done: false, ...extra };
}

/** A store of its own connection, its outbox loaded. */
async function opened() {
  const store = await ns.open();
  await store.pushOutbox!.ready!();
  return store;
}

describe.skipIf(natsServerMissing)('JetStream push outbox', () => {
  it('keeps subscriptions and cursors across a reopen; cursors never move back', async () => {
    const first = await opened();
    const outbox = first.pushOutbox!;
    outbox.save(sub('t1', 'a', { authentication: { scheme: 'Bearer', credentials: 's' } }));
    // Any text is a config id (a client's choice): dots, slashes, spaces.
    outbox.save(sub('t1', 'b.c/d e', { token: 'tok', wireVersion: '0.3' }));
    outbox.save(sub('t2', 'a'));
    outbox.advance('t1', 'a', 7, false);
    outbox.advance('t1', 'a', 5, false);
    // Replaced under the same id: the new config, the old place.
    outbox.save(sub('t1', 'a', { url: 'https://hooks.example/new', cursor: 1, authentication: { scheme: 'HMAC-SHA256', credentials: 'k' } }));
    outbox.advance('t2', 'a', 9, true);
    outbox.save(sub('t3', 'x'));
    expect(outbox.delete('t3', 'x')).toBe(true);
    expect(outbox.delete('t3', 'x')).toBe(false);
    expect(outbox.get('t1', 'a')).toMatchObject({ url: 'https://hooks.example/new', cursor: 7 });
    // Closing the store waits for the writes.
    await first.close();

    const again = await opened();
    expect(again.pushOutbox!.pending().map((s) => [s.taskId, s.configId, s.cursor, s.url])).toEqual([
      ['t1', 'a', 7, 'https://hooks.example/new'],
      ['t1', 'b.c/d e', 1, 'https://hooks.example/b.c/d e'],
    ]);
    expect(again.pushOutbox!.get('t1', 'a')?.authentication).toEqual({ scheme: 'HMAC-SHA256', credentials: 'k' });
    expect(again.pushOutbox!.get('t1', 'b.c/d e')).toMatchObject({ token: 'tok', wireVersion: '0.3' });
    expect(again.pushOutbox!.get('t2', 'a')).toMatchObject({ cursor: 9, done: true });
    expect(again.pushOutbox!.get('t3', 'x')).toBeUndefined();
    expect(again.pushOutbox!.list('t1').map((s) => s.configId)).toEqual(['a', 'b.c/d e']);
  });

  it('an advance racing another store applies to what the bucket holds (compare-and-set); a delete stays deleted', async () => {
    const a = await opened();
    a.pushOutbox!.save(sub('t', 'hook'));
    a.pushOutbox!.save(sub('t', 'gone'));
    await a.close();
    // Two servers loaded the same subscriptions; each moves the cursor from what it saw.
    const b = await opened();
    const c = await opened();
    b.pushOutbox!.advance('t', 'hook', 7, false);
    await b.close();
    c.pushOutbox!.advance('t', 'hook', 5, false);
    const d0 = await opened();
    d0.pushOutbox!.delete('t', 'gone');
    await d0.close();
    c.pushOutbox!.advance('t', 'gone', 4, true);
    await c.close();

    const d = await opened();
    expect(d.pushOutbox!.get('t', 'hook')?.cursor).toBe(7);
    expect(d.pushOutbox!.get('t', 'gone')).toBeUndefined();
    // The bucket holds one value per webhook under the store's prefix.
    const kv = await new Kvm(jetstream(await ns.connection())).open(`${ns.prefix}_push`);
    const keys: string[] = [];
    for await (const k of await kv.keys()) keys.push(k);
    expect(keys).toHaveLength(1);
  });

  it('a delivery lease is held by one store at a time (compare-and-set), taken over once expired; another store’s config is seen by the watch', async () => {
    const a = await opened();
    const b = await opened();
    a.pushOutbox!.save(sub('l', 'x'));
    const soon = Date.now() + 10_000;
    expect(await a.pushOutbox!.lease!('l', 'x', 'one', soon)).toBe(true);
    // B sees the config A saved (the watch), and cannot take A's lease.
    await until('the config in B', () => b.pushOutbox!.get('l', 'x') !== undefined);
    expect(await b.pushOutbox!.lease!('l', 'x', 'two', soon)).toBe(false);
    expect(await a.pushOutbox!.lease!('l', 'x', 'one', Date.now() + 40)).toBe(true);
    a.pushOutbox!.advance('l', 'x', 6, false);
    await sleep(80);
    // Expired: B takes it, with the cursor A left.
    expect(await b.pushOutbox!.lease!('l', 'x', 'two', soon)).toBe(true);
    expect(b.pushOutbox!.get('l', 'x')?.cursor).toBe(6);
    expect(await a.pushOutbox!.lease!('l', 'x', 'one', soon)).toBe(false);
    b.pushOutbox!.release!('l', 'x', 'two');
    await until('released', async () => (await a.pushOutbox!.lease!('l', 'x', 'one', soon)) === true);
  });

  it('a server restart over the same NATS in the middle of a backlog delivers every update exactly once by event id', async () => {
    const echo = defineSwarm({ id: 'echo', description: 'Echoes', instructions: 'Repeat.' });
    const retry = { initialDelayMs: 20, maxDelayMs: 80, timeoutMs: 2000 };
    const hook = await pushReceiver();
    ns.onCleanup(() => hook.close());
    // The receiver takes two deliveries, then is down until after the restart.
    hook.takeOnly(2);
    const store1 = await ns.open();
    const rt1 = createRuntime({ swarms: [echo], model: queueModel({ echo: [streamed(['a ', 'b ', 'c ', 'd'], 10)] }), store: store1 });
    const server1 = await serve(rt1, { allowedPushHosts: ['127.0.0.1'], pushRetry: retry });
    const client = await sdkClient(`${server1.url}/a2a/echo/.well-known/agent-card.json`, 'v1.0');
    const request = sendRequest(userText(crypto.randomUUID(), 'letters'));
    request.configuration.taskPushNotificationConfig = { tenant: '', id: 'hook', taskId: '', url: hook.url, token: '', authentication: undefined } as never;
    const task = (await client.sendMessage(request)) as Task;
    expect(task.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    const expected: number[] = [];
    for await (const e of rt1.forSwarm('echo', task.id).events() as AsyncIterable<SwarmEvent>) {
      if ((e.kind === 'status-update' || e.kind === 'artifact-update') && e.seq > 1) expected.push(e.seq);
    }
    expect(expected.length).toBeGreaterThan(3);
    await until('two deliveries', () => hook.received.length === 2);
    await hook.down();
    await sleep(100);
    await server1.close();
    await rt1.close();
    await store1.close();

    // A new store, runtime and server on the same NATS; the receiver comes back.
    const store2 = await ns.open();
    const rt2 = createRuntime({ swarms: [echo], model: queueModel({}), store: store2 });
    ns.onCleanup(() => rt2.close());
    const server2 = await serve(rt2, { allowedPushHosts: ['127.0.0.1'], pushRetry: retry });
    ns.onCleanup(() => server2.close());
    hook.takeOnly(undefined);
    await hook.up();
    await until('the backlog', () => hook.unique().length === expected.length, { timeout: 5000 });
    await sleep(150);
    expect(hook.unique().map((r) => seqOf(r.eventId))).toEqual(expected);
    // Exactly once: the cursor the first server recorded held across the restart.
    expect(hook.received.map((r) => r.eventId)).toEqual(expected.map((seq) => `${task.id}:${seq}`));
    await until('the webhook done', () => store2.pushOutbox!.pending().length === 0);
  });
});
