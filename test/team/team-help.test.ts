/**
 * The inbox made usable (issue 32, seed 004): a worker's model asks for help with the
 * `team_help_request` tool and gets the leader's answer (the definition's `onHelpRequest`), or
 * the user's after an escalation (`teamClient.answer`); users write and broadcast with the
 * client; worker models broadcast and read their inbox with the team tools, each message
 * delivered once, also after a restart on SQLite; tasks go to the worker whose specialty they
 * ask for.
 */
import { describe, expect, it } from 'vitest';
import { createRuntime, defineSwarm, defineTeam, handoff, scriptedModel, type ModelRequest, type ToolContext } from '../../src/index.js';
import { teamTools } from '../../src/team/team-tools.js';
import { sleep } from '../support/sleep.js';
import { sqliteFilePerTest } from '../support/sqlite-file.js';
import { until } from '../support/wait.js';

const file = sqliteFilePerTest('xswarm-team-help-');

const taskOf = (req: ModelRequest) => /Task: (\S+)/.exec(String(req.messages.find((m) => m.role === 'user')?.content))?.[1] ?? '?';
const toolResults = (req: ModelRequest) => req.messages.filter((m) => m.role === 'tool').map((m) => String(m.content));

/** A model whose task swarms first ask `question` for the tasks `asking` names, then finish with what they were told. */
function askingModel(asking: (task: string) => boolean, question = 'Which database?') {
  return scriptedModel((req) => {
    const results = toolResults(req);
    if (asking(taskOf(req)) && results.length === 0) {
      return { toolCalls: [{ id: `ask-${taskOf(req)}`, name: 'team_help_request', arguments: JSON.stringify({ question }) }] };
    }
    return { text: `built ${taskOf(req)}${results.length ? ` with ${results.join(',')}` : ''}` };
  });
}

const worker = defineSwarm({ id: 'help-worker', instructions: 'Work.' });

describe('team help requests', () => {
  it("a worker that asks for help gets the leader's answer (onHelpRequest) and finishes its task with it", async () => {
    const asked: string[] = [];
    const team = defineTeam({
      id: 'helped',
      workers: [{ type: 'dev', swarm: worker, count: 2 }],
      onHelpRequest: ({ question, task, workerId }) => {
        asked.push(`${workerId}:${task?.id}:${question}`);
        return 'Use Postgres';
      },
    });
    const runtime = file.runtime({ model: askingModel((t) => t === 'db'), store: file.open(), teams: [team] });
    const client = runtime.forTeam('helped', 'h1');
    await client.run([
      { id: 'db', subject: 'db' },
      { id: 'ui', subject: 'ui' },
    ]);
    const summary = await client.wait();
    expect(summary.status).toBe('completed');
    expect(asked).toHaveLength(1);
    expect(asked[0]).toMatch(/^dev-\d:db:Which database\?$/);
    const db = client.board().tasks.find((t) => t.id === 'db')!;
    expect(String(db.result)).toContain('Use Postgres');
    // The question went to the leader's inbox, the answer to the worker's, once each.
    const messages = client.inbox().messages();
    const questions = messages.filter((m) => m.type === 'help_request');
    const answers = messages.filter((m) => m.type === 'help_answer');
    expect(questions).toHaveLength(1);
    expect(questions[0]).toMatchObject({ to: 'leader', payload: { taskId: 'db', question: 'Which database?', requestId: 'help-1' } });
    expect(answers).toHaveLength(1);
    expect(answers[0]).toMatchObject({ from: 'leader', to: questions[0]!.from, payload: { requestId: 'help-1', answer: 'Use Postgres', by: 'leader' } });
    expect(await client.helpRequests()).toMatchObject([{ id: 'help-1', status: 'answered', by: 'leader' }]);
    // The leader machine counted the relayed request among its messages.
    expect(client.metrics().messagesByType.help_request).toBe(1);
  });

  it('a question the leader cannot answer is escalated to the user; the worker continues once the user answers', async () => {
    const team = defineTeam({ id: 'escalating', workers: [{ type: 'dev', swarm: worker }], onHelpRequest: () => undefined });
    const runtime = file.runtime({ model: askingModel(() => true, 'Which port?'), store: file.open(), teams: [team] });
    const client = runtime.forTeam('escalating', 'e1');
    await client.run([{ id: 'api', subject: 'api' }]);
    await until('the question to be escalated', async () => (await client.helpRequests()).some((h) => h.status === 'escalated'));
    const [request] = await client.helpRequests();
    expect(request).toMatchObject({ id: 'help-1', workerId: 'dev-1', taskId: 'api', question: 'Which port?', status: 'escalated' });
    // The worker waits (it is not taken for silent meanwhile): the team is still running.
    await sleep(50);
    expect(client.status).toBe('running');
    const events = [];
    for await (const event of client.events({ signal: AbortSignal.timeout(200) })) {
      events.push(event);
      if (event.metadata.type === 'team-help-escalated') break;
    }
    expect(events.at(-1)?.status.state).toBe('input-required');
    await client.answer('help-1', '4000');
    await expect(client.answer('help-1', 'again')).rejects.toThrow(/answered already/);
    expect((await client.wait()).status).toBe('completed');
    expect(String(client.board().tasks[0]!.result)).toContain('4000');
    expect(
      client
        .inbox()
        .messages()
        .filter((m) => m.type === 'help_answer'),
    ).toMatchObject([{ from: 'user', to: 'dev-1', payload: { by: 'user' } }]);
  });
});

