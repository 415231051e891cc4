/**
 * The event model is the A2A model: every public event of W1, a composed swarm, a paused and
 * resumed swarm and a stopped swarm is an A2A v0.3 object, checked at compile time against the
 * types of the A2A v0.3 SDK, at run time against xswarm's schema and by the SDKs themselves (the
 * 1.x SDK's v0.3 → v1.0 translation, the 0.3 SDK's own task builder). Plus the rules the stream
 * keeps (N turns report N, a final status says why, contexts), a client's contextId across a
 * restart, and stored events of the old format refused with a version error.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { legacyPushNotificationToV1StreamResponse } from '@a2a-js/sdk/compat/v0_3';
import type { Task as A2ATask, TaskArtifactUpdateEvent, TaskStatusUpdateEvent } from 'a2a-sdk-v03';
import { InMemoryTaskStore, ResultManager } from 'a2a-sdk-v03/server';
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import {
  type ArtifactUpdateEvent,
  createRuntime,
  defineAgent,
  defineSwarm,
  factOf,
  handoff,
  isFinalEvent,
  type PublicSwarmEvent,
  publicSwarmEventSchema,
  type Runtime,
  sqliteStore,
  type StatusUpdateEvent,
  type SwarmEvent,
  swarmEventSchema,
  type TaskEvent,
} from '../../src/index.js';
import { serve, type SwarmServer } from '../../src/server/index.js';
import { withPauseRequest } from '../../src/a2a/pause-request.js';
import { createW1Runtime, W1_AGENTS, W1_RESULT } from '../../bench/w1.js';
import { call, collect, queueModel } from '../support/script.js';
import { sleep } from '../support/sleep.js';

// ---- compile time: our events are A2A v0.3 objects -------------------------------------------
// Each assignment stops compiling (`npm run typecheck`) when a shape drifts from the SDK's.
type A2AEvent = A2ATask | TaskStatusUpdateEvent | TaskArtifactUpdateEvent;
const asA2A = (e: PublicSwarmEvent): A2AEvent => e;
const asTask = (e: TaskEvent): A2ATask => e;
const asStatus = (e: StatusUpdateEvent): TaskStatusUpdateEvent => e;
const asArtifact = (e: ArtifactUpdateEvent): TaskArtifactUpdateEvent => e;
// The runtime schema describes exactly the same shapes.
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
const schemaIsTheModel: Same<z.infer<typeof publicSwarmEventSchema>, PublicSwarmEvent> = true;

const echo = () => defineSwarm({ id: 'echo', instructions: 'Repeat.' });
const isPublic = (e: SwarmEvent): e is PublicSwarmEvent => !e.kind.startsWith('internal:');

/**
 * Every check an event stream must pass: each public event validates against the schema and
 * goes through the A2A SDK's own v0.3 → v1.0 translation; the 0.3 SDK's result manager builds
 * the task from the stream as it is, ending in its final status with its result artifact.
 */
async function expectA2AStream(events: readonly SwarmEvent[]): Promise<void> {
  expect(events.map((e) => e.seq)).toEqual(events.map((_, i) => i + 1));
  for (const e of events) expect(swarmEventSchema.safeParse(e).error?.issues ?? [], `event ${e.seq}`).toEqual([]);
  const pub = events.filter(isPublic);
  expect(pub[0]?.kind).toBe('task');
  expect(pub.filter(isFinalEvent)).toEqual([pub.at(-1)]);
  for (const e of pub) {
    expect(publicSwarmEventSchema.safeParse(e).error?.issues ?? [], `event ${e.seq}`).toEqual([]);
    asA2A(e);
    const v1 = legacyPushNotificationToV1StreamResponse(e).payload!;
    expect(v1.$case).toBe(e.kind === 'task' ? 'task' : e.kind === 'status-update' ? 'statusUpdate' : 'artifactUpdate');
  }
  const manager = new ResultManager(new InMemoryTaskStore());
  for (const e of pub) await manager.processEvent(e.kind === 'task' ? asTask(e) : e.kind === 'status-update' ? asStatus(e) : asArtifact(e));
  const task = manager.getCurrentTask()!;
  const last = pub.at(-1) as StatusUpdateEvent;
  expect(task).toMatchObject({ id: last.taskId, contextId: last.contextId, status: last.status });
  const messages = pub.flatMap((e) => (e.kind === 'task' ? (e.history ?? []) : e.kind === 'status-update' && e.status.message ? [e.status.message] : []));
  expect(task.history).toEqual(messages);
  if (last.status.state === 'completed') expect(task.artifacts?.find((a) => a.artifactId === 'result')).toBeDefined();
}

const statusText = (e: SwarmEvent | undefined) =>
  e?.kind === 'status-update' ? e.status.message?.parts.map((p) => (p.kind === 'text' ? p.text : '')).join('') : undefined;
