/**
 * A child swarm hosted by another runtime (the transport seam, as over NATS) draws from its
 * parent's budget: the hosted call carries the parent's accounts, the worker's calls reserve
 * against them in the shared store's ledger, and the child pauses when the parent's budget would
 * be exceeded.
 */
import { afterEach, expect, it } from 'vitest';
import { z } from 'zod';
import { createRuntime, defineSwarm, handoff, handoffToolName, LocalBus, localTransport, memoryStore, type Runtime, scriptedModel, tool } from '../../src/index.js';
import { until } from '../support/wait.js';

const runtimes: Runtime[] = [];
afterEach(async () => {
  for (const r of runtimes.splice(0)) await r.close();
});

it("a hosted child swarm draws from its parent's budget and pauses at it", async () => {
  const bus = new LocalBus();
  const store = memoryStore();
  const hosting = { deadlineMs: 400, heartbeatMs: 50, heartbeatTimeoutMs: 300 };
  const dig = tool({ name: 'dig', description: 'Digs', parameters: z.object({}), execute: () => 'dug' });
  const miner = defineSwarm({ id: 'miner', instructions: 'Dig forever.', tools: [dig], maxTurns: 50 });
  const lead = defineSwarm({ id: 'lead', instructions: 'Delegate.', maxTurns: 50, budget: { modelCalls: 4 }, handoffs: [handoff.toSwarm('miner')] });
  const made: string[] = [];
  const model = scriptedModel((req) => {
    made.push(req.agentId);
    if (req.agentId === 'lead') return { toolCalls: [{ id: 'h1', name: handoffToolName('miner'), arguments: '{"request":"dig"}' }] };
    return { toolCalls: [{ id: `d${made.length}`, name: 'dig', arguments: '{}' }] };
  });
  const worker = createRuntime({ swarms: [miner], model, store, transport: localTransport(bus), hosting });
  runtimes.push(worker);
  await worker.start();
  const home = createRuntime({ swarms: [lead], model, store, transport: localTransport(bus), hosting });
  runtimes.push(home);
  await home.start();
  await home.forSwarm('lead', 'h1').run('Go');
  const child = await until(
    'the hosted child to pause at its parent budget',
    () =>
      home
        .forSwarm('miner', 'h1:t1:0')
        .getResult()
        .catch(() => undefined),
    (r) => r?.status === 'paused',
  );
  expect(child).toMatchObject({ reason: { type: 'LIMIT', limit: { limit: 'modelCalls', max: 4, spent: 4, account: 'swarm:h1' } } });
  // One call of the lead, three of the child: the lead's four.
  expect(made).toEqual(['lead', 'miner', 'miner', 'miner']);
  await home.forSwarm('lead', 'h1').stop();
});
