/**
 * Seed 002 fidelity, seen through the official @a2a-js/sdk client in v1.0 and v0.3 mode: a
 * streamed text ends with `lastChunk: true`, the result artifact has a description and metadata,
 * and a failure's final status carries its error.
 */
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { TaskState, type Task } from '@a2a-js/sdk';
import { createRuntime, defineSwarm, type ModelRequest } from '../../../src/index.js';
import { serve } from '../../../src/server/index.js';
import { queueModel, type Step } from '../../support/script.js';
import { cases, drain, MODES, sdkClient, sendRequest, userText } from '../../support/a2a-peers.js';
import { servedPerTest } from '../../support/server-clients.js';

const echo = defineSwarm({ id: 'echo', name: 'Echo', description: 'Echoes the request', instructions: 'Repeat the request.' });
const planner = defineSwarm({
  id: 'planner',
  description: 'Plans a day in a city',
  input: z.object({ city: z.string() }),
  result: z.object({ day: z.string() }).describe('A plan for one day'),
  instructions: 'Plan.',
});

const served = servedPerTest();

async function start(script: Record<string, Step[]>) {
  served.runtime = createRuntime({ swarms: [echo, planner], model: queueModel(script) });
  served.server = await serve(served.runtime);
  return (id = 'echo') => `${served.server!.url}/a2a/${id}/.well-known/agent-card.json`;
}

/** A model step that streams `chunks` at once (within one merge window) and answers their text. */
function quickStream(chunks: string[]): Step {
  return (req: ModelRequest) => {
    for (const c of chunks) req.onText?.(c);
    return { text: chunks.join('') };
  };
}

describe.each(MODES)('with an SDK client in %s mode', (mode) => {
  it('a stream ended within the merge window ends on its last text, with lastChunk: true', async () => {
    const cardUrl = await start({ echo: [quickStream(['Hel', 'lo'])] });
    const client = await sdkClient(cardUrl(), mode);
    const events = await drain(client.sendMessageStream(sendRequest(userText(crypto.randomUUID(), 'hi'))));
    const chunks = events
      .filter((e) => e.payload?.$case === 'artifactUpdate')
      .map((e) => e.payload!.value as any)
      .filter((a) => a.artifact.artifactId === 'stream:echo:1');
    // One event: the merged text, which is also the stream's end.
    expect(chunks.map((c) => [c.artifact.parts.map((p: any) => p.content.value).join(''), c.lastChunk])).toEqual([['Hello', true]]);
  });

  it('the result artifact has a description (the result schema’s) and metadata (swarm, definition)', async () => {
    const cardUrl = await start({ planner: [{ text: '{"day":"museum, then lunch"}' }], echo: [{ text: 'done' }] });
    const client = await sdkClient(cardUrl('planner'), mode);
    const events = await drain(client.sendMessageStream(sendRequest(userText(crypto.randomUUID(), '{"city":"Rome"}'))));
    const result = events.map((e) => e.payload!.value as any).find((v) => v.artifact?.artifactId === 'result');
    const taskId = (events[0]!.payload!.value as Task).id;
    expect(result.artifact).toMatchObject({ description: 'A plan for one day', metadata: { swarmId: taskId, definitionId: 'planner' } });
    // The stored task says the same.
    const task = await client.getTask({ tenant: '', id: taskId });
    expect(task.artifacts.find((a) => a.artifactId === 'result')).toMatchObject({
      description: 'A plan for one day',
      metadata: { swarmId: taskId, definitionId: 'planner' },
    });

    // Without a described result schema, the description names the swarm.
    const echoClient = await sdkClient(cardUrl(), mode);
    const done = (await echoClient.sendMessage(sendRequest(userText(crypto.randomUUID(), 'hi')))) as Task;
    expect(done.artifacts.find((a) => a.artifactId === 'result')).toMatchObject({ description: 'The result of Echo', metadata: { definitionId: 'echo' } });
  });

  it("a failure's final status carries the error: its message's text, and metadata.error with its kind", async () => {
    const cardUrl = await start({
      echo: [
        () => {
          throw new Error('upstream said 503');
        },
      ],
    });
    const client = await sdkClient(cardUrl(), mode);
    const events = await drain(client.sendMessageStream(sendRequest(userText(crypto.randomUUID(), 'hi'))));
    expect(cases(events).at(-1)).toBe('statusUpdate');
    const last = events.at(-1)!.payload!.value as any;
    expect(last.status.state).toBe(TaskState.TASK_STATE_FAILED);
    const text = last.status.message.parts.map((p: any) => p.content.value).join('');
    expect(text).toContain('upstream said 503');
    const error = { kind: 'model-call', message: text };
    expect(last.metadata).toMatchObject({ type: 'failed', error });
    expect(last.status.message.metadata).toEqual({ error });
    // A poll of the task gets the same status.
    const task = await client.getTask({ tenant: '', id: last.taskId });
    expect(task.status?.state).toBe(TaskState.TASK_STATE_FAILED);
    expect(task.status?.message?.metadata).toEqual({ error });
  });
});
