/**
 * Approvals answered over A2A and MCP with the official SDK clients (`@a2a-js/sdk`,
 * `@modelcontextprotocol/client`): a swarm's own pause for approvals, and a child swarm's
 * surfacing on its root. Over A2A the task goes `input-required` with the pending approvals as
 * a data part, and a follow-up with a data part `{ approve }` / `{ reject, reason }` answers;
 * over MCP `<name>_get_result` lists them and `<name>_approve` / `<name>_reject` answer.
 */
import { type Message, type Task, TaskState } from '@a2a-js/sdk';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { afterEach, describe, expect, it } from 'vitest';
import { createRuntime, defineSwarm, handoff, type PendingApproval } from '../../src/index.js';
import { serve } from '../../src/server/index.js';
import { drain, sdkClient, sendRequest, userText } from '../support/a2a-peers.js';
import { call, lastToolResult, queueModel } from '../support/script.js';
import { servedPerTest } from '../support/server-clients.js';
import { refundSwarm } from '../support/approval-swarms.js';

const served = servedPerTest();
const closing: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const c of closing.splice(0)) await c().catch(() => undefined);
});

const { ran, refund, child: refunds } = refundSwarm();
const desk = defineSwarm({ id: 'desk', description: 'Refunds, with approval', instructions: 'Refund.', tools: [refund] });
const lead = defineSwarm({ id: 'lead', description: 'Leads', instructions: 'Lead.', handoffs: [handoff.toSwarm(refunds)] });

const answerWith = (prefix: string) => (req: Parameters<typeof lastToolResult>[0]) => ({ text: `${prefix}: ${lastToolResult(req)}` });

async function start() {
  ran.length = 0;
  const model = queueModel({
    desk: Array.from({ length: 4 }, (_, i) => [call('refund', { order: `D${i}` }, 'r1'), answerWith('desk')]).flat(),
    refunds: Array.from({ length: 4 }, (_, i) => [call('refund', { order: `C${i}` }, 'r1'), answerWith('child')]).flat(),
    lead: Array.from({ length: 4 }, () => [call('handoff_to_refunds', { request: 'refund' }, 'h1'), answerWith('lead')]).flat(),
  });
  served.runtime = createRuntime({ swarms: [desk, refunds, lead], model });
  served.server = await serve(served.runtime);
  return served.server.url;
}

/** A follow-up message carrying one data part. */
function dataMessage(data: Record<string, unknown>, task: { taskId: string; contextId: string }) {
  const m = userText(crypto.randomUUID(), '', task);
  // The SDK's in-memory data part (userText makes text parts only).
  const parts = [{ content: { $case: 'data' as const, value: data }, metadata: undefined, filename: '', mediaType: 'application/json' }];
  return { ...m, parts } as unknown as typeof m;
}

/** The pending approvals an input-required task's status message carries as data. */
function approvalsOf(task: Task): PendingApproval[] {
  const parts = (task.status?.message as Message | undefined)?.parts ?? [];
  const data = parts.map((p) => p.content).find((c) => c?.$case === 'data')?.value as { pendingApprovals?: PendingApproval[] } | undefined;
  return data?.pendingApprovals ?? [];
}

