/**
 * A fork over a real `nats-server -js` (127.0.0.1, one per test): a run recorded by one runtime
 * in JetStream is forked by another runtime on the same NATS, which drives the fork to its end
 * with zero model calls before the fork point. Skipped when nats-server is not installed.
 */
import { describe, expect, it } from 'vitest';
import { createRuntime } from '../../src/index.js';
import { memoryEffects, W1_RESULT, w1Definitions, w1Model } from '../support/crash-w1.js';
import { natsFaultFixtures } from '../support/nats-faults.js';
import { natsServerMissing } from '../support/nats-server.js';
import { collect } from '../support/script.js';

const nats = natsFaultFixtures('xswarm-fork-nats-');

describe.skipIf(natsServerMissing)('fork over NATS', () => {
  it('a run recorded by one runtime is forked by another: the prefix from JetStream, the rest live there', async () => {
    const effects = memoryEffects();
    const { planner, agents } = w1Definitions(effects);
    const modelA = w1Model();
    const a = createRuntime({ swarms: [planner], agents, model: modelA, nats: { servers: nats.server.url } });
    nats.runtimes.push(a);
    await a.start();
    await a.forSwarm(planner, 'js-source').run('Plan my Saturday');
    expect(await a.forSwarm(planner, 'js-source').wait()).toMatchObject({ status: 'completed', result: W1_RESULT });

    const modelB = w1Model();
    const b = createRuntime({ swarms: [planner], agents, model: modelB, nats: { servers: nats.server.url } });
    nats.runtimes.push(b);
    await b.start();
    const plan = await b.fork('js-source', { atTurn: 3, newId: 'js-fork' });
    expect(plan.sideEffects.map((c) => c.name)).toEqual(['check_allergen']);
    expect(await b.forSwarm(planner, 'js-fork').wait()).toMatchObject({ status: 'completed', result: W1_RESULT });
    expect(modelB.calls('js-fork')).toEqual(modelA.calls('js-source').slice(6));
    expect(effects.keys()).toEqual([...effects.keys().slice(0, 3), plan.sideEffects[0]!.newKey]);
    // Any runtime on that NATS reads it, and it replays.
    expect(await a.forSwarm(planner, 'js-fork').getResult()).toMatchObject({ status: 'completed' });
    expect(await collect(a.replay('js-fork'))).toEqual(await a.store.readEvents('js-fork', 0));
  });
});
