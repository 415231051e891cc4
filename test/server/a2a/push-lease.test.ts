/**
 * Two servers (two runtimes, each served) on one store, a SQLite file or a real nats-server,
 * share the push outbox: the delivery lease of each webhook lets one server deliver it at a time,
 * so a receiver counting deliveries by `X-A2A-Event-Id` gets each update once while both live,
 * although both look over the outbox every few milliseconds; and when one dies in the middle of a
 * backlog (it never gives its leases up), the other takes over once the lease expired and
 * finishes it from the durable cursor. On NATS, a config registered through one server is read
 * through the other without a restart.
 */
import { describe, expect, it } from 'vitest';
import { type Task, TaskState } from '@a2a-js/sdk';
import { createRuntime, defineSwarm, type Runtime, type SwarmEvent, type SwarmStore } from '../../../src/index.js';
import { serve } from '../../../src/server/index.js';
import { sdkClient, sendRequest, streamed, userText } from '../../support/a2a-peers.js';
import { jetstreamNamespace } from '../../support/jetstream-namespace.js';
import { natsServerMissing } from '../../support/nats-server.js';
import { pushReceiver, type PushReceiver } from '../../support/push-receiver.js';
import { queueModel } from '../../support/script.js';
import { sleep } from '../../support/sleep.js';
import { sqliteFilePerTest } from '../../support/sqlite-file.js';
import { until } from '../../support/wait.js';

const echo = defineSwarm({ id: 'echo', description: 'Echoes', instructions: 'Repeat.' });
const RETRY = { initialDelayMs: 20, maxDelayMs: 60, timeoutMs: 2000 };
/** Short leases, looked over very often: the servers contend for every pending webhook. */
const LEASE = { ttlMs: 1200, scanMs: 15 };
const TASKS_PER_SERVER = 3;

const file = sqliteFilePerTest('xswarm-push-lease-');
const ns = jetstreamNamespace('l');

/** The ids a task's webhook must get: its status and artifact updates after the first event. */
async function expectedIds(rt: Runtime, taskId: string): Promise<string[]> {
  const ids: string[] = [];
  for await (const e of rt.forSwarm('echo', taskId).events() as AsyncIterable<SwarmEvent>) {
    if ((e.kind === 'status-update' || e.kind === 'artifact-update') && e.seq > 1) ids.push(`${taskId}:${e.seq}`);
  }
  return ids;
}

