/**
 * What the inspector page's browser tests share: a runtime served by `serve()` (closed after
 * each test), gates that hold a model or tool call until the test releases it (so a swarm is
 * stepped deterministically, with no sleeps), and waits on the page's `data-testid` elements
 * (playwright-core has no `expect`: these wait in the page with `waitForFunction` and fail with
 * what the page showed last).
 */
import type { Page } from 'playwright-core';
import { afterEach } from 'vitest';
import { createRuntime, memoryStore, type Runtime, type SwarmClient, type SwarmStore } from '../../src/index.js';
import { serve, type ServeOptions, type SwarmServer } from '../../src/server/index.js';
import { until } from './wait.js';

/**
 * The little of the DOM the tests' in-page functions use: the project's `lib` has no DOM
 * types, and these functions run in the page, where `document` is the page's. A test file
 * declares `declare const document: PageDocument;` (module-local, so nothing is emitted).
 */
export interface PageDocument {
  querySelector(selector: string): PageElement | null;
  querySelectorAll(selector: string): ArrayLike<PageElement> & Iterable<PageElement>;
}

/** An element, as far as {@link PageDocument}'s users need. */
export interface PageElement {
  readonly textContent: string | null;
  getAttribute(name: string): string | null;
  querySelectorAll(selector: string): ArrayLike<PageElement> & Iterable<PageElement>;
  scrollTop: number;
  readonly scrollHeight: number;
  readonly clientHeight: number;
}

declare const document: PageDocument;

/** A runtime served on 127.0.0.1 and its store. */
export interface Served {
  runtime: Runtime;
  server: SwarmServer;
  store: SwarmStore;
  /** The server's base URL, e.g. `http://127.0.0.1:41234`. */
  url: string;
}

/**
 * Registers the cleanup (runtimes and servers closed after each test, gates released first);
 * returns how to start a served runtime, a memory store of its own unless `options.store`.
 */
export function servedRuntimes(): {
  start(options: Parameters<typeof createRuntime>[0], serveOptions?: ServeOptions): Promise<Served>;
  /** Something to run after the test before the runtimes close (e.g. release gates). */
  defer(cleanup: () => unknown): void;
} {
  const cleanups: (() => unknown)[] = [];
  afterEach(async () => {
    for (const c of cleanups.splice(0).reverse()) await c();
  });
  return {
    async start(options, serveOptions = {}) {
      const store = options.store ?? memoryStore();
      const runtime = createRuntime({ ...options, store });
      cleanups.push(() => runtime.close());
      const server = await serve(runtime, serveOptions);
      cleanups.push(() => server.close());
      return { runtime, server, store, url: server.url };
    },
    defer(cleanup) {
      cleanups.push(cleanup);
    },
  };
}

/** A promise the test releases: a model or tool call awaiting it holds its swarm where it is. */
export interface Gate {
  /** Resolves once something waits at the gate. */
  readonly reached: Promise<void>;
  /** Waits at the gate (what the held call does). */
  wait(): Promise<void>;
  release(): void;
}

/** A new closed gate. */
export function gate(): Gate {
  let release!: () => void;
  let reach!: () => void;
  const opened = new Promise<void>((r) => (release = r));
  const reached = new Promise<void>((r) => (reach = r));
  return {
    reached,
    wait() {
      reach();
      return opened;
    },
    release,
  };
}

/** The CSS selector of `data-testid="id"` (plus `extra`, e.g. `[data-seq="3"]`). */
export const tid = (id: string, extra = ''): string => `[data-testid="${id}"]${extra}`;

/** The page's URL for a swarm (`#swarm=`), with a token in the fragment when given. */
export function swarmUrl(base: string, swarmId: string, token?: string): string {
  return `${base}/inspector/#swarm=${encodeURIComponent(swarmId)}${token ? `&token=${encodeURIComponent(token)}` : ''}`;
}

