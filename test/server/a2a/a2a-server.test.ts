/**
 * The A2A server, driven only through real clients: the @a2a-js/sdk client in v1.0 and in
 * v0.3 (legacyCompat) mode, and raw fetch for the wire-level and bad-request cases.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { Role, TaskState, type Task } from '@a2a-js/sdk';
import { createRuntime, defineAgent, defineSwarm, handoff, tool, type Model, type ModelRequest } from '../../../src/index.js';
import { createA2AHandler } from '../../../src/server/a2a/server.js';
import { serve } from '../../../src/server/index.js';
import { HttpError, MAX_BODY_BYTES, type ServerContext } from '../../../src/http/http.js';
import { call, lastToolResult, queueModel, type Step } from '../../support/script.js';
import { cases, drain, MODES, sdkClient, sendRequest, streamed, userText } from '../../support/a2a-peers.js';
import { servedPerTest } from '../../support/server-clients.js';

const wordCount = tool({
  name: 'word_count',
  description: 'Counts the words of a text',
  parameters: z.object({ text: z.string() }),
  execute: ({ text }) => text.split(/\s+/).length,
});
const helper = defineAgent({ id: 'helper', name: 'Helper', description: 'Helps with anything', instructions: 'Help.' });
const echo = defineSwarm({
  id: 'echo',
  name: 'Echo',
  description: 'Echoes the request',
  instructions: 'Repeat the request.',
  tools: [wordCount],
  handoffs: [handoff.toAgent(helper), handoff.inline({ id: 'critic', description: 'Criticizes drafts', instructions: 'Be harsh.' })],
});
const planner = defineSwarm({
  id: 'planner',
  description: 'Plans a day in a city',
  input: z.object({ city: z.string() }),
  result: z.object({ day: z.string() }),
  instructions: 'Plan.',
});

/** A step that waits until `gate` opens (or the call is aborted), then answers `text`. */
function gated(gate: Promise<void>, text: string): Step {
  return (req: ModelRequest) =>
    new Promise((resolve, reject) => {
      req.signal.addEventListener('abort', () => reject(req.signal.reason), { once: true });
      void gate.then(() => resolve({ text }));
    });
}

function deferred(): { promise: Promise<void>; open: () => void } {
  let open!: () => void;
  const promise = new Promise<void>((resolve) => (open = resolve));
  return { promise, open };
}

const served = servedPerTest();

async function start(script: Record<string, Step[]>, options: { token?: string } = {}) {
  const model: Model & { requests: ModelRequest[] } = queueModel(script);
  served.runtime = createRuntime({ swarms: [echo, planner], agents: [helper], model });
  served.server = await serve(served.runtime, options);
  const base = served.server.url;
  return { model, base, cardUrl: (id = 'echo') => `${base}/a2a/${id}/.well-known/agent-card.json`, rt: served.runtime };
}

function resultArtifact(task: Task) {
  return task.artifacts.find((a) => a.artifactId === 'result');
}

/** JSON of a response, loosely typed: these tests look at the wire. */
async function json(res: Response | Promise<Response>): Promise<any> {
  return (await res).json();
}

function rpc(url: string, body: unknown, headers: Record<string, string> = {}) {
  return fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: typeof body === 'string' ? body : JSON.stringify(body) });
}

/** The `data:` payloads of an SSE body. */
async function sseData(res: Response): Promise<any[]> {
  const text = await res.text();
  return text
    .split('\n\n')
    .map((block) => block.split('\n').find((l) => l.startsWith('data: ')))
    .filter((l): l is string => !!l)
    .map((l) => JSON.parse(l.slice('data: '.length)));
}

