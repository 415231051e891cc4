/**
 * Waiting for a result on the hot path: a wait on a swarm live in this runtime is woken by its
 * commits and leaves nothing behind once it returns (no poll timer outliving the swarm).
 */
import { afterEach, describe, expect, it } from 'vitest';
import { createRuntime, defineSwarm, type Runtime, scriptedModel } from '../../src/index.js';

let runtime: Runtime | undefined;
afterEach(async () => {
  await runtime?.close();
  runtime = undefined;
});

const echo = defineSwarm({ id: 'echo', instructions: 'Repeat.' });

/** Timers keeping the process alive (the runtime's own lease timers are unref'd). */
const timers = () => process.getActiveResourcesInfo().filter((r) => r === 'Timeout').length;

describe('wait', () => {
  it('returns the result of a live swarm without leaving a poll timer behind', async () => {
    runtime = createRuntime({ swarms: [echo], model: scriptedModel(() => ({ text: 'done' })) });
    const before = timers();
    for (let i = 0; i < 5; i++) {
      const client = runtime.forSwarm(echo);
      await client.run('x');
      expect(await client.wait()).toEqual({ status: 'completed', result: 'done' });
    }
    expect(timers()).toBe(before);
  });

  it('still answers for a swarm that ended before the wait began', async () => {
    runtime = createRuntime({ swarms: [echo], model: scriptedModel(() => ({ text: 'done' })) });
    const client = runtime.forSwarm(echo);
    await client.run('x');
    await client.wait();
    expect(await client.wait()).toEqual({ status: 'completed', result: 'done' });
  });
});