const turns = (events: SwarmEvent[]) => events.map((e) => factOf(e, 'turn-completed')?.turn).filter((t) => t !== undefined);

let runtime: Runtime | undefined;
let server: SwarmServer | undefined;
let dir: string | undefined;
afterEach(async () => {
  await server?.close();
  await runtime?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
  server = runtime = dir = undefined;
});

describe('every public event is an A2A v0.3 event', () => {
  it('W1: an orchestrator and three agent handoffs; four turns report four turn-completed, before the final status', async () => {
    expect(schemaIsTheModel).toBe(true);
    const w1 = createW1Runtime(0);
    runtime = w1.runtime;
    const c = runtime.forSwarm(w1.swarm, 'w1');
    await c.run('Plan my Saturday');
    expect(await c.wait()).toEqual({ status: 'completed', result: W1_RESULT });
    const events = await collect(c.events());
    await expectA2AStream(events);
    expect(events.map((e) => factOf(e, 'agent-handoff')?.to).filter(Boolean)).toEqual([...W1_AGENTS]);
    expect(turns(events)).toEqual([1, 2, 3, 4]);
    const lastTurn = events.findIndex((e) => factOf(e, 'turn-completed')?.turn === 4);
    expect(lastTurn).toBeLessThan(events.findIndex((e) => isFinalEvent(e)));
    // The final status says the result; the task event holds the input as the first message.
    expect(statusText(events.at(-1))).toBe(W1_RESULT);
    expect(events.at(-1)).toMatchObject({ taskId: 'w1', contextId: 'w1', status: { state: 'completed', message: { kind: 'message', role: 'agent' } } });
    expect(events[0]).toMatchObject({ kind: 'task', id: 'w1', contextId: 'w1', history: [{ role: 'user', parts: [{ kind: 'text', text: 'Plan my Saturday' }] }] });
  });

  it('a composed swarm: parent and child streams are A2A streams; the child has a context of its own', async () => {
    const helper = defineAgent({ id: 'helper', instructions: 'Help.' });
    const child = defineSwarm({ id: 'child', instructions: 'Child work.', handoffs: [handoff.toAgent(helper)] });
    const parent = defineSwarm({ id: 'parent', instructions: 'Parent work.', handoffs: [handoff.toSwarm(child)] });
    runtime = createRuntime({
      swarms: [parent, child],
      agents: [helper],
      model: queueModel({
        parent: [call('handoff_to_child', { request: 'do it' }, 'k1'), { text: 'parent done' }],
        child: [call('handoff_to_helper', { request: 'help?' }), { text: 'child done' }],
        helper: [{ text: 'helped' }],
      }),
    });
    const c = runtime.forSwarm(parent, 'p');
    await c.run('go');
    expect(await c.wait()).toEqual({ status: 'completed', result: 'parent done' });
    const events = await collect(c.events());
    await expectA2AStream(events);
    const childId = events.map((e) => factOf(e, 'swarm-handoff')?.childSwarmId).find(Boolean)!;
    const childEvents = await collect(runtime.forSwarm('child', childId).events());
    await expectA2AStream(childEvents);
    expect(turns(events)).toEqual([1, 2]);
    expect(turns(childEvents)).toEqual([1, 2]);
    expect(new Set(events.filter(isPublic).map((e) => e.contextId))).toEqual(new Set(['p']));
    expect(new Set(childEvents.filter(isPublic).map((e) => e.contextId))).toEqual(new Set([childId]));
    expect(childId).not.toBe('p');
  });

  it('a paused and resumed swarm: the question and the answer are status messages; the result ends it', async () => {
    runtime = createRuntime({
      swarms: [defineSwarm({ id: 's', instructions: 'go' })],
      model: queueModel({ s: [call('pause', { reason: 'Which day?' }, 'p1'), { text: 'Sunday it is.' }] }),
    });
    const c = runtime.forSwarm('s', 'paused-1');
    await c.run('plan');
    expect((await c.wait()).status).toBe('paused');
    await c.resume('Sunday');
    expect(await c.wait()).toEqual({ status: 'completed', result: 'Sunday it is.' });
    const events = await collect(c.events());
    await expectA2AStream(events);
    const paused = events.find((e) => factOf(e, 'paused'))!;
    expect(paused).toMatchObject({ status: { state: 'input-required', message: { role: 'agent' } }, final: false });
    expect(statusText(paused)).toBe('Which day?');
    const resumed = events.find((e) => factOf(e, 'resumed'))!;
    expect(resumed).toMatchObject({ status: { state: 'working', message: { role: 'user', parts: [{ kind: 'text', text: 'Sunday' }] } } });
    expect(statusText(events.at(-1))).toBe('Sunday it is.');
    expect(turns(events)).toEqual([1, 2]);
  });

  it('a stopped swarm: the final status is canceled and says why', async () => {
    runtime = createRuntime({
      swarms: [defineSwarm({ id: 's', instructions: 'go' })],
      model: queueModel({ s: [async (req) => (await sleep(5_000, req.signal), { text: 'late' })] }),
    });
    const c = runtime.forSwarm('s', 'stopped-1');
    await c.run('x');
    await sleep(20);
    await c.stop('enough');
    const events = await collect(c.events());
    await expectA2AStream(events);
    expect(events.at(-1)).toMatchObject({ status: { state: 'canceled' }, final: true, metadata: { type: 'stopped', reason: 'enough' } });
    expect(statusText(events.at(-1))).toBe('enough');
  });

  it('results of every JSON type make valid parts: data parts hold objects, other values wrapped as the A2A SDK does', async () => {
    const results: unknown[] = ['text', { day: 'Saturday' }, ['a', 'b'], 42, true, null];
    const typed = defineSwarm({ id: 'typed', instructions: 'go', result: z.unknown() });
    runtime = createRuntime({ swarms: [typed], model: queueModel({ typed: results.map((result) => call('complete', { result })) }) });
    for (const [i, result] of results.entries()) {
      const c = runtime.forSwarm(typed, `typed-${i}`);
      await c.run('x');
      expect(await c.wait()).toEqual({ status: 'completed', result });
      const events = await collect(c.events());
      await expectA2AStream(events);
      const artifact = events.find((e): e is ArtifactUpdateEvent => e.kind === 'artifact-update')!;
      // Through the SDK's translation to v1.0, the data part is the result itself again.
      const v1 = legacyPushNotificationToV1StreamResponse(artifact).payload!;
      const parts = v1.$case === 'artifactUpdate' ? v1.value.artifact!.parts.map((p) => p.content) : [];
      if (typeof result === 'string') expect(parts).toEqual([{ $case: 'text', value: result }]);
      else
        expect(parts).toEqual([
          { $case: 'data', value: result },
          { $case: 'text', value: JSON.stringify(result) },
        ]);
      expect(statusText(events.at(-1))).toBe(typeof result === 'string' ? result : JSON.stringify(result));
    }
  });
});

