/**
 * Across processes: two runtimes on a real `nats-server -js` (started by the test on
 * 127.0.0.1), one hosting the `forecaster` swarm, the other the planner that hands off to it
 * and serves the inspector page. The page of the planner's server shows the child swarm, run
 * by the other runtime, in the planner's tree while the handoff is in flight, opens the child
 * by id (read from the shared JetStream store) and follows both to the end. The same for an
 * agent hosted by the other runtime (its run is a child swarm `xswarm.agent.<id>` there), whose
 * tokens, counted in the worker, show on its node.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createRuntime, defineAgent, defineSwarm, handoff, type Runtime, scriptedModel } from '../../src/index.js';
import { serve } from '../../src/server/index.js';
import { browserFixture, describeBrowser, screenshot } from '../support/browser.js';
import { gate, type PageDocument, servedRuntimes, swarmUrl, tid, waitState, waitText } from '../support/inspector-page.js';
import { type NatsServer, natsServerMissing, startNatsServer } from '../support/nats-server.js';

declare const document: PageDocument;

const forecaster = defineSwarm({ id: 'forecaster', description: 'Forecasts a day', instructions: 'Forecast.' });
// The planner names the child by id only: its runtime does not have it.
const planner = defineSwarm({ id: 'planner', instructions: 'Plan.', handoffs: [handoff.toSwarm('forecaster')] });

const weather = defineAgent({ id: 'weather', description: 'Forecasts', instructions: 'Forecast.' });
const dayPlanner = defineSwarm({ id: 'day-planner', instructions: 'Plan.', handoffs: [handoff.toAgent('weather')] });

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

  it.skipIf(natsServerMissing)(
    "shows the agent another runtime hosts in the tree of the planner's page, and its run by id",
    async (ctx) => {
      const held = gate();
      const workerModel = scriptedModel(async (req) => {
        if (req.agentId !== 'weather') throw new Error(`the worker was asked for ${req.agentId}`);
        await held.wait();
        return { text: 'Saturday: sunny', usage: { inputTokens: 40, outputTokens: 8 } };
      });
      const homeModel = scriptedModel((req) => {
        if (req.agentId !== 'day-planner') throw new Error(`the home runtime was asked for ${req.agentId}`);
        const answer = req.messages.find((m) => m.role === 'tool')?.content;
        return answer ? { text: `Go hiking (${answer}).` } : { toolCalls: [{ id: 'h1', name: 'handoff_to_weather', arguments: '{"request":"Saturday?"}' }] };
      });
      const on = (options: Parameters<typeof createRuntime>[0]): Runtime => {
        const runtime = createRuntime({ ...options, nats: { servers: nats!.url }, hosting: { deadlineMs: 5_000, heartbeatMs: 200, heartbeatTimeoutMs: 5_000 } });
        served.defer(() => runtime.close());
        return runtime;
      };
      const worker = on({ agents: [weather], model: workerModel });
      const home = on({ swarms: [dayPlanner], model: homeModel });
      await Promise.all([worker.start(), home.start()]);
      const server = await serve(home);
      served.defer(() => server.close());
      served.defer(() => held.release());

      const trip = home.forSwarm(dayPlanner, 'outing');
      await trip.run('Plan my Saturday');
      await held.reached;
      const page = await chromium.page();
      await page.goto(swarmUrl(server.url, 'outing'));
      await waitState(page, 'awaitingHandoff', 15_000);
      // A hosted agent runs as a swarm of its own (`xswarm.agent.<id>`), a child of the planner.
      const agent = page.locator(tid('tree-node', '[data-kind="child-swarm"][data-id="outing:t1:0"]'));
      await agent.waitFor({ timeout: 15_000 });
      expect(await agent.textContent()).toContain('weather');
      await screenshot(ctx, page, 'nats-parent-with-hosted-agent');
      // The agent's run in the worker, a swarm of its own in the shared store, opened by id.
      const runPage = await chromium.page();
      await runPage.goto(swarmUrl(server.url, 'outing:t1:0'));
      await waitState(runPage, /^running/, 15_000);

      held.release();
      expect(await trip.wait()).toEqual({ status: 'completed', result: 'Go hiking (Saturday: sunny).' });
      await waitState(page, 'completed', 15_000);
      await waitState(runPage, 'completed', 15_000);
      // Its figures come from the worker's run (48 tokens), read from the shared store.
      await runPage.locator(tid('tree-node', '[data-kind="swarm"]')).first().waitFor();
      expect(await runPage.locator(tid('tree-node', '[data-kind="swarm"]')).first().textContent()).toMatch(/(^|\D)48(\D|$)/);
      // And the planner's tree shows them on the child's node.
      await page.waitForFunction(
        (sel) => /(^|\D)48(\D|$)/.test(document.querySelector(sel)?.textContent ?? ''),
        tid('tree-node', '[data-kind="child-swarm"][data-id="outing:t1:0"]'),
        { timeout: 10_000 },
      );
      expect(chromium.pageErrors).toEqual([]);
    },
    60_000,
  );
});