describe('team help requests across a restart', () => {
  it('a question escalated before a restart is still waited for after it; the answer reaches the restarted worker, which finishes', async () => {
    const team = defineTeam({ id: 'patient', workers: [{ type: 'dev', swarm: worker }] });
    const one = file.runtime({ model: askingModel(() => true, 'Which region?'), store: file.open(), teams: [team], owner: 'one' });
    const first = one.forTeam('patient', 'p1');
    await first.run([{ id: 'deploy', subject: 'deploy' }]);
    await until('the question to be escalated', async () => (await first.helpRequests()).some((h) => h.status === 'escalated'));
    await one.close();

    const asked: string[] = [];
    const model = scriptedModel((req) => {
      const results = toolResults(req);
      if (results.length === 0) asked.push(taskOf(req));
      return results.length === 0
        ? { toolCalls: [{ id: 'again', name: 'team_help_request', arguments: JSON.stringify({ question: 'Which region?' }) }] }
        : { text: `deployed with ${results.join(',')}` };
    });
    const two = file.runtime({ model, store: file.open(), teams: [team], owner: 'two' });
    const client = two.forTeam('patient', 'p1');
    await client.ready();
    expect(await client.helpRequests()).toMatchObject([{ id: 'help-1', status: 'escalated', question: 'Which region?' }]);
    await until('the team to go on', () => client.status === 'running');
    await client.answer('help-1', 'eu-west');
    expect((await client.wait()).status).toBe('completed');
    expect(String(client.board().tasks[0]!.result)).toContain('eu-west');
    // One question in all: the call in flight at the restart waited for the same request.
    expect((await client.helpRequests()).map((h) => h.id)).toEqual(['help-1']);
    expect(
      client
        .inbox()
        .messages()
        .filter((m) => m.type === 'help_request'),
    ).toHaveLength(1);
    expect(asked).toEqual([]);
  });
});

