/**
 * Playback of a finished swarm in a real headless Chromium: the slider over its recorded
 * events shows the swarm as it was at step N — state (checked against the state computed here
 * from the stored events), chart, tree, conversation, timeline — and what changed from step
 * N-1, with no model or tool call; "live" brings the finished swarm back.
 */
import { expect, it } from 'vitest';
import { z } from 'zod';
import { defineAgent, defineSwarm, factOf, handoff, type ModelRequest, scriptedModel, type SwarmEvent, tool } from '../../src/index.js';
import { browserFixture, describeBrowser, screenshot } from '../support/browser.js';
import { servedRuntimes, storedLastSeq, swarmUrl, tid, waitNumber, waitState, waitText } from '../support/inspector-page.js';

let toolCalls = 0;
const forecast = tool({
  name: 'get_forecast',
  description: 'The forecast for a day',
  parameters: z.object({ day: z.string() }),
  execute: async ({ day }) => {
    toolCalls++;
    return { day, sky: 'sunny' };
  },
});
const weather = defineAgent({ id: 'weather', description: 'Forecasts', instructions: 'Forecast.', tools: [forecast] });
const planner = defineSwarm({ id: 'planner', instructions: 'Plan the day.', handoffs: [handoff.toAgent(weather)] });
const hasToolResult = (req: ModelRequest) => req.messages.some((m) => m.role === 'tool');
let modelCalls = 0;
const model = scriptedModel((req) => {
  modelCalls++;
  if (req.agentId === 'weather')
    return hasToolResult(req) ? { text: 'Sunny all day.' } : { toolCalls: [{ id: 'f1', name: 'get_forecast', arguments: '{"day":"Saturday"}' }] };
  return hasToolResult(req) ? { text: 'Go hiking: Saturday is sunny.' } : { toolCalls: [{ id: 'h1', name: 'handoff_to_weather', arguments: '{"request":"Saturday?"}' }] };
});

/**
 * The swarm's top-level state after the events up to `seq`, computed from its facts alone
 * (an oracle independent of the page's fold): a handoff in flight is `awaitingHandoff`, a
 * pause `paused`, the final fact its state, anything else `running`.
 */
function topStateAt(events: readonly SwarmEvent[], seq: number): string {
  let state = 'running';
  let handoffs = 0;
  for (const e of events) {
    if (e.seq > seq) break;
    if (factOf(e, 'agent-handoff') || factOf(e, 'swarm-handoff')) handoffs++;
    if (factOf(e, 'handoff-result')) handoffs--;
    if (factOf(e, 'paused')) state = 'paused';
    else if (factOf(e, 'completed')) state = 'completed';
    else if (factOf(e, 'failed')) state = 'failed';
    else if (factOf(e, 'stopped')) state = 'stopped';
    else if (e.kind === 'status-update') state = handoffs > 0 ? 'awaitingHandoff' : 'running';
  }
  return state;
}

describeBrowser('inspector page: playback', () => {
  const chromium = browserFixture();
  const served = servedRuntimes();

  it('shows step 3 of a finished swarm as it was, then any other step, with zero model or tool calls', async (ctx) => {
    const { runtime, store, url } = await served.start({ swarms: [planner], model });
    const client = runtime.forSwarm(planner, 'finished');
    await client.run('Plan my Saturday');
    expect(await client.wait()).toMatchObject({ status: 'completed' });
    const events = await store.readEvents('finished', 0);
    const last = await storedLastSeq(store, 'finished');
    const calls = { model: modelCalls, tool: toolCalls };

    const page = await chromium.page();
    await page.goto(swarmUrl(url, 'finished'));
    await waitState(page, 'completed');
    await waitNumber(page, 'last-seq', '=', last);
    await page.locator(tid('tree-node', '[data-kind="agent"][data-id="weather"]')).waitFor({ timeout: 10_000 });

    // Step 3: the swarm has started and checkpointed, its first model call not answered yet.
    expect(topStateAt(events, 3)).toBe('running');
    expect(events[3]).toMatchObject({ seq: 4, kind: 'internal:llm-call' });
    await page.locator(tid('playback-slider')).fill('3');
    await waitText(page, 'playback-step', /\b3\b/);
    const atThree = await waitState(page, 'running.thinking');
    expect(atThree.split('.')[0]).toBe(topStateAt(events, 3));
    // As it was: no agent yet, no answer in the conversation, no event after 3 in the timeline.
    expect(await page.locator(tid('tree-node', '[data-kind="agent"]')).count()).toBe(0);
    expect(await page.locator(tid('conversation')).textContent()).not.toContain('Go hiking');
    const seqs = await page.$$eval(tid('timeline-row'), (rows) => rows.map((r) => Number(r.getAttribute('data-seq'))));
    expect(seqs.length).toBeGreaterThan(0);
    expect(Math.max(...seqs)).toBe(3);
    // What step 3 added: its checkpoint.
    await waitText(page, 'diff', /checkpoint/i);
    await screenshot(ctx, page, 'playback-step-3');

    // Every other step agrees with the oracle too; the handoff's step shows the agent.
    const handoffSeq = events.find((e) => factOf(e, 'agent-handoff'))!.seq;
    const answeredSeq = events.find((e) => factOf(e, 'handoff-result'))!.seq;
    for (const step of [handoffSeq, handoffSeq + 3, answeredSeq + 1]) {
      await page.locator(tid('playback-slider')).fill(String(step));
      await waitText(page, 'playback-step', new RegExp(`\\b${step}\\b`));
      await waitState(page, new RegExp(`^${topStateAt(events, step)}(\\.|$)`));
    }
    await page.locator(tid('playback-slider')).fill(String(handoffSeq));
    await waitState(page, 'awaitingHandoff');
    await page.locator(tid('tree-node', '[data-kind="agent"][data-id="weather"]')).waitFor({ timeout: 10_000 });
    await screenshot(ctx, page, 'playback-handoff');

    // Back to live: the finished swarm as it ended.
    await page.locator(tid('btn-live')).click();
    await waitState(page, 'completed');
    await waitText(page, 'conversation', /Go hiking: Saturday is sunny\./);
    expect({ model: modelCalls, tool: toolCalls }).toEqual(calls);
    expect(chromium.pageErrors).toEqual([]);
  });
});
