/**
 * Running the crash fixtures as real child processes (`node --import tsx`), and making sure
 * none outlives the suite.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { REPO_ROOT } from './repo-root.js';

export const W1_FIXTURE = fileURLToPath(new URL('../fixtures/crash-w1.ts', import.meta.url));

const live = new Set<ChildProcess>();

/** How a child process ended. */
export interface Exit {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

/** Starts `node --import tsx <script> ...args` in the repo root. */
export function startFixture(script: string, args: string[], env: Record<string, string> = {}): ChildProcess {
  const child = spawn(process.execPath, ['--import', 'tsx', script, ...args], {
    cwd: REPO_ROOT,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  live.add(child);
  child.once('exit', () => live.delete(child));
  return child;
}

/** Runs a fixture to its end (or death) and collects its output. */
export function runFixture(script: string, args: string[], env: Record<string, string> = {}, timeoutMs = 30_000): Promise<Exit> {
  const child = startFixture(script, args, env);
  return new Promise((resolve, reject) => {
    let stdout = '';
    let stderr = '';
    child.stdout!.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`fixture timed out after ${timeoutMs} ms: ${args.join(' ')}\n${stderr}`));
    }, timeoutMs);
    child.once('error', reject);
    child.once('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, stdout, stderr });
    });
  });
}

/** Resolves with the first stdout line of a running child, parsed as JSON. */
export function firstLine<T>(child: ChildProcess, timeoutMs = 15_000): Promise<T> {
  return new Promise((resolve, reject) => {
    let buffer = '';
    let stderr = '';
    const timer = setTimeout(() => reject(new Error(`no output within ${timeoutMs} ms\n${stderr}`)), timeoutMs);
    child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
    child.stdout!.on('data', (d: Buffer) => {
      buffer += d.toString();
      const nl = buffer.indexOf('\n');
      if (nl >= 0) {
        clearTimeout(timer);
        resolve(JSON.parse(buffer.slice(0, nl)) as T);
      }
    });
    child.once('exit', (code, signal) => {
      clearTimeout(timer);
      reject(new Error(`fixture exited (${code ?? signal}) before printing\n${stderr}`));
    });
  });
}

/** Resolves once a child has exited. */
export function exited(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => child.once('exit', () => resolve()));
}

/** SIGKILLs every fixture still alive (for `afterAll`). */
export async function killAll(): Promise<void> {
  const children = [...live];
  for (const child of children) child.kill('SIGKILL');
  await Promise.all(children.map(exited));
}

/** Runs `task` over `items` with at most `limit` at a time, results in input order. */
export async function pool<T, R>(items: readonly T[], limit: number, task: (item: T) => Promise<R>): Promise<R[]> {
  const results: R[] = new Array(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const i = next++;
      results[i] = await task(items[i]!);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return results;
}
