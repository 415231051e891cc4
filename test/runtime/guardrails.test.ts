/**
 * Guardrails at every step (issue 30, item 7): on the input, each model response, each tool
 * call before it runs and the final result; per guardrail, a rejection rejects the swarm (A2A
 * `rejected`, the `failed` state node), pauses it (resume goes on as if allowed, stop ends it)
 * or, for a tool call, blocks only that call (the model reads why). For defined swarms, agents
 * and ad-hoc swarms; replayed with zero model and tool calls; across a restart.
 */
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import {
  DefinitionError,
  defineAgent,
  memoryStore,
  defineSwarm,
  type GuardedToolCall,
  type Guardrail,
  handoff,
  handoffToolName,
  LocalBus,
  localTransport,
  type ModelRequest,
  scriptedModel,
  tool,
} from '../../src/index.js';
import { call, collect } from '../support/script.js';
import { sqliteFilePerTest } from '../support/sqlite-file.js';

const file = sqliteFilePerTest('xswarm-guardrails-');
const runtime = file.runtime;

/** A tool that counts its runs. */
function deleteTool() {
  const runs: string[] = [];
  const t = tool({
    name: 'delete_file',
    description: 'Deletes a file',
    parameters: z.object({ path: z.string() }),
    execute: ({ path }) => {
      runs.push(path);
      return `deleted ${path}`;
    },
  });
  return { tool: t, runs };
}

/** A model that asks to delete /etc/passwd once, then completes with what the tool answered. */
function deleter() {
  const requests: ModelRequest[] = [];
  const model = scriptedModel((req) => {
    requests.push(req);
    const result = req.messages.find((m) => m.role === 'tool');
    return result ? { text: `after: ${result.content}` } : call('delete_file', { path: '/etc/passwd' }, 'd1');
  });
  return { model, requests };
}

const noSystemFiles = (onReject?: 'reject' | 'pause' | 'block'): Guardrail<GuardedToolCall> => ({
  name: 'no-system-files',
  check: (c) => !String(c.arguments.path).startsWith('/etc') || `may not touch ${String(c.arguments.path)}`,
  ...(onReject ? { onReject } : {}),
});

const swarmWith = (guardrails: Parameters<typeof defineSwarm>[0]['guardrails'], tools = [deleteTool().tool]) =>
  defineSwarm({ id: 'ops', instructions: 'Operate.', tools, guardrails });

const finalState = (events: { kind: string }[]) => {
  const last = events.at(-1) as { kind: string; status?: { state: string }; final?: boolean };
  return { kind: last.kind, state: last.status?.state, final: last.final };
};