describe('the A2A server forwards the events as they are', () => {
  async function v03(base: string, method: string, params: unknown): Promise<any> {
    const res = await fetch(`${base}/a2a/echo`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
    });
    return res.json();
  }

  it('v0.3 message/stream: each update on the wire is the stored event without seq and swarmId', async () => {
    runtime = createRuntime({ swarms: [echo()], model: queueModel({ echo: [call('pause', { reason: 'Which day?' }, 'p1')] }) });
    server = await serve(runtime);
    const res = await fetch(`${server.url}/a2a/echo`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'message/stream',
        params: { message: { kind: 'message', messageId: crypto.randomUUID(), role: 'user', parts: [{ kind: 'text', text: 'hi' }], contextId: 'conv-1' } },
      }),
    });
    const wire = (await res.text())
      .split('\n\n')
      .map((b) => b.split('\n').find((l) => l.startsWith('data: ')))
      .filter((l): l is string => !!l)
      .map((l) => JSON.parse(l.slice(6)).result);
    const taskId = wire[0].id as string;
    const stored = (await runtime.store.readEvents(taskId, 1)).filter(isPublic);
    const updates = wire.slice(1);
    expect(updates.length).toBe(stored.length);
    for (const [i, e] of stored.entries()) {
      const { seq: _s, swarmId: _w, ...asSent } = e;
      // The server marks the pause that ends a v0.3 stream final (see `finalOnInputRequired`),
      // and adds the pause's structured request to its message as a data part (src/a2a/pause-request.ts).
      expect(updates[i]).toEqual(factOf(e, 'paused') ? { ...withPauseRequest(asSent as typeof e), final: true } : asSent);
    }
    expect(updates.at(-1)).toMatchObject({
      contextId: 'conv-1',
      status: {
        state: 'input-required',
        message: {
          parts: [
            { kind: 'text', text: 'Which day?' },
            { kind: 'data', data: { type: 'HITL', message: 'Which day?', pauseId: 'p1' }, metadata: { kind: 'xswarm.pause' } },
          ],
        },
      },
    });
  });

  it("an A2A client's contextId is kept with the swarm: after a restart GetTask returns it and a follow-up in another context is refused", async () => {
    dir = mkdtempSync(join(tmpdir(), 'xswarm-a2a-events-'));
    const path = join(dir, 'state.db');
    runtime = createRuntime({ swarms: [echo()], model: queueModel({ echo: [call('pause', { reason: 'Which day?' }, 'p1')] }), store: sqliteStore(path) });
    server = await serve(runtime);
    const sent = await v03(server.url, 'message/send', {
      message: { kind: 'message', messageId: crypto.randomUUID(), role: 'user', parts: [{ kind: 'text', text: 'plan' }], contextId: 'conversation-7' },
    });
    expect(sent.result).toMatchObject({ kind: 'task', contextId: 'conversation-7', status: { state: 'input-required' } });
    const taskId = sent.result.id as string;
    await server.close();
    await runtime.close();

    runtime = createRuntime({ swarms: [echo()], model: queueModel({ echo: [{ text: 'Saturday then' }] }), store: sqliteStore(path) });
    await runtime.start();
    server = await serve(runtime);
    const got = await v03(server.url, 'tasks/get', { id: taskId });
    expect(got.result).toMatchObject({ id: taskId, contextId: 'conversation-7' });
    const v1: any = await (
      await fetch(`${server.url}/a2a/echo`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'A2A-Version': '1.0' },
        body: JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'ListTasks', params: { contextId: 'conversation-7' } }),
      })
    ).json();
    expect(v1.result.tasks.map((t: { id: string; contextId: string }) => [t.id, t.contextId])).toEqual([[taskId, 'conversation-7']]);
    const other = await v03(server.url, 'message/send', {
      message: { kind: 'message', messageId: crypto.randomUUID(), role: 'user', taskId, contextId: 'elsewhere', parts: [{ kind: 'text', text: 'Sat' }] },
    });
    expect(other.error?.message).toMatch(/contextId mismatch/);
    const answered = await v03(server.url, 'message/send', {
      message: { kind: 'message', messageId: crypto.randomUUID(), role: 'user', taskId, contextId: 'conversation-7', parts: [{ kind: 'text', text: 'Sat' }] },
    });
    expect(answered.result).toMatchObject({ contextId: 'conversation-7', status: { state: 'completed' } });
  });
});

