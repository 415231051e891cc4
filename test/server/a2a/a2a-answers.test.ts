/**
 * Answering pauses over A2A (issue 30, item 8) with the official @a2a-js/sdk client, v1.0 and
 * v0.3: the input-required status carries the pause as a data part; a data part answers a typed
 * pause (checked against its schema), `metadata.pauseId` names the pause, `{ extend }` raises a
 * limit; a refused answer is an A2A error and changes nothing. Replay reproduces the run.
 */
import { describe, expect, it } from 'vitest';
import { type Task, TaskState } from '@a2a-js/sdk';
import { createRuntime, defineSwarm, handoff, SwarmError } from '../../../src/index.js';
import { serve } from '../../../src/server/index.js';
import { PAUSE_REQUEST_PART } from '../../../src/a2a/pause-request.js';
import { answerModel, capped, dinner, GUESTS_SCHEMA, notes } from '../../support/answer-swarms.js';
import { MODES, sdkClient, sendRequest, userText } from '../../support/a2a-peers.js';
import { call, collect, lastToolResult, queueModel } from '../../support/script.js';
import { servedPerTest } from '../../support/server-clients.js';

const served = servedPerTest();

async function start() {
  const { model, requests } = answerModel();
  served.runtime = createRuntime({ swarms: [dinner, notes, capped], model });
  served.server = await serve(served.runtime);
  const cardUrl = (id: string) => `${served.server!.url}/a2a/${id}/.well-known/agent-card.json`;
  return { rt: served.runtime, requests, cardUrl };
}

/** A follow-up to `taskId`: a data part (when given), a text part (when given), metadata. */
function followUp(taskId: string, parts: { data?: unknown; text?: string }, metadata?: Record<string, unknown>) {
  const m = userText(crypto.randomUUID(), parts.text ?? '', { taskId });
  const content = [
    ...(parts.data !== undefined ? [{ content: { $case: 'data' as const, value: parts.data }, metadata: undefined, filename: '', mediaType: 'application/json' }] : []),
    ...(parts.text !== undefined ? m.parts : []),
  ];
  return sendRequest({ ...m, parts: content as typeof m.parts, metadata: metadata as undefined });
}

/** The data part of an input-required status: the pause's structured request. */
function pauseRequest(task: Task): unknown {
  const part = task.status?.message?.parts.find((p) => p.content?.$case === 'data');
  expect(part?.metadata).toEqual({ kind: PAUSE_REQUEST_PART });
  return part?.content?.value;
}

const code = (p: Promise<unknown>) =>
  p.then(
    () => undefined,
    (e: { envelopeCode?: number; message?: string }) => ({ code: e.envelopeCode, message: e.message }),
  );

