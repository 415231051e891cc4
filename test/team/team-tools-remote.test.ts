/**
 * The team tools in a worker swarm hosted by another process, over a real `nats-server -js`
 * (127.0.0.1): the leader's runtime (this process) lacks the worker's swarm, a worker process
 * (test/fixtures/team-tools-node.ts) hosts it with `teamTools()`, and its calls reach the
 * leader's team: it reads the user's broadcast, writes to the leader, and asks for help, which
 * waits on the user longer than one NATS request (the team shows it waits for help meanwhile).
 */
import type { ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { createRuntime, defineTeam, scriptedModel } from '../../src/index.js';
import { exited, startFixture } from '../support/crash-process.js';
import { jsonLine, natsFaultFixtures } from '../support/nats-faults.js';
import { natsServerMissing } from '../support/nats-server.js';
import { sleep } from '../support/sleep.js';
import { until } from '../support/wait.js';

const NODE = fileURLToPath(new URL('../fixtures/team-tools-node.ts', import.meta.url));
const nats = natsFaultFixtures('xswarm-team-tools-remote-');

describe.skipIf(natsServerMissing)('team tools in a worker process', () => {
  it('write, read and help requests of a remote worker swarm reach the team driven here', async () => {
    const worker: ChildProcess = startFixture(NODE, [], { NATS_URL: nats.server.url });
    await jsonLine(worker, (l) => 'ready' in l);
    // No onHelpRequest: the question goes to the user.
    const team = defineTeam({ id: 'toolcrew', workers: [{ type: 'dev', swarm: 'tool-builder' }] });
    const runtime = createRuntime({
      teams: [team],
      model: scriptedModel(() => ({ text: 'the leader runs no model' })),
      nats: { servers: nats.server.url },
      hosting: { heartbeatMs: 200, heartbeatTimeoutMs: 5_000, deadlineMs: 5_000 },
    });
    nats.runtimes.push(runtime);
    await runtime.start();
    const client = runtime.forTeam(team, 'remote-tools');
    await client.run([{ id: 'a', subject: 'a' }]);
    await client.broadcast('Ship on Friday');

    const waiting = await until(
      'the remote question to reach the user',
      () => client.summary(),
      (s) => s.waitingFor === 'help',
      { timeout: 20_000 },
    );
    expect(waiting.openHelp).toMatchObject([{ id: 'help-1', workerId: 'dev-1', taskId: 'a', question: 'Which database?' }]);
    // Longer than the driver holds one call of it: the worker's call asks again, for the same request.
    await sleep(3_500);
    expect((await client.helpRequests()).map((h) => h.id)).toEqual(['help-1']);
    await client.answer('help-1', 'Postgres');

    const summary = await client.wait();
    expect(summary.status).toBe('completed');
    const result = String(client.board().tasks[0]!.result);
    expect(result).toContain('Ship on Friday');
    expect(result).toContain('"sent":true');
    expect(result).toContain('Postgres');
    const fromWorker = client
      .inbox()
      .messages()
      .filter((m) => m.from === 'dev-1' && m.type === 'message');
    expect(fromWorker.map((m) => [m.to, (m.payload as { text: string }).text])).toEqual([['leader', 'hello from a']]);
    worker.kill('SIGTERM');
    await exited(worker);
  }, 40_000);
});