describe('team messages', () => {
  it('a broadcast reaches every member once; a worker reads each message once; a restart on SQLite delivers nothing twice', async () => {
    const team = defineTeam({ id: 'chatty', workers: [{ type: 'dev', swarm: worker, count: 3 }] });
    // The task swarms wait (a model call that hangs until stopped) so their attempts stay in progress.
    const hanging = scriptedModel(async (req) => {
      await sleep(60_000, req.signal);
      return { text: 'late' };
    });
    const one = file.runtime({ model: hanging, store: file.open(), teams: [team], owner: 'one' });
    const client = one.forTeam('chatty', 'c1');
    await client.run([
      { id: 'a', subject: 'a' },
      { id: 'b', subject: 'b' },
      { id: 'c', subject: 'c' },
    ]);
    await until('the three tasks to be in progress', () => client.board().counts.in_progress === 3);
    // The user broadcasts: the leader and each worker get it once.
    const seqs = await client.broadcast('Standup at 10');
    expect(seqs).toHaveLength(4);
    const [write, broadcast, read] = teamTools();
    const ctxOf = (taskId: string, key: string): ToolContext => {
      const task = client.board().tasks.find((t) => t.id === taskId)!;
      return { swarmId: `c1:${taskId}:${task.attempts}`, agentId: 'help-worker', toolCallId: key, idempotencyKey: key, signal: new AbortController().signal };
    };
    const ownerOf = (taskId: string) => client.board().tasks.find((t) => t.id === taskId)!.owner!;
    // A worker's model broadcasts; the same call run again (same key) sends nothing more.
    await broadcast!.execute({ message: 'API ready' }, ctxOf('a', 'k-bc'));
    await broadcast!.execute({ message: 'API ready' }, ctxOf('a', 'k-bc'));
    await write!.execute({ to: 'leader', message: 'a is half done' }, ctxOf('a', 'k-w'));
    const sender = ownerOf('a');
    const fromWorker = client
      .inbox()
      .messages()
      .filter((m) => m.type === 'message' && m.from === sender);
    expect(
      fromWorker
        .filter((m) => (m.payload as { text: string }).text === 'API ready')
        .map((m) => m.to)
        .sort(),
    ).toEqual(['leader', 'dev-1', 'dev-2', 'dev-3'].filter((m) => m !== sender).sort());
    // Reading: each message once; the same read call again returns the same messages.
    const reader = ownerOf('b');
    const first = (await read!.execute({}, ctxOf('b', 'k-r1'))) as { messages: { text: string }[] };
    expect(first.messages.map((m) => m.text)).toEqual(['Standup at 10', 'API ready']);
    expect(((await read!.execute({}, ctxOf('b', 'k-r1'))) as { messages: unknown[] }).messages).toHaveLength(2);
    expect(((await read!.execute({}, ctxOf('b', 'k-r2'))) as { messages: unknown[] }).messages).toHaveLength(0);
    await one.close();

    // Another runtime on the same file continues the team: the messages are there, once each.
    const two = file.runtime({ model: hanging, store: file.open(), teams: [team], owner: 'two' });
    const again = two.forTeam('chatty', 'c1');
    await again.ready();
    await until('the team to go on', () => again.status === 'running' && again.board().counts.in_progress === 3);
    const kept = again
      .inbox()
      .messages()
      .filter((m) => m.type === 'message');
    for (const member of ['leader', 'dev-1', 'dev-2', 'dev-3']) {
      expect(kept.filter((m) => m.to === member && (m.payload as { text: string }).text === 'Standup at 10')).toHaveLength(1);
      if (member !== sender) expect(kept.filter((m) => m.to === member && (m.payload as { text: string }).text === 'API ready')).toHaveLength(1);
    }
    // The broadcast call run again after the restart (its result was not recorded yet) sends nothing.
    const before = again.inbox().stats().sent;
    const ctx2 = (taskId: string, key: string): ToolContext => {
      const task = again.board().tasks.find((t) => t.id === taskId)!;
      return { swarmId: `c1:${taskId}:${task.attempts}`, agentId: 'help-worker', toolCallId: key, idempotencyKey: key, signal: new AbortController().signal };
    };
    const owner2 = (taskId: string) => again.board().tasks.find((t) => t.id === taskId)!.owner!;
    // The worker holding task b still has read everything up to its cursor: the next read is empty.
    const bTask = again.board().tasks.find((t) => t.id === 'b')!;
    expect([owner2('a'), bTask.owner]).toEqual([sender, reader]);
    await broadcast!.execute({ message: 'API ready' }, ctx2('a', 'k-bc'));
    expect(again.inbox().stats().sent).toBe(before);
    expect(((await read!.execute({}, ctx2('b', 'k-r3'))) as { messages: unknown[] }).messages).toHaveLength(0);
    await again.write(reader, 'only for you');
    expect(((await read!.execute({}, ctx2('b', 'k-r4'))) as { messages: { text: string }[] }).messages.map((m) => m.text)).toEqual(['only for you']);
    await expect(again.write('dev-9', 'nobody')).rejects.toThrow(/not a member/);
    await again.stop();
  });
});

