/**
 * Across processes: two runtimes on a real `nats-server -js` (started by the test on
 * 127.0.0.1), one hosting the `forecaster` swarm, the other the planner that hands off to it
 * and serves the inspector page. The page of the planner's server shows the child swarm, run
 * by the other runtime, in the planner's tree while the handoff is in flight, opens the child
 * by id (read from the shared JetStream store) and follows both to the end.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createRuntime, defineSwarm, handoff, type Runtime, scriptedModel } from '../../src/index.js';
import { serve } from '../../src/server/index.js';
import { browserFixture, describeBrowser, screenshot } from '../support/browser.js';
import { gate, servedRuntimes, swarmUrl, tid, waitState, waitText } from '../support/inspector-page.js';
import { type NatsServer, natsServerMissing, startNatsServer } from '../support/nats-server.js';

const forecaster = defineSwarm({ id: 'forecaster', description: 'Forecasts a day', instructions: 'Forecast.' });
// The planner names the child by id only: its runtime does not have it.
const planner = defineSwarm({ id: 'planner', instructions: 'Plan.', handoffs: [handoff.toSwarm('forecaster')] });

describeBrowser('inspector page: a swarm distributed over NATS', () => {
  const chromium = browserFixture();
  const served = servedRuntimes();
  let nats: NatsServer | undefined;
  beforeAll(async () => {
    if (!natsServerMissing) nats = await startNatsServer();
  });
  afterAll(async () => {
    await nats?.stop();
  });

  it.skipIf(natsServerMissing)(
    "shows the child swarm another runtime runs in the tree of the planner's page",
    async (ctx) => {
      const held = gate();
      const childCalls: string[] = [];
      const workerModel = scriptedModel(async (req) => {
        childCalls.push(req.agentId);
        await held.wait();
        return { text: 'Saturday: sunny' };
      });
      const homeModel = scriptedModel((req) => {
        if (req.agentId !== 'planner') throw new Error(`the home runtime was asked for ${req.agentId}`);
        const answer = req.messages.find((m) => m.role === 'tool')?.content;
        return answer ? { text: `Go hiking (${answer}).` } : { toolCalls: [{ id: 'h1', name: 'handoff_to_forecaster', arguments: '{"request":"Saturday?"}' }] };
      });
      const on = (options: Parameters<typeof createRuntime>[0]): Runtime => {
        const runtime = createRuntime({ ...options, nats: { servers: nats!.url }, hosting: { deadlineMs: 5_000, heartbeatMs: 200, heartbeatTimeoutMs: 5_000 } });
        served.defer(() => runtime.close());
        return runtime;
      };
      const worker = on({ swarms: [forecaster], model: workerModel });
      const home = on({ swarms: [planner], model: homeModel });
      await Promise.all([worker.start(), home.start()]);
      const server = await serve(home);
      served.defer(() => server.close());
      served.defer(() => held.release());

      const trip = home.forSwarm(planner, 'trip');
      await trip.run('Plan my Saturday');
      await held.reached;
      expect(childCalls).toEqual(['forecaster']);

      const page = await chromium.page();
      await page.goto(swarmUrl(server.url, 'trip'));
      await waitState(page, 'awaitingHandoff', 15_000);
      const child = page.locator(tid('tree-node', '[data-kind="child-swarm"][data-id="trip:t1:0"]'));
      await child.waitFor({ timeout: 15_000 });
      await screenshot(ctx, page, 'nats-parent-with-child');

      // The child, opened by id on the planner's server: running in the worker, held at its model call.
      const childPage = await chromium.page();
      await childPage.goto(swarmUrl(server.url, 'trip:t1:0'));
      await waitState(childPage, /^running/, 15_000);
      await screenshot(ctx, childPage, 'nats-child');

      held.release();
      expect(await trip.wait()).toEqual({ status: 'completed', result: 'Go hiking (Saturday: sunny).' });
      await waitState(page, 'completed', 15_000);
      await waitText(page, 'conversation', /Go hiking \(Saturday: sunny\)\./);
      expect(await child.count()).toBe(1);
      await waitState(childPage, 'completed', 15_000);
      expect(chromium.pageErrors).toEqual([]);
    },
    60_000,
  );
});