describe('stored events of the old format', () => {
  it('are refused with a version error, never misread (a real SQLite file with format-1 rows)', async () => {
    dir = mkdtempSync(join(tmpdir(), 'xswarm-a2a-events-'));
    const path = join(dir, 'state.db');
    await sqliteStore(path).close(); // creates the schema, as any earlier xswarm did
    const db = new Database(path);
    const T = 1_700_000_000_000;
    const row = db.prepare(
      `INSERT INTO swarms (swarm_id, definition_id, definition_version, machine_version, status, revision, snapshot, result, last_seq, updated_at)
       VALUES (?, 'echo', 1, 1, ?, 2, '{"value":"completed","context":{}}', ?, 3, ?)`,
    );
    row.run('old-done', 'completed', JSON.stringify({ status: 'completed', result: 'hello' }), T);
    row.run('old-running', 'running', JSON.stringify({ status: 'running', currentTurn: 0, maxTurns: 10, inFlight: [] }), T);
    const ev = db.prepare('INSERT INTO events (swarm_id, seq, body) VALUES (?, ?, ?)');
    for (const id of ['old-done', 'old-running']) {
      ev.run(id, 1, JSON.stringify({ seq: 1, swarmId: id, timestamp: T, kind: 'task', state: 'submitted', definitionId: 'echo', input: 'hi' }));
      ev.run(
        id,
        2,
        JSON.stringify({ seq: 2, swarmId: id, timestamp: T, kind: 'status-update', state: 'working', final: false, metadata: { type: 'started', definitionId: 'echo' } }),
      );
      ev.run(id, 3, JSON.stringify({ seq: 3, swarmId: id, timestamp: T, kind: 'internal:checkpoint', step: 'start' }));
    }
    db.close();

    const store = sqliteStore(path);
    runtime = createRuntime({ swarms: [echo()], model: queueModel({}), store });
    const refused = {
      name: 'SwarmError',
      code: 'incompatible-version',
      seq: 1,
      message: expect.stringContaining('stored in event format 1; this runtime reads format 2'),
    };
    await expect(store.readEvents('old-done', 0)).rejects.toMatchObject(refused);
    await expect(collect(runtime.forSwarm('echo', 'old-done').events())).rejects.toMatchObject(refused);
    // The record stays readable; an unfinished swarm of the old machine is not restored.
    expect(await runtime.forSwarm('echo', 'old-done').getResult()).toEqual({ status: 'completed', result: 'hello' });
    await runtime.start();
    expect(await runtime.forSwarm('echo', 'old-running').getResult()).toMatchObject({
      status: 'failed',
      reason: expect.stringMatching(/machine version 1, this runtime runs version 2/),
    });
    // Over A2A the task reads failed, its status message naming the version.
    server = await serve(runtime);
    const got: any = await (
      await fetch(`${server.url}/a2a/echo`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tasks/get', params: { id: 'old-done' } }),
      })
    ).json();
    expect(got.result.status).toMatchObject({ state: 'failed', message: { parts: [{ kind: 'text', text: expect.stringContaining('event format 1') }] } });
  });
});