/** Waits until the text of the first `testid` element matches `expected` (exact string or pattern). */
export async function waitText(page: Page, testId: string, expected: string | RegExp, timeout = 10_000): Promise<string> {
  const pattern = typeof expected === 'string' ? undefined : { source: expected.source, flags: expected.flags };
  const exact = typeof expected === 'string' ? expected : undefined;
  try {
    await page.waitForFunction(
      ({ sel, pattern, exact }) => {
        const text = document.querySelector(sel)?.textContent?.trim();
        if (text === undefined) return false;
        return pattern ? new RegExp(pattern.source, pattern.flags).test(text) : text === exact;
      },
      { sel: tid(testId), pattern, exact },
      { timeout, polling: 'raf' },
    );
  } catch (error) {
    const shown = await textOf(page, testId);
    throw new Error(`[data-testid=${testId}] did not show ${String(expected)} within ${timeout} ms; it shows ${JSON.stringify(shown)}`, { cause: error });
  }
  return (await textOf(page, testId))!;
}

/** The trimmed text of the first `testid` element, or undefined when there is none. */
export function textOf(page: Page, testId: string): Promise<string | undefined> {
  return page.evaluate((sel) => document.querySelector(sel)?.textContent?.trim(), tid(testId));
}

/** A number the page shows (`timeline-count`, `last-seq`, …), NaN when it shows none. */
export async function numberOf(page: Page, testId: string): Promise<number> {
  return Number((await textOf(page, testId)) ?? Number.NaN);
}

/** Waits until the page shows `testId` as a number `op` `value` (`=`, `>`, `>=`); returns it. */
export async function waitNumber(page: Page, testId: string, op: '=' | '>' | '>=', value: number, timeout = 10_000): Promise<number> {
  try {
    await page.waitForFunction(
      ({ sel, op, value }) => {
        const text = document.querySelector(sel)?.textContent?.trim();
        if (!text) return false;
        const n = Number(text);
        return op === '=' ? n === value : op === '>' ? n > value : n >= value;
      },
      { sel: tid(testId), op, value },
      { timeout, polling: 'raf' },
    );
  } catch (error) {
    throw new Error(`[data-testid=${testId}] did not reach ${op} ${value} within ${timeout} ms; it shows ${await textOf(page, testId)}`, { cause: error });
  }
  return numberOf(page, testId);
}

/** How many elements match `selector` in the page. */
export function countOf(page: Page, selector: string): Promise<number> {
  return page.locator(selector).count();
}

/** The `data-state` of the chart's states marked `data-active="true"`, sorted. */
export function activeStates(page: Page): Promise<string[]> {
  return page.$$eval(`${tid('chart-state')}[data-active="true"]`, (els) => els.map((e) => e.getAttribute('data-state') ?? '').sort());
}

/**
 * Waits until the page's `current-state` is `state` and the chart highlights exactly that
 * state and its ancestors (`running.thinking` → `running`, `running.thinking`).
 */
export async function waitState(page: Page, state: string | RegExp, timeout = 10_000): Promise<string> {
  const shown = await waitText(page, 'current-state', state, timeout);
  const ancestors = shown.split('.').map((_, i, parts) => parts.slice(0, i + 1).join('.'));
  try {
    await page.waitForFunction(
      ({ sel, want }) => {
        const active = [...document.querySelectorAll(sel)].map((e) => e.getAttribute('data-state') ?? '').sort();
        return JSON.stringify(active) === JSON.stringify(want);
      },
      { sel: `${tid('chart-state')}[data-active="true"]`, want: [...ancestors].sort() },
      { timeout, polling: 'raf' },
    );
  } catch (error) {
    throw new Error(`chart does not highlight ${JSON.stringify(ancestors)} (current-state ${shown}); active: ${JSON.stringify(await activeStates(page))}`, {
      cause: error,
    });
  }
  return shown;
}

/** The last stored event's seq of a swarm (0 when it has none). */
export async function storedLastSeq(store: SwarmStore, swarmId: string): Promise<number> {
  return (await store.readEvents(swarmId, 0)).at(-1)?.seq ?? 0;
}

/** Clicks the page's pause button on a running swarm and waits until `client` reads it paused. */
export async function pauseFromPage(page: Page, client: Pick<SwarmClient, 'getResult'>): Promise<void> {
  await waitState(page, /^running/);
  await page.locator(tid('btn-pause')).click();
  await until(
    'the swarm to pause',
    () => client.getResult(),
    (r) => r.status === 'paused',
  );
}
