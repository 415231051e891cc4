/**
 * The inspector page at scale, in a real headless Chromium: 1,000 swarms listed and a swarm
 * of 100,000 events. Both are written straight into a memory store (copies of one real
 * finished swarm: its record and events under other ids, the long one with cheap checkpoint
 * events added before its final event) so the test spends its time in the page, not in
 * running swarms. The page must keep far fewer rows in the DOM than it lists, show later rows
 * when scrolled, and open the long swarm with its timeline virtualized within a bound.
 */
import { expect, it } from 'vitest';
import { createRuntime, defineSwarm, memoryStore, scriptedModel, type SwarmEvent, type SwarmStore } from '../../src/index.js';
import type { SwarmRecord } from '../../src/store/types.js';
import { browserFixture, describeBrowser, screenshot } from '../support/browser.js';
import { countOf, numberOf, type PageDocument, servedRuntimes, swarmUrl, tid, waitNumber, waitState } from '../support/inspector-page.js';

declare const document: PageDocument;
declare const requestAnimationFrame: (callback: () => void) => number;

const echo = defineSwarm({ id: 'echo', instructions: 'Answer.' });
const model = scriptedModel(() => ({ text: 'Done.' }));

/** A real finished swarm's record and events (id `seed`), to copy. */
async function seed(): Promise<{ record: SwarmRecord; events: SwarmEvent[] }> {
  const store = memoryStore();
  const runtime = createRuntime({ swarms: [echo], model, store });
  const client = runtime.forSwarm(echo, 'seed');
  await client.run('Say done');
  await client.wait();
  await runtime.close();
  return { record: (await store.load('seed'))!, events: await store.readEvents('seed', 0) };
}

/**
 * Commits a copy of the seed swarm as `swarmId` into `store` (ids in the record and events
 * renamed), updated at `updatedAt`, with `extra` checkpoint events before its final event.
 */
function copySwarm(store: SwarmStore, from: { record: SwarmRecord; events: SwarmEvent[] }, swarmId: string, updatedAt: number, extra = 0): Promise<void> | void {
  const rename = <T>(value: T): T => JSON.parse(JSON.stringify(value).replaceAll('"seed"', JSON.stringify(swarmId))) as T;
  const events = rename(from.events);
  const final = events.pop()!;
  const filler: SwarmEvent[] = Array.from({ length: extra }, (_, i) => ({
    seq: events.length + i + 1,
    swarmId,
    timestamp: updatedAt,
    kind: 'internal:checkpoint',
    step: 'agent-step',
  })) as SwarmEvent[];
  const all = [...events, ...filler, { ...final, seq: events.length + extra + 1 }];
  const record: SwarmRecord = { ...rename(from.record), revision: 1, lastSeq: all.length, updatedAt };
  delete record.lease;
  return store.commit({ swarmId, events: all, record });
}