describe('tool-call guardrails', () => {
  it('reject (the default): the tool never runs, the swarm ends rejected everywhere; replay makes zero calls', async () => {
    const { tool: t, runs } = deleteTool();
    const { model, requests } = deleter();
    const rt = runtime({ swarms: [swarmWith({ toolCall: [noSystemFiles()] }, [t])], model });
    const client = rt.forSwarm('ops', 'r1');
    await client.run('Clean up');
    const rejected = {
      status: 'failed',
      reason: 'Tool-call guardrail rejected the call to "delete_file": no-system-files: may not touch /etc/passwd',
      rejected: { guardrail: 'no-system-files', step: 'toolCall', callId: 'd1' },
    };
    expect(await client.wait()).toEqual(rejected);
    expect(runs).toEqual([]);
    const [summary] = await rt.list({ definitionId: 'ops', status: ['failed'] });
    expect(summary).toMatchObject({ swarmId: 'r1', status: 'failed', result: rejected });
    const events = await collect(client.events());
    expect(finalState(events)).toEqual({ kind: 'status-update', state: 'rejected', final: true });

    const calls = requests.length;
    expect(await collect(rt.replay('r1'))).toEqual(events);
    expect(requests).toHaveLength(calls);
    expect(runs).toEqual([]);
  });

  it('block: only that call is refused, the model reads why as its result and goes on', async () => {
    const { tool: t, runs } = deleteTool();
    const { model } = deleter();
    const rt = runtime({ swarms: [swarmWith({ toolCall: [noSystemFiles('block')] }, [t])], model });
    const client = rt.forSwarm('ops', 'b1');
    await client.run('Clean up');
    expect(await client.wait()).toEqual({
      status: 'completed',
      result: 'after: Guardrail "no-system-files" blocked this call: may not touch /etc/passwd',
    });
    expect(runs).toEqual([]);
    expect(await collect(rt.replay('b1'))).toEqual(await collect(client.events()));
  });

  it('pause: paused naming the guardrail, the call held; resume runs it, stop ends the swarm; replay makes zero calls', async () => {
    const { tool: t, runs } = deleteTool();
    const { model, requests } = deleter();
    const rt = runtime({ swarms: [swarmWith({ toolCall: [noSystemFiles('pause')] }, [t])], model });
    const client = rt.forSwarm('ops', 'p1');
    await client.run('Clean up');
    const paused = await client.wait();
    expect(paused).toMatchObject({
      status: 'paused',
      reason: {
        type: 'GUARDRAIL',
        message: expect.stringContaining('no-system-files: may not touch /etc/passwd'),
        guardrail: { guardrail: 'no-system-files', step: 'toolCall', callId: 'd1' },
        pauseId: 'guardrail:t0:1',
      },
    });
    expect(runs).toEqual([]);
    await client.resume('It is a test machine, go ahead.');
    expect(await client.wait()).toEqual({ status: 'completed', result: 'after: deleted /etc/passwd' });
    expect(runs).toEqual(['/etc/passwd']);
    // The human's word reached the model after the call's result.
    expect(requests.at(-1)!.messages.at(-1)).toEqual({ role: 'user', content: 'It is a test machine, go ahead.' });

    const calls = requests.length;
    expect(await collect(rt.replay('p1'))).toEqual(await collect(client.events()));
    expect(requests).toHaveLength(calls);
    expect(runs).toHaveLength(1);

    const stopped = rt.forSwarm('ops', 'p2');
    await stopped.run('Clean up');
    expect(await stopped.wait()).toMatchObject({ status: 'paused', reason: { type: 'GUARDRAIL' } });
    await stopped.stop('no');
    expect(await stopped.wait()).toEqual({ status: 'stopped', reason: 'no' });
    expect(runs).toHaveLength(1);
  });

  it('a guardrail that throws rejects the swarm with a clear error, whatever its onReject says', async () => {
    const { tool: t, runs } = deleteTool();
    const broken: Guardrail<GuardedToolCall> = {
      name: 'policy-service',
      onReject: 'block',
      check: () => {
        throw new Error('policy service unreachable');
      },
    };
    const rt = runtime({ swarms: [swarmWith({ toolCall: [broken] }, [t])], model: deleter().model });
    const client = rt.forSwarm('ops', 't1');
    await client.run('Clean up');
    expect(await client.wait()).toEqual({
      status: 'failed',
      reason: 'Tool-call guardrail rejected the call to "delete_file": policy-service: the guardrail threw an error: policy service unreachable',
      rejected: { guardrail: 'policy-service', step: 'toolCall', callId: 'd1' },
    });
    expect(runs).toEqual([]);
  });
});

describe('response, input and output guardrails', () => {
  const noLeaks: Guardrail<{ text?: string }> = { name: 'no-leaks', check: (r) => !r.text?.includes('SECRET') || 'the response leaks a secret' };

  it('a response guardrail rejects before anything in the response is acted on', async () => {
    const model = scriptedModel(() => ({ text: 'the SECRET is 42', toolCalls: [{ id: 'd1', name: 'delete_file', arguments: '{"path":"/tmp/x"}' }] }));
    const { tool: t, runs } = deleteTool();
    const rt = runtime({ swarms: [swarmWith({ response: [noLeaks] }, [t])], model });
    const client = rt.forSwarm('ops', 'x1');
    await client.run('Go');
    expect(await client.wait()).toEqual({
      status: 'failed',
      reason: 'Response guardrail rejected the response: no-leaks: the response leaks a secret',
      rejected: { guardrail: 'no-leaks', step: 'response' },
    });
    expect(runs).toEqual([]);
  });

  it('a response guardrail that pauses holds the completion until resumed', async () => {
    const rt = runtime({ swarms: [swarmWith({ response: [{ ...noLeaks, onReject: 'pause' }] })], model: scriptedModel(() => ({ text: 'SECRET plan' })) });
    const client = rt.forSwarm('ops', 'x2');
    await client.run('Go');
    expect(await client.wait()).toMatchObject({ status: 'paused', reason: { type: 'GUARDRAIL', guardrail: { guardrail: 'no-leaks', step: 'response' } } });
    await client.resume('Fine, publish it.');
    expect(await client.wait()).toEqual({ status: 'completed', result: 'SECRET plan' });
    expect(await collect(rt.replay('x2'))).toEqual(await collect(client.events()));
  });

  it('an input guardrail that pauses calls no model until resumed; an output one holds the result', async () => {
    const requests: ModelRequest[] = [];
    const model = scriptedModel((req) => {
      requests.push(req);
      return { text: `answer to ${req.messages.filter((m) => m.role === 'user').length} user messages` };
    });
    const input: Guardrail<string> = { name: 'short', onReject: 'pause', check: (i) => i.length < 10 || 'the request is long' };
    const output: Guardrail<string> = { name: 'reviewed', onReject: 'pause', check: () => 'a human reviews every result' };
    const rt = runtime({ swarms: [defineSwarm({ id: 'ops', instructions: 'Answer.', guardrails: { input: [input], output: [output] } })], model });
    const client = rt.forSwarm('ops', 'i1');
    await client.run('a rather long request');
    expect(await client.wait()).toMatchObject({ status: 'paused', reason: { guardrail: { guardrail: 'short', step: 'input' } } });
    expect(requests).toHaveLength(0);
    await client.resume('ok');
    expect(await client.wait()).toMatchObject({ status: 'paused', reason: { guardrail: { guardrail: 'reviewed', step: 'output' } } });
    expect(requests).toHaveLength(1);
    // The paused input left no empty response in the conversation; the human's word is in it.
    expect(requests[0]!.messages.map((m) => m.role)).toEqual(['system', 'user', 'user']);
    await client.resume();
    expect(await client.wait()).toEqual({ status: 'completed', result: 'answer to 2 user messages' });
    expect(requests).toHaveLength(1);
    expect(await collect(rt.replay('i1'))).toEqual(await collect(client.events()));
  });
});

