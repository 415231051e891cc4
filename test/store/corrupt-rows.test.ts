/**
 * Corrupt rows in a real SQLite file, seen through every door: REST (fetch, SSE), A2A (the
 * @a2a-js/sdk 1.3 client in v1.0 mode, raw v0.3 JSON-RPC), MCP (the MCP SDK client). The file
 * is written by one runtime, damaged with better-sqlite3 while nobody has it open, and served by
 * another runtime, as after a restart.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { TaskState, type Task } from '@a2a-js/sdk';
import { Client as McpClient, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { CorruptEventError, createRuntime, defineSwarm, type Runtime, scriptedModel, sqliteStore, SwarmError } from '../../src/index.js';
import { serve } from '../../src/server/index.js';
import { sdkClient } from '../support/a2a-peers.js';
import { call } from '../support/script.js';
import { readSse, request } from '../support/server-clients.js';
import { tamper } from '../support/sqlite-raw.js';

const echo = defineSwarm({ id: 'echo', description: 'Repeats the request', instructions: 'Repeat.' });
const asker = defineSwarm({ id: 'asker', description: 'Asks for a day', instructions: 'Book a day.' });

/** Echo answers at once; the asker pauses with a question. */
const model = scriptedModel((req) =>
  req.agentId === 'asker' ? call('pause', { reason: 'Which day?' }, 'p1') : { text: `echo: ${String(req.messages.at(-1)?.content)}` },
);
/** After the restart nothing may reach a model: the damaged swarms must not be driven. */
const noModel = scriptedModel(() => {
  throw new Error('no model call expected');
});

let dir: string;
let dbPath: string;
const cleanups: (() => Promise<unknown>)[] = [];
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'xswarm-corrupt-'));
  dbPath = join(dir, 'state.db');
});
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c().catch(() => undefined);
  rmSync(dir, { recursive: true, force: true });
});

/** Runs the swarms to their resting state (echo completed, asker paused) and closes the runtime. */
async function seed(swarms: { echo?: string[]; asker?: string[] }): Promise<void> {
  const store = sqliteStore(dbPath);
  const rt = createRuntime({ swarms: [echo, asker], model, store });
  for (const id of swarms.echo ?? []) await rt.forSwarm(echo, id).run(`hello ${id}`);
  for (const id of swarms.asker ?? []) await rt.forSwarm(asker, id).run('Book me in');
  for (const id of [...(swarms.echo ?? []), ...(swarms.asker ?? [])]) await rt.forSwarm(id.startsWith('a') ? asker : echo, id).wait();
  await rt.close();
  await store.close();
}

/** A runtime on the damaged file, started (it adopts what it can) and served over HTTP. */
async function restart(): Promise<{ base: string; rt: Runtime }> {
  const store = sqliteStore(dbPath);
  const rt = createRuntime({ swarms: [echo, asker], model: noModel, store });
  cleanups.push(
    () => store.close(),
    () => rt.close(),
  );
  await rt.start();
  const server = await serve(rt);
  cleanups.push(() => server.close());
  return { base: server.url, rt };
}

function rpc(url: string, method: string, params: unknown, headers: Record<string, string> = {}) {
  return request(url, 'POST', '', { jsonrpc: '2.0', id: 1, method, params }, headers);
}

const messageText = (task: Task | undefined) => {
  const part = task?.status?.message?.parts[0]?.content;
  return part?.$case === 'text' ? part.value : undefined;
};

const listAll = { tenant: '', contextId: '', status: 0, pageToken: '', statusTimestampAfter: undefined, includeArtifacts: true };