describe('team cleanup', () => {
  it("delete() removes a finished team's record and its task swarms' records; a running team is refused; the id runs again", async () => {
    const team = defineTeam({ id: 'tidy', workers: [{ type: 'dev', swarm: worker, count: 2 }] });
    const store = file.open();
    const runtime = file.runtime({ model: askingModel(() => false), store, teams: [team] });
    const client = runtime.forTeam('tidy', 't1');
    await client.run([
      { id: 'a', subject: 'a' },
      { id: 'b', subject: 'b', dependencies: ['a'] },
    ]);
    await expect(client.delete()).rejects.toThrow(/running/);
    expect((await client.wait()).status).toBe('completed');
    expect(await store.load('t1:a:1')).toBeDefined();
    expect(
      await runtime
        .forTeam('tidy', 'never')
        .delete()
        .catch((e: Error) => e.message),
    ).toMatch(/has not run/);
    expect(await client.delete()).toBe(3);
    expect(await store.load('t1')).toBeUndefined();
    expect(await store.load('t1:a:1')).toBeUndefined();
    expect(await store.load('t1:b:1')).toBeUndefined();
    expect(client.status).toBe('idle');
    // The id is free again: a new run starts from an empty board.
    await client.run([{ id: 'c', subject: 'c' }]);
    expect((await client.wait()).counts).toMatchObject({ total: 1, completed: 1 });
  });
});

describe('team specialty', () => {
  it("each task goes to a worker whose specialty it asks for (metadata.type = the worker's type, or metadata.specialty one of its specialty's words)", async () => {
    const team = defineTeam({
      id: 'special',
      workers: [
        { type: 'fe', specialty: 'frontend css', swarm: worker, count: 2 },
        { type: 'be', specialty: 'backend', swarm: worker, count: 2 },
      ],
    });
    const ran = new Map<string, string>();
    const model = scriptedModel(async (req) => {
      const system = String(req.messages.find((m) => m.role === 'user')?.content);
      ran.set(taskOf(req), /team's (.+) worker/.exec(system)?.[1] ?? '?');
      await sleep(5, req.signal);
      return { text: 'ok' };
    });
    const runtime = createRuntime({ model, teams: [team] });
    try {
      const client = runtime.forTeam('special', 's1');
      await client.run([
        { id: 'page', subject: 'page', metadata: { specialty: 'frontend css' } },
        { id: 'style', subject: 'style', metadata: { specialty: 'CSS' } },
        { id: 'api', subject: 'api', metadata: { type: 'be' } },
        { id: 'db', subject: 'db', metadata: { type: 'backend' } },
        { id: 'docs', subject: 'docs' },
      ]);
      expect((await client.wait()).status).toBe('completed');
      // The task swarm's input names the specialty of the worker that ran it.
      expect(Object.fromEntries(ran)).toEqual({
        page: 'frontend css',
        style: 'frontend css',
        api: 'backend',
        db: 'backend',
        docs: expect.stringMatching(/^(frontend css|backend)$/),
      });
    } finally {
      await runtime.close();
    }
  });
});

describe('team tools on a worker swarm another swarm also hands off to', () => {
  it('the runtime registers the worker with its team tools in its place, and a handoff naming the original reaches it', async () => {
    const summary = defineSwarm({ id: 'summary', instructions: 'Summarize.' });
    const planner = defineSwarm({ id: 'planner', instructions: 'Plan, then summarize.', handoffs: [handoff.toSwarm(summary)] });
    const team = defineTeam({ id: 'writers', workers: [{ type: 'any', swarm: summary }] });
    const seen: string[][] = [];
    const model = scriptedModel((req: ModelRequest) => {
      seen.push([req.agentId, ...(req.tools ?? []).map((t) => t.name)]);
      if (req.agentId === 'summary') return { text: 'Short.' };
      return req.messages.some((m) => m.role === 'tool')
        ? { text: 'Planned.' }
        : { toolCalls: [{ id: 'h1', name: 'handoff_to_summary', arguments: '{"request":"sum up"}' }] };
    });
    const runtime = createRuntime({ swarms: [planner], teams: [team], model });
    try {
      expect(runtime.definition('summary')).not.toBe(summary);
      const client = runtime.forSwarm(planner);
      await client.run('Plan the week');
      expect(await client.wait()).toMatchObject({ status: 'completed', result: 'Planned.' });
      // The child swarm is the registered worker definition: it was offered the team's tools.
      expect(seen.find((s) => s[0] === 'summary')).toEqual(expect.arrayContaining(['team_write', 'team_help_request']));
    } finally {
      await runtime.close();
    }
  });
});
