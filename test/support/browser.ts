/**
 * A real headless Chromium for the inspector page's tests, driven by `playwright-core` (no
 * downloaded browser: Debian's `chromium`, which `.ci/run` installs).
 *
 * The binary is `XSWARM_CHROMIUM` when set, else `/usr/bin/chromium`, else `chromium` (or
 * `chromium-browser`) on the PATH. When none is found, {@link chromiumMissing} says why and
 * {@link describeBrowser} skips the suite; in CI (`CI` set) a missing browser is an error, as
 * for nats-server (test/support/nats-server.ts).
 *
 * {@link browserFixture} shares one browser per test file (launching one costs about a second)
 * and gives each test fresh contexts, closed after it. {@link screenshot} keeps a picture of a
 * step as a test artifact: vitest copies it into its `attachmentsDir`, which vitest.config.ts
 * puts under the OS temp folder (`XSWARM_ARTIFACTS_DIR` overrides it).
 */
import { execFileSync } from 'node:child_process';
import { accessSync, constants, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { type Browser, type BrowserContext, type BrowserContextOptions, chromium, type Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, type TestContext } from 'vitest';

/** Whether `file` exists and may be run. */
function executable(file: string): boolean {
  try {
    accessSync(file, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/** The first of `names` found in a folder of the PATH. */
function onPath(names: readonly string[]): string | undefined {
  for (const dir of (process.env.PATH ?? '').split(delimiter).filter(Boolean)) {
    for (const name of names) if (executable(join(dir, name))) return join(dir, name);
  }
  return undefined;
}

/** Where the Chromium binary is, or undefined when none is found (see the module's notes). */
export const chromiumPath: string | undefined = (() => {
  const fromEnv = process.env.XSWARM_CHROMIUM;
  if (fromEnv) {
    // A path set on purpose that does not work is a mistake to report, not a reason to skip.
    if (!executable(fromEnv)) throw new Error(`XSWARM_CHROMIUM=${fromEnv} is not an executable file`);
    return fromEnv;
  }
  if (executable('/usr/bin/chromium')) return '/usr/bin/chromium';
  return onPath(['chromium', 'chromium-browser']);
})();

/** Why the browser suites cannot run here, or undefined when Chromium is found. */
export const chromiumMissing: string | undefined = (() => {
  if (chromiumPath) {
    try {
      execFileSync(chromiumPath, ['--version'], { stdio: 'ignore', timeout: 10_000 });
      return undefined;
    } catch (error) {
      if (process.env.CI) throw new Error(`${chromiumPath} --version failed: ${String(error)}`);
      return `${chromiumPath} does not run (${String(error)}); browser suites are skipped`;
    }
  }
  if (process.env.CI) throw new Error('chromium is not installed: .ci/run installs it with apt-get (package chromium)');
  return 'chromium is not installed (apt-get install -y chromium, or set XSWARM_CHROMIUM); browser suites are skipped';
})();

/** A suite that needs Chromium: skipped when it is missing (never in CI, where that throws). */
export function describeBrowser(name: string, body: () => void): void {
  describe.skipIf(chromiumMissing)(name, body);
}

/** Launches headless Chromium; `--no-sandbox` when running as root (containers, CI). */
export function launchChromium(): Promise<Browser> {
  if (!chromiumPath) throw new Error(chromiumMissing ?? 'chromium not found');
  const root = process.getuid?.() === 0;
  return chromium.launch({
    executablePath: chromiumPath,
    headless: true,
    args: [...(root ? ['--no-sandbox'] : []), '--disable-gpu', '--disable-dev-shm-usage'],
    timeout: 30_000,
  });
}

/** The browser of a test file and fresh contexts for its tests. */
export interface BrowserFixture {
  /** The file's browser (launched in `beforeAll`). */
  readonly browser: Browser;
  /** A new context (closed after the test), e.g. with its own viewport. */
  context(options?: BrowserContextOptions): Promise<BrowserContext>;
  /** A new page in a new context (both closed after the test); page errors fail {@link pageErrors}. */
  page(options?: BrowserContextOptions): Promise<Page>;
  /** Uncaught errors and console errors of the pages opened in the current test. */
  readonly pageErrors: string[];
}

/**
 * Registers the file's hooks: one browser for all its tests (closed in `afterAll`), the
 * contexts a test opened closed after it. Call it at the top of a {@link describeBrowser} body.
 */
export function browserFixture(): BrowserFixture {
  let browser: Browser | undefined;
  const contexts: BrowserContext[] = [];
  const pageErrors: string[] = [];
  beforeAll(async () => {
    browser = await launchChromium();
  }, 40_000);
  afterEach(async () => {
    for (const c of contexts.splice(0)) await c.close().catch(() => undefined);
    pageErrors.length = 0;
  });
  afterAll(async () => {
    await browser?.close();
  });
  const context = async (options: BrowserContextOptions = {}): Promise<BrowserContext> => {
    const c = await browser!.newContext({ viewport: { width: 1400, height: 900 }, ...options });
    contexts.push(c);
    return c;
  };
  return {
    get browser() {
      return browser!;
    },
    context,
    async page(options) {
      const page = await (await context(options)).newPage();
      page.on('pageerror', (e) => pageErrors.push(`pageerror: ${e.message}`));
      page.on('console', (m) => {
        if (m.type() === 'error') pageErrors.push(`console: ${m.text()}`);
      });
      return page;
    },
    pageErrors,
  };
}

/** Where screenshots are written before vitest copies them into its attachments folder. */
let shotsDir: string | undefined;
afterAll(() => {
  if (shotsDir) rmSync(shotsDir, { recursive: true, force: true });
  shotsDir = undefined;
});

/**
 * Takes a screenshot of `page` and attaches it to the running test as an annotation
 * (`step: <name>`); vitest copies the file into its `attachmentsDir` (see vitest.config.ts),
 * where it stays after the run. Returns the PNG's bytes.
 */
export async function screenshot(context: Pick<TestContext, 'annotate'>, page: Page, name: string, options: { fullPage?: boolean } = {}): Promise<Buffer> {
  shotsDir ??= mkdtempSync(join(tmpdir(), 'xswarm-shots-'));
  const path = join(shotsDir, `${name.replace(/[^a-z0-9-]+/gi, '-')}-${Date.now()}.png`);
  const png = await page.screenshot({ path, fullPage: options.fullPage ?? false });
  await context.annotate(`step: ${name}`, { path, contentType: 'image/png' });
  return png;
}
