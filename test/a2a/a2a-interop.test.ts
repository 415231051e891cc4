/**
 * Interop with A2A implementations we did not write: `@a2a-js/sdk` 0.3 (the stack of the
 * Strands Agents SDK), as a server our swarms hand off to and as a client of our server.
 */
import { randomUUID } from 'node:crypto';
import { Role } from '@a2a-js/sdk';
import type { Message, Task, TaskStatusUpdateEvent } from 'a2a-sdk-v03';
import { A2AClient } from 'a2a-sdk-v03/client';
import { afterEach, describe, expect, it } from 'vitest';
import { createRuntime, defineSwarm, handoff, type Runtime } from '../../src/index.js';
import { serve } from '../../src/server/index.js';
import { FOREIGN_ANSWER, foreignPeer, type ForeignCard } from '../support/a2a-foreign.js';
import { drain, sdkClient, sendRequest, userText } from '../support/a2a-peers.js';
import { call, lastToolResult, queueModel, type Step } from '../support/script.js';

const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close();
});

/** A foreign peer, closed after the test. */
async function peer(kind: ForeignCard) {
  const p = await foreignPeer(kind);
  closers.push(() => p.close());
  return p;
}

/** A `planner` swarm (in a runtime of its own) handing off to the remote agent at `cardUrl`. */
function planner(cardUrl: string, script: Step[]) {
  const swarm = defineSwarm({ id: 'planner', instructions: 'Plan with the weather.', handoffs: [handoff.toRemoteAgent(cardUrl)] });
  const model = queueModel({ planner: script });
  const runtime: Runtime = createRuntime({ swarms: [swarm], model });
  closers.push(() => runtime.close());
  return { runtime, model };
}

/** Runs the planner once: it hands off to the peer and answers with the tool result verbatim. */
async function handOffOnce(runtime: Runtime, id?: string) {
  const client = runtime.forSwarm('planner', id);
  await client.run('Plan my Saturday');
  return client.wait();
}

const relay = (): Step[] => [call('handoff_to_strands_weather', { request: 'forecast for Saturday' }), (req) => ({ text: lastToolResult(req) })];

describe('xswarm as a client of a foreign A2A v0.3 server', () => {
  it.each<ForeignCard>(['0.2.0', 'unversioned'])(
    'a card saying "%s" without supportedInterfaces is spoken to in v0.3, and appended chunks read as one text',
    async (kind) => {
      const foreign = await peer(kind);
      const { runtime } = planner(foreign.cardUrl, relay());
      expect(await handOffOnce(runtime)).toEqual({ status: 'completed', result: FOREIGN_ANSWER });
      expect(foreign.methods).toEqual(['message/stream']);
      expect(foreign.inputs).toEqual(['forecast for Saturday']);
    },
  );

  it('a peer answering Method-not-found to v1.0 names gets the v0.3 ones, and the choice is remembered for its card', async () => {
    const foreign = await peer('claims-1.0');
    const { runtime } = planner(foreign.cardUrl, [...relay(), ...relay()]);
    expect(await handOffOnce(runtime, 'first')).toEqual({ status: 'completed', result: FOREIGN_ANSWER });
    expect(foreign.methods).toEqual(['SendStreamingMessage', 'message/stream']);
    // The same runtime's next call to that card goes straight to v0.3.
    expect(await handOffOnce(runtime, 'second')).toEqual({ status: 'completed', result: FOREIGN_ANSWER });
    expect(foreign.methods).toEqual(['SendStreamingMessage', 'message/stream', 'message/stream']);
    expect(foreign.inputs).toEqual(['forecast for Saturday', 'forecast for Saturday']);
  });
});

