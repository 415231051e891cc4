/**
 * Failed push deliveries in the runtime's logs (`createRuntime({ logger })`): a warning for each
 * failed attempt (task, config, the webhook's host, the status or error, the next try), never
 * the webhook's path or credentials; and an info line when the receiver ends the subscription
 * with 410 Gone, after which nothing more is sent.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { type Task, TaskState } from '@a2a-js/sdk';
import { createRuntime, defineSwarm } from '../../../src/index.js';
import { serve } from '../../../src/server/index.js';
import { sdkClient, sendRequest, streamed, userText } from '../../support/a2a-peers.js';
import { pushReceiver, type PushReceiver } from '../../support/push-receiver.js';
import { queueModel } from '../../support/script.js';
import { servedPerTest } from '../../support/server-clients.js';
import { sleep } from '../../support/sleep.js';
import { until } from '../../support/wait.js';

const echo = defineSwarm({ id: 'echo', description: 'Echoes', instructions: 'Repeat.' });
const served = servedPerTest();
let hook: PushReceiver | undefined;

afterEach(async () => {
  await hook?.close();
});

interface Line {
  level: string;
  fields: Record<string, unknown>;
  message: string;
}

describe('A2A push failures in the logs', () => {
  it('warns on each failed attempt with the host, not the secret; 410 Gone ends the subscription with an info line', async () => {
    const lines: Line[] = [];
    const record = (level: string) => (fields: Record<string, unknown>, message: string) => void lines.push({ level, fields, message });
    const logger = { debug: record('debug'), info: record('info'), warn: record('warn'), error: record('error') };
    served.runtime = createRuntime({ swarms: [echo], model: queueModel({ echo: [streamed(['a ', 'b'], 5)] }), logger });
    served.server = await serve(served.runtime, { allowedPushHosts: ['127.0.0.1'], pushRetry: { initialDelayMs: 30, maxDelayMs: 60, timeoutMs: 2000 } });
    hook = await pushReceiver({ down: true });
    const url = `${hook.url}/secret-path-token`;
    const client = await sdkClient(`${served.server.url}/a2a/echo/.well-known/agent-card.json`, 'v1.0');
    const request = sendRequest(userText(crypto.randomUUID(), 'go'));
    request.configuration.taskPushNotificationConfig = {
      tenant: '',
      id: 'hook',
      taskId: '',
      url,
      token: 'the-token',
      authentication: { scheme: 'Bearer', credentials: 'the-credentials' },
    } as never;
    const task = (await client.sendMessage(request)) as Task;
    expect(task.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    const warnings = () => lines.filter((l) => l.level === 'warn' && l.message.includes('push delivery failed'));

    // Down: connection refused.
    await until('a refused attempt logged', () => warnings().length >= 1);
    const host = new URL(hook.url).host;
    expect(warnings()[0]!.fields).toMatchObject({
      taskId: task.id,
      configId: 'hook',
      host,
      attempt: 1,
      error: expect.stringMatching(/ECONNREFUSED/),
      retryInMs: expect.any(Number),
    });
    // Up, answering 503: the status.
    hook.takeOnly(0, 503);
    await hook.up();
    await until('a 503 logged', () => warnings().some((l) => l.fields.status === 503));
    const refused = warnings().find((l) => l.fields.status === 503)!;
    expect(refused.fields).toMatchObject({ taskId: task.id, host, eventId: expect.stringMatching(new RegExp(`^${task.id}:\\d+$`)) });
    expect(refused.fields.attempt).toBeGreaterThan(1);

    // 410 Gone: one info line, and the subscription is over.
    hook.takeOnly(0, 410);
    await until('the end logged', () => lines.some((l) => l.level === 'info' && l.message.includes('410 Gone')));
    expect(lines.find((l) => l.message.includes('410 Gone'))!.fields).toEqual({ taskId: task.id, configId: 'hook', host });
    await until('the subscription done', () => served.runtime!.store.pushOutbox!.pending().length === 0);
    const after = warnings().length;
    await sleep(150);
    expect(warnings().length).toBe(after);
    // Neither the path nor any credential reaches the logs.
    const text = JSON.stringify(lines);
    for (const secret of ['secret-path-token', 'the-token', 'the-credentials']) expect(text).not.toContain(secret);
  });
});