describe.each(MODES)('answering a pause over A2A (%s)', (mode) => {
  it('a typed pause: the status carries its schema; a wrong shape and a stale id are refused with nothing changed; a data part answers it', async () => {
    const { rt, requests, cardUrl } = await start();
    const client = await sdkClient(cardUrl('dinner'), mode);
    const asked = (await client.sendMessage(sendRequest(userText(crypto.randomUUID(), 'plan')))) as Task;
    expect(asked.status?.state).toBe(TaskState.TASK_STATE_INPUT_REQUIRED);
    expect(asked.status?.message?.parts[0]?.content).toEqual({ $case: 'text', value: 'How many guests?' });
    expect(pauseRequest(asked)).toEqual({ type: 'HITL', message: 'How many guests?', pauseId: 'ask1', responseSchema: GUESTS_SCHEMA });

    const before = await rt.store.readEvents(asked.id, 0);
    const wrong = await code(client.sendMessage(followUp(asked.id, { data: { guests: 'many' } }, { pauseId: 'ask1' })));
    expect(wrong).toMatchObject({ code: -32602, message: expect.stringContaining('guests') });
    const stale = await code(client.sendMessage(followUp(asked.id, { data: { guests: 4 } }, { pauseId: 'ask0' })));
    expect(stale).toMatchObject({ code: -32004, message: expect.stringContaining('stale pause id') });
    // Plain text that is not the schema's shape is refused the same way.
    expect(await code(client.sendMessage(followUp(asked.id, { text: 'four' })))).toMatchObject({ code: -32602 });
    expect(await rt.store.readEvents(asked.id, 0)).toEqual(before);
    expect(requests).toHaveLength(1);

    const done = (await client.sendMessage(followUp(asked.id, { data: { guests: 4, vegan: true } }, { pauseId: 'ask1' }))) as Task;
    expect(done.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    expect(await rt.forSwarm('dinner', asked.id).getResult()).toEqual({ status: 'completed', result: 'dinner for {"guests":4,"vegan":true}' });
    // The answered id is now the id of no pause.
    expect(await code(client.sendMessage(followUp(asked.id, { data: { guests: 5 } }, { pauseId: 'ask1' })))).toMatchObject({ code: -32004 });

    // Replay reproduces the run with no model call.
    const calls = requests.length;
    const events = await collect(rt.forSwarm('dinner', asked.id).events());
    expect(await collect(rt.replay(asked.id))).toEqual(events);
    expect(requests).toHaveLength(calls);
  });

  it('a limit pause: the status says what tripped; a plain resume and bad limits are refused; { extend } raises it and the text answers', async () => {
    const { rt, requests, cardUrl } = await start();
    const client = await sdkClient(cardUrl('notes'), mode);
    const asked = (await client.sendMessage(sendRequest(userText(crypto.randomUUID(), 'go')))) as Task;
    expect(asked.status?.state).toBe(TaskState.TASK_STATE_INPUT_REQUIRED);
    expect(pauseRequest(asked)).toMatchObject({ type: 'LIMIT', pauseId: 'limit:t1:1', limit: { limit: 'maxTurns', max: 1, spent: 1, left: 0 } });

    const before = await rt.store.readEvents(asked.id, 0);
    expect(await code(client.sendMessage(followUp(asked.id, { text: 'conclude' })))).toMatchObject({ code: -32004, message: expect.stringContaining('extend it') });
    expect(await code(client.sendMessage(followUp(asked.id, { data: { extend: { maxTurns: 'more' } } })))).toMatchObject({ code: -32602 });
    expect(await code(client.sendMessage(followUp(asked.id, { data: { extend: 3 } })))).toMatchObject({ code: -32602 });
    // A stale pause id is refused before the limits are raised.
    expect(await code(client.sendMessage(followUp(asked.id, { data: { extend: { maxTurns: 2 } }, text: 'conclude' }, { pauseId: 'limit:t0:1' })))).toMatchObject({
      code: -32004,
    });
    expect(await rt.store.readEvents(asked.id, 0)).toEqual(before);

    const stream = client.sendMessageStream(followUp(asked.id, { data: { extend: { maxTurns: 2 } }, text: 'conclude' }, { pauseId: 'limit:t1:1' }));
    const states: (TaskState | undefined)[] = [];
    for await (const r of stream) if (r.payload?.$case === 'statusUpdate') states.push(r.payload.value.status?.state);
    // The stream is the resumed run: it ends completed, not at the (still paused) extension.
    expect(states.at(-1)).toBe(TaskState.TASK_STATE_COMPLETED);
    expect(await rt.forSwarm('notes', asked.id).getResult()).toEqual({ status: 'completed', result: 'done after 1 notes' });
    expect(requests).toHaveLength(2);
    const events = await collect(rt.forSwarm('notes', asked.id).events());
    expect(await collect(rt.replay(asked.id))).toEqual(events);
  });
});

describe('a budget pause over A2A', () => {
  it('{ extend: { budget } } raises the cap that tripped and the text answers', async () => {
    const { rt, cardUrl } = await start();
    const client = await sdkClient(cardUrl('capped'), 'v1.0');
    const asked = (await client.sendMessage(sendRequest(userText(crypto.randomUUID(), 'go')))) as Task;
    expect(pauseRequest(asked)).toMatchObject({ type: 'LIMIT', limit: { limit: 'modelCalls', max: 1, spent: 1, left: 0 } });
    expect(await code(client.sendMessage(followUp(asked.id, { data: { extend: { budget: { modelCalls: 'more' } } } })))).toMatchObject({ code: -32602 });
    const done = (await client.sendMessage(followUp(asked.id, { data: { extend: { budget: { modelCalls: 3 } } }, text: 'conclude' }))) as Task;
    expect(done.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    expect(await rt.forSwarm('capped', asked.id).getResult()).toEqual({ status: 'completed', result: 'done after 1 notes' });
  });
});

describe('our A2A client, when a remote peer asks for a typed answer', () => {
  it('pauses the calling swarm with the peer’s schema; the resume is checked here and reaches the peer as a data part naming its pause', async () => {
    const { cardUrl, requests: remoteRequests } = await start();
    const host = defineSwarm({ id: 'host', instructions: 'Delegate the dinner.', handoffs: [handoff.toRemoteAgent(cardUrl('dinner'))] });
    const model = queueModel({ host: [call('handoff_to_dinner', { request: 'plan a dinner' }), (req) => ({ text: `got ${lastToolResult(req)}` })] });
    const local = createRuntime({ swarms: [host], model });
    try {
      const client = local.forSwarm('host', 'h1');
      await client.run('dinner please');
      expect(await client.wait()).toMatchObject({ status: 'paused', reason: { type: 'HITL', message: 'How many guests?', responseSchema: GUESTS_SCHEMA } });
      const refused = await client.resume({ guests: 'many' }).catch((e: unknown) => e);
      expect(refused).toBeInstanceOf(SwarmError);
      expect(refused).toMatchObject({ code: 'invalid-input' });
      expect(remoteRequests).toHaveLength(1);

      await client.resume({ guests: 3 });
      expect(await client.wait()).toEqual({ status: 'completed', result: 'got dinner for {"guests":3}' });
      // The peer read it as its typed answer: its model saw the JSON of the data part.
      expect(
        remoteRequests
          .at(-1)!
          .messages.filter((m) => m.role === 'tool')
          .map((m) => m.content),
      ).toEqual(['{"guests":3}']);
      const events = await collect(client.events());
      expect(await collect(local.replay('h1'))).toEqual(events);
    } finally {
      await local.close();
    }
  });
});
