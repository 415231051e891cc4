/**
 * A help request escalated to the user shows in the team's status (real SQLite): the summary
 * (`teamClient.summary()`, REST `GET /teams/:def/:team`) says `waitingFor: 'help'` with the
 * requests to answer, `runtime.listTeams()` names them, while the other workers keep working
 * (the team is not paused); once answered, nothing is waited for.
 */
import { describe, expect, it } from 'vitest';
import { defineSwarm, defineTeam, scriptedModel, type ModelRequest } from '../../src/index.js';
import { serve } from '../../src/server/index.js';
import { request } from '../support/server-clients.js';
import { sqliteFilePerTest } from '../support/sqlite-file.js';
import { until } from '../support/wait.js';

const file = sqliteFilePerTest('xswarm-team-waiting-');

const taskOf = (req: ModelRequest) => /Task: (\S+)/.exec(String(req.messages.find((m) => m.role === 'user')?.content))?.[1] ?? '?';
const worker = defineSwarm({ id: 'wait-worker', instructions: 'Work.' });
// No onHelpRequest: every question goes to the user.
const team = defineTeam({ id: 'waiting', workers: [{ type: 'dev', swarm: worker, count: 2 }] });

describe('a team waiting on the user for help', () => {
  it('its summary, REST and listTeams show the open request; the other tasks complete meanwhile', async () => {
    const model = scriptedModel((req) => {
      const answers = req.messages.filter((m) => m.role === 'tool').map((m) => String(m.content));
      if (taskOf(req) === 'ask' && answers.length === 0)
        return { toolCalls: [{ id: 'q1', name: 'team_help_request', arguments: JSON.stringify({ question: 'Which colour?' }) }] };
      return { text: `built ${taskOf(req)} ${answers.join()}` };
    });
    const runtime = file.runtime({ model, store: file.open(), teams: [team] });
    const server = await serve(runtime, { keepAliveMs: 50 });
    file.track(server);
    const client = runtime.forTeam('waiting', 'w1');
    expect(client.summary().waitingFor).toBeUndefined();
    await client.run([
      { id: 'ask', subject: 'ask' },
      { id: 'b', subject: 'b' },
      { id: 'c', subject: 'c' },
    ]);
    const summary = await until(
      'the question to reach the user',
      () => client.summary(),
      (s) => s.waitingFor === 'help',
    );
    expect(summary.openHelp).toEqual([{ id: 'help-1', workerId: expect.stringMatching(/^dev-/), taskId: 'ask', question: 'Which colour?', at: expect.any(Number) }]);
    // Not paused: the other worker completes b and c while ask waits.
    await until('b and c to complete', () => client.board().counts.completed === 2);
    expect(client.summary()).toMatchObject({ status: 'running', waitingFor: 'help' });
    const rest = await request(server.url, 'GET', '/teams/waiting/w1');
    expect(rest.body).toMatchObject({ waitingFor: 'help', openHelp: [{ id: 'help-1', taskId: 'ask', question: 'Which colour?' }] });
    expect(await runtime.listTeams()).toMatchObject([{ teamId: 'w1', status: 'running', waitingFor: 'help', openHelp: ['help-1'] }]);

    await client.answer('help-1', 'blue');
    const done = await client.wait();
    expect(done.status).toBe('completed');
    expect(done.waitingFor).toBeUndefined();
    expect(String(client.board().tasks[0]!.result)).toContain('blue');
    const listed = await runtime.listTeams();
    expect(listed[0]?.waitingFor).toBeUndefined();
  });

  it('a question of an attempt that was canceled waits for nobody: the team no longer says it waits', async () => {
    const model = scriptedModel((req) => ({
      toolCalls: [{ id: 'q1', name: 'team_help_request', arguments: JSON.stringify({ question: `About ${taskOf(req)}?` }) }],
    }));
    const runtime = file.runtime({ model, store: file.open(), teams: [team] });
    const client = runtime.forTeam('waiting', 'w2');
    await client.run([{ id: 'ask', subject: 'ask' }]);
    await until('the question', () => client.summary().waitingFor === 'help');
    await client.updateTask('ask', { cancel: true });
    expect(client.summary().waitingFor).toBeUndefined();
    expect((await client.wait()).status).toBe('completed');
  });
});
