/**
 * The package as a plain Node service gets it: `npm pack` (which builds dist/ through the
 * `prepare` script), the tarball unpacked into a project made on the spot whose only packages
 * are xswarm's dependencies (xstate, @xstate/store, zod) linked from this repository's node_modules, none of
 * the optional peers. W1 runs there under plain `node` (no loader), the optional parts fail
 * naming what to install, and a TypeScript consumer type-checks against the shipped `.d.ts`.
 */
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readdir, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OPTIONAL_PEERS } from '../../src/util/optional.js';
import { REPO_ROOT } from '../support/repo-root.js';

const tsc = join(REPO_ROOT, 'node_modules/typescript/bin/tsc');
/** What a project that installed xswarm without any optional peer holds (plus types, for the TypeScript consumer). */
const linked = ['xstate', '@xstate/store', 'zod', '@types/node', 'undici-types'];

let dir: string;
let app: string;
/** Whether the checkout had a dist/ before `npm pack` built one into it (else it goes again after the tests). */
const hadDist = existsSync(join(REPO_ROOT, 'dist'));

/** Runs a command to completion; resolves with its exit code and output, never rejects. */
function exec(command: string, args: string[], cwd: string): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const env = { ...process.env };
  delete env.NODE_OPTIONS; // plain node: no loader inherited from the test runner
  return new Promise((done, fail) => {
    const child = spawn(command, args, { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (b: Buffer) => (stdout += b));
    child.stderr.on('data', (b: Buffer) => (stderr += b));
    child.on('error', fail);
    child.on('close', (code) => done({ code, stdout, stderr }));
  });
}

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'xswarm-package-'));
  // `npm pack` runs `prepare`, i.e. `npm run build`: the tarball holds what dist/ was just built to.
  const pack = await exec('npm', ['pack', '--pack-destination', dir], REPO_ROOT);
  if (pack.code !== 0) throw new Error(`npm pack failed:\n${pack.stdout}${pack.stderr}`);
  const tarball = (await readdir(dir)).find((f) => f.endsWith('.tgz'));
  if (!tarball) throw new Error('npm pack made no tarball');

  app = join(dir, 'app');
  await mkdir(join(app, 'node_modules/xswarm'), { recursive: true });
  const untar = await exec('tar', ['xzf', join(dir, tarball), '--strip-components=1', '-C', join(app, 'node_modules/xswarm')], dir);
  if (untar.code !== 0) throw new Error(`tar failed: ${untar.stderr}`);
  for (const name of linked) {
    await mkdir(join(app, 'node_modules', name, '..'), { recursive: true });
    await symlink(join(REPO_ROOT, 'node_modules', name), join(app, 'node_modules', name), 'dir');
  }
  await writeFile(join(app, 'package.json'), JSON.stringify({ name: 'app', private: true, type: 'module' }));
}, 60_000);

afterAll(async () => {
  if (dir) await rm(dir, { recursive: true, force: true });
  // `npm pack` builds dist/ in the checkout; a run leaves the checkout as it found it.
  if (!hadDist) await rm(join(REPO_ROOT, 'dist'), { recursive: true, force: true });
});

describe('the packed tarball', () => {
  it('ships the compiled entry points and the binary, not the sources', async () => {
    const pkg = JSON.parse(await readFile(join(app, 'node_modules/xswarm/package.json'), 'utf8')) as { exports: Record<string, unknown> };
    for (const entry of Object.values(pkg.exports)) {
      for (const file of typeof entry === 'string' ? [entry] : Object.values(entry as Record<string, string>)) {
        expect(existsSync(join(app, 'node_modules/xswarm', file)), file).toBe(true);
      }
    }
    expect(existsSync(join(app, 'node_modules/xswarm/bin/xswarm.js'))).toBe(true);
    expect(existsSync(join(app, 'node_modules/xswarm/dist/machines/swarm.js'))).toBe(true);
    for (const absent of ['src', 'test', 'examples', 'bench', 'dist/test']) {
      expect(existsSync(join(app, 'node_modules/xswarm', absent)), absent).toBe(false);
    }
  });

  it('declares every optional package as an optional peer (and a dev dependency for the tests)', async () => {
    const pkg = JSON.parse(await readFile(join(REPO_ROOT, 'package.json'), 'utf8')) as {
      dependencies: Record<string, string>;
      peerDependencies: Record<string, string>;
      peerDependenciesMeta: Record<string, { optional?: boolean }>;
      devDependencies: Record<string, string>;
    };
    const optional = [...new Set([...Object.values(OPTIONAL_PEERS).flat(), 'tsx'])].sort();
    expect(Object.keys(pkg.peerDependencies).sort()).toEqual(optional);
    for (const name of optional) {
      expect(pkg.peerDependenciesMeta[name]?.optional, name).toBe(true);
      expect(pkg.devDependencies[name], name).toBeDefined();
    }
    expect(Object.keys(pkg.dependencies).sort()).toEqual(['@xstate/store', 'xstate', 'zod']);
  });
});