/** A server on `store`, its runtime running `tasks` streamed answers; `warned` the tasks whose failed deliveries it logged. */
async function server(store: SwarmStore, tasks: number) {
  const steps = Array.from({ length: tasks }, () => streamed(['a ', 'b ', 'c'], 5));
  const warned = new Set<string>();
  const nothing = () => undefined;
  const logger = { debug: nothing, info: nothing, error: nothing, warn: (fields: Record<string, unknown>) => void warned.add(String(fields.taskId)) };
  const rt = createRuntime({ swarms: [echo], model: queueModel({ echo: steps }), store, logger });
  const srv = await serve(rt, { allowedPushHosts: ['127.0.0.1'], pushRetry: RETRY, pushLease: LEASE });
  const client = await sdkClient(`${srv.url}/a2a/echo/.well-known/agent-card.json`, 'v1.0');
  /** Runs a task to its end through this server, its webhook `hook`; resolves with its id. */
  const run = async (hook: PushReceiver): Promise<string> => {
    const request = sendRequest(userText(crypto.randomUUID(), 'letters'));
    request.configuration.taskPushNotificationConfig = { tenant: '', id: 'hook', taskId: '', url: hook.url, token: '', authentication: undefined } as never;
    const task = (await client.sendMessage(request)) as Task;
    expect(task.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    return task.id;
  };
  return { rt, srv, client, run, store, warned };
}

/**
 * The scenario on stores opened by `open`: both servers live, each update once; then a backlog
 * held by a server that dies, finished by the other after the lease expired.
 */
async function scenario(open: () => Promise<SwarmStore>, track: (close: () => Promise<unknown>) => void): Promise<void> {
  const hook = await pushReceiver();
  track(() => hook.close());
  const storeA = await open();
  const storeB = await open();
  const a = await server(storeA, TASKS_PER_SERVER + 1);
  const b = await server(storeB, TASKS_PER_SERVER);
  track(() => b.rt.close());
  track(() => b.srv.close());
  track(() => a.rt.close());
  track(() => a.srv.close());

  // Both live: the receiver is down while the tasks run, so every webhook has a backlog both
  // servers see as pending (and try to lease, every 15 ms); then it comes up.
  await hook.down();
  const tasks = await Promise.all([...Array.from({ length: TASKS_PER_SERVER }, () => a.run(hook)), ...Array.from({ length: TASKS_PER_SERVER }, () => b.run(hook))]);
  const expected = (await Promise.all(tasks.map((t) => expectedIds(a.rt, t)))).flat();
  await sleep(100);
  await hook.up();
  await until('every update', () => hook.unique().length === expected.length, { timeout: 8000 });
  await sleep(200);
  expect(new Set(hook.unique().map((r) => r.eventId))).toEqual(new Set(expected));
  // No duplicate at all: one server delivered each webhook.
  expect(hook.received.length).toBe(expected.length);

  // The server delivering a backlog dies: after two deliveries the receiver refuses, the server
  // that logs the failed attempts (the lease holder) is stopped without giving its lease up (as
  // a killed process would), and the receiver takes all again.
  hook.received.length = 0;
  hook.takeOnly(2);
  const last = await a.run(hook);
  const backlog = await expectedIds(a.rt, last);
  await until('two deliveries', () => hook.received.length === 2);
  const holder = (await until(
    'the holder',
    () => (a.warned.has(last) ? a : b.warned.has(last) ? b : undefined),
    (s) => s !== undefined,
  ))!;
  const other = holder === a ? b : a;
  expect(other.warned.has(last)).toBe(false);
  holder.store.pushOutbox!.release = () => undefined;
  await holder.srv.close();
  const killedAt = Date.now();
  hook.takeOnly(undefined);
  await until('the backlog, by the other server', () => hook.unique().length === backlog.length, { timeout: 8000 });
  // B waited for the lease to expire (not a moment before), then resumed from the cursor A left.
  const firstByB = hook.received[2]!;
  expect(firstByB.at - killedAt).toBeGreaterThanOrEqual(LEASE.ttlMs * 0.5);
  expect(hook.received.map((r) => r.eventId)).toEqual(backlog);
  await until('the webhook done', () => other.store.pushOutbox!.pending().length === 0);
}

describe('A2A push with several servers on one store', () => {
  it('SQLite file: each update delivered once while both live; a dead server’s backlog finished by the other', async () => {
    await scenario(
      async () => file.open(),
      (close) => file.track(close),
    );
  });

  it.skipIf(natsServerMissing)('NATS: each update delivered once while both live; a dead server’s backlog finished by the other', async () => {
    await scenario(
      async () => {
        const store = await ns.open();
        await store.pushOutbox!.ready!();
        return store;
      },
      (close) => ns.onCleanup(close),
    );
  });

  it.skipIf(natsServerMissing)('NATS: a config registered through one server is read and deleted through the other, without a restart', async () => {
    const hook = await pushReceiver({ down: true });
    ns.onCleanup(() => hook.close());
    const storeA = await ns.open();
    const storeB = await ns.open();
    const a = await server(storeA, 1);
    const b = await server(storeB, 0);
    ns.onCleanup(() => b.rt.close());
    ns.onCleanup(() => b.srv.close());
    ns.onCleanup(() => a.rt.close());
    ns.onCleanup(() => a.srv.close());
    // B loads the (empty) outbox first: what A registers afterwards reaches B by the watch.
    await b.client.listTaskPushNotificationConfig({ tenant: '', taskId: 'none', pageSize: 0, pageToken: '' }).catch(() => undefined);
    const taskId = await a.run(hook);
    const config = await until(
      'the config through B',
      () => b.client.getTaskPushNotificationConfig({ tenant: '', taskId, id: 'hook' }).catch(() => undefined),
      (c) => c !== undefined,
      { timeout: 5000 },
    );
    expect(config).toMatchObject({ id: 'hook', taskId, url: hook.url });
    expect((await b.client.listTaskPushNotificationConfig({ tenant: '', taskId, pageSize: 0, pageToken: '' })).configs.map((c) => c.id)).toEqual(['hook']);
    // Deleted through B: A, which was retrying it, stops, and its copy forgets it.
    await b.client.deleteTaskPushNotificationConfig({ tenant: '', taskId, id: 'hook' });
    await until(
      'gone through A',
      () =>
        a.client.getTaskPushNotificationConfig({ tenant: '', taskId, id: 'hook' }).then(
          () => false,
          () => true,
        ),
      { timeout: 5000 },
    );
    await hook.up();
    await sleep(300);
    expect(hook.received).toHaveLength(0);
  });
});
