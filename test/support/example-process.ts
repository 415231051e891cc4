/**
 * `examples/main.ts` (what `npm start` runs) as a child process, offline (no API key), on a
 * database in a temporary folder of the calling test file, removed after it: the checkout's
 * `.xswarm/state.db` holds the user's own swarms and is never opened (see checkout-guard.ts).
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll } from 'vitest';
import { guardCheckoutState } from './checkout-guard.js';
import { REPO_ROOT } from './repo-root.js';

/** How an example process ended, and all it printed. */
export interface ExampleExit {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

/** How to start it. */
export interface ExampleOptions {
  /** `npx tsx` is what `npm start` does; `node --import tsx` (default) skips npx's start-up, to keep runs cheap. */
  launcher?: 'npx' | 'node';
  /** The database (`XSWARM_DB`); default: a new file in the test file's folder. */
  db?: string;
  /** Written to a piped stdin, which is then closed; without it the process has no stdin at all (/dev/null). */
  stdin?: string;
}

const running = new Set<ChildProcess>();

/**
 * Registers, for the calling test file, a temporary folder for the examples' databases (made
 * before its tests, removed after them, whatever their outcome, with every example process
 * still running killed first) and the guard of the checkout's `.xswarm/`. Returns how to run
 * an example there and how to name a new database in it.
 */
export function examplesInTempFolder(prefix: string): {
  runExample: (args: readonly string[], options?: ExampleOptions) => Promise<ExampleExit>;
  newDb: () => string;
} {
  let dir = '';
  let dbs = 0;
  guardCheckoutState();
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), prefix));
  });
  afterAll(() => {
    for (const child of running) child.kill('SIGKILL');
    if (dir) rmSync(dir, { recursive: true, force: true });
  });
  const newDb = () => join(dir, `state-${++dbs}.db`);
  const runExample = (args: readonly string[], options: ExampleOptions = {}) => start(args, options.db ?? newDb(), options);
  return { runExample, newDb };
}

function start(args: readonly string[], db: string, options: ExampleOptions): Promise<ExampleExit> {
  const env: NodeJS.ProcessEnv = { ...process.env, XSWARM_DB: db };
  delete env.OPENAI_API_KEY;
  delete env.OPENAI_BASE_URL;
  const [command, ...prefix] = options.launcher === 'npx' ? ['npx', 'tsx'] : [process.execPath, '--import', 'tsx'];
  const stdin = options.stdin === undefined ? 'ignore' : 'pipe';
  return new Promise((resolve, reject) => {
    const child = spawn(command!, [...prefix, 'examples/main.ts', ...args], { cwd: REPO_ROOT, env, stdio: [stdin, 'pipe', 'pipe'] });
    running.add(child);
    let stdout = '';
    let stderr = '';
    child.stdout!.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
    child.stdin?.end(options.stdin);
    child.on('error', reject);
    child.on('close', (code, signal) => {
      running.delete(child);
      resolve({ code, signal, stdout, stderr });
    });
  });
}

/** The result JSON main.ts prints last (pretty JSON from a line that is just "{"). */
export function printedResult(stdout: string): unknown {
  return JSON.parse(stdout.slice(stdout.indexOf('\n{\n') + 1)) as unknown;
}
