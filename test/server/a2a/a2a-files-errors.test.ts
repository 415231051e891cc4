/**
 * Issue 32 fidelity gaps, through the official @a2a-js/sdk client in v1.0 and v0.3 mode: a run's
 * input keeps its files as sent (the model still reads `<file>` elements), a tool's files become
 * an artifact (stream, push, tasks/get), and a failure's `metadata.error.kind` is the one
 * recorded where it happened (read from the reason only for runs recorded before).
 */
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { type Part, type Task, TaskState } from '@a2a-js/sdk';
import { createRuntime, defineAgent, defineSwarm, fileResult, type Guardrail, handoff, type SwarmEvent, tool } from '../../../src/index.js';
import { serve } from '../../../src/server/index.js';
import { withDetails } from '../../../src/a2a/details.js';
import { replaySwarm } from '../../../src/runtime/replay.js';
import type { SwarmStore } from '../../../src/store/types.js';
import { drain, MODES, sdkClient, sendRequest, userText } from '../../support/a2a-peers.js';
import { pushReceiver, type PushReceiver } from '../../support/push-receiver.js';
import { call, collect, queueModel, type Step } from '../../support/script.js';
import { servedPerTest } from '../../support/server-clients.js';
import { until } from '../../support/wait.js';

const echo = defineSwarm({ id: 'echo', name: 'Echo', description: 'Echoes the request', instructions: 'Repeat the request.' });
const report = tool({
  name: 'report',
  description: 'Writes a report',
  parameters: z.object({}),
  execute: () => [
    fileResult({ name: 'report.md', mimeType: 'text/markdown', content: '# Report' }),
    fileResult({ name: 'chart.png', mimeType: 'image/png', uri: 'https://example.com/chart.png' }),
  ],
});
const writer = defineSwarm({ id: 'writer', description: 'Writes', instructions: 'Write.', tools: [report] });

const served = servedPerTest();
const receivers: PushReceiver[] = [];
afterEach(async () => {
  for (const r of receivers.splice(0)) await r.close();
});

async function start(script: Record<string, Step[]>, swarms = [echo, writer]) {
  const model = queueModel(script);
  served.runtime = createRuntime({ swarms, model });
  served.server = await serve(served.runtime, { allowedPushHosts: ['127.0.0.1'] });
  return { model, cardUrl: (id = 'echo') => `${served.server!.url}/a2a/${id}/.well-known/agent-card.json` };
}

/** The stored events of a swarm up to its final one. */
async function stored(definitionId: string, swarmId: string): Promise<SwarmEvent[]> {
  const out: SwarmEvent[] = [];
  for await (const e of served.runtime!.forSwarm(definitionId, swarmId).events({ since: 0 })) {
    out.push(e);
    if (e.kind === 'status-update' && e.final) break;
  }
  return out;
}

const raw = (value: Buffer, filename: string, mediaType: string) => ({ content: { $case: 'raw', value }, metadata: undefined, filename, mediaType }) as never;

