/**
 * The registry's MCP tools (`create_task`, `list_agents`, `agent_message`, `get_task_status`)
 * on the MCP server of `serve(runtime, { registry })`, driven by the MCP SDK client over HTTP,
 * with real A2A peers behind the registry.
 */
import { Client, ProtocolError, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createRuntime, defineSwarm, scriptedModel, serve } from '../../src/index.js';
import { createAgentRegistry, type AgentRegistry } from '../../src/registry/index.js';
import { peersClosedBy, summarizeTool, tickingClock } from '../support/registry-peers.js';

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c().catch(() => undefined);
});

const peer = peersClosedBy(cleanups);

/** `serve(runtime, { registry })`, the real door: the MCP endpoint's URL. */
async function mcpServer(registry: AgentRegistry | undefined): Promise<string> {
  const runtime = createRuntime({ swarms: [defineSwarm({ id: 'echo', instructions: 'Repeat.' })], model: scriptedModel(() => ({ text: 'x' })) });
  cleanups.push(() => runtime.close());
  const server = await serve(runtime, registry ? { registry } : {});
  cleanups.push(() => server.close());
  return `${server.url}/mcp`;
}

async function client(url: string): Promise<Client> {
  const c = new Client({ name: 'registry-test', version: '1.0.0' });
  await c.connect(new StreamableHTTPClientTransport(new URL(url)));
  cleanups.push(() => c.close());
  return c;
}

async function setup() {
  const a = await peer('A', 'translator-a');
  const b = await peer('B', 'summarizer', [summarizeTool]);
  const registry = createAgentRegistry({ healthIntervalMs: 0, timeoutMs: 2000, now: tickingClock() });
  cleanups.push(() => registry.close());
  await registry.register(a.cardUrl);
  await registry.register(b.cardUrl);
  return { a, b, registry, mcp: await client(await mcpServer(registry)) };
}

const text = (r: { content?: unknown }) => (r.content as { type: string; text: string }[])[0]!.text;