describe('a Node service without the optional packages', () => {
  it('runs W1 (an orchestrator and three agent handoffs) under plain node', async () => {
    for (const peer of Object.values(OPTIONAL_PEERS).flat()) expect(existsSync(join(app, 'node_modules', peer)), peer).toBe(false);
    await writeFile(
      join(app, 'w1.mjs'),
      `import { createRuntime, defineAgent, defineSwarm, handoff, memoryStore, scriptedModel } from 'xswarm';
const ids = ['weather-agent', 'calendar-agent', 'allergen-agent'];
const agents = ids.map((id) => defineAgent({ id, instructions: 'Answer briefly.' }));
const planner = defineSwarm({ id: 'planner', instructions: 'Ask the agents, then answer.', handoffs: agents.map((a) => handoff.toAgent(a)) });
const calls = [];
const model = scriptedModel(({ agentId, messages }) => {
  calls.push(agentId);
  if (agentId !== 'planner') return { text: agentId + ': looks fine' };
  const n = messages.filter((m) => m.role === 'tool').length;
  return n < ids.length
    ? { toolCalls: [{ id: 'c' + n, name: 'handoff_to_' + ids[n].replaceAll('-', '_'), arguments: JSON.stringify({ request: 'Saturday?' }) }] }
    : { text: 'Go hiking on Saturday.' };
});
const runtime = createRuntime({ swarms: [planner], agents, model, store: memoryStore() });
const client = runtime.forSwarm(planner);
await client.run('Plan my Saturday');
await client.wait();
console.log(JSON.stringify({ result: await client.getResult(), calls }));
await runtime.close();
`,
    );
    const { code, stdout, stderr } = await exec(process.execPath, ['w1.mjs'], app);
    expect(stderr).toBe('');
    expect(code).toBe(0);
    expect(JSON.parse(stdout)).toEqual({
      result: { status: 'completed', result: 'Go hiking on Saturday.' },
      calls: ['planner', 'weather-agent', 'planner', 'calendar-agent', 'planner', 'allergen-agent', 'planner'],
    });
  });

  it('names the package to install when an optional part is used', async () => {
    await writeFile(
      join(app, 'optional.mjs'),
      `import { createRuntime, openaiModel, scriptedModel, serve, sqliteStore } from 'xswarm';
const attempt = async (f) => { try { await f(); return 'no error'; } catch (e) { return e.message; } };
const runtime = createRuntime({ model: scriptedModel(() => ({ text: 'hi' })) });
console.log(JSON.stringify({
  sqlite: await attempt(() => sqliteStore(':memory:')),
  sqliteSubpath: await attempt(async () => (await import('xswarm/sqlite')).sqliteStore(':memory:')),
  openai: await attempt(() => openaiModel({ model: 'm', apiKey: 'k' })),
  serve: await attempt(() => serve(runtime)),
  serverSubpath: await attempt(() => import('xswarm/server')),
  a2aSubpath: await attempt(() => import('xswarm/a2a')),
  natsSubpath: await attempt(() => import('xswarm/nats')),
}));
await runtime.close();
`,
    );
    const { code, stdout, stderr } = await exec(process.execPath, ['optional.mjs'], app);
    expect(stderr).toBe('');
    expect(code).toBe(0);
    const errors = JSON.parse(stdout) as Record<string, string>;
    expect(errors.sqlite).toBe('sqliteStore() needs the package better-sqlite3, which is not installed: npm install better-sqlite3');
    expect(errors.sqliteSubpath).toBe(errors.sqlite);
    expect(errors.openai).toBe('openaiModel() needs the package openai, which is not installed: npm install openai');
    expect(errors.serve).toBe(
      'serve() needs the packages express, ws, @a2a-js/sdk, @modelcontextprotocol/server, @modelcontextprotocol/node, which are not installed: ' +
        'npm install express ws @a2a-js/sdk @modelcontextprotocol/server @modelcontextprotocol/node',
    );
    // A subpath's imports are static: Node itself names the first missing package.
    expect(errors.serverSubpath).toMatch(/Cannot find package '(express|ws|@a2a-js\/sdk|@modelcontextprotocol\/(server|node))'/);
    expect(errors.a2aSubpath).toMatch(/Cannot find package '@a2a-js\/sdk'/);
    expect(errors.natsSubpath).toMatch(/Cannot find package '@nats-io\/(transport-node|jetstream|kv)'/);
  });

  it('the xswarm binary asks for tsx to load a TypeScript module, and for the packages its commands need', async () => {
    const ts = await exec(process.execPath, ['node_modules/xswarm/bin/xswarm.js', 'serve', 'swarms.ts'], app);
    expect(ts.code).toBe(2);
    expect(ts.stderr).toBe('xswarm: swarms.ts is TypeScript; install tsx to load it (npm install --save-dev tsx) or compile it to JavaScript\n');
    const js = await exec(process.execPath, ['node_modules/xswarm/bin/xswarm.js', 'replay', 'some-swarm'], app);
    expect(js.code).toBe(1);
    expect(js.stderr).toMatch(/needs the package (\S+), which is not installed: npm install \1\n$/);
  });
});

