/**
 * A swarm a guardrail rejected reads the same on every surface: `failed` with `rejected` in its
 * result (`getResult`, `list`, REST, MCP), A2A state `rejected` (SSE, WebSocket, A2A tasks
 * through the official SDK client, both protocol versions).
 */
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { type Task, TaskState } from '@a2a-js/sdk';
import { describe, expect, it } from 'vitest';
import { createRuntime, defineSwarm, scriptedModel } from '../../src/index.js';
import { serve } from '../../src/server/index.js';
import { MODES, sdkClient, sendRequest, userText } from '../support/a2a-peers.js';
import { readSse, servedPerTest, Subscriber } from '../support/server-clients.js';

const served = servedPerTest();

const REASON = 'Input guardrail rejected the input: no-swearing: the request swears';
const REJECTED = { guardrail: 'no-swearing', step: 'input' };

async function start() {
  const echo = defineSwarm({
    id: 'echo',
    instructions: 'Echo.',
    guardrails: { input: [{ name: 'no-swearing', check: (i: string) => !i.includes('darn') || 'the request swears' }] },
  });
  served.runtime = createRuntime({ swarms: [echo], model: scriptedModel((req) => ({ text: `echo ${req.messages.length}` })) });
  served.server = await serve(served.runtime, {});
  return { base: served.server.url, rt: served.runtime };
}

describe('a rejected swarm on every surface', () => {
  it('REST, SSE, WebSocket and MCP report it rejected', async () => {
    const { base, rt } = await start();
    const client = rt.forSwarm('echo', 'r1');
    await client.run('darn it');
    const result = { status: 'failed', reason: REASON, rejected: REJECTED };
    expect(await client.wait()).toEqual(result);

    expect(await (await fetch(`${base}/swarms/echo/r1`)).json()).toEqual(result);
    const listed = (await (await fetch(`${base}/swarms/echo?status=failed`)).json()) as { swarmId: string; result: unknown }[];
    expect(listed.find((s) => s.swarmId === 'r1')?.result).toEqual(result);

    const sse = await readSse(`${base}/swarms/echo/r1/events`);
    const last = sse.events.at(-1)!.data;
    expect(last).toMatchObject({ kind: 'status-update', final: true, status: { state: 'rejected' }, metadata: { type: 'failed', reason: REASON, rejected: REJECTED } });

    const ws = await Subscriber.open(`${base.replace(/^http/, 'ws')}/events?swarmId=r1&definitionId=echo`);
    const frames = await ws.waitFor((f) => f.some((x) => 'final' in x && x.final === true));
    expect(frames.find((x) => 'final' in x && x.final === true)).toMatchObject({ status: { state: 'rejected' }, metadata: { rejected: REJECTED } });
    ws.ws.close();

    const mcp = new Client({ name: 'xswarm-test', version: '1.0.0' }, { versionNegotiation: { mode: 'legacy' } });
    await mcp.connect(new StreamableHTTPClientTransport(new URL(`${base}/mcp`)));
    try {
      const got = await mcp.callTool({ name: 'echo_get_result', arguments: { swarmId: 'r1' } });
      expect(got.structuredContent).toEqual(result);
    } finally {
      await mcp.close();
    }
  });

  it.each(MODES)('A2A %s: the task ends in TASK_STATE_REJECTED, and lists under it', async (mode) => {
    const { base } = await start();
    const client = await sdkClient(`${base}/a2a/echo/.well-known/agent-card.json`, mode);
    const task = (await client.sendMessage(sendRequest(userText(crypto.randomUUID(), 'darn it')))) as Task;
    expect(task.status?.state).toBe(TaskState.TASK_STATE_REJECTED);
    expect((await client.getTask({ tenant: '', id: task.id })).status?.state).toBe(TaskState.TASK_STATE_REJECTED);
    const ok = (await client.sendMessage(sendRequest(userText(crypto.randomUUID(), 'hello')))) as Task;
    expect(ok.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    if (mode === 'v1.0') {
      const listed = await client.listTasks({ tenant: '', contextId: '', status: TaskState.TASK_STATE_REJECTED, pageToken: '', statusTimestampAfter: undefined });
      expect(listed.tasks.map((t) => t.id)).toEqual([task.id]);
    }
  });
});
