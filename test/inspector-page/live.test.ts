/**
 * The inspector page in a real headless Chromium, following a live swarm: the list shows it
 * running; selecting it shows its state on the chart, moving through a handoff (running →
 * awaitingHandoff → running → completed) as the test releases the gates the model and the
 * agent's tool wait at; the timeline grows live; a reload resumes from the last event without
 * a gap or a duplicate; the tree shows the agent and the conversation the result.
 */
import { expect, it } from 'vitest';
import { z } from 'zod';
import { defineAgent, defineSwarm, handoff, type ModelRequest, scriptedModel, tool } from '../../src/index.js';
import { browserFixture, describeBrowser, screenshot } from '../support/browser.js';
import { countOf, type Gate, gate, numberOf, servedRuntimes, storedLastSeq, tid, waitNumber, waitState, waitText } from '../support/inspector-page.js';

/** The gates of the running test: the planner's two model calls and the forecast tool. */
let gates: { think1: Gate; forecast: Gate; think2: Gate } | undefined;

const forecast = tool({
  name: 'get_forecast',
  description: 'The forecast for a day',
  parameters: z.object({ day: z.string() }),
  execute: async ({ day }) => {
    await gates!.forecast.wait();
    return { day, sky: 'sunny' };
  },
});
const weather = defineAgent({ id: 'weather', description: 'Forecasts', instructions: 'Forecast.', tools: [forecast] });
const planner = defineSwarm({ id: 'planner', instructions: 'Plan the day.', handoffs: [handoff.toAgent(weather)] });

const hasToolResult = (req: ModelRequest) => req.messages.some((m) => m.role === 'tool');
/** What each call reports using: the agent's two calls make 200 tokens, shown on its tree node. */
const PLANNER_USAGE = { inputTokens: 420, outputTokens: 35 };
const WEATHER_USAGE = { inputTokens: 80, outputTokens: 20 };
const model = scriptedModel(async (req) => {
  if (req.agentId === 'weather') {
    const answer = hasToolResult(req) ? { text: 'Sunny all day.' } : { toolCalls: [{ id: 'f1', name: 'get_forecast', arguments: '{"day":"Saturday"}' }] };
    return { ...answer, usage: WEATHER_USAGE };
  }
  if (!hasToolResult(req)) {
    await gates!.think1.wait();
    return { toolCalls: [{ id: 'h1', name: 'handoff_to_weather', arguments: '{"request":"Saturday?"}' }], usage: PLANNER_USAGE };
  }
  await gates!.think2.wait();
  return { text: 'Go hiking: Saturday is sunny.', usage: PLANNER_USAGE };
});

