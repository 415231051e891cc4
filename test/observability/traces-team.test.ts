/** A team's task attempts are traced: each attempt's swarm hangs from a `team_task` span, ended with it. */
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createRuntime, defineSwarm, defineTeam, type Runtime, scriptedModel } from '../../src/index.js';
import { parentId, registerOtelGlobals, spanRecorder } from '../support/otel-recorder.js';

let runtime: Runtime | undefined;
beforeAll(registerOtelGlobals);
afterEach(async () => {
  await runtime?.close();
  runtime = undefined;
});

describe('traces: team tasks', () => {
  it('each task attempt’s swarm span is the child of its team_task span', async () => {
    const recorder = spanRecorder();
    const api = defineSwarm({ id: 'api-worker', instructions: 'You build APIs.' });
    const team = defineTeam({ id: 'builders', workers: [{ type: 'api', swarm: api }] });
    runtime = createRuntime({ model: scriptedModel(() => ({ text: 'built' })), teams: [team], tracing: { tracer: recorder.tracer } });
    const client = runtime.forTeam(team);
    await client.run([{ subject: 'users endpoint' }, { subject: 'orders endpoint' }]);
    expect((await client.wait()).status).toBe('completed');

    const spans = recorder.spans();
    const tasks = spans.filter((s) => s.name === 'team_task api-worker');
    expect(tasks).toHaveLength(2);
    for (const task of tasks) {
      const swarm = spans.find((s) => s.name === 'swarm api-worker' && s.attributes['xswarm.swarm.id'] === task.attributes['xswarm.task.swarm_id']);
      expect(swarm).toBeDefined();
      expect(parentId(swarm!)).toBe(task.spanContext().spanId);
      expect(swarm!.attributes['xswarm.swarm.outcome']).toBe('completed');
    }
  });
});
