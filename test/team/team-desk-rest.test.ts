/**
 * The inbox and the board's changes over REST (`src/server/team-desk.ts`) and through the
 * client: messages written and broadcast, a help request answered by the user, and task updates
 * (a blocker added, a task assigned to a worker, a task canceled), with their refusals.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { createRuntime, defineSwarm, defineTeam, scriptedModel, type ModelRequest, type Runtime } from '../../src/index.js';
import { serve, type SwarmServer } from '../../src/server/index.js';
import { request } from '../support/server-clients.js';
import { until } from '../support/wait.js';

const taskOf = (req: ModelRequest) => /Task: (\S+)/.exec(String(req.messages.find((m) => m.role === 'user')?.content))?.[1] ?? '?';
const worker = defineSwarm({ id: 'desk-worker', instructions: 'Work.' });
const team = defineTeam({ id: 'desk', workers: [{ type: 'dev', swarm: worker, count: 2 }] });

let runtime: Runtime | undefined;
let server: SwarmServer | undefined;
let openGate: () => void = () => undefined;
afterEach(async () => {
  openGate();
  await server?.close();
  await runtime?.close();
  server = undefined;
  runtime = undefined;
});

/** Serves a runtime whose task swarms ask for help on tasks named `ask-*`, and otherwise finish once the gate opens; `ran` logs task:worker-input. */
async function start() {
  let open!: () => void;
  const gate = new Promise<void>((resolve) => (open = resolve));
  openGate = open;
  const ran: string[] = [];
  const model = scriptedModel(async (req) => {
    const task = taskOf(req);
    const answers = req.messages.filter((m) => m.role === 'tool');
    if (task.startsWith('ask') && answers.length === 0)
      return { toolCalls: [{ id: 'q1', name: 'team_help_request', arguments: JSON.stringify({ question: 'Which colour?' }) }] };
    await new Promise<void>((resolve, reject) => {
      void gate.then(resolve);
      req.signal.addEventListener('abort', () => reject(req.signal.reason), { once: true });
    });
    ran.push(task);
    return { text: `built ${task}${answers.length ? ` ${answers.map((m) => m.content).join()}` : ''}` };
  });
  runtime = createRuntime({ model, teams: [team] });
  server = await serve(runtime, { keepAliveMs: 50 });
  return { url: server.url, rt: runtime, open, ran };
}

