/**
 * Lazy loading of the repository's own entry: importing the core (`src/index.ts`, what
 * `import … from 'xswarm'` is) and running a swarm loads none of the heavy optional packages
 * (express, ws, better-sqlite3, @a2a-js/sdk, @modelcontextprotocol/*, prom-client); `sqliteStore()` and
 * `serve()` load theirs on first use. (test/package/package.test.ts checks that the packed core works
 * where they are not installed at all; this checks they are not loaded where they are.)
 *
 * A fresh child process records every module it loads: ES modules through a resolve hook
 * (`module.register`, the hooks run off-thread and post each resolved URL back), CommonJS
 * files (better-sqlite3, and whatever express and ws require) through the require cache.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../support/repo-root.js';

/** The heavy packages, as the path segment that marks a file of theirs. */
const HEAVY = ['express', 'ws', 'better-sqlite3', '@a2a-js/sdk', '@modelcontextprotocol/', '@statelyai/inspect', 'prom-client'] as const;
type Heavy = (typeof HEAVY)[number];

/** Runs in the child (an ES module, cwd = the repository): prints what was loaded at each stage. */
const CHILD = `
import { register, createRequire } from 'node:module';
import { MessageChannel } from 'node:worker_threads';
import { join } from 'node:path';

const hooks = 'let port;' +
  'export function initialize(data) { port = data.port; }' +
  'export async function resolve(specifier, context, next) {' +
  '  const resolved = await next(specifier, context); port.postMessage(resolved.url); return resolved; }';
const { port1, port2 } = new MessageChannel();
const urls = [];
port1.on('message', (url) => urls.push(url));
port1.unref();
register('data:text/javascript,' + encodeURIComponent(hooks), { data: { port: port2 }, transferList: [port2] });
const cjs = createRequire(join(process.cwd(), 'loader.cjs')).cache;

let marks = 0;
/** Every module loaded so far: the hook's messages arrive in order, so a marker import flushes them. */
async function loaded() {
  const marker = 'data:text/javascript,export default ' + ++marks;
  await import(marker);
  while (!urls.includes(marker)) await new Promise((r) => setTimeout(r, 1));
  return [...urls, ...Object.keys(cjs)];
}

const stages = {};
const xswarm = await import('./src/index.ts');
stages.import = await loaded();

const swarm = xswarm.defineSwarm({ id: 'lazy', instructions: 'Answer.' });
const runtime = xswarm.createRuntime({ swarms: [swarm], model: xswarm.scriptedModel(() => ({ text: 'done' })) });
const client = runtime.forSwarm(swarm, 'lazy-1');
await client.run('go');
const result = await client.wait();
if (result.status !== 'completed') throw new Error('the swarm did not complete: ' + JSON.stringify(result));
stages.run = await loaded();

const store = xswarm.sqliteStore(join(process.env.LAZY_DIR, 'state.db'));
await store.close();
stages.sqlite = await loaded();

const server = await xswarm.serve(runtime, { port: 0, host: '127.0.0.1' });
await server.close();
await runtime.close();
stages.serve = await loaded();

const measured = xswarm.createRuntime({ swarms: [swarm], model: xswarm.scriptedModel(() => ({ text: 'done' })), metrics: true });
await measured.close();
stages.metrics = await loaded();

console.log(JSON.stringify(stages));
`;

/** Which heavy packages have a file among `files` (URLs or paths). */
function heavyIn(files: string[]): Heavy[] {
  return HEAVY.filter((pkg) => files.some((f) => f.replaceAll('\\', '/').includes(`/node_modules/${pkg}${pkg.endsWith('/') ? '' : '/'}`)));
}

let dir: string;
let stages: Record<'import' | 'run' | 'sqlite' | 'serve' | 'metrics', string[]>;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'xswarm-lazy-'));
  const env: NodeJS.ProcessEnv = { ...process.env, LAZY_DIR: dir };
  delete env.NODE_OPTIONS; // only the loader given here
  const out = await new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', CHILD], { cwd: REPO_ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (b: Buffer) => (stdout += b));
    child.stderr.on('data', (b: Buffer) => (stderr += b));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
  expect(out.code, out.stderr).toBe(0);
  stages = JSON.parse(out.stdout.trim().split('\n').at(-1)!) as typeof stages;
}, 60_000);

afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('lazy loading of the core entry (src/index.ts)', () => {
  it('the hook sees the core being loaded (the check can see something)', () => {
    expect(stages.import.some((f) => f.includes('/src/index.ts'))).toBe(true);
    expect(stages.import.some((f) => f.includes('/node_modules/xstate/'))).toBe(true);
    expect(stages.import.some((f) => f.includes('/node_modules/zod/'))).toBe(true);
  });

  it('importing the core loads none of express, ws, better-sqlite3, @a2a-js/sdk, @modelcontextprotocol/*, @statelyai/inspect', () => {
    expect(heavyIn(stages.import)).toEqual([]);
  });

  it('creating a runtime (its default A2A client included) and running a swarm on the in-memory store loads none either', () => {
    expect(heavyIn(stages.run)).toEqual([]);
  });

  it('sqliteStore() loads better-sqlite3, and only it', () => {
    expect(heavyIn(stages.sqlite)).toEqual(['better-sqlite3']);
  });

  it('serve() loads the servers’ packages on first use (not the inspector relay’s)', () => {
    expect(heavyIn(stages.serve)).toEqual(HEAVY.filter((p) => p !== '@statelyai/inspect' && p !== 'prom-client'));
  });

  it('prom-client loads only for a runtime with metrics (createRuntime({ metrics }))', () => {
    expect(heavyIn(stages.metrics)).toContain('prom-client');
  });
});
