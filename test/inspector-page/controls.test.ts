/**
 * The inspector page's controls in a real headless Chromium, under the server's policy: the
 * pause button pauses a running swarm and the resume form answers it (the answer reaches the
 * conversation the model sees); a page of another origin (another 127.0.0.1 port) can neither
 * pause it (fetch, with and without a preflight), nor open the event socket, nor frame the
 * page; with a server token the page works from `#token=` and refuses without it.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, expect, it } from 'vitest';
import { defineSwarm, type ModelRequest, scriptedModel } from '../../src/index.js';
import { browserFixture, describeBrowser, screenshot } from '../support/browser.js';
import { type Gate, gate, pauseFromPage, servedRuntimes, swarmUrl, tid, waitState, waitText } from '../support/inspector-page.js';
import { until } from '../support/wait.js';

const asker = defineSwarm({ id: 'asker', instructions: 'Help with bookings.' });

/** The gate the first model call of every swarm waits at (never released: the swarm stays running until paused). */
let held: Gate = gate();
const requests: ModelRequest[] = [];
/**
 * Holds each swarm's first call (its conversation is the instructions and the input) at the
 * gate, given up when the call is aborted (a pause); later calls echo the last message.
 */
const model = scriptedModel(async (req) => {
  requests.push(req);
  if (req.messages.length <= 2) {
    await new Promise<void>((resolve, reject) => {
      void held.wait().then(resolve);
      req.signal?.addEventListener('abort', () => reject(req.signal!.reason), { once: true });
    });
  }
  return { text: `Heard: ${String(req.messages.at(-1)?.content)}` };
});