describe('agent card', () => {
  it('is generated from the definition: skills, modes, streaming, v1.0 and v0.3 interfaces', async () => {
    const { base, cardUrl } = await start({});
    const res = await fetch(cardUrl(), { headers: { 'A2A-Version': '1.0' } });
    expect(res.status).toBe(200);
    const card = await json(res);
    expect(card).toMatchObject({
      name: 'Echo',
      description: 'Echoes the request',
      version: '1',
      capabilities: { streaming: true },
      defaultInputModes: ['text/plain'],
      defaultOutputModes: ['text/plain'],
      supportedInterfaces: [
        { url: `${base}/a2a/echo`, protocolBinding: 'JSONRPC', protocolVersion: '1.0' },
        { url: `${base}/a2a/echo`, protocolBinding: 'JSONRPC', protocolVersion: '0.3' },
      ],
    });
    expect(card.securitySchemes).toBeUndefined();
    expect(card.skills.map((s: { id: string }) => s.id)).toEqual(['echo', 'tool:word_count', 'handoff:helper', 'handoff:critic']);
    expect(card.skills[1]).toMatchObject({ name: 'word_count', description: 'Counts the words of a text', tags: ['tool'] });
    expect(card.skills[2]).toMatchObject({ name: 'Helper', description: 'Helps with anything', tags: ['handoff', 'agent'] });

    const structured = await json(fetch(cardUrl('planner'), { headers: { 'A2A-Version': '1.0' } }));
    expect(structured.defaultInputModes).toEqual(['text/plain', 'application/json']);
    expect(structured.defaultOutputModes).toEqual(['text/plain', 'application/json']);
    expect(structured.skills[0].description).toContain('"city"');

    // A v0.3 client (no version header) gets a v0.3 card.
    const legacy = await json(fetch(cardUrl()));
    expect(legacy).toMatchObject({ url: `${base}/a2a/echo`, protocolVersion: '0.3', preferredTransport: 'JSONRPC', name: 'Echo' });

    // The SDK resolves and accepts it in both modes.
    for (const mode of MODES) expect((await sdkClient(cardUrl(), mode)).protocolVersion).toBe(mode.slice(1));
  });

  it('is public with a token and declares the bearer scheme; JSON-RPC needs the token', async () => {
    const { cardUrl, base } = await start({ echo: [{ text: 'a' }, { text: 'b' }] }, { token: 's3cret' });
    const v1 = await json(fetch(cardUrl(), { headers: { 'A2A-Version': '1.0' } }));
    expect(v1.securitySchemes).toEqual({ bearer: { httpAuthSecurityScheme: expect.objectContaining({ scheme: 'Bearer' }) } });
    expect(v1.securityRequirements).toEqual([{ schemes: { bearer: {} } }]);
    const v03 = await json(fetch(cardUrl()));
    expect(v03.securitySchemes).toEqual({ bearer: expect.objectContaining({ type: 'http', scheme: 'Bearer' }) });
    expect(v03.security).toEqual([{ bearer: [] }]);

    const unauthenticated = await rpc(`${base}/a2a/echo`, { jsonrpc: '2.0', id: 1, method: 'GetTask', params: { id: 'x' } }, { 'A2A-Version': '1.0' });
    expect(unauthenticated.status).toBe(401);
    for (const mode of MODES) {
      await expect((await sdkClient(cardUrl(), mode)).sendMessage(sendRequest(userText(crypto.randomUUID(), 'hi')))).rejects.toThrow(/401/);
      const task = (await (await sdkClient(cardUrl(), mode, 's3cret')).sendMessage(sendRequest(userText(crypto.randomUUID(), 'hi')))) as Task;
      expect(task.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    }
  });

  it('of an unknown definition is 404, and so is its endpoint', async () => {
    const { base } = await start({});
    expect((await fetch(`${base}/a2a/nope/.well-known/agent-card.json`)).status).toBe(404);
    expect((await rpc(`${base}/a2a/nope`, { jsonrpc: '2.0', id: 1, method: 'GetTask', params: { id: 'x' } })).status).toBe(404);
  });
});

describe.each(MODES)('with an SDK client in %s mode', (mode) => {
  it('a blocking send runs the swarm to completed; the result is an artifact with text and data', async () => {
    const { cardUrl, rt } = await start({ echo: [{ text: 'Hello' }], planner: [call('complete', { result: { day: 'Saturday' } })] });
    const client = await sdkClient(cardUrl(), mode);
    const task = (await client.sendMessage(sendRequest(userText(crypto.randomUUID(), 'hi')))) as Task;
    expect(task.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    expect(task.contextId).toBe(task.id);
    expect(resultArtifact(task)?.parts.map((p) => p.content)).toEqual([{ $case: 'text', value: 'Hello' }]);
    expect(task.status?.message?.parts.map((p) => p.content)).toEqual([{ $case: 'text', value: 'Hello' }]);
    expect(task.history[0]?.parts[0]?.content).toEqual({ $case: 'text', value: 'hi' });
    // A task is a swarm.
    expect(await rt.forSwarm('echo', task.id).getResult()).toEqual({ status: 'completed', result: 'Hello' });

    // Structured input from JSON text, structured result as data (and JSON text).
    const typed = (await (await sdkClient(cardUrl('planner'), mode)).sendMessage(sendRequest(userText(crypto.randomUUID(), '{"city":"Oslo"}')))) as Task;
    expect(typed.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    expect(resultArtifact(typed)?.parts.map((p) => p.content)).toEqual([
      { $case: 'data', value: { day: 'Saturday' } },
      { $case: 'text', value: '{"day":"Saturday"}' },
    ]);
    expect(await rt.forSwarm('planner', typed.id).getResult()).toMatchObject({ status: 'completed' });
  });

  it('a streaming send yields the task, status updates, streamed chunks, the result artifact, the final status', async () => {
    const { cardUrl } = await start({ echo: [streamed(['Hel', 'lo'])] });
    const client = await sdkClient(cardUrl(), mode);
    const events = await drain(client.sendMessageStream(sendRequest(userText(crypto.randomUUID(), 'hi'))));
    expect(cases(events)).toEqual(['task', 'statusUpdate', 'artifactUpdate', 'artifactUpdate', 'artifactUpdate', 'statusUpdate', 'artifactUpdate', 'statusUpdate']);
    const [first, started, c1, c2, end, turn, result, done] = events.map((e) => e.payload!.value) as any[];
    expect(first.status.state).toBe(TaskState.TASK_STATE_SUBMITTED);
    expect(started).toMatchObject({ status: { state: TaskState.TASK_STATE_WORKING }, metadata: { type: 'started', definitionId: 'echo' } });
    // The first chunk of a call starts the artifact; the next ones append to it.
    expect([c1, c2].map((c) => [c.artifact.artifactId, c.append, c.artifact.parts[0].content.value])).toEqual([
      ['stream:echo:1', false, 'Hel'],
      ['stream:echo:1', true, 'lo'],
    ]);
    expect([c1.lastChunk, c2.lastChunk]).toEqual([false, false]);
    // The call returned well after its last chunk was committed: the stream ends with an empty
    // appended chunk that says so (a quicker end merges into the last text instead).
    expect(end).toMatchObject({ artifact: { artifactId: 'stream:echo:1' }, append: true, lastChunk: true });
    expect(end.artifact.parts.map((p: any) => p.content.value)).toEqual(['']);
    // The last turn completes too, before the result.
    expect(turn).toMatchObject({ status: { state: TaskState.TASK_STATE_WORKING }, metadata: { type: 'turn-completed', turn: 1 } });
    expect(result).toMatchObject({ artifact: { artifactId: 'result', name: 'result' }, lastChunk: true });
    expect(done).toMatchObject({ status: { state: TaskState.TASK_STATE_COMPLETED }, metadata: { type: 'completed', result: 'Hello' } });
    // Every update names the task and its context.
    expect(events.slice(1).every((e) => (e.payload!.value as any).taskId === first.id && (e.payload!.value as any).contextId === first.contextId)).toBe(true);

    const stored = await client.getTask({ tenant: '', id: first.id });
    expect(stored.artifacts.find((a) => a.artifactId === 'stream:echo:1')?.parts.map((p) => p.content?.value)).toEqual(['Hel', 'lo', '']);
  });

  it('GetTask, CancelTask (the swarm stops) and, in v1.0, ListTasks', async () => {
    const gate = deferred();
    const { cardUrl, rt } = await start({ echo: [gated(gate.promise, 'late'), { text: 'quick' }] });
    const client = await sdkClient(cardUrl(), mode);
    const running = (await client.sendMessage(sendRequest(userText(crypto.randomUUID(), 'slow'), { returnImmediately: true }))) as Task;
    expect([TaskState.TASK_STATE_SUBMITTED, TaskState.TASK_STATE_WORKING]).toContain(running.status?.state);
    expect((await client.getTask({ tenant: '', id: running.id })).status?.state).toBe(TaskState.TASK_STATE_WORKING);
    const done = (await client.sendMessage(sendRequest(userText(crypto.randomUUID(), 'fast'), { returnImmediately: false }))) as Task;

    if (mode === 'v1.0') {
      const listed = await client.listTasks({ tenant: '', contextId: '', status: 0, pageToken: '', statusTimestampAfter: undefined, includeArtifacts: true });
      expect(listed.totalSize).toBe(2);
      expect(new Set(listed.tasks.map((t) => t.id))).toEqual(new Set([running.id, done.id]));
      const working = await client.listTasks({ tenant: '', contextId: '', status: TaskState.TASK_STATE_WORKING, pageToken: '', statusTimestampAfter: undefined });
      expect(working.tasks.map((t) => t.id)).toEqual([running.id]);
      const page = await client.listTasks({ tenant: '', contextId: '', status: 0, pageSize: 1, pageToken: '', statusTimestampAfter: undefined });
      expect(page.tasks).toHaveLength(1);
      const rest = await client.listTasks({ tenant: '', contextId: '', status: 0, pageSize: 1, pageToken: page.nextPageToken, statusTimestampAfter: undefined });
      expect(rest.tasks).toHaveLength(1);
      expect(rest.nextPageToken).toBe('');
      expect(rest.tasks[0]!.id).not.toBe(page.tasks[0]!.id);
    }

    const canceled = await client.cancelTask({ tenant: '', id: running.id, metadata: undefined });
    expect(canceled.status?.state).toBe(TaskState.TASK_STATE_CANCELED);
    expect(await rt.forSwarm('echo', running.id).getResult()).toMatchObject({ status: 'stopped' });
    // Canceling again returns the canceled task; a completed one cannot be canceled.
    expect((await client.cancelTask({ tenant: '', id: running.id, metadata: undefined })).status?.state).toBe(TaskState.TASK_STATE_CANCELED);
    await expect(client.cancelTask({ tenant: '', id: done.id, metadata: undefined })).rejects.toMatchObject({ envelopeCode: -32002 });
    gate.open();
  });

  it('a HITL swarm goes input-required, and a follow-up message on the same task completes it', async () => {
    const { cardUrl, model, rt } = await start({
      echo: [call('pause', { reason: 'Which day?' }), (req) => ({ text: `Planned for ${lastToolResult(req)}` })],
    });
    const client = await sdkClient(cardUrl(), mode);
    const contextId = `conversation-${mode}`;
    const asked = (await client.sendMessage(sendRequest({ ...userText(crypto.randomUUID(), 'plan'), contextId }))) as Task;
    expect(asked.status?.state).toBe(TaskState.TASK_STATE_INPUT_REQUIRED);
    expect(asked.status?.message?.parts[0]?.content).toEqual({ $case: 'text', value: 'Which day?' });
    expect(asked.contextId).toBe(contextId);
    expect(await rt.forSwarm('echo', asked.id).getResult()).toMatchObject({ status: 'paused' });

    // A follow-up in another context is refused (the task stays input-required).
    await expect(client.sendMessage(sendRequest(userText(crypto.randomUUID(), 'x', { taskId: asked.id, contextId: 'elsewhere' })))).rejects.toMatchObject({
      envelopeCode: -32602,
    });
    const followUp = await drain(client.sendMessageStream(sendRequest(userText(crypto.randomUUID(), 'Saturday', { taskId: asked.id, contextId }))));
    expect(followUp[0]?.payload).toMatchObject({ $case: 'task', value: { id: asked.id, status: { state: TaskState.TASK_STATE_INPUT_REQUIRED } } });
    const last = followUp.at(-1)!.payload!.value as any;
    expect(last.status.state).toBe(TaskState.TASK_STATE_COMPLETED);
    expect(followUp.every((e) => (e.payload!.value as any).contextId === contextId)).toBe(true);
    expect(lastToolResult(model.requests.at(-1)!)).toBe('Saturday');
    const final = await client.getTask({ tenant: '', id: asked.id });
    expect(resultArtifact(final)?.parts[0]?.content).toEqual({ $case: 'text', value: 'Planned for Saturday' });
    // The history: the input, then every status message (the question, the answer, the result).
    expect(final.history.map((m) => m.parts[0]?.content?.value)).toEqual(['plan', 'Which day?', 'Saturday', 'Planned for Saturday']);
    expect(final.history.map((m) => m.role)).toEqual([Role.ROLE_USER, Role.ROLE_AGENT, Role.ROLE_USER, Role.ROLE_AGENT]);

    // The task is over: another message is refused.
    await expect(client.sendMessage(sendRequest(userText(crypto.randomUUID(), 'more', { taskId: asked.id })))).rejects.toMatchObject({ envelopeCode: -32004 });
  });

  it('subscribing to a running task yields its snapshot, then its updates to the end; concurrent subscribers see the same', async () => {
    const gate = deferred();
    const { cardUrl } = await start({ echo: [gated(gate.promise, 'done')] });
    const client = await sdkClient(cardUrl(), mode);
    const task = (await client.sendMessage(sendRequest(userText(crypto.randomUUID(), 'go'), { returnImmediately: true }))) as Task;
    const a = client.resubscribeTask({ tenant: '', id: task.id });
    const b = client.resubscribeTask({ tenant: '', id: task.id });
    const firstA = await a.next();
    const firstB = await b.next();
    expect(firstA.value?.payload).toMatchObject({ $case: 'task', value: { id: task.id, status: { state: TaskState.TASK_STATE_WORKING } } });
    expect(firstB.value?.payload?.$case).toBe('task');
    gate.open();
    const restA = await drain({ [Symbol.asyncIterator]: () => a });
    const restB = await drain({ [Symbol.asyncIterator]: () => b });
    expect(cases(restA)).toEqual(['statusUpdate', 'artifactUpdate', 'statusUpdate']);
    expect(restB).toEqual(restA);
    expect((restA.at(-1)!.payload!.value as any).status.state).toBe(TaskState.TASK_STATE_COMPLETED);

    // A finished task cannot be subscribed to (v0.3 gets the error as an SSE error event).
    const refused = await drain(client.resubscribeTask({ tenant: '', id: task.id })).catch(
      (e: unknown) => e as { envelopeCode?: number; cause?: { envelopeCode?: number } },
    );
    expect((refused as { envelopeCode?: number }).envelopeCode ?? (refused as { cause?: { envelopeCode?: number } }).cause?.envelopeCode).toBe(-32004);
  });

  it('an unknown task is TaskNotFound (-32001)', async () => {
    const { cardUrl } = await start({});
    const client = await sdkClient(cardUrl(), mode);
    await expect(client.getTask({ tenant: '', id: 'nope' })).rejects.toMatchObject({ envelopeCode: -32001 });
    await expect(client.cancelTask({ tenant: '', id: 'nope', metadata: undefined })).rejects.toMatchObject({ envelopeCode: -32001 });
    await expect(client.sendMessage(sendRequest(userText(crypto.randomUUID(), 'x', { taskId: 'nope' })))).rejects.toMatchObject({ envelopeCode: -32001 });
  });

  it('re-sending a message reaches the same task instead of starting another swarm', async () => {
    const { cardUrl, rt } = await start({ echo: [{ text: 'once' }, { text: 'twice' }] });
    const client = await sdkClient(cardUrl(), mode);
    const message = userText(crypto.randomUUID(), 'hi');
    const first = (await client.sendMessage(sendRequest(message))) as Task;
    const again = (await client.sendMessage(sendRequest(message))) as Task;
    expect(again.id).toBe(first.id);
    expect(resultArtifact(again)?.parts[0]?.content?.value).toBe('once');
    const replay = await drain(client.sendMessageStream(sendRequest(message)));
    expect(cases(replay)).toEqual(['task']);
    expect((await rt.list({ definitionId: 'echo' })).length).toBe(1);
  });
});

describe('on the wire', () => {
  it('v0.3: a stream that ends at input-required says final: true there; completed is final too', async () => {
    const { base } = await start({ echo: [call('pause', { reason: 'Which day?' }), { text: 'ok' }] });
    const stream = (body: unknown) => rpc(`${base}/a2a/echo`, body, { accept: 'text/event-stream' });
    const res = await stream({
      jsonrpc: '2.0',
      id: 'a',
      method: 'message/stream',
      params: { message: { kind: 'message', messageId: crypto.randomUUID(), role: 'user', parts: [{ kind: 'text', text: 'plan' }] } },
    });
    expect(res.headers.get('content-type')).toMatch(/^text\/event-stream/);
    const events = (await sseData(res)).map((e) => e.result);
    expect(events[0]).toMatchObject({ kind: 'task', status: { state: 'submitted' } });
    expect(events.at(-1)).toMatchObject({
      kind: 'status-update',
      status: {
        state: 'input-required',
        message: {
          parts: [
            { kind: 'text', text: 'Which day?' },
            { kind: 'data', data: { type: 'HITL', message: 'Which day?' }, metadata: { kind: 'xswarm.pause' } },
          ],
        },
      },
      final: true,
    });
    expect(events.slice(1, -1).every((e) => e.final === false)).toBe(true);

    const taskId = events[0].id;
    const resumed = (
      await sseData(
        await stream({
          jsonrpc: '2.0',
          id: 'b',
          method: 'message/stream',
          params: { message: { kind: 'message', messageId: crypto.randomUUID(), taskId, role: 'user', parts: [{ kind: 'text', text: 'Sat' }] } },
        }),
      )
    ).map((e) => e.result);
    expect(resumed.at(-1)).toMatchObject({ kind: 'status-update', status: { state: 'completed' }, final: true });
    expect(resumed.find((e) => e.kind === 'artifact-update')).toMatchObject({
      artifact: { artifactId: 'result', parts: [{ kind: 'text', text: 'ok' }] },
    });
  });

  it('v1.0: ProtoJSON states and wrappers', async () => {
    const { base } = await start({ echo: [{ text: 'ok' }] });
    const res = await rpc(
      `${base}/a2a/echo`,
      { jsonrpc: '2.0', id: 7, method: 'SendMessage', params: { message: { messageId: crypto.randomUUID(), role: 'ROLE_USER', parts: [{ text: 'hi' }] } } },
      { 'A2A-Version': '1.0' },
    );
    const body = await json(res);
    expect(body).toMatchObject({ jsonrpc: '2.0', id: 7, result: { task: { status: { state: 'TASK_STATE_COMPLETED' } } } });
    expect(body.result.task.artifacts[0].parts).toEqual([{ text: 'ok' }]);
    expect(body.result.task.status.message).toMatchObject({ role: 'ROLE_AGENT', parts: [{ text: 'ok' }] });
  });

  it('malformed JSON is a JSON-RPC parse error (-32700) in both versions', async () => {
    const { base } = await start({});
    for (const headers of [{ 'A2A-Version': '1.0' }, {}] as Record<string, string>[]) {
      const res = await rpc(`${base}/a2a/echo`, '{"jsonrpc": "2.0", "method": ', headers);
      expect(res.status).toBe(200);
      expect(await json(res)).toEqual({ jsonrpc: '2.0', id: null, error: { code: -32700, message: 'Invalid JSON payload.' } });
    }
  });

  it('a body over 1 MiB is 413; one under it but over Express’s 100 kB default is accepted', async () => {
    const { base } = await start({ echo: [{ text: 'big' }] });
    const huge = 'x'.repeat(1024 * 1024 + 1);
    expect((await rpc(`${base}/a2a/echo`, huge, { 'A2A-Version': '1.0' })).status).toBe(413);
    const large = { jsonrpc: '2.0', id: 1, method: 'SendMessage', params: { message: { messageId: 'm', role: 'ROLE_USER', parts: [{ text: 'y'.repeat(300_000) }] } } };
    const res = await rpc(`${base}/a2a/echo`, large, { 'A2A-Version': '1.0' });
    expect((await json(res)).result.task.status.state).toBe('TASK_STATE_COMPLETED');
  });

  it('an unknown method is -32601; a GET on the endpoint is 405', async () => {
    const { base } = await start({});
    const body = await json(rpc(`${base}/a2a/echo`, { jsonrpc: '2.0', id: 1, method: 'Nope', params: {} }, { 'A2A-Version': '1.0' }));
    expect(body.error.code).toBe(-32601);
    expect((await fetch(`${base}/a2a/echo`)).status).toBe(405);
  });
});

describe('stream plumbing', () => {
  /** The A2A handler alone on a plain node server, with a short keep-alive interval. */
  async function bare(script: Record<string, Step[]>) {
    served.runtime = createRuntime({ swarms: [echo], agents: [helper], model: queueModel(script) });
    let base = '';
    const ctx: ServerContext = { runtime: served.runtime, maxBodyBytes: MAX_BODY_BYTES, baseUrl: () => base };
    const handler = createA2AHandler(ctx, { keepAliveMs: 20 });
    const http = createServer((req, res) => {
      handler.handle(req, res, new URL(req.url ?? '/', base)).then(
        (handled) => void (handled || res.writeHead(404).end()),
        (e: unknown) => void res.writeHead(e instanceof HttpError ? e.status : 500).end(),
      );
    });
    await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(http.address() as AddressInfo).port}`;
    const close = () =>
      new Promise<void>((resolve) => {
        http.closeAllConnections();
        http.close(() => resolve());
      });
    return { base, close, rt: served.runtime };
  }

  it('idle streams get ": ping" comments, which the SDK client ignores', async () => {
    const gate = deferred();
    const { base, close } = await bare({ echo: [gated(gate.promise, 'done'), gated(gate.promise, 'again')] });
    try {
      const res = await rpc(
        `${base}/a2a/echo`,
        { jsonrpc: '2.0', id: 1, method: 'SendStreamingMessage', params: { message: { messageId: 'm1', role: 'ROLE_USER', parts: [{ text: 'hi' }] } } },
        { 'A2A-Version': '1.0', accept: 'text/event-stream' },
      );
      const reader = res.body!.getReader();
      let seen = '';
      while (!seen.includes(': ping\n\n')) seen += new TextDecoder().decode((await reader.read()).value);
      await reader.cancel();

      const client = await sdkClient(`${base}/a2a/echo/.well-known/agent-card.json`, 'v1.0');
      const stream = client.sendMessageStream(sendRequest(userText('m2', 'hi')));
      setTimeout(() => gate.open(), 100);
      const events = await drain(stream);
      expect((events.at(-1)!.payload!.value as any).status.state).toBe(TaskState.TASK_STATE_COMPLETED);
    } finally {
      await close();
    }
  });

  it('a client that goes away mid-stream leaves the swarm running to its end', async () => {
    const gate = deferred();
    const { base, close, rt } = await bare({ echo: [gated(gate.promise, 'done')] });
    try {
      const aborted = new AbortController();
      const res = await fetch(`${base}/a2a/echo`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'A2A-Version': '1.0', accept: 'text/event-stream' },
        body: JSON.stringify({
          jsonrpc: '2.0',
          id: 1,
          method: 'SendStreamingMessage',
          params: { message: { messageId: 'gone', role: 'ROLE_USER', parts: [{ text: 'hi' }] } },
        }),
        signal: aborted.signal,
      });
      const reader = res.body!.getReader();
      const first = JSON.parse(
        new TextDecoder()
          .decode((await reader.read()).value)
          .split('\n\n')[0]!
          .slice('data: '.length),
      );
      aborted.abort();
      gate.open();
      const id = first.result.task.id as string;
      expect(await rt.forSwarm('echo', id).wait()).toEqual({ status: 'completed', result: 'done' });
      const client = await sdkClient(`${base}/a2a/echo/.well-known/agent-card.json`, 'v1.0');
      expect((await client.getTask({ tenant: '', id })).status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    } finally {
      await close();
    }
  });
});