describe('approvals over A2A (official client)', () => {
  it("a swarm's own: input-required with the approvals as data; a follow-up { approve } answers", async () => {
    const url = await start();
    const client = await sdkClient(`${url}/a2a/desk/.well-known/agent-card.json`, 'v1.0');
    const asked = (await client.sendMessage(sendRequest(userText(crypto.randomUUID(), 'refund D0')))) as Task;
    expect(asked.status?.state).toBe(TaskState.TASK_STATE_INPUT_REQUIRED);
    const [pending] = approvalsOf(asked);
    expect(pending).toMatchObject({ tool: 'refund', callId: 'r1', approvalId: expect.stringMatching(/^apr_/) });
    // A forged id is refused, the task stays input-required.
    await expect(
      client.sendMessage(sendRequest(dataMessage({ approve: 'apr_forgedforgedforgedforg' }, { taskId: asked.id, contextId: asked.contextId }))),
    ).rejects.toThrow();
    const followUp = await drain(client.sendMessageStream(sendRequest(dataMessage({ approve: pending!.approvalId }, { taskId: asked.id, contextId: asked.contextId }))));
    expect((followUp.at(-1)!.payload!.value as Task).status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    expect(ran).toEqual(['D0']);
  });

  it("a child swarm's surfaces on the root task: a follow-up { reject, reason } on the root answers it", async () => {
    const url = await start();
    const client = await sdkClient(`${url}/a2a/lead/.well-known/agent-card.json`, 'v1.0');
    const asked = (await client.sendMessage(sendRequest(userText(crypto.randomUUID(), 'refund C0')))) as Task;
    expect(asked.status?.state).toBe(TaskState.TASK_STATE_INPUT_REQUIRED);
    const [pending] = approvalsOf(asked);
    expect(pending).toMatchObject({ tool: 'refund', swarmId: `${asked.id}:t1:0` });
    const answer = dataMessage({ reject: pending!.approvalId, reason: 'no receipt' }, { taskId: asked.id, contextId: asked.contextId });
    const followUp = await drain(client.sendMessageStream(sendRequest(answer)));
    const last = followUp.at(-1)!.payload!.value as Task;
    expect(last.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    expect(await served.runtime!.forSwarm('lead', asked.id).getResult()).toEqual({
      status: 'completed',
      result: 'lead: child: The call was rejected by a human: no receipt',
    });
    expect(ran).toEqual([]);
  });
});

describe('approvals over MCP (official client)', () => {
  async function mcp(url: string): Promise<Client> {
    const client = new Client({ name: 'xswarm-test', version: '1.0.0' }, { versionNegotiation: { mode: 'legacy' } });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${url}/mcp`)));
    closing.push(() => client.close());
    return client;
  }

  it("a child swarm's approval surfaces in the root's result; <name>_approve on the root answers it", async () => {
    const client = await mcp(await start());
    const names = (await client.listTools()).tools.map((t) => t.name);
    expect(names).toEqual(expect.arrayContaining(['lead_approve', 'lead_reject', 'desk_approve', 'desk_reject']));
    // With wait, the run returns once the child asks: the root is running, waiting for a human.
    const running = (await client.callTool({ name: 'lead_run', arguments: { input: 'refund C0', swarmId: 'm1', wait: true } })).structuredContent as {
      status: string;
      pendingApprovals?: PendingApproval[];
    };
    expect(running).toMatchObject({ status: 'running', pendingApprovals: [expect.objectContaining({ tool: 'refund' })] });
    expect(await client.callTool({ name: 'lead_get_result', arguments: { swarmId: 'm1' } }).then((r) => r.structuredContent)).toMatchObject({
      pendingApprovals: running.pendingApprovals,
    });
    const approvalId = running.pendingApprovals![0]!.approvalId;
    const forged = await client.callTool({ name: 'lead_approve', arguments: { swarmId: 'm1', approvalId: 'apr_forgedforgedforgedforg' } });
    expect(forged.isError).toBe(true);
    const done = await client.callTool({ name: 'lead_approve', arguments: { swarmId: 'm1', approvalId, wait: true } });
    expect(done.structuredContent).toMatchObject({ status: 'completed', result: 'lead: child: refunded C0' });
  });

  it("a swarm's own: <name>_reject answers it and the model reads the reason", async () => {
    const client = await mcp(await start());
    const paused = (await client.callTool({ name: 'desk_run', arguments: { input: 'refund D0', swarmId: 'm2', wait: true } })).structuredContent as {
      status: string;
      reason: { pendingApprovals: PendingApproval[] };
    };
    expect(paused.status).toBe('paused');
    const done = await client.callTool({
      name: 'desk_reject',
      arguments: { swarmId: 'm2', approvalId: paused.reason.pendingApprovals[0]!.approvalId, reason: 'too much', wait: true },
    });
    expect(done.structuredContent).toMatchObject({ status: 'completed', result: 'desk: The call was rejected by a human: too much' });
    expect(ran).toEqual([]);
  });
});
