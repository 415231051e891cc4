/**
 * Seed 002 fidelity, seen through the official @a2a-js/sdk client in v1.0 and v0.3 mode: a
 * streamed text ends with `lastChunk: true`, the result artifact has a description and metadata,
 * and a failure's final status carries its error.
 */
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { TaskState, type Task } from '@a2a-js/sdk';
import { createRuntime, defineSwarm, fileResult, fileResultSchema, type ModelRequest } from '../../../src/index.js';
import { serve } from '../../../src/server/index.js';
import { queueModel, type Step } from '../../support/script.js';
import { cases, drain, MODES, sdkClient, sendRequest, streamed, userText } from '../../support/a2a-peers.js';
import { servedPerTest } from '../../support/server-clients.js';
import { a2aRemoteAgents } from '../../../src/a2a/client.js';
import { answerOf } from '../../../src/server/a2a/answers.js';

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

  it('a stream ended after the merge window ends on an empty chunk; the run replays as recorded', async () => {
    const cardUrl = await start({ echo: [streamed(['Hel', 'lo'])] });
    const client = await sdkClient(cardUrl(), mode);
    const events = await drain(client.sendMessageStream(sendRequest(userText(crypto.randomUUID(), 'hi'))));
    const chunks = events.map((e) => e.payload!.value as any).filter((v) => v.artifact?.artifactId === 'stream:echo:1');
    expect(chunks.map((c) => [c.artifact.parts.map((p: any) => p.content.value).join(''), c.append, c.lastChunk])).toEqual([
      ['Hel', false, false],
      ['lo', true, false],
      ['', true, true],
    ]);
    const taskId = (events[0]!.payload!.value as Task).id;
    const recorded = served.runtime!.forSwarm('echo', taskId).events({ since: 0 });
    const stored: unknown[] = [];
    for await (const e of recorded) {
      stored.push(e);
      if (e.kind === 'status-update' && e.final) break;
    }
    const replayed: unknown[] = [];
    for await (const e of served.runtime!.replay(taskId)) replayed.push(e);
    expect(replayed).toEqual(stored);
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

describe.each(MODES)('file parts, with an SDK client in %s mode', (mode) => {
  it('a message with file parts reaches the model: a text file’s content, a binary file as a data URL, a URL named', async () => {
    const model = queueModel({ echo: [{ text: 'read' }] });
    served.runtime = createRuntime({ swarms: [echo], model });
    served.server = await serve(served.runtime);
    const client = await sdkClient(`${served.server.url}/a2a/echo/.well-known/agent-card.json`, mode);
    const message = userText(crypto.randomUUID(), 'Summarize these');
    message.parts.push(
      { content: { $case: 'raw', value: Buffer.from('line one\nline two') } as never, metadata: undefined, filename: 'notes.txt', mediaType: 'text/plain' },
      { content: { $case: 'raw', value: Buffer.from([0x89, 0x50, 0x4e, 0x47]) } as never, metadata: undefined, filename: 'dot.png', mediaType: 'image/png' },
      { content: { $case: 'url', value: 'https://example.com/report.pdf' } as never, metadata: undefined, filename: 'report.pdf', mediaType: 'application/pdf' },
    );
    const done = (await client.sendMessage(sendRequest(message))) as Task;
    expect(done.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    const sent = model.requests[0]!.messages.find((m) => m.role === 'user')!.content;
    expect(sent).toBe(
      [
        'Summarize these',
        '<file name="notes.txt" type="text/plain">\nline one\nline two\n</file>',
        `<file name="dot.png" type="image/png">\ndata:image/png;base64,${Buffer.from([0x89, 0x50, 0x4e, 0x47]).toString('base64')}\n</file>`,
        '<file name="report.pdf" type="application/pdf" url="https://example.com/report.pdf"/>',
      ].join('\n'),
    );
  });

  it('a swarm whose result is a file (fileResult) answers with a file part; a list of parts keeps them all', async () => {
    const report = defineSwarm({ id: 'report', description: 'Writes a report file', instructions: 'Write.', result: fileResultSchema });
    const bundle = defineSwarm({ id: 'bundle', description: 'Files and words', instructions: 'Write.', result: z.array(z.unknown()) });
    const file = fileResult({ name: 'report.md', mimeType: 'text/markdown', content: '# Report\nAll good.' });
    const linked = fileResult({ name: 'chart.png', mimeType: 'image/png', uri: 'https://example.com/chart.png' });
    served.runtime = createRuntime({
      swarms: [report, bundle],
      model: queueModel({ report: [{ text: JSON.stringify(file) }], bundle: [{ text: JSON.stringify([{ kind: 'text', text: 'See the chart.' }, linked]) }] }),
    });
    served.server = await serve(served.runtime);
    const client = await sdkClient(`${served.server.url}/a2a/report/.well-known/agent-card.json`, mode);
    const events = await drain(client.sendMessageStream(sendRequest(userText(crypto.randomUUID(), 'go'))));
    const result = events.map((e) => e.payload!.value as any).find((v) => v.artifact?.artifactId === 'result');
    expect(result.artifact.parts).toHaveLength(1);
    const [part] = result.artifact.parts;
    expect([part.content.$case, Buffer.from(part.content.value).toString('utf8'), part.filename, part.mediaType]).toEqual([
      'raw',
      '# Report\nAll good.',
      'report.md',
      'text/markdown',
    ]);
    // A poll of the task has the same file.
    const task = await client.getTask({ tenant: '', id: result.taskId });
    const stored = task.artifacts.find((a) => a.artifactId === 'result')!.parts[0]!;
    expect([stored.content?.$case, stored.filename]).toEqual(['raw', 'report.md']);

    const other = await sdkClient(`${served.server.url}/a2a/bundle/.well-known/agent-card.json`, mode);
    const done = (await other.sendMessage(sendRequest(userText(crypto.randomUUID(), 'go')))) as Task;
    const parts = done.artifacts.find((a) => a.artifactId === 'result')!.parts;
    expect(parts.map((p) => [p.content?.$case, p.content?.value, p.filename, p.mediaType])).toEqual([
      ['text', 'See the chart.', '', expect.any(String)],
      ['url', 'https://example.com/chart.png', 'chart.png', 'image/png'],
    ]);
  });
});

describe('file results, read by our remote-agent client', () => {
  it('a remote agent answering with a file gives the calling swarm its content, not a placeholder', async () => {
    const report = defineSwarm({ id: 'report', description: 'Writes a report file', instructions: 'Write.', result: fileResultSchema });
    const file = fileResult({ name: 'report.md', mimeType: 'text/markdown', content: '# Report\nAll good.' });
    served.runtime = createRuntime({ swarms: [report], model: queueModel({ report: [{ text: JSON.stringify(file) }] }) });
    served.server = await serve(served.runtime);
    const url = `${served.server.url}/a2a/report/.well-known/agent-card.json`;
    const answer = await a2aRemoteAgents().send(
      { swarmId: 's1', callId: 'c1', agentId: 'report', url, request: 'go', key: crypto.randomUUID() },
      { askHuman: async () => undefined },
      AbortSignal.timeout(10_000),
    );
    expect(answer).toMatchObject({ ok: true, content: '<file name="report.md" type="text/markdown">\n# Report\nAll good.\n</file>' });
  });
});

describe('files in an answer to a pause', () => {
  it('a follow-up message with text and a file answers with both, the file as a <file> element', () => {
    const parts = [
      { content: { $case: 'text' as const, value: 'Here it is' }, metadata: undefined, filename: '', mediaType: 'text/plain' },
      { content: { $case: 'raw' as const, value: Buffer.from('a,b\n1,2') }, metadata: undefined, filename: 'table.csv', mediaType: 'text/csv' },
    ];
    expect(answerOf({ parts, metadata: undefined }, undefined)).toEqual({ answer: 'Here it is\n<file name="table.csv" type="text/csv">\na,b\n1,2\n</file>' });
  });
});