describe('agents and ad-hoc swarms', () => {
  it("an agent's tool-call guardrail blocks its call; its response guardrail fails its handoff, which the orchestrator reads", async () => {
    const { tool: t, runs } = deleteTool();
    const cleaner = defineAgent({
      id: 'cleaner',
      instructions: 'Clean.',
      tools: [t],
      guardrails: {
        toolCall: [noSystemFiles('block')],
        response: [{ name: 'polite', check: (r) => !r.text?.includes('idiot') || 'rude' }],
      },
    });
    const model = scriptedModel((req) => {
      if (req.agentId === 'cleaner') {
        const result = req.messages.find((m) => m.role === 'tool');
        return result ? { text: `idiot, ${result.content}` } : call('delete_file', { path: '/etc/hosts' }, 'a1');
      }
      const answer = req.messages.find((m) => m.role === 'tool');
      return answer ? { text: `lead read: ${answer.content}` } : call(handoffToolName('cleaner'), { request: 'clean' }, 'h1');
    });
    const rt = runtime({ swarms: [defineSwarm({ id: 'lead', instructions: 'Lead.', handoffs: [handoff.toAgent(cleaner)] })], model });
    const client = rt.forSwarm('lead', 'a1');
    await client.run('Go');
    expect(await client.wait()).toEqual({ status: 'completed', result: 'lead read: Response guardrail rejected the response: polite: rude' });
    expect(runs).toEqual([]);
    expect(await collect(rt.replay('a1'))).toEqual(await collect(client.events()));
  });

  it('an agent hosted by another runtime keeps its guardrails there', async () => {
    const { tool: t, runs } = deleteTool();
    const cleaner = defineAgent({ id: 'cleaner', instructions: 'Clean.', tools: [t], guardrails: { toolCall: [noSystemFiles('block')] } });
    const bus = new LocalBus();
    const store = memoryStore();
    const hosting = { deadlineMs: 400, heartbeatMs: 50, heartbeatTimeoutMs: 300 };
    const agentModel = scriptedModel((req) => {
      const result = req.messages.find((m) => m.role === 'tool');
      return result ? { text: `cleaner read: ${result.content}` } : call('delete_file', { path: '/etc/hosts' }, 'a1');
    });
    const worker = runtime({ agents: [cleaner], model: agentModel, store, transport: localTransport(bus), hosting });
    await worker.start();
    const leadModel = scriptedModel((req) => {
      const answer = req.messages.find((m) => m.role === 'tool');
      return answer ? { text: answer.content } : call(handoffToolName('cleaner'), { request: 'clean' }, 'h1');
    });
    const lead = defineSwarm({ id: 'lead', instructions: 'Lead.', handoffs: [handoff.toAgent('cleaner')] });
    const home = runtime({ swarms: [lead], model: leadModel, store, transport: localTransport(bus), hosting });
    await home.start();
    const client = home.forSwarm('lead', 'hosted-1');
    await client.run('Go');
    expect(await client.wait()).toEqual({ status: 'completed', result: 'cleaner read: Guardrail "no-system-files" blocked this call: may not touch /etc/hosts' });
    expect(runs).toEqual([]);
  });

  it('an ad-hoc swarm takes guardrails, stored by name: a restarted runtime resolves them from createRuntime({ guardrails })', async () => {
    const { tool: t, runs } = deleteTool();
    const guard = noSystemFiles('pause');
    const a = runtime({ tools: [t], guardrails: [guard], model: deleter().model, store: file.open() });
    await a.adhoc('h1').run({ userMessage: 'Clean up', instructions: 'Operate.', tools: [t], guardrails: { toolCall: [guard] } });
    expect(await a.adhoc('h1').wait()).toMatchObject({ status: 'paused', reason: { type: 'GUARDRAIL', guardrail: { guardrail: 'no-system-files' } } });
    await a.close();

    const b = runtime({ tools: [t], guardrails: [guard], model: deleter().model, store: file.open() });
    await b.start();
    await b.adhoc('h1').resume('go');
    expect(await b.adhoc('h1').wait()).toEqual({ status: 'completed', result: 'after: deleted /etc/passwd' });
    expect(runs).toEqual(['/etc/passwd']);
  });

  it('an ad-hoc guardrail a restarted runtime does not know rejects the swarm (fail closed)', async () => {
    const { tool: t, runs } = deleteTool();
    const slowModel = scriptedModel((req) => {
      const result = req.messages.find((m) => m.role === 'tool');
      if (result) return { text: result.content };
      return call('delete_file', { path: '/etc/passwd' }, 'd1');
    });
    const a = runtime({ tools: [t], model: slowModel, store: file.open() });
    const adhoc = a.adhoc('u1');
    await adhoc.run({
      userMessage: 'Go',
      instructions: 'Operate.',
      tools: [t],
      guardrails: { input: [{ name: 'ask-first', onReject: 'pause', check: () => 'ask' }], toolCall: [noSystemFiles()] },
    });
    expect(await adhoc.wait()).toMatchObject({ status: 'paused' });
    await a.close();
    const b = runtime({ tools: [t], model: slowModel, store: file.open() });
    await b.start();
    await b.adhoc('u1').resume();
    expect(await b.adhoc('u1').wait()).toMatchObject({
      status: 'failed',
      rejected: { guardrail: 'no-system-files', step: 'toolCall' },
      reason: expect.stringContaining('not registered'),
    });
    expect(runs).toEqual([]);
  });
});