describeBrowser('inspector page: a live swarm', () => {
  const chromium = browserFixture();
  const served = servedRuntimes();

  it('lists the running swarm, follows it through a handoff on the chart, grows the timeline live and resumes after a reload', async (ctx) => {
    gates = { think1: gate(), forecast: gate(), think2: gate() };
    const g = gates;
    served.defer(() => Object.values(g).forEach((x) => x.release()));
    const { runtime, store, url } = await served.start({ swarms: [planner], model });
    const client = runtime.forSwarm(planner, 'saturday');
    await client.run('Plan my Saturday');
    await g.think1.reached;

    // The list shows the running swarm; selecting it opens it (and puts it in the fragment).
    const page = await chromium.page();
    await page.goto(`${url}/inspector/`);
    const row = page.locator(tid('swarm-row', '[data-swarm-id="saturday"]'));
    await row.waitFor({ timeout: 10_000 });
    expect(await row.getAttribute('data-status')).toBe('running');
    expect(await row.textContent()).toContain('planner');
    await screenshot(ctx, page, 'list-running');
    await row.click();
    await page.waitForURL(/#swarm=saturday/);

    // Stop 1: the planner's first model call is held: running (thinking).
    await waitState(page, /^running\.thinking$/);
    const atThinking = await storedLastSeq(store, 'saturday');
    await waitNumber(page, 'last-seq', '=', atThinking);
    expect(await numberOf(page, 'timeline-count')).toBe(atThinking);
    await screenshot(ctx, page, 'running-thinking');

    // Stop 2: handed off; the agent's tool is held: awaitingHandoff, the agent in the tree.
    g.think1.release();
    await g.forecast.reached;
    await waitState(page, 'awaitingHandoff');
    await page.locator(tid('tree-node', '[data-kind="agent"][data-id="weather"]')).waitFor({ timeout: 10_000 });
    const atHandoff = await storedLastSeq(store, 'saturday');
    expect(atHandoff).toBeGreaterThan(atThinking);
    const grownTo = await waitNumber(page, 'last-seq', '>=', atHandoff);
    expect(await numberOf(page, 'timeline-count')).toBe(grownTo);
    // Turns mid-handoff: the planner's model answered once (the turn completes only when the
    // handoff returns): the row, the header and the API all say 1, before any overview refresh.
    await expect.poll(() => row.locator('[title="turns"]').textContent(), { timeout: 2_000 }).toBe('1 turns'); // within the 5 s overview refresh
    expect(await page.locator(tid('swarm-figures')).textContent()).toMatch(/turns\s*1(\D|$)/);
    expect(((await (await fetch(`${url}/inspector/api/swarms/saturday`)).json()) as { turns: number }).turns).toBe(1);
    await screenshot(ctx, page, 'awaiting-handoff');

    // A reload resumes from the last event: the same count and last seq, nothing twice.
    const before = { last: await numberOf(page, 'last-seq'), count: await numberOf(page, 'timeline-count') };
    await page.reload();
    await waitState(page, 'awaitingHandoff');
    await waitNumber(page, 'last-seq', '=', before.last);
    expect(await numberOf(page, 'timeline-count')).toBe(before.count);
    const seqs = await page.$$eval(tid('timeline-row'), (rows) => rows.map((r) => Number(r.getAttribute('data-seq'))));
    expect(seqs.length).toBeGreaterThan(0);
    expect(new Set(seqs).size).toBe(seqs.length);
    expect(seqs.every((s) => s >= 1 && s <= before.last)).toBe(true);

    // Stop 3: the agent answered; the planner's second model call is held: running again.
    g.forecast.release();
    await g.think2.reached;
    await waitState(page, /^running\.thinking$/);
    const atSecondTurn = await storedLastSeq(store, 'saturday');
    await waitNumber(page, 'last-seq', '>=', atSecondTurn);
    expect(await numberOf(page, 'timeline-count')).toBe(await numberOf(page, 'last-seq'));
    expect(atSecondTurn).toBeGreaterThan(before.last);
    await screenshot(ctx, page, 'running-again');

    // The end: completed, the list's row too, the result in the conversation.
    g.think2.release();
    expect(await client.wait()).toEqual({ status: 'completed', result: 'Go hiking: Saturday is sunny.' });
    await waitState(page, 'completed');
    const last = await storedLastSeq(store, 'saturday');
    await waitNumber(page, 'last-seq', '=', last);
    expect(await numberOf(page, 'timeline-count')).toBe(last);
    await page.locator(tid('swarm-row', '[data-swarm-id="saturday"][data-status="completed"]')).waitFor({ timeout: 10_000 });
    await waitText(page, 'conversation', /Go hiking: Saturday is sunny\./);
    // Per node: the agent's turns and tokens (its two calls: 2 × 100).
    const agentNode = page.locator(tid('tree-node', '[data-kind="agent"][data-id="weather"]'));
    expect(await agentNode.textContent()).toMatch(/(^|\D)200(\D|$)/);
    expect(await agentNode.textContent()).toMatch(/(^|\D)2 turns?/);
    expect(await page.locator(tid('message', '[data-role="user"]')).first().textContent()).toContain('Plan my Saturday');
    // Virtualized or not, the DOM never holds more timeline rows than events.
    expect(await countOf(page, tid('timeline-row'))).toBeLessThanOrEqual(last);
    await screenshot(ctx, page, 'completed');
    expect(chromium.pageErrors).toEqual([]);
  }, 60_000);
});