describe('a TypeScript consumer', () => {
  const tsconfig = {
    compilerOptions: { target: 'ES2022', module: 'NodeNext', moduleResolution: 'NodeNext', strict: true, noEmit: true, skipLibCheck: true, types: ['node'] },
  };
  const consumer = `import { z } from 'zod';
import { createRuntime, defineAgent, defineSwarm, handoff, isFinalEvent, scriptedModel, type SwarmResult } from 'xswarm';
import type { ServeOptions } from 'xswarm/server';
import type { SqliteStoreOptions } from 'xswarm/sqlite';
const weather = defineAgent({ id: 'weather-agent', instructions: 'Answer.' });
const planner = defineSwarm({ id: __ID__, instructions: 'Plan.', result: z.object({ day: z.string() }), handoffs: [handoff.toAgent(weather)] });
const runtime = createRuntime({ swarms: [planner], agents: [weather], model: scriptedModel(() => ({ text: '{"day":"Sat"}' })) });
const client = runtime.forSwarm(planner);
await client.run('this weekend');
for await (const e of client.events()) if (isFinalEvent(e)) break;
const result: SwarmResult<{ day: string }> = await client.getResult();
if (result.status === 'completed') console.log(result.result.day.toUpperCase());
export const options: [ServeOptions, SqliteStoreOptions] = [{ port: 4000 }, { synchronous: 'NORMAL' }];
`;

  async function typecheck(name: string, id: string): Promise<{ code: number | null; stdout: string }> {
    const project = join(app, name);
    await mkdir(project, { recursive: true });
    await writeFile(join(project, 'tsconfig.json'), JSON.stringify({ ...tsconfig, include: ['main.ts'] }));
    await writeFile(join(project, 'main.ts'), consumer.replace('__ID__', id));
    return exec(process.execPath, [tsc, '-p', project], app);
  }

  it('type-checks against the shipped declarations', async () => {
    const { code, stdout } = await typecheck('consumer-ok', "'planner'");
    expect(stdout).toBe('');
    expect(code).toBe(0);
  });

  it('and a wrong one fails: a number as the swarm id', async () => {
    const { code, stdout } = await typecheck('consumer-wrong', '42');
    expect(code).not.toBe(0);
    expect(stdout).toMatch(/main\.ts\(6,\d+\): error TS2322: Type 'number' is not assignable to type 'string'/);
  });
});