describeBrowser('inspector page: scale', () => {
  const chromium = browserFixture();
  const served = servedRuntimes();

  it('lists 1,000 swarms with far fewer rows in the DOM, shows later rows when scrolled, filters at once', async (ctx) => {
    const from = await seed();
    const store = memoryStore();
    const t0 = Date.now() - 1_000_000;
    const ids = Array.from({ length: 1000 }, (_, i) => `swarm-${String(i).padStart(4, '0')}`);
    for (const [i, id] of ids.entries()) await copySwarm(store, from, id, t0 + i * 1000);
    const { url } = await served.start({ swarms: [echo], model, store });

    const page = await chromium.page();
    const opened = Date.now();
    await page.goto(`${url}/inspector/`);
    // Newest first: the last copied is at the top.
    await page.locator(tid('swarm-row', '[data-swarm-id="swarm-0999"]')).waitFor({ timeout: 15_000 });
    const shownAfter = Date.now() - opened;
    const inDom = await countOf(page, tid('swarm-row'));
    expect(inDom).toBeGreaterThan(5);
    expect(inDom).toBeLessThan(200);
    expect(await countOf(page, tid('swarm-row', '[data-swarm-id="swarm-0000"]'))).toBe(0);
    await screenshot(ctx, page, 'list-1000');

    // Scrolled to the end, the oldest shows, and the DOM still holds a window of rows.
    await page.locator(tid('swarm-list')).evaluate((el) => {
      // The list or the first scrollable element inside it.
      const scroller = [el, ...el.querySelectorAll('*')].find((e) => e.scrollHeight > e.clientHeight + 10) ?? el;
      scroller.scrollTop = scroller.scrollHeight;
    });
    await page.locator(tid('swarm-row', '[data-swarm-id="swarm-0000"]')).waitFor({ timeout: 5_000 });
    expect(await countOf(page, tid('swarm-row'))).toBeLessThan(200);

    // The filter answers at once: one row for one id.
    const typed = Date.now();
    await page.locator(tid('swarm-filter')).fill('swarm-0500');
    await page.waitForFunction(
      () => {
        const rows = [...document.querySelectorAll('[data-testid="swarm-row"]')];
        return rows.length === 1 && rows[0]!.getAttribute('data-swarm-id') === 'swarm-0500';
      },
      undefined,
      { timeout: 5_000 },
    );
    const filtered = Date.now() - typed;
    expect(filtered).toBeLessThan(2_000);
    await ctx.annotate(`1,000 swarms: first rows shown ${shownAfter} ms after navigation, ${inDom} rows in the DOM, filter applied in ${filtered} ms`);
    expect(chromium.pageErrors).toEqual([]);
  });

  it('opens a swarm of 100,000 events with its timeline virtualized, within a bound', async (ctx) => {
    const from = await seed();
    const store = memoryStore();
    await copySwarm(store, from, 'long', Date.now(), 100_000);
    const total = (await store.readEvents('long', 0)).length;
    expect(total).toBeGreaterThan(100_000);
    const { url } = await served.start({ swarms: [echo], model, store });

    const page = await chromium.page();
    const opened = Date.now();
    await page.goto(swarmUrl(url, 'long'));
    await waitNumber(page, 'timeline-count', '=', total, 40_000);
    await waitState(page, 'completed', 40_000);
    const loadedIn = Date.now() - opened;
    expect(await numberOf(page, 'last-seq')).toBe(total);
    const rows = await countOf(page, tid('timeline-row'));
    expect(rows).toBeGreaterThan(0);
    expect(rows).toBeLessThan(500);
    // The bound. One event per WebSocket frame took 7–13 s here, nearly all of it Chromium's
    // per-frame cost; with batched frames (`batch=1`, a stored page per frame) ~1.2 s, as fast
    // as a Node client. 5 s leaves room for a loaded 2-core machine yet fails a per-event stream.
    expect(loadedIn).toBeLessThan(5_000);

    // Still responsive: a frame comes at once, and scrolling to the end shows the last event.
    const frameMs = await page.evaluate(
      () =>
        new Promise<number>((r) => {
          const t = performance.now();
          requestAnimationFrame(() => r(performance.now() - t));
        }),
    );
    expect(frameMs).toBeLessThan(500);
    await page.locator(tid('timeline')).evaluate((el) => {
      const scroller = [el, ...el.querySelectorAll('*')].find((e) => e.scrollHeight > e.clientHeight + 10) ?? el;
      scroller.scrollTop = scroller.scrollHeight;
    });
    await page.locator(tid('timeline-row', `[data-seq="${total}"]`)).waitFor({ timeout: 5_000 });
    expect(await countOf(page, tid('timeline-row'))).toBeLessThan(500);
    await screenshot(ctx, page, 'timeline-100k');
    await ctx.annotate(`100,000 events: loaded in ${loadedIn} ms, ${rows} timeline rows in the DOM, a frame in ${frameMs.toFixed(0)} ms`);
    expect(chromium.pageErrors).toEqual([]);
  }, 90_000);
});