describe('team inbox over REST', () => {
  it('POST messages writes to a member or broadcasts to all; GET help lists the questions and POST help/:id answers one', async () => {
    const { url, rt, open } = await start();
    expect((await request(url, 'POST', '/teams/desk/d1/messages', { message: 'hi' })).status).toBe(404);
    expect(
      (
        await request(url, 'POST', '/teams/desk/d1/run', {
          tasks: [
            { id: 'ask', subject: 'ask' },
            { id: 'b', subject: 'b' },
          ],
        })
      ).status,
    ).toBe(201);
    const client = rt.forTeam('desk', 'd1');
    const written = await request(url, 'POST', '/teams/desk/d1/messages', { to: 'dev-1', message: 'Use blue' });
    expect(written.status).toBe(201);
    expect(written.body.seqs).toHaveLength(1);
    const everyone = await request(url, 'POST', '/teams/desk/d1/messages', { message: 'Ship on Friday' });
    expect(everyone.status).toBe(201);
    expect(everyone.body.seqs).toHaveLength(3);
    const users = client
      .inbox()
      .messages()
      .filter((m) => m.from === 'user');
    expect(users.map((m) => `${m.to}:${(m.payload as { text: string }).text}`)).toEqual([
      'dev-1:Use blue',
      'leader:Ship on Friday',
      'dev-1:Ship on Friday',
      'dev-2:Ship on Friday',
    ]);
    // Refusals: no message, a recipient not of the team, GET on a POST route.
    expect((await request(url, 'POST', '/teams/desk/d1/messages', { to: 'dev-1' })).status).toBe(400);
    expect((await request(url, 'POST', '/teams/desk/d1/messages', { to: 'dev-7', message: 'x' })).status).toBe(404);
    const wrong = await request(url, 'GET', '/teams/desk/d1/messages');
    expect([wrong.status, wrong.headers.get('allow')]).toEqual([405, 'POST']);
    // The question of task `ask` goes to the user (the team has no onHelpRequest).
    const help = await until(
      'the question',
      () => request(url, 'GET', '/teams/desk/d1/help'),
      (r) => r.body.length === 1 && r.body[0].status === 'escalated',
    );
    expect(help.body[0]).toMatchObject({ id: 'help-1', taskId: 'ask', question: 'Which colour?' });
    expect((await request(url, 'POST', '/teams/desk/d1/help/help-9', { answer: 'red' })).status).toBe(404);
    expect((await request(url, 'POST', '/teams/desk/d1/help/help-1', {})).status).toBe(400);
    const answered = await request(url, 'POST', '/teams/desk/d1/help/help-1', { answer: 'red' });
    expect(answered.status).toBe(200);
    expect(answered.body).toMatchObject({ id: 'help-1', status: 'answered', answer: 'red', by: 'user' });
    expect((await request(url, 'POST', '/teams/desk/d1/help/help-1', { answer: 'green' })).status).toBe(409);
    expect((await request(url, 'DELETE', '/teams/desk/d1')).status).toBe(409);
    open();
    expect((await client.wait()).status).toBe('completed');
    expect(String(client.board().tasks.find((t) => t.id === 'ask')!.result)).toContain('red');
  });

  it('PATCH tasks/:id adds a blocker, assigns a task to a worker, cancels one; refuses a cycle, an unknown worker, blockers for a running task', async () => {
    const { url, rt, open, ran } = await start();
    // Task a holds both workers' attention first; c and d wait on nothing but are changed before anyone is free.
    const tasks = [
      { id: 'a', subject: 'a' },
      { id: 'b', subject: 'b' },
      { id: 'c', subject: 'c', dependencies: ['a'] },
      { id: 'd', subject: 'd', dependencies: ['a'] },
      { id: 'e', subject: 'e', dependencies: ['a'] },
    ];
    expect((await request(url, 'POST', '/teams/desk/d2/run', { tasks })).status).toBe(201);
    const client = rt.forTeam('desk', 'd2');
    await until('a and b to run', () => client.board().counts.in_progress === 2);
    // d now waits on c as well: it runs after c.
    const blocked = await request(url, 'PATCH', '/teams/desk/d2/tasks/d', { addBlockers: ['c'] });
    expect(blocked.status).toBe(200);
    expect(blocked.body.dependencies).toEqual(['a', 'c']);
    expect((await request(url, 'PATCH', '/teams/desk/d2/tasks/c', { addBlockers: ['d'] })).status).toBe(400);
    // c goes to dev-2, whoever is free first.
    expect((await request(url, 'PATCH', '/teams/desk/d2/tasks/c', { assignTo: 'dev-9' })).status).toBe(404);
    expect((await request(url, 'PATCH', '/teams/desk/d2/tasks/c', { assignTo: 'dev-2' })).status).toBe(200);
    // e is given up.
    const canceled = await request(url, 'PATCH', '/teams/desk/d2/tasks/e', { cancel: true });
    expect([canceled.status, canceled.body.status]).toEqual([200, 'failed']);
    expect((await request(url, 'PATCH', '/teams/desk/d2/tasks/a', { addBlockers: ['b'] })).status).toBe(409);
    expect((await request(url, 'PATCH', '/teams/desk/d2/tasks/zz', { cancel: true })).status).toBe(404);
    expect((await request(url, 'PATCH', '/teams/desk/d2/tasks/c', { cancel: 'yes' })).status).toBe(400);
    open();
    const summary = await client.wait();
    expect(summary.counts).toMatchObject({ completed: 4, failed: 1 });
    expect(ran.indexOf('c')).toBeLessThan(ran.indexOf('d'));
    const claims = [];
    for await (const event of client.events({ signal: AbortSignal.timeout(500) })) {
      if (event.metadata.type === 'team-task-claimed') claims.push(event.metadata);
      if (event.metadata.type === 'team-ended') break;
    }
    expect(claims.find((c) => c.taskId === 'c')).toMatchObject({ workerId: 'dev-2' });
    expect(claims.some((c) => c.taskId === 'e')).toBe(false);
    // The finished team is deleted: its record and its four attempts' records.
    const deleted = await request(url, 'DELETE', '/teams/desk/d2');
    expect([deleted.status, deleted.body]).toEqual([200, { deleted: 5 }]);
    expect((await request(url, 'GET', '/teams/desk/d2')).status).toBe(404);
    expect((await request(url, 'DELETE', '/teams/desk/d2')).status).toBe(404);
  });
});