describe('the A2A v0.3 SDK client against our server', () => {
  /** Our server with an `echo` swarm answering `script`, and the 0.3 SDK's client for it. */
  async function ours(script: Step[]) {
    const echo = defineSwarm({ id: 'echo', description: 'Echoes', instructions: 'Echo.' });
    const runtime = createRuntime({ swarms: [echo], model: queueModel({ echo: script }) });
    const server = await serve(runtime);
    closers.push(
      () => runtime.close(),
      () => server.close(),
    );
    const cardUrl = `${server.url}/a2a/echo/.well-known/agent-card.json`;
    const client = await A2AClient.fromCardUrl(cardUrl);
    return { runtime, client, cardUrl };
  }

  const userMessage = (text: string): Message => ({ kind: 'message', messageId: randomUUID(), role: 'user', parts: [{ kind: 'text', text }] });

  /** What a v0.3 client must find as a final status message. */
  function expectFinalMessage(message: Message | undefined, text: string, task: { id: string; contextId: string }) {
    expect(message).toMatchObject({ kind: 'message', role: 'agent', parts: [{ kind: 'text', text }], taskId: task.id, contextId: task.contextId });
    expect(message?.messageId).toEqual(expect.any(String));
  }

  it('message/send: the completed task carries the result as its status message, and so does tasks/get', async () => {
    const { runtime, client } = await ours([{ text: 'Sunny, 24°C' }]);
    const sent = await client.sendMessage({ message: userMessage('weather?') });
    if (!('result' in sent)) throw new Error(`message/send failed: ${JSON.stringify(sent)}`);
    const task = sent.result as Task;
    expect(task).toMatchObject({ kind: 'task', status: { state: 'completed' } });
    const result = await runtime.forSwarm('echo', task.id).getResult();
    expect(result).toEqual({ status: 'completed', result: 'Sunny, 24°C' });
    expectFinalMessage(task.status.message, 'Sunny, 24°C', task);

    const got = await client.getTask({ id: task.id });
    if (!('result' in got)) throw new Error(`tasks/get failed: ${JSON.stringify(got)}`);
    expectFinalMessage(got.result.status.message, 'Sunny, 24°C', task);
  });

  it('message/stream: the final status update carries the result; a failure carries its reason', async () => {
    const { client } = await ours([{ text: 'Rain at noon' }, call('fail', { reason: 'no satellite data' })]);
    const events = [];
    for await (const e of client.sendMessageStream({ message: userMessage('weather?') })) events.push(e);
    const final = events.at(-1) as TaskStatusUpdateEvent;
    expect(final).toMatchObject({ kind: 'status-update', final: true, status: { state: 'completed' } });
    expectFinalMessage(final.status.message, 'Rain at noon', { id: final.taskId, contextId: final.contextId });

    const failing = [];
    for await (const e of client.sendMessageStream({ message: userMessage('again?') })) failing.push(e);
    const failed = failing.at(-1) as TaskStatusUpdateEvent;
    expect(failed).toMatchObject({ kind: 'status-update', final: true, status: { state: 'failed' } });
    expectFinalMessage(failed.status.message, 'no satellite data', { id: failed.taskId, contextId: failed.contextId });
  });

  it('the v1.0 wire carries the same final message (the 1.3 SDK client)', async () => {
    const { cardUrl } = await ours([{ text: 'Clear skies' }]);
    const client = await sdkClient(cardUrl, 'v1.0');
    const stream = await drain(client.sendMessageStream(sendRequest(userText(randomUUID(), 'weather?'))));
    const last = stream.at(-1)?.payload;
    if (last?.$case !== 'statusUpdate') throw new Error(`the stream ended with ${last?.$case}`);
    expect(last.value.status?.message).toMatchObject({ role: Role.ROLE_AGENT, parts: [{ content: { $case: 'text', value: 'Clear skies' } }], taskId: last.value.taskId });
    const task = await client.getTask({ tenant: '', id: last.value.taskId });
    expect(task.status?.message).toMatchObject({ role: Role.ROLE_AGENT, parts: [{ content: { $case: 'text', value: 'Clear skies' } }], contextId: task.contextId });
  });
});