describe('stored before rejections', () => {
  it('a swarm a guardrail failed before (state failed, no rejected) still loads, reads failed and replays', async () => {
    const store = memoryStore();
    const s = defineSwarm({ id: 'ops', instructions: 'Operate.', guardrails: { input: [{ name: 'never', check: () => 'closed' }] } });
    const rt = runtime({ swarms: [s], model: scriptedModel(() => ({ text: 'x' })), store });
    await rt.forSwarm('ops', 'old').run('Go');
    await rt.forSwarm('ops', 'old').wait();
    await rt.close();
    // Rewrite what was stored as the code before rejections stored it (the memory store keeps the objects).
    const reason = 'Input guardrail rejected the input: never: closed';
    for (const e of await store.readEvents('old', 0)) {
      if (e.kind === 'internal:llm-call') e.verdict = { type: 'fail', reason };
      if (e.kind === 'status-update' && e.metadata.type === 'failed') {
        e.status.state = 'failed';
        e.metadata = { type: 'failed', reason };
      }
    }
    const record = (await store.load('old'))!;
    const outcome = (record.snapshot as { context: { outcome: Record<string, unknown> } }).context.outcome;
    delete outcome.rejected;
    record.result = { status: 'failed', reason };

    const rt2 = runtime({ swarms: [s], model: scriptedModel(() => ({ text: 'x' })), store });
    await rt2.start();
    const client = rt2.forSwarm('ops', 'old');
    expect(await client.getResult()).toEqual({ status: 'failed', reason });
    const events = await collect(client.events());
    expect(finalState(events)).toEqual({ kind: 'status-update', state: 'failed', final: true });
    expect(await collect(rt2.replay('old'))).toEqual(events);
  });
});

describe('definitions', () => {
  it('refuses block outside tool calls, an unknown onReject and a guardrail without a check', () => {
    const bad = (guardrails: unknown) => () => defineSwarm({ id: 's', instructions: 'x', guardrails: guardrails as never });
    expect(bad({ output: [{ name: 'g', onReject: 'block', check: () => true }] })).toThrow(DefinitionError);
    expect(bad({ output: [{ name: 'g', onReject: 'block', check: () => true }] })).toThrow(/only tool-call guardrails block/);
    expect(bad({ toolCall: [{ name: 'g', onReject: 'explode', check: () => true }] })).toThrow(/onReject "explode"/);
    expect(bad({ response: [{ name: 'g' }] })).toThrow(/needs a name and a check function/);
  });
});
