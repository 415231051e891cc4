/**
 * A team in the inspector page, in a real headless Chromium: the list shows the team; its
 * board shows every task with the state, owner and dependencies the runtime's board has, while
 * the workers are held at a gate and after they finish; the inbox shows the workers' messages.
 */
import { afterEach, expect, it } from 'vitest';
import { defineSwarm, defineTeam, type ModelRequest, scriptedModel } from '../../src/index.js';
import { browserFixture, describeBrowser, screenshot } from '../support/browser.js';
import { gate, type PageDocument, servedRuntimes, tid } from '../support/inspector-page.js';

declare const document: PageDocument;
import { until } from '../support/wait.js';

const api = defineSwarm({ id: 'api-worker', instructions: 'You build APIs.' });
const frontend = defineSwarm({ id: 'frontend-worker', instructions: 'You build pages.' });
const builders = defineTeam({
  id: 'builders',
  description: 'Builds a small web app',
  workers: [
    { type: 'api', swarm: api },
    { type: 'frontend', specialty: 'pages', swarm: frontend },
  ],
});
const BOARD = [
  { id: 'schema', subject: 'schema', metadata: { type: 'api', complexity: 2 } },
  { id: 'endpoints', subject: 'endpoints', metadata: { type: 'api', complexity: 3 }, dependencies: ['schema'] },
  { id: 'login', subject: 'login', metadata: { type: 'frontend', complexity: 2 } },
  { id: 'dashboard', subject: 'dashboard', metadata: { type: 'frontend', complexity: 3 }, dependencies: ['endpoints', 'login'] },
];

let held = gate();
/** The task a task swarm works on (its input says `Task: <subject> …`). */
const taskOf = (req: ModelRequest) => /Task: (\S+)/.exec(String(req.messages.find((m) => m.role === 'user')?.content))?.[1] ?? '?';
const model = scriptedModel(async (req) => {
  await new Promise<void>((resolve, reject) => {
    void held.wait().then(resolve);
    req.signal?.addEventListener('abort', () => reject(req.signal!.reason), { once: true });
  });
  return { text: `built ${taskOf(req)}` };
});

/** The page's board as `taskId → state`. */
const shownBoard = (page: import('playwright-core').Page) =>
  page.$$eval(tid('board-task'), (els) => Object.fromEntries(els.map((e) => [e.getAttribute('data-task-id'), e.getAttribute('data-state')])));

describeBrowser('inspector page: a team', () => {
  const chromium = browserFixture();
  const served = servedRuntimes();
  afterEach(() => {
    held.release();
    held = gate();
  });

  it('shows the team in the list and its board (states, owners, dependencies) and inbox, live', async (ctx) => {
    const { runtime, url } = await served.start({ teams: [builders], model });
    const team = runtime.forTeam(builders, 'app-1');
    await team.run(BOARD);
    await held.reached;
    await until('two tasks in progress', () => team.board().tasks.filter((t) => t.status === 'in_progress').length === 2);

    const page = await chromium.page();
    await page.goto(`${url}/inspector/`);
    const row = page.locator(tid('team-row', '[data-team-id="app-1"]'));
    await row.waitFor({ timeout: 10_000 });
    await row.click();
    await page.waitForURL(/#team=builders\/app-1/);
    await page.locator(tid('team-board')).waitFor({ timeout: 10_000 });
    const expected = () => Object.fromEntries(team.board().tasks.map((t) => [t.id, t.status]));
    await page.waitForFunction(
      (want) => {
        const els = [...document.querySelectorAll('[data-testid="board-task"]')];
        return els.length === Object.keys(want).length && els.every((e) => want[e.getAttribute('data-task-id') ?? ''] === e.getAttribute('data-state'));
      },
      expected(),
      { timeout: 10_000 },
    );
    expect(await shownBoard(page)).toEqual({ schema: 'in_progress', endpoints: 'pending', login: 'in_progress', dashboard: 'pending' });
    // Owners and dependencies are shown with each task.
    const dashboard = page.locator(tid('board-task', '[data-task-id="dashboard"]'));
    expect(await dashboard.textContent()).toMatch(/endpoints/);
    expect(await dashboard.textContent()).toMatch(/login/);
    const owner = team.board().tasks.find((t) => t.id === 'schema')!.owner!;
    expect(await page.locator(tid('board-task', '[data-task-id="schema"]')).textContent()).toContain(owner);
    await screenshot(ctx, page, 'team-board-working');

    // Let the workers finish: the board follows, every task completed; the inbox has their reports.
    held.release();
    expect((await team.wait()).status).toBe('completed');
    await page.waitForFunction(
      () => {
        const els = [...document.querySelectorAll('[data-testid="board-task"]')];
        return els.length === 4 && els.every((e) => e.getAttribute('data-state') === 'completed');
      },
      undefined,
      { timeout: 15_000 },
    );
    expect(await shownBoard(page)).toEqual(expected());
    await page.locator(tid('inbox-message')).first().waitFor({ timeout: 10_000 });
    expect(await page.locator(tid('team-inbox')).textContent()).toMatch(/task_completed|completed/);
    await screenshot(ctx, page, 'team-board-completed');
    expect(chromium.pageErrors).toEqual([]);
  });
});
