/** A fork's replayed prefix makes no spans that look like live calls: only the calls it makes live are traced. */
import { afterEach, describe, expect, it } from 'vitest';
import { createW1Runtime, runW1, W1_SWARM_ID } from '../../bench/w1.js';
import type { Runtime } from '../../src/index.js';
import { spanRecorder } from '../support/otel-recorder.js';

let runtime: Runtime | undefined;
afterEach(async () => {
  await runtime?.close();
  runtime = undefined;
});

describe('traces: forks', () => {
  it('the fork’s span tree holds only the calls made after the fork point', async () => {
    const recorder = spanRecorder();
    const w1 = createW1Runtime(0, undefined, undefined, undefined, { tracing: { tracer: recorder.tracer } });
    runtime = w1.runtime;
    await runW1(runtime);
    const [source] = await runtime.list({ definitionId: W1_SWARM_ID });
    const callsBefore = { ...w1.counts };
    const fork = await runtime.fork(source!.swarmId, { atTurn: 3, newId: 'forked' });
    await runtime.forSwarm(W1_SWARM_ID, fork.swarmId).wait();
    const made = Object.values(w1.counts).reduce((a, b) => a + b, 0) - Object.values(callsBefore).reduce((a, b) => a + b, 0);
    const forkSpans = recorder.spans().filter((s) => s.attributes['xswarm.swarm.id'] === 'forked');
    expect(forkSpans.filter((s) => s.attributes['gen_ai.operation.name'] === 'chat')).toHaveLength(made);
    // Handoffs replayed from the source are not announced as live handoffs.
    const handoffs = forkSpans.filter((s) => s.attributes['xswarm.handoff.to'] !== undefined);
    expect(made).toBe(3);
    expect(handoffs.map((h) => h.attributes['xswarm.handoff.to'])).toEqual(['allergen-agent']);
    expect(forkSpans.filter((s) => s.name.startsWith('turn ')).map((s) => s.attributes['xswarm.turn'])).toEqual([3, 4]);
  });
});