describe('a corrupt event row', () => {
  it('the store stops reading at it: SwarmError "corrupt" naming swarm and seq, with the events before it', async () => {
    await seed({ echo: ['e1'] });
    tamper(dbPath, `UPDATE events SET body = '{"kind":"status-upd' WHERE swarm_id = 'e1' AND seq = 3`);
    const store = sqliteStore(dbPath);
    cleanups.push(() => store.close());
    const err = await store.readEvents('e1', 0).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(CorruptEventError);
    expect(err).toBeInstanceOf(SwarmError);
    expect(err).toMatchObject({ code: 'corrupt', swarmId: 'e1', seq: 3 });
    expect((err as Error).message).toMatch(/^Cannot read event 3 of swarm "e1": the stored event is corrupt \(.+\)$/);
    expect((err as CorruptEventError).readable.map((e) => e.seq)).toEqual([1, 2]);
    // Reading after it is not affected.
    expect((await store.readEvents('e1', 3)).length).toBeGreaterThan(0);

    // JSON that is not an event of this swarm is corrupt too.
    tamper(dbPath, `UPDATE events SET body = '{"hello":"world"}' WHERE swarm_id = 'e1' AND seq = 4`);
    await expect(store.readEvents('e1', 3)).rejects.toMatchObject({ code: 'corrupt', seq: 4, readable: [] });
    const ev5 = (await store.readEvents('e1', 4))[0]!;
    tamper(dbPath, `UPDATE events SET body = ? WHERE swarm_id = 'e1' AND seq = 5`, JSON.stringify({ ...ev5, swarmId: 'someone-else' }));
    await expect(store.readEvents('e1', 4)).rejects.toThrow(/event 5 of swarm "e1".*names swarm "someone-else"/);
  });

  it('fails only what needs that row: ListTasks lists every task, GetTask reports it failed naming the row, SSE stops at it with an error', async () => {
    await seed({ echo: ['e1', 'e2', 'e3'], asker: ['a1'] });
    tamper(dbPath, `UPDATE events SET body = '{"kind":"status-upd' WHERE swarm_id = 'e2' AND seq = 3`);
    tamper(dbPath, `UPDATE events SET body = '[1,2,3]' WHERE swarm_id = 'e3' AND seq = 3`);
    tamper(dbPath, `UPDATE events SET body = 'garbage' WHERE swarm_id = 'a1' AND seq = 3`);
    const { base } = await restart();
    const problem = (id: string) => new RegExp(`^Cannot read event 3 of swarm "${id}": the stored event is corrupt`);

    // A2A ListTasks (SDK client, v1.0): every task of the definition; the damaged ones failed, naming the row.
    const client = await sdkClient(`${base}/a2a/echo/.well-known/agent-card.json`, 'v1.0');
    const listed = await client.listTasks(listAll);
    expect(listed.totalSize).toBe(3);
    const byId = new Map(listed.tasks.map((t) => [t.id, t]));
    expect(byId.get('e1')?.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    expect(byId.get('e1')?.artifacts.find((a) => a.artifactId === 'result')).toBeDefined();
    for (const id of ['e2', 'e3']) {
      expect(byId.get(id)?.status?.state, id).toBe(TaskState.TASK_STATE_FAILED);
      expect(messageText(byId.get(id)), id).toMatch(problem(id));
      expect(byId.get(id)?.metadata).toMatchObject({ problem: expect.stringMatching(problem(id)) });
      // What precedes the bad row is still told (the input is the first event).
      expect(byId.get(id)?.history[0]?.parts[0]?.content).toEqual({ $case: 'text', value: `hello ${id}` });
    }

    // A2A GetTask: v1.0 through the SDK, v0.3 raw; the healthy task reads normally.
    expect((await client.getTask({ tenant: '', id: 'e2' })).status?.state).toBe(TaskState.TASK_STATE_FAILED);
    expect(messageText(await client.getTask({ tenant: '', id: 'e2' }))).toMatch(problem('e2'));
    expect((await client.getTask({ tenant: '', id: 'e1' })).status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    const v03 = await rpc(`${base}/a2a/echo`, 'tasks/get', { id: 'e3' });
    expect(v03.status).toBe(200);
    expect(v03.body.result.status.state).toBe('failed');
    expect(v03.body.result.status.message.parts[0].text).toMatch(problem('e3'));

    // A2A SubscribeToTask of a (paused) task whose history cannot be read: a clear error.
    const askerClient = await sdkClient(`${base}/a2a/asker/.well-known/agent-card.json`, 'v1.0');
    const subscribed = await (async () => {
      for await (const _ of askerClient.resubscribeTask({ tenant: '', id: 'a1' })) return 'streamed';
      return 'ended';
    })().catch((e: Error) => e);
    expect(subscribed).toBeInstanceOf(Error);
    expect((subscribed as Error).message).toMatch(/Cannot read event 3 of swarm "a1"/);

    // REST: the result and the listing do not need the event rows.
    expect((await request(base, 'GET', '/swarms/echo/e2')).body).toEqual({ status: 'completed', result: 'echo: hello e2' });
    const rest = await request(base, 'GET', '/swarms/echo');
    expect(rest.status).toBe(200);
    expect(rest.body.map((s: { swarmId: string }) => s.swarmId).sort()).toEqual(['e1', 'e2', 'e3']);

    // REST SSE: the events before the bad row, then an error event naming it; the stream ends.
    const broken = await readSse(`${base}/swarms/echo/e2/events`);
    expect(broken.status).toBe(200);
    expect(broken.ended).toBe(true);
    expect(broken.events.map((e) => e.id)).toEqual(['1', '2', undefined]);
    expect(broken.events.at(-1)?.event).toBe('error');
    expect((broken.events.at(-1)?.data as unknown as { error: string } | undefined)?.error).toMatch(problem('e2'));
    // Resuming after the bad row reads on normally, to the final event.
    const after = await readSse(`${base}/swarms/echo/e2/events?since=3`);
    expect(after.events.at(-1)?.data).toMatchObject({ kind: 'status-update', final: true });
    // Another swarm's stream is not affected.
    const healthy = await readSse(`${base}/swarms/echo/e1/events`);
    expect(healthy.events.map((e) => Number(e.id))).toEqual(healthy.events.map((_, i) => i + 1));
    expect(healthy.events.at(-1)?.data).toMatchObject({ kind: 'status-update', final: true });
  });
});

describe('a swarm that cannot be restored', () => {
  it('reads failed with one and the same reason through REST GET, the REST list, A2A GetTask and ListTasks, MCP get_result', async () => {
    await seed({ asker: ['a-corrupt', 'a-old', 'a-fine'] });
    tamper(dbPath, `UPDATE swarms SET snapshot = 'not json' WHERE swarm_id = 'a-corrupt'`);
    tamper(dbPath, `UPDATE swarms SET machine_version = 999 WHERE swarm_id = 'a-old'`);
    const { base, rt } = await restart();

    const reasons = new Map<string, string>();
    for (const [id, why] of [
      ['a-corrupt', /^Cannot read swarm "a-corrupt": stored snapshot is corrupt \(.+\)$/],
      ['a-old', /^Cannot restore swarm "a-old": its snapshot was written by swarm machine version 999/],
    ] as const) {
      const got = await request(base, 'GET', `/swarms/asker/${id}`);
      expect(got.status).toBe(200);
      expect(got.body.status).toBe('failed');
      expect(got.body.reason).toMatch(why);
      reasons.set(id, got.body.reason);
    }
    const failedResult = (id: string) => ({ status: 'failed', reason: reasons.get(id) });

    // REST list: the same status and result, and status filters apply to what is reported.
    const all = await request(base, 'GET', '/swarms/asker');
    const listed = new Map((all.body as { swarmId: string; status: string; result: unknown }[]).map((s) => [s.swarmId, s]));
    for (const id of ['a-corrupt', 'a-old']) expect(listed.get(id), id).toMatchObject({ status: 'failed', result: failedResult(id) });
    expect(listed.get('a-fine')).toMatchObject({ status: 'paused' });
    const ids = (body: { swarmId: string }[]) => body.map((s) => s.swarmId).sort();
    expect(ids((await request(base, 'GET', '/swarms/asker?status=failed')).body)).toEqual(['a-corrupt', 'a-old']);
    expect(ids((await request(base, 'GET', '/swarms/asker?status=paused')).body)).toEqual(['a-fine']);
    expect((await request(base, 'GET', '/swarms/asker?status=failed&limit=1')).body).toHaveLength(1);

    // A2A GetTask (SDK, v1.0) and tasks/get (raw v0.3): failed, the status message is the reason.
    const client = await sdkClient(`${base}/a2a/asker/.well-known/agent-card.json`, 'v1.0');
    for (const id of ['a-corrupt', 'a-old']) {
      const task = await client.getTask({ tenant: '', id });
      expect(task.status?.state, id).toBe(TaskState.TASK_STATE_FAILED);
      expect(messageText(task), id).toBe(reasons.get(id));
      const v03 = await rpc(`${base}/a2a/asker`, 'tasks/get', { id });
      expect(v03.body.result.status.state, id).toBe('failed');
      expect(v03.body.result.status.message.parts[0].text, id).toBe(reasons.get(id));
    }
    expect((await client.getTask({ tenant: '', id: 'a-fine' })).status?.state).toBe(TaskState.TASK_STATE_INPUT_REQUIRED);

    // A2A ListTasks: the same states, and the failed filter finds them.
    const tasks = new Map((await client.listTasks(listAll)).tasks.map((t) => [t.id, t]));
    for (const id of ['a-corrupt', 'a-old']) {
      expect(tasks.get(id)?.status?.state, id).toBe(TaskState.TASK_STATE_FAILED);
      expect(messageText(tasks.get(id)), id).toBe(reasons.get(id));
    }
    expect(tasks.get('a-fine')?.status?.state).toBe(TaskState.TASK_STATE_INPUT_REQUIRED);
    const failed = await client.listTasks({ ...listAll, status: TaskState.TASK_STATE_FAILED });
    expect(failed.tasks.map((t) => t.id).sort()).toEqual(['a-corrupt', 'a-old']);
    const waiting = await client.listTasks({ ...listAll, status: TaskState.TASK_STATE_INPUT_REQUIRED });
    expect(waiting.tasks.map((t) => t.id)).toEqual(['a-fine']);

    // MCP get_result.
    const mcp = new McpClient({ name: 'corrupt-rows-test', version: '1.0.0' });
    await mcp.connect(new StreamableHTTPClientTransport(new URL(`${base}/mcp`)));
    cleanups.push(() => mcp.close());
    for (const id of ['a-corrupt', 'a-old']) {
      const got = await mcp.callTool({ name: 'asker_get_result', arguments: { swarmId: id } });
      expect(got.isError, id).toBeFalsy();
      expect(got.structuredContent, id).toEqual(failedResult(id));
    }

    // Commands name the problem too.
    const resumed = await request(base, 'POST', '/swarms/asker/a-corrupt/resume', { message: 'Monday' });
    expect(resumed.status).toBe(409);
    expect(resumed.body.error).toContain(reasons.get('a-corrupt'));

    // A listing that leaves out an owner's live leases leaves out one this runtime reports
    // failed (stored paused) too.
    tamper(dbPath, `UPDATE swarms SET owner = 'elsewhere', lease_until = ? WHERE swarm_id = 'a-old'`, Date.now() + 600_000);
    const failedNow = async (notHeldBy?: { owner: string; at: number }) =>
      (await rt.list({ status: ['failed'], ...(notHeldBy ? { notHeldBy } : {}) })).map((s) => s.swarmId).sort();
    expect(await failedNow()).toEqual(['a-corrupt', 'a-old']);
    expect(await failedNow({ owner: 'elsewhere', at: Date.now() })).toEqual(['a-corrupt']);
  });
});

describe('a finished swarm with a corrupt snapshot', () => {
  it('keeps its result (it does not need the snapshot); only replay, which does, fails naming it', async () => {
    await seed({ echo: ['e1'] });
    tamper(dbPath, `UPDATE swarms SET snapshot = '{"trunc' WHERE swarm_id = 'e1'`);
    const { base, rt } = await restart();
    const completed = { status: 'completed', result: 'echo: hello e1' };
    expect((await request(base, 'GET', '/swarms/echo/e1')).body).toEqual(completed);
    expect((await request(base, 'GET', '/swarms/echo')).body).toMatchObject([{ swarmId: 'e1', status: 'completed', result: completed }]);
    const client = await sdkClient(`${base}/a2a/echo/.well-known/agent-card.json`, 'v1.0');
    expect((await client.getTask({ tenant: '', id: 'e1' })).status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    await expect(
      (async () => {
        for await (const _ of rt.replay('e1')) void _;
      })(),
    ).rejects.toThrow(/^Cannot replay swarm "e1": stored snapshot is corrupt/);
  });
});