describe('registry tools through the MCP SDK client', () => {
  it('lists the four tools next to the swarm tools, with input schemas; without a registry there are none', async () => {
    const { mcp } = await setup();
    const { tools } = await mcp.listTools();
    const names = tools.map((t) => t.name);
    for (const name of ['create_task', 'list_agents', 'agent_message', 'get_task_status', 'echo_run']) expect(names).toContain(name);
    const create = tools.find((t) => t.name === 'create_task')!;
    expect(create.inputSchema).toMatchObject({ type: 'object', required: ['message'] });
    expect(Object.keys(create.inputSchema.properties ?? {})).toEqual(['id', 'skill', 'agent', 'message', 'dependsOn', 'wait']);

    const plain = await client(await mcpServer(undefined));
    expect((await plain.listTools()).tools.map((t) => t.name)).not.toContain('create_task');
  });

  it('list_agents: health, skills, load and timestamps; filtered by skill', async () => {
    const { mcp, a } = await setup();
    const all = await mcp.callTool({ name: 'list_agents', arguments: {} });
    expect(all.isError).toBeFalsy();
    const agents = (all.structuredContent as { agents: { id: string; health: string; load: number; cardUrl: string; lastHealthy: number; skills: { name: string }[] }[] })
      .agents;
    expect(agents.map((x) => [x.id, x.health, x.load])).toEqual([
      ['translator-a', 'healthy', 0],
      ['summarizer', 'healthy', 0],
    ]);
    expect(agents[0]!.cardUrl).toBe(a.cardUrl);
    expect(agents[0]!.lastHealthy).toEqual(expect.any(Number));
    expect(agents[1]!.skills.map((s) => s.name)).toContain('summarize');
    const filtered = await mcp.callTool({ name: 'list_agents', arguments: { skill: 'Summarize' } });
    expect((filtered.structuredContent as { agents: { id: string }[] }).agents.map((x) => x.id)).toEqual(['summarizer']);
    expect(JSON.parse(text(filtered))).toEqual(filtered.structuredContent);
  });

  it('create_task dispatches by skill (with dependencies); get_task_status follows it', async () => {
    const { mcp, a, b } = await setup();
    const release = a.model.hold('translate this');
    const first = await mcp.callTool({ name: 'create_task', arguments: { id: 't1', skill: 'translate', message: 'translate this' } });
    expect(first.structuredContent).toMatchObject({ id: 't1', state: 'submitted', skill: 'translate' });
    const second = await mcp.callTool({
      name: 'create_task',
      arguments: { id: 't2', skill: 'summarize', message: 'summarize that', dependsOn: [{ taskId: 't1', kind: 'blocking' }] },
    });
    expect(second.structuredContent).toMatchObject({ id: 't2', state: 'submitted' });

    await vi.waitFor(async () => {
      const status = await mcp.callTool({ name: 'get_task_status', arguments: { taskId: 't1' } });
      expect(status.structuredContent).toMatchObject({ state: 'working', agentId: 'translator-a' });
    });
    expect((await mcp.callTool({ name: 'get_task_status', arguments: { taskId: 't2' } })).structuredContent).toMatchObject({ state: 'submitted' });
    expect(b.model.seen).toEqual([]);

    release();
    const done = await mcp.callTool({ name: 'get_task_status', arguments: { taskId: 't2', wait: true } });
    expect(done.structuredContent).toMatchObject({ state: 'completed', agentId: 'summarizer', result: 'B did: summarize that' });
    const t1 = (await mcp.callTool({ name: 'get_task_status', arguments: { taskId: 't1' } })).structuredContent as { endedAt: number; result: string };
    expect(t1.result).toBe('A did: translate this');
    expect((done.structuredContent as { startedAt: number }).startedAt).toBeGreaterThan(t1.endedAt);

    const waited = await mcp.callTool({ name: 'create_task', arguments: { skill: 'translate', message: 'FAIL now', wait: true } });
    expect(waited.isError).toBeFalsy();
    expect(waited.structuredContent).toMatchObject({ state: 'failed', error: 'The remote agent "translator-a" failed: A cannot do "FAIL now"' });
  });

  it('agent_message sends to a named agent and returns its answer', async () => {
    const { mcp, b } = await setup();
    const answer = await mcp.callTool({ name: 'agent_message', arguments: { agent: 'summarizer', message: 'hello there' } });
    expect(answer.isError).toBeFalsy();
    expect(answer.structuredContent).toEqual({ agent: 'summarizer', answer: 'B did: hello there' });
    expect(b.model.seen).toEqual(['hello there']);

    const failed = await mcp.callTool({ name: 'agent_message', arguments: { agent: 'summarizer', message: 'FAIL please' } });
    expect(failed).toMatchObject({ isError: true, content: [{ type: 'text', text: 'agent-failed: The remote agent "summarizer" failed: B cannot do "FAIL please"' }] });
  });

  it('a task asking for input: get_task_status shows the question, agent_message with taskId answers it', async () => {
    const { mcp } = await setup();
    await mcp.callTool({ name: 'create_task', arguments: { id: 'q', skill: 'translate', message: 'ASK where' } });
    const asking = await mcp.callTool({ name: 'get_task_status', arguments: { taskId: 'q', wait: true } });
    expect(asking.structuredContent).toMatchObject({ state: 'input-required', agentId: 'translator-a', question: 'A asks: which city?' });

    const answered = await mcp.callTool({ name: 'agent_message', arguments: { taskId: 'q', message: 'Oslo' } });
    expect(answered.isError).toBeFalsy();
    expect(answered.structuredContent).toMatchObject({ agent: 'translator-a', task: { id: 'q', state: 'working' } });
    const done = await mcp.callTool({ name: 'get_task_status', arguments: { taskId: 'q', wait: true } });
    expect(done.structuredContent).toMatchObject({ state: 'completed', result: 'A did: ASK where in Oslo' });

    const again = await mcp.callTool({ name: 'agent_message', arguments: { taskId: 'q', message: 'Bergen' } });
    expect(again).toMatchObject({ isError: true, content: [{ type: 'text', text: 'wrong-state: Task "q" is completed, not waiting for input' }] });
    const neither = await mcp.callTool({ name: 'agent_message', arguments: { message: 'to whom?' } });
    expect(text(neither)).toBe('invalid-task: agent_message needs an agent, or a taskId to answer');
  });

  it('caller mistakes are isError results with the error code; unknown tools are protocol errors', async () => {
    const { mcp, a } = await setup();
    const unknownTask = await mcp.callTool({ name: 'get_task_status', arguments: { taskId: 'nope' } });
    expect(unknownTask).toMatchObject({ isError: true, content: [{ type: 'text', text: 'unknown-task: No task "nope"' }] });
    const unknownAgent = await mcp.callTool({ name: 'agent_message', arguments: { agent: 'nobody', message: 'hi' } });
    expect(unknownAgent).toMatchObject({ isError: true, content: [{ text: 'unknown-agent: No agent "nobody" is registered' }] });
    const badDep = await mcp.callTool({ name: 'create_task', arguments: { skill: 'translate', message: 'm', dependsOn: [{ taskId: 'ghost', kind: 'blocking' }] } });
    expect(text(badDep)).toMatch(/^unknown-task: Task ".+" depends on unknown task "ghost"$/);
    const neither = await mcp.callTool({ name: 'create_task', arguments: { id: 'n', message: 'm' } });
    expect(text(neither)).toBe('invalid-task: Task "n" names neither a skill nor an agent');

    // Arguments that do not match the schema never reach the registry.
    const invalid = await mcp.callTool({ name: 'create_task', arguments: { skill: 'translate', dependsOn: [{ taskId: 'x', kind: 'soon' }] } });
    expect(invalid.isError).toBe(true);
    expect(text(invalid)).toMatch(/^Input validation error: Invalid arguments for tool create_task: message: .*dependsOn\.0\.kind: /);
    expect(a.model.seen).toEqual([]);
    await expect(mcp.callTool({ name: 'delete_task', arguments: {} })).rejects.toBeInstanceOf(ProtocolError);

    // A stopped agent: the message fails with the reason, the failure triggers a health check,
    // and from then on the agent is refused as unhealthy.
    await a.stop();
    const unreachable = await mcp.callTool({ name: 'agent_message', arguments: { agent: 'translator-a', message: 'hi' } });
    expect(unreachable).toMatchObject({ isError: true });
    expect(text(unreachable)).toMatch(/^agent-failed: Could not reach the remote agent at .*: fetch failed/);
    await vi.waitFor(async () => {
      const listed = await mcp.callTool({ name: 'list_agents', arguments: { skill: 'translate' } });
      expect(listed.structuredContent).toMatchObject({ agents: [{ id: 'translator-a', health: 'unhealthy' }] });
    });
    const refused = await mcp.callTool({ name: 'agent_message', arguments: { agent: 'translator-a', message: 'hi' } });
    expect(text(refused)).toMatch(/^no-agent: Agent "translator-a" is unhealthy: The agent card at .* could not be read: fetch failed/);
  });
});