describe.each(MODES)('with an SDK client in %s mode', (mode) => {
  it('a message with files: the task keeps the parts as sent, the model reads <file> elements, the run replays', async () => {
    const { model, cardUrl } = await start({ echo: [{ text: 'read' }] });
    const client = await sdkClient(cardUrl(), mode);
    const message = userText(crypto.randomUUID(), 'Summarize these');
    message.parts.push(raw(Buffer.from('a,b\n1,2'), 'table.csv', 'text/csv'), raw(Buffer.from([0x89, 0x50]), 'dot.png', 'image/png'), {
      content: { $case: 'url', value: 'https://example.com/r.pdf' } as never,
      metadata: undefined,
      filename: 'r.pdf',
      mediaType: 'application/pdf',
    });
    const done = (await client.sendMessage(sendRequest(message))) as Task;
    expect(done.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    expect(model.requests[0]!.messages.find((m) => m.role === 'user')!.content).toContain('<file name="table.csv" type="text/csv">\na,b\n1,2\n</file>');

    const task = await client.getTask({ tenant: '', id: done.id });
    const first = task.history[0]!;
    expect(first.parts.map((p) => [p.content?.$case, p.filename, p.mediaType])).toEqual([
      ['text', '', expect.any(String)],
      ['raw', 'table.csv', 'text/csv'],
      ['raw', 'dot.png', 'image/png'],
      ['url', 'r.pdf', 'application/pdf'],
    ]);
    expect(first.parts[0]!.content?.value).toBe('Summarize these');
    expect(Buffer.from(first.parts[1]!.content!.value as Uint8Array).toString('utf8')).toBe('a,b\n1,2');
    expect([...Buffer.from(first.parts[2]!.content!.value as Uint8Array)]).toEqual([0x89, 0x50]);
    expect(first.parts[3]!.content?.value).toBe('https://example.com/r.pdf');
    // The recording replays as it was (the parts live in the run's stored state).
    expect(await collect(served.runtime!.replay(done.id))).toEqual(await stored('echo', done.id));
  });

  it("a tool's files become an artifact on the stream, the push and tasks/get; the model reads the value; the run replays", async () => {
    const { model, cardUrl } = await start({ writer: [call('report', {}, 'c1'), { text: 'written' }] });
    const hook = await pushReceiver();
    receivers.push(hook);
    const client = await sdkClient(cardUrl('writer'), mode);
    const request = sendRequest(userText(crypto.randomUUID(), 'write'));
    request.configuration.taskPushNotificationConfig = { tenant: '', id: '', taskId: '', url: hook.url, token: '', authentication: undefined } as never;
    const events = await drain(client.sendMessageStream(request));
    const streamedArtifact = events.map((e) => e.payload!.value as any).find((v) => v.artifact?.artifactId === 'tool:c1');
    const taskId = (events[0]!.payload!.value as Task).id;
    const expectArtifact = (artifact: any) => {
      expect(artifact).toMatchObject({
        name: 'report:c1',
        description: expect.stringContaining('"report"'),
        metadata: { swarmId: taskId, toolName: 'report', callId: 'c1' },
      });
      expect(artifact.parts.map((p: Part) => [p.content?.$case, p.filename, p.mediaType])).toEqual([
        ['raw', 'report.md', 'text/markdown'],
        ['url', 'chart.png', 'image/png'],
      ]);
      expect(Buffer.from(artifact.parts[0].content.value).toString('utf8')).toBe('# Report');
    };
    expectArtifact(streamedArtifact.artifact);
    expectArtifact((await client.getTask({ tenant: '', id: taskId })).artifacts.find((a) => a.artifactId === 'tool:c1'));
    // The model read the tool's value as before (JSON text), not the artifact.
    expect(JSON.parse(model.requests[1]!.messages.find((m) => m.role === 'tool')!.content)).toMatchObject([
      { kind: 'file', file: { name: 'report.md' } },
      { kind: 'file' },
    ]);
    // Pushed as the stream has it (v1.0 a StreamResponse, v0.3 the bare event).
    await until('the pushed artifact', () => hook.unique().some((r) => r.body.includes('tool:c1')), { timeout: 5000 });
    const pushed = JSON.parse(hook.unique().find((r) => r.body.includes('tool:c1'))!.body) as Record<string, any>;
    const pushedArtifact = mode === 'v1.0' ? pushed.artifactUpdate.artifact : pushed.artifact;
    expect(pushedArtifact).toMatchObject({ artifactId: 'tool:c1', metadata: { swarmId: taskId, toolName: 'report', callId: 'c1' } });
    expect(await collect(served.runtime!.replay(taskId))).toEqual(await stored('writer', taskId));
  });
});

describe("an agent's tool files", () => {
  it("become an artifact of the swarm's task, and the run replays", async () => {
    const writerAgent = defineAgent({ id: 'scribe', description: 'Writes reports', instructions: 'Write.', tools: [report] });
    const planner = defineSwarm({ id: 'planner', instructions: 'Plan.', handoffs: [handoff.toAgent(writerAgent)] });
    const { cardUrl } = await start(
      { planner: [call('handoff_to_scribe', { request: 'a report' }, 'h1'), { text: 'done' }], scribe: [call('report', {}, 'r1'), { text: 'written' }] },
      [planner],
    );
    const client = await sdkClient(cardUrl('planner'), 'v1.0');
    const done = (await client.sendMessage(sendRequest(userText(crypto.randomUUID(), 'go')))) as Task;
    expect(done.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    const artifact = (await client.getTask({ tenant: '', id: done.id })).artifacts.find((a) => a.artifactId === 'tool:r1');
    expect(artifact).toMatchObject({ name: 'report:r1', metadata: { swarmId: done.id, toolName: 'report', callId: 'r1', agent: 'scribe' } });
    expect(artifact!.parts.map((p) => p.filename)).toEqual(['report.md', 'chart.png']);
    expect(await collect(served.runtime!.replay(done.id))).toEqual(await stored('planner', done.id));
  });
});

describe.each(MODES)('failure kinds, recorded where they happen, with an SDK client in %s mode', (mode) => {
  const hang = tool({
    name: 'hang',
    description: 'Waits for ever',
    parameters: z.object({}),
    timeoutMs: 50,
    onTimeout: 'fail',
    execute: (_a, ctx) => new Promise((_r, reject) => ctx.signal.addEventListener('abort', () => reject(ctx.signal.reason))),
  });
  const strict: Guardrail<string> = { name: 'no-secrets', check: (i) => !i.includes('secret') || 'mentions a secret' };
  const swarms = [
    defineSwarm({ id: 'model', instructions: 'x' }),
    defineSwarm({ id: 'turns', instructions: 'x', maxTurns: 1, onLimit: 'fail', tools: [report] }),
    defineSwarm({ id: 'timeout', instructions: 'x', tools: [hang] }),
    defineSwarm({ id: 'guarded', instructions: 'x', guardrails: { input: [strict] } }),
    defineSwarm({ id: 'gives-up', instructions: 'x' }),
  ];
  const script: Record<string, Step[]> = {
    model: [
      () => {
        throw new Error('upstream said 503');
      },
    ],
    turns: [call('report', {}, 't1')],
    timeout: [call('hang', {}, 'h1')],
    guarded: [],
    'gives-up': [call('fail', { reason: 'I cannot do this' })],
  };
  const cases: [id: string, text: string, kind: string, state: TaskState, reason: RegExp][] = [
    ['model', 'hi', 'model-call', TaskState.TASK_STATE_FAILED, /^Model call failed: .*upstream said 503/],
    ['turns', 'hi', 'max-turns', TaskState.TASK_STATE_FAILED, /^maxTurns \(1\)/],
    ['timeout', 'hi', 'timeout', TaskState.TASK_STATE_FAILED, /onTimeout: 'fail'/],
    ['guarded', 'a secret', 'guardrail', TaskState.TASK_STATE_REJECTED, /mentions a secret/],
    ['gives-up', 'hi', 'gave-up', TaskState.TASK_STATE_FAILED, /^I cannot do this$/],
  ];

  it.each(cases)('%s: metadata.error.kind is recorded with the failure and told to the peer', async (id, text, kind, state, reason) => {
    const { cardUrl } = await start(script, swarms);
    const client = await sdkClient(cardUrl(id), mode);
    const events = await drain(client.sendMessageStream(sendRequest(userText(crypto.randomUUID(), text))));
    const last = events.at(-1)!.payload!.value as any;
    expect(last.status.state).toBe(state);
    const error = last.status.message.metadata.error;
    expect(error).toMatchObject({ kind, message: expect.stringMatching(reason) });
    if (kind === 'guardrail') expect(error.guardrail).toBe('no-secrets');
    expect(last.metadata.error).toEqual(error);
    // Recorded in the stored fact, not made at the edge.
    const fact = (await stored(id, last.taskId)).at(-1) as Extract<SwarmEvent, { kind: 'status-update' }>;
    expect(fact.metadata).toMatchObject({ type: 'failed', error: { kind } });
    const task = await client.getTask({ tenant: '', id: last.taskId });
    expect(task.status?.message?.metadata).toEqual({ error });
    // The replay of a recording with the error's kind is the recording (a model call that threw
    // is thrown again, with the recorded error).
    expect(await collect(served.runtime!.replay(last.taskId))).toEqual(await stored(id, last.taskId));
  });
});

describe('runs recorded before this change', () => {
  /** The store, its events as an older runtime wrote them (`old` rewrites or drops each). */
  const olderStore = (old: (e: SwarmEvent) => SwarmEvent | undefined) => {
    const store = served.runtime!.store;
    return {
      load: (id: string) => store.load(id),
      readEvents: async (id: string, from: number) => (await store.readEvents(id, from)).flatMap((e) => old(e) ?? []),
    } as unknown as SwarmStore;
  };

  it("a failure without its error's kind and a tool's files without their artifact replay as recorded; the kind is read from the reason", async () => {
    const swarms = [defineSwarm({ id: 'turns', instructions: 'x', maxTurns: 1, onLimit: 'fail', tools: [report] })];
    await start({ turns: [call('report', {}, 't1')] }, swarms);
    const client = served.runtime!.forSwarm('turns', 'old-1');
    await client.run('hi');
    await client.wait();
    const old = (e: SwarmEvent): SwarmEvent | undefined => {
      if (e.kind === 'artifact-update' && e.artifact.artifactId.startsWith('tool:')) return undefined;
      if (e.kind === 'internal:tool-complete' && e.files) {
        const { files: _f, ...rest } = e;
        return rest;
      }
      if (e.kind === 'status-update' && e.metadata.type === 'failed' && e.metadata.error) {
        const { error: _e, ...fact } = e.metadata;
        return { ...e, metadata: fact };
      }
      return e;
    };
    // As recorded now: the tool's files and the failure's kind are there.
    const now = await served.runtime!.store.readEvents('old-1', 0);
    expect(now.filter((e) => e.kind === 'artifact-update' && e.artifact.artifactId === 'tool:t1')).toHaveLength(1);
    expect(now.at(-1)).toMatchObject({ metadata: { error: { kind: 'max-turns' } } });
    const store = olderStore(old);
    const recorded = await store.readEvents('old-1', 0);
    expect(recorded.some((e) => e.kind === 'internal:tool-complete')).toBe(true);
    expect(await replaySwarm(store, 'old-1')).toEqual(recorded);
    const last = recorded.at(-1)!;
    expect((withDetails(last, { definitionId: 'turns' }) as any).metadata.error).toEqual({ kind: 'max-turns', message: 'maxTurns (1) reached without a result' });
  });

  it("read a failure's kind from its reason (a fact with a kind is not read from its text)", () => {
    const failed = (reason: string, error?: { kind: 'runtime'; message: string }): SwarmEvent => ({
      kind: 'status-update',
      taskId: 's',
      contextId: 's',
      status: { state: 'failed', timestamp: new Date(0).toISOString() },
      final: true,
      metadata: { type: 'failed', reason, ...(error ? { error } : {}) },
      seq: 3,
      swarmId: 's',
    });
    const kind = (e: SwarmEvent) => ((withDetails(e, { definitionId: 'd' }) as any).metadata.error as { kind: string }).kind;
    expect(kind(failed('Model call failed: boom'))).toBe('model-call');
    expect(kind(failed('maxTurns (3) reached without a result'))).toBe('max-turns');
    expect(kind(failed('Tool "t" timed out after 5 ms (onTimeout: \'fail\')'))).toBe('timeout');
    expect(kind(failed('I cannot'))).toBe('failed');
    // A recorded kind wins over what the text looks like.
    expect(kind(failed('Model call failed: boom', { kind: 'runtime', message: 'Model call failed: boom' }))).toBe('runtime');
  });
});
