/**
 * The `team_task` span of an attempt run by a worker runtime over a real nats-server
 * (127.0.0.1) ends when the attempt ends, not when the leader's runtime closes: the swarm's
 * final event is the worker's, so the team's wait on the attempt ends it.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRuntime, defineSwarm, defineTeam, type Runtime, scriptedModel } from '../../src/index.js';
import { type NatsServer, natsServerMissing, startNatsServer } from '../support/nats-server.js';
import { registerOtelGlobals, spanRecorder } from '../support/otel-recorder.js';

let nats: NatsServer | undefined;
const runtimes: Runtime[] = [];
beforeAll(async () => {
  if (!natsServerMissing) nats = await startNatsServer();
  registerOtelGlobals();
});
afterAll(async () => {
  for (const r of runtimes.splice(0).reverse()) await r.close();
  await nats?.stop();
});

describe.skipIf(natsServerMissing)('traces: a team task run by a worker runtime', () => {
  it('its team_task span ends with the attempt, while the leader’s runtime runs on', async () => {
    const recorder = spanRecorder();
    const hosting = { deadlineMs: 5_000, heartbeatMs: 100, heartbeatTimeoutMs: 1_000 };
    const swarm = defineSwarm({ id: 'remote-builder', instructions: 'Build.' });
    const worker = createRuntime({ swarms: [swarm], model: scriptedModel(() => ({ text: 'built' })), nats: { servers: nats!.url }, hosting });
    runtimes.push(worker);
    await worker.start();
    // The leader's runtime lacks `remote-builder`: its attempts run in the worker runtime.
    const team = defineTeam({ id: 'remote-crew', workers: [{ type: 'dev', swarm: 'remote-builder' }] });
    const leader = createRuntime({
      teams: [team],
      model: scriptedModel(() => ({ text: 'the leader runs no model' })),
      nats: { servers: nats!.url },
      hosting,
      tracing: { tracer: recorder.tracer },
    });
    runtimes.push(leader);
    await leader.start();
    const client = leader.forTeam(team, 'traced-crew');
    await client.run([{ id: 'a', subject: 'a' }]);
    expect((await client.wait()).status).toBe('completed');

    // Finished (exported) before any close.
    const tasks = recorder.spans().filter((s) => s.name === 'team_task remote-builder');
    expect(tasks).toHaveLength(1);
    expect(tasks[0]!.attributes).toMatchObject({ 'xswarm.task.swarm_id': 'traced-crew:a:1', 'xswarm.task.outcome': 'completed' });
    // Not a swarm of the leader's: no swarm span of it here.
    expect(recorder.spans().some((s) => s.name === 'swarm remote-builder')).toBe(false);
  });
});