describeBrowser('inspector page: controls and their policy', () => {
  const chromium = browserFixture();
  const served = servedRuntimes();
  const foreign: Server[] = [];
  afterEach(async () => {
    held.release();
    held = gate();
    for (const s of foreign.splice(0)) await new Promise((r) => s.close(r));
  });

  it('the pause button pauses the swarm and the resume form answers it', async (ctx) => {
    const { runtime, url } = await served.start({ swarms: [asker], model });
    const client = runtime.forSwarm(asker, 'booking');
    await client.run('Book me a table');
    await held.reached;
    const page = await chromium.page();
    await page.goto(swarmUrl(url, 'booking'));
    await pauseFromPage(page, client);
    await waitState(page, 'paused');
    await page.locator(tid('pause-reason')).waitFor({ timeout: 10_000 });
    await screenshot(ctx, page, 'paused');

    await page.locator(tid('resume-message')).fill('Sunday at eight');
    await screenshot(ctx, page, 'resume-form');
    await page.locator(tid('btn-resume')).click();
    expect(await client.wait()).toEqual({ status: 'completed', result: 'Heard: Sunday at eight' });
    // The answer reached the conversation the model saw, as the human's message.
    const last = requests.filter((r) => r.agentId === 'asker').at(-1)!;
    expect(last.messages.some((m) => m.role !== 'assistant' && String(m.content).includes('Sunday at eight'))).toBe(true);
    await waitState(page, 'completed');
    await waitText(page, 'conversation', /Sunday at eight/);
    await screenshot(ctx, page, 'resumed-completed');
    expect(chromium.pageErrors).toEqual([]);
  });

  it('a page of another origin cannot pause the swarm, open its events or frame the page', async (ctx) => {
    const { runtime, url } = await served.start({ swarms: [asker], model });
    const client = runtime.forSwarm(asker, 'held');
    await client.run('Book me a table');
    await held.reached;

    // Another origin: the same host, another port, serving a page that tries everything.
    const evil = createServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/html' });
      res.end(`<!doctype html><title>elsewhere</title>
<iframe id="framed" src="${swarmUrl(url, 'held')}" width="800" height="400"></iframe>
<script>
window.results = {};
(async () => {
  const pause = '${url}/swarms/asker/held/pause';
  try {
    const r = await fetch(pause, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"reason":"from elsewhere"}' });
    results.preflighted = 'status ' + r.status;
  } catch (e) { results.preflighted = 'refused'; }
  try {
    await fetch(pause, { method: 'POST', mode: 'no-cors', headers: { 'content-type': 'text/plain' }, body: '{"reason":"from elsewhere"}' });
    results.simple = 'sent';
  } catch (e) { results.simple = 'refused'; }
  results.socket = await new Promise((resolve) => {
    const ws = new WebSocket('${url.replace(/^http/, 'ws')}/events?swarmId=held&since=0', ['xswarm']);
    ws.onopen = () => resolve('open');
    ws.onmessage = () => resolve('message');
    ws.onerror = () => resolve('refused');
  });
  results.done = true;
})();
</script>`);
    });
    foreign.push(evil);
    await new Promise<void>((r) => evil.listen(0, '127.0.0.1', r));
    const evilUrl = `http://127.0.0.1:${(evil.address() as AddressInfo).port}/`;

    const page = await chromium.page();
    const frameRefusals: string[] = [];
    page.on('console', (m) => {
      if (/frame-ancestors/.test(m.text())) frameRefusals.push(m.text());
    });
    await page.goto(evilUrl);
    await page.waitForFunction(() => (globalThis as unknown as { results: { done?: boolean } }).results.done === true, undefined, { timeout: 10_000 });
    const results = await page.evaluate(() => (globalThis as unknown as { results: Record<string, string> }).results);
    expect(results.preflighted).toBe('refused');
    expect(results.simple).toBe('sent'); // sent (no preflight for a simple request) and refused by the server:
    expect(results.socket).toBe('refused');
    expect(await client.getResult()).toMatchObject({ status: 'running' });
    // The framed inspector is blocked by frame-ancestors 'none': nothing of it rendered.
    await until('the frame refusal', () => frameRefusals.length > 0 || page.frames().some((f) => f.url().startsWith('chrome-error:')));
    for (const frame of page.frames().filter((f) => f !== page.mainFrame())) expect(await frame.locator(tid('swarm-list')).count()).toBe(0);
    await screenshot(ctx, page, 'foreign-origin');

    // The control: the same swarm's own page can pause it.
    const own = await chromium.page();
    await own.goto(swarmUrl(url, 'held'));
    await pauseFromPage(own, client);
  });

  it('with a server token: works from #token= (kept out of the address bar) and refuses without it', async (ctx) => {
    const token = 's3cret-token_for/the page';
    const { runtime, url } = await served.start({ swarms: [asker], model }, { token });
    const client = runtime.forSwarm(asker, 'guarded');
    await client.run('Book me a table');
    await held.reached;

    const page = await chromium.page();
    await page.goto(swarmUrl(url, 'guarded', token));
    await waitState(page, /^running/);
    await page.locator(tid('swarm-row', '[data-swarm-id="guarded"]')).waitFor({ timeout: 10_000 });
    expect(page.url()).not.toContain('token');
    expect(page.url()).toContain('swarm=guarded');
    await screenshot(ctx, page, 'with-token');

    // A fresh browser context (no session storage), the same address without the token.
    const stranger = await chromium.page();
    const refused = stranger.waitForResponse((r) => r.url().includes('/inspector/api/') && r.status() === 401, { timeout: 10_000 });
    await stranger.goto(swarmUrl(url, 'guarded'));
    await refused;
    await stranger.locator(tid('btn-pause')).click({ timeout: 5_000 });
    await waitText(stranger, 'control-error', /401|token|unauthori[sz]ed/i);
    expect(await stranger.locator(tid('swarm-row')).count()).toBe(0);
    expect(await client.getResult()).toMatchObject({ status: 'running' });
    await screenshot(ctx, stranger, 'without-token');

    // The page with the token drives it: pause goes through with the bearer token.
    await page.locator(tid('btn-pause')).click();
    await until(
      'the swarm to pause',
      () => client.getResult(),
      (r) => r.status === 'paused',
    );
    await waitState(page, 'paused');
  });
});
