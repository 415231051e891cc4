/**
 * The `xswarm` command line as a child process (`node bin/xswarm.js …` in the repo root, what
 * `npx xswarm` runs in a checkout), with stdout and stdin as pipes, and nothing from the test's
 * own environment that would change what it does (database, API key, tokens, NATS credentials).
 */
import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process';
import { REPO_ROOT } from './repo-root.js';
import { until } from './wait.js';

/** Variables a user's shell may hold that would steer the CLI; cleared unless a test sets them. */
const CLEARED = ['OPENAI_API_KEY', 'NO_COLOR', 'XSWARM_DB', 'XSWARM_TOKEN', 'XSWARM_NATS_PASS', 'XSWARM_NATS_TOKEN', 'XSWARM_NATS_NKEY'];

const running = new Set<ChildProcessWithoutNullStreams>();

/** How a CLI process ended, and all it printed. */
export interface Done {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** A CLI process: its exit, and what it has printed so far. */
export interface Started {
  child: ChildProcessWithoutNullStreams;
  done: Promise<Done>;
  stdout: () => string;
}

/**
 * Starts `xswarm …args` with `env` over the test's environment (less the {@link CLEARED} names
 * it does not set); `bin` is the binary's path (default: the checkout's, relative to the root).
 */
export function startCli(args: readonly string[], env: Record<string, string> = {}, bin = 'bin/xswarm.js'): Started {
  const childEnv: NodeJS.ProcessEnv = { ...process.env, ...env };
  for (const name of CLEARED) if (!(name in env)) delete childEnv[name];
  const child = spawn(process.execPath, [bin, ...args], { cwd: REPO_ROOT, env: childEnv, stdio: 'pipe' });
  running.add(child);
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  const done = new Promise<Done>((resolve) =>
    child.on('close', (code) => {
      running.delete(child);
      resolve({ code, stdout, stderr });
    }),
  );
  return { child, done, stdout: () => stdout };
}

/** Runs a command to its end; `stdin` is written and then closed (closed at once by default). */
export function runCli(args: readonly string[], env: Record<string, string> = {}, stdin = '', bin?: string): Promise<Done> {
  const run = startCli(args, env, bin);
  run.child.stdin.end(stdin);
  return run.done;
}

/**
 * Resolves with the first match once the process has printed something matching `pattern`;
 * rejects once it exited without. Bounded by the calling test's own timeout: the wait's is
 * longer than any test's.
 */
export async function printed(run: Started, pattern: RegExp): Promise<RegExpExecArray> {
  const found = await until(
    `the process to print ${pattern}`,
    () => {
      const found = pattern.exec(run.stdout());
      if (!found && run.child.exitCode !== null) throw new Error(`exited ${run.child.exitCode} before printing ${pattern}: ${run.stdout()}`);
      return found;
    },
    { timeout: 300_000, interval: 50 },
  );
  return found!;
}

/** Kills every CLI process still running, so none outlives the suite (for `afterAll`). */
export function killCliProcesses(): void {
  for (const child of running) child.kill('SIGKILL');
}
