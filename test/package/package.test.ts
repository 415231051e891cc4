/**
 * The package as a user installs it. `npm pack` (which builds dist/ through the `prepare`
 * script), then the tarball installed with `npm install` from the npm registry into two
 * projects made on the spot under os.tmpdir():
 *
 * - **core**: xswarm and zod, none of the optional peers (plus @types/node, as a Node service
 *   has). W1 runs there under plain `node`, the optional parts fail naming what to install, and
 *   a TypeScript consumer of `xswarm` type-checks against the shipped declarations without
 *   `skipLibCheck` (NodeNext and Bundler resolution): the core's declarations name no optional
 *   peer. `xswarm/testing` checks a swarm's paths there too (its `describeSwarm` names vitest).
 * - **full**: xswarm with every subpath's peers. Each entry point is used for real: `serve()`
 *   (from `xswarm/server` and from `xswarm`) answers HTTP on 127.0.0.1, a SQLite store in the
 *   temporary folder keeps a swarm across runtimes, the OpenAI model talks to a local
 *   Chat Completions server, a swarm hands off over A2A to another runtime's served swarm, the
 *   NATS entry runs a swarm on a real nats-server, the installed `xswarm` binary prints its help
 *   and serves a module until SIGTERM; `describeSwarm` runs in a vitest file of the project; a
 *   consumer of every subpath type-checks without `skipLibCheck`.
 *
 * Peers are installed at the lockfile's versions (the ones the suite ran against). Nothing is
 * written outside the temporary folder, which is removed at the end, and the checkout is left
 * as it was found (no dist/ if there was none). The network: the npm registry, and 127.0.0.1.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { stripVTControlCharacters } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OPTIONAL_PEERS } from '../../src/util/optional.js';
import { natsServerMissing, startNatsServer } from '../support/nats-server.js';
import { startOpenAIServer } from '../support/openai-server.js';
import { REPO_ROOT } from '../support/repo-root.js';

const tsc = join(REPO_ROOT, 'node_modules/typescript/bin/tsc');
const manifest = JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8')) as {
  version: string;
  exports: Record<string, unknown>;
  dependencies: Record<string, string>;
  peerDependencies: Record<string, string>;
  peerDependenciesMeta: Record<string, { optional?: boolean }>;
  devDependencies: Record<string, string>;
};
const lockfile = JSON.parse(readFileSync(join(REPO_ROOT, 'package-lock.json'), 'utf8')) as { packages: Record<string, { version?: string }> };

/** `name@version` at the lockfile's version (what the suite runs against), else the bare name. */
function locked(name: string): string {
  const version = lockfile.packages[`node_modules/${name}`]?.version;
  return version ? `${name}@${version}` : name;
}

/** Every optional peer of every subpath, once. */
const ALL_PEERS = [...new Set(Object.values(OPTIONAL_PEERS).flat())];

/** Whether the checkout had a dist/ before `npm pack` built one into it (else it goes again at once). */
const hadDist = existsSync(join(REPO_ROOT, 'dist'));
let dir: string;
/** The project with xswarm and zod only. */
let core: string;
/** The project with xswarm and every optional peer. */
let full: string;

/** How long a child process (a program, tsc, a command) may take before it is killed. */
const CHILD_MS = 60_000;
/**
 * Each test's timeout: above {@link CHILD_MS}, so that a hung child is killed and the test's own
 * cleanup (`finally`: a server, nats-server) runs before vitest gives up on the test.
 */
const TEST_MS = 90_000;

/** Runs a command to completion; resolves with its exit code and output, never rejects. Killed after `timeoutMs`. */
function exec(command: string, args: string[], cwd: string, timeoutMs = CHILD_MS): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((done, fail) => {
    const child = spawn(command, args, { cwd, env: childEnv(), stdio: ['ignore', 'pipe', 'pipe'], timeout: timeoutMs, killSignal: 'SIGKILL' });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (b: Buffer) => (stdout += b));
    child.stderr.on('data', (b: Buffer) => (stderr += b));
    child.on('error', fail);
    child.on('close', (code) => done({ code, stdout, stderr }));
  });
}

/**
 * The environment of the child processes: plain node (no loader inherited from the test runner),
 * this test's node first on the PATH (for `#!/usr/bin/env node`), and none of the variables npm
 * sets for `npm test`'s script that describe this checkout (an `npm install` in a temporary
 * project must not take the checkout for its prefix).
 */
function childEnv(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, PATH: `${dirname(process.execPath)}:${process.env.PATH ?? ''}` };
  delete env.NODE_OPTIONS;
  for (const key of Object.keys(env)) {
    if (/^npm_(package_|lifecycle_|config_local_prefix$)/.test(key) || key === 'INIT_CWD') delete env[key];
  }
  return env;
}

/** Makes an ESM project in `project` and installs `packages` into it from the registry (the npm cache first). */
async function install(project: string, packages: string[]): Promise<void> {
  await mkdir(project, { recursive: true });
  await writeFile(join(project, 'package.json'), JSON.stringify({ name: 'app', private: true, type: 'module' }));
  const { code, stdout, stderr } = await exec('npm', ['install', '--no-audit', '--no-fund', '--prefer-offline', ...packages], project, 240_000);
  if (code !== 0) throw new Error(`npm install in ${project} failed (${code}):\n${stdout}${stderr}`);
}

/** Runs `node <file>` (a program written into `project`) and parses the JSON it prints. */
async function runProgram(project: string, file: string, source: string, args: string[] = []): Promise<unknown> {
  await writeFile(join(project, file), source);
  const { code, stdout, stderr } = await exec(process.execPath, [file, ...args], project);
  expect(stderr, `${file} wrote to stderr`).toBe('');
  expect(code, `${file} exited with ${code}`).toBe(0);
  return JSON.parse(stdout);
}

/**
 * Type-checks `source` as `main.ts` of a TypeScript project in `project/name`, against the
 * packages installed in `project`, strict and without `skipLibCheck`: every declaration file it
 * reaches, xswarm's and its peers', is checked.
 */
async function typecheck(
  project: string,
  name: string,
  source: string,
  resolution: 'NodeNext' | 'Bundler' = 'NodeNext',
): Promise<{ code: number | null; stdout: string }> {
  const folder = join(project, name);
  await mkdir(folder, { recursive: true });
  const compilerOptions = {
    target: 'ES2022',
    module: resolution === 'NodeNext' ? 'NodeNext' : 'ESNext',
    moduleResolution: resolution,
    strict: true,
    noEmit: true,
    skipLibCheck: false,
    types: ['node'],
  };
  await writeFile(join(folder, 'tsconfig.json'), JSON.stringify({ compilerOptions, include: ['main.ts'] }));
  await writeFile(join(folder, 'main.ts'), source);
  return exec(process.execPath, [tsc, '-p', folder], project);
}

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'xswarm-package-'));
  try {
    // `npm pack` runs `prepare`, i.e. `npm run build`: the tarball holds what dist/ was just built to.
    const pack = await exec('npm', ['pack', '--pack-destination', dir], REPO_ROOT, 240_000);
    if (pack.code !== 0) throw new Error(`npm pack failed:\n${pack.stdout}${pack.stderr}`);
  } finally {
    // The tarball holds dist/: the checkout goes back to how it was at once.
    if (!hadDist) await rm(join(REPO_ROOT, 'dist'), { recursive: true, force: true });
  }
  const tarball = (await readdir(dir)).find((f) => f.endsWith('.tgz'));
  if (!tarball) throw new Error('npm pack made no tarball');
  core = join(dir, 'core');
  full = join(dir, 'full');
  const xswarm = join(dir, tarball);
  // zod: a user defining schemas installs it; @types/node: a Node service in TypeScript has it.
  const common = [xswarm, locked('zod'), locked('@types/node')];
  await Promise.all([install(core, common), install(full, [...common, ...ALL_PEERS.map(locked)])]);
}, 600_000);

afterAll(async () => {
  if (dir) await rm(dir, { recursive: true, force: true });
  if (!hadDist) await rm(join(REPO_ROOT, 'dist'), { recursive: true, force: true });
});

describe('the packed tarball', () => {
  it('ships the compiled entry points, the binary and the licence, not the sources', () => {
    const installed = join(core, 'node_modules/xswarm');
    for (const entry of Object.values(manifest.exports)) {
      for (const file of typeof entry === 'string' ? [entry] : Object.values(entry as Record<string, string>)) {
        expect(existsSync(join(installed, file)), file).toBe(true);
      }
    }
    // Every file of the inspector page ships (it is served from the package as it is).
    const pageFiles = readdirSync(join(REPO_ROOT, 'inspector')).map((name) => `inspector/${name}`);
    expect(pageFiles).toEqual(expect.arrayContaining(['inspector/index.html', 'inspector/app.js', 'inspector/swarm-chart.json']));
    for (const present of ['bin/xswarm.js', 'dist/machines/swarm.js', 'dist/src/store/sqlite/writer.js', ...pageFiles, 'LICENSE', 'README.md']) {
      expect(existsSync(join(installed, present)), present).toBe(true);
    }
    expect(readFileSync(join(installed, 'LICENSE'), 'utf8')).toMatch(/^MIT License\n\nCopyright \(c\) 2026 the xswarm authors\n/);
    for (const absent of ['src', 'test', 'examples', 'bench', 'scripts', 'dist/test', 'tsconfig.json']) {
      expect(existsSync(join(installed, absent)), absent).toBe(false);
    }
    // npm linked the binary.
    expect(existsSync(join(core, 'node_modules/.bin/xswarm'))).toBe(true);
  });

  it('declares every optional package as an optional peer (and a dev dependency for the tests)', () => {
    const optional = [...ALL_PEERS, 'tsx'].sort();
    expect(Object.keys(manifest.peerDependencies).sort()).toEqual(optional);
    for (const name of optional) {
      expect(manifest.peerDependenciesMeta[name]?.optional, name).toBe(true);
      expect(manifest.devDependencies[name], name).toBeDefined();
    }
    expect(Object.keys(manifest.dependencies).sort()).toEqual(['@xstate/store', 'xstate', 'zod']);
  });

  it(
    "each entry point's declarations name only xswarm's dependencies, Node's modules and the entry's own peers",
    async () => {
      // The type-checks below prove it for the packages they leave out; this proves it for all.
      const root = join(core, 'node_modules/xswarm');
      const entries = { '.': [], machines: [], ...OPTIONAL_PEERS } as Record<string, readonly string[]>;
      // Metrics and tracing are options of the core (createRuntime({ metrics, tracing })), not
      // subpaths: the core's declarations ('.') must then not name their packages, which this loop checks.
      const options = Object.keys(entries).filter((e) => e !== '.' && !manifest.exports[`./${e}`]);
      expect(options).toEqual(['metrics', 'tracing']);
      for (const [entry, peers] of Object.entries(entries)) {
        if (options.includes(entry)) continue;
        const exported = manifest.exports[entry === '.' ? '.' : `./${entry}`] as { types: string };
        const named = await externalImports(root, exported.types);
        const allowed = new Set([...Object.keys(manifest.dependencies), ...peers]);
        const foreign = [...named].filter((p) => !p.startsWith('node:') && !allowed.has(packageName(p)));
        expect(foreign, `xswarm${entry === '.' ? '' : `/${entry}`}`).toEqual([]);
      }
    },
    TEST_MS,
  );
});

describe('a Node service without the optional packages', () => {
  it(
    'runs W1 (an orchestrator and three agent handoffs) under plain node',
    async () => {
      for (const peer of ALL_PEERS) expect(existsSync(join(core, 'node_modules', peer)), peer).toBe(false);
      const output = await runProgram(
        core,
        'w1.mjs',
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
      expect(output).toEqual({
        result: { status: 'completed', result: 'Go hiking on Saturday.' },
        calls: ['planner', 'weather-agent', 'planner', 'calendar-agent', 'planner', 'allergen-agent', 'planner'],
      });
    },
    TEST_MS,
  );

  it(
    "exports the machines (xswarm/machines): a user walks the swarm machine's graph with xstate/graph",
    async () => {
      const output = await runProgram(
        core,
        'machines.mjs',
        `import { swarmMachine, agentMachine, teamLeaderMachine, teamWorkerMachine, SWARM_MACHINE_VERSION } from 'xswarm/machines';
import { toDirectedGraph } from 'xstate/graph';
const top = (m) => toDirectedGraph(m).children.map((n) => n.stateNode.key);
console.log(JSON.stringify({ swarm: top(swarmMachine), ids: [swarmMachine, agentMachine, teamLeaderMachine, teamWorkerMachine].map((m) => m.id), version: SWARM_MACHINE_VERSION }));
`,
      );
      expect(output).toEqual({
        swarm: ['running', 'awaitingHandoff', 'paused', 'completed', 'failed', 'stopped'],
        ids: ['swarm', 'agent', expect.any(String), expect.any(String)],
        version: expect.any(Number),
      });
    },
    TEST_MS,
  );

  it(
    'xswarm/testing checks a swarm under plain node, and describeSwarm names vitest, which it needs',
    async () => {
      const output = (await runProgram(
        core,
        'testing.mjs',
        `import { z } from 'zod';
import { defineAgent, defineSwarm, handoff, tool } from 'xswarm';
import { checkSwarm, describeFailure, describeSwarm } from 'xswarm/testing';
const forecast = tool({ name: 'get_forecast', description: 'Forecast for a day', parameters: z.object({ day: z.string() }), execute: ({ day }) => day + ': sunny' });
const weather = defineAgent({ id: 'weather-agent', instructions: 'Forecast.', tools: [forecast] });
const planner = defineSwarm({ id: 'planner', instructions: 'Plan.', handoffs: [handoff.toAgent(weather)] });
const reports = await checkSwarm(planner, { paths: 'shortest', crashes: 2 });
let needs = 'no error';
try { describeSwarm(planner); } catch (e) { needs = e.message; }
console.log(JSON.stringify({ paths: reports.length, crashes: reports.reduce((n, r) => n + r.crashes, 0), failures: reports.flatMap((r) => r.failures).map(describeFailure), needs }));
`,
      )) as { paths: number; crashes: number; failures: string[]; needs: string };
      expect(output.failures).toEqual([]);
      expect(output.paths).toBeGreaterThanOrEqual(8);
      expect(output.crashes).toBeGreaterThan(output.paths);
      expect(output.needs).toBe('describeSwarm() needs the package vitest, which is not installed: npm install vitest');
    },
    TEST_MS,
  );

  it(
    'names the package to install when an optional part is used',
    async () => {
      const errors = (await runProgram(
        core,
        'optional.mjs',
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
      )) as Record<string, string>;
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
    },
    TEST_MS,
  );

  it(
    'the xswarm binary asks for tsx to load a TypeScript module, and for the packages its commands need',
    async () => {
      const ts = await exec(join(core, 'node_modules/.bin/xswarm'), ['serve', 'swarms.ts'], core);
      expect(ts.code).toBe(2);
      expect(ts.stderr).toBe('xswarm: swarms.ts is TypeScript; install tsx to load it (npm install --save-dev tsx) or compile it to JavaScript\n');
      const js = await exec(join(core, 'node_modules/.bin/xswarm'), ['replay', 'some-swarm'], core);
      expect(js.code).toBe(1);
      expect(js.stderr).toMatch(/needs the package (\S+), which is not installed: npm install \1\n$/);
    },
    TEST_MS,
  );
});

describe('a TypeScript consumer of the core, without the optional packages and without skipLibCheck', () => {
  const consumer = `import { z } from 'zod';
import {
  createRuntime, defineAgent, defineSwarm, handoff, isFinalEvent, openaiModel, scriptedModel, serve, sqliteStore,
  type OpenAIModelOptions, type ServeOptions, type SqliteStore, type SqliteStoreOptions, type SwarmResult, type SwarmServer,
} from 'xswarm';
const weather = defineAgent({ id: 'weather-agent', instructions: 'Answer.' });
const planner = defineSwarm({ id: __ID__, instructions: 'Plan.', result: z.object({ day: z.string() }), handoffs: [handoff.toAgent(weather)] });
const runtime = createRuntime({ swarms: [planner], agents: [weather], model: scriptedModel(() => ({ text: '{"day":"Sat"}' })) });
const client = runtime.forSwarm(planner);
await client.run('this weekend');
for await (const e of client.events()) if (isFinalEvent(e)) break;
const result: SwarmResult<{ day: string }> = await client.getResult();
if (result.status === 'completed') console.log(result.result.day.toUpperCase());
// The optional parts' types, as the core exports them.
export const options: [ServeOptions, SqliteStoreOptions, OpenAIModelOptions] = [{ port: 4000, subscribers: { maxFrames: 10 } }, { synchronous: 'NORMAL' }, { model: 'gpt-4o-mini' }];
export async function optionalParts(): Promise<[SwarmServer, SqliteStore, string]> {
  return [await serve(runtime, options[0]), sqliteStore('state.db', options[1]), openaiModel(options[2]).name];
}
`;

  it(
    'type-checks (module and moduleResolution NodeNext)',
    async () => {
      const { code, stdout } = await typecheck(core, 'consumer-nodenext', consumer.replace('__ID__', "'planner'"));
      expect(stdout).toBe('');
      expect(code).toBe(0);
    },
    TEST_MS,
  );

  it(
    'type-checks (moduleResolution Bundler)',
    async () => {
      const { code, stdout } = await typecheck(core, 'consumer-bundler', consumer.replace('__ID__', "'planner'"), 'Bundler');
      expect(stdout).toBe('');
      expect(code).toBe(0);
    },
    TEST_MS,
  );

  it(
    'and a wrong one fails: a number as the swarm id',
    async () => {
      const { code, stdout } = await typecheck(core, 'consumer-wrong', consumer.replace('__ID__', '42'));
      expect(code).not.toBe(0);
      expect(stdout).toMatch(/main\.ts\(7,\d+\): error TS2322: Type 'number' is not assignable to type 'string'/);
    },
    TEST_MS,
  );
});

describe('a Node service with the optional packages: every entry point used for real', () => {
  it(
    'xswarm/server and xswarm serve(): REST, MCP and A2A answer on 127.0.0.1',
    async () => {
      const output = (await runProgram(
        full,
        'server.mjs',
        `import { createRuntime, defineSwarm, scriptedModel, serve as serveOnDemand } from 'xswarm';
import { serve } from 'xswarm/server';
const planner = defineSwarm({ id: 'planner', description: 'Plans a day out', instructions: 'Plan.' });
const runtime = createRuntime({ swarms: [planner], model: scriptedModel(() => ({ text: 'Go hiking.' })) });
const out = {};
for (const [entry, start] of [['xswarm/server', serve], ['xswarm', serveOnDemand]]) {
  const server = await start(runtime, { host: '127.0.0.1', port: 0 });
  try {
    const started = await fetch(server.url + '/swarms/planner', {
      method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ input: 'Saturday' }) });
    const { swarmId } = await started.json();
    const mcp = await fetch(server.url + '/mcp', {
      method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize',
        params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'package-test', version: '1' } } }) });
    const card = await fetch(server.url + '/a2a/planner/.well-known/agent-card.json');
    // The inspector page's files, found from dist/src/ in the installed package.
    const chart = await fetch(server.url + '/inspector/swarm-chart.json');
    out[entry] = {
      url: server.url, started: started.status, result: await runtime.forSwarm(planner, swarmId).wait(),
      mcp: { status: mcp.status, serverInfo: /"serverInfo":(\\{[^}]*\\})/.exec(await mcp.text())?.[1] },
      card: { status: card.status, name: (await card.json()).name },
      chart: { status: chart.status, thinking: (await chart.json()).nodes.some((n) => n.id === 'running.thinking') },
    };
  } finally {
    await server.close();
  }
}
await runtime.close();
console.log(JSON.stringify(out));
`,
      )) as Record<string, { url: string; mcp: { serverInfo: string } }>;
      for (const entry of ['xswarm/server', 'xswarm']) {
        expect(output[entry], entry).toEqual({
          url: expect.stringMatching(/^http:\/\/127\.0\.0\.1:\d+$/),
          started: 201,
          result: { status: 'completed', result: 'Go hiking.' },
          // The version, read through the package's self-reference, is the installed package's.
          mcp: { status: 200, serverInfo: JSON.stringify({ name: 'xswarm', version: manifest.version }) },
          card: { status: 200, name: 'planner' },
          chart: { status: 200, thinking: true },
        });
      }
    },
    TEST_MS,
  );

  it(
    'xswarm/sqlite: a swarm committed to a file in the temporary folder is read back by another runtime',
    async () => {
      const file = join(full, 'sqlite', 'state.db');
      const output = await runProgram(
        full,
        'sqlite.mjs',
        `import { createRuntime, defineSwarm, scriptedModel } from 'xswarm';
import { sqliteStore } from 'xswarm/sqlite';
const [file] = process.argv.slice(2);
const planner = defineSwarm({ id: 'planner', instructions: 'Plan.' });
const model = scriptedModel(() => ({ text: 'Go hiking.' }));
const first = sqliteStore(file);
const writer = createRuntime({ swarms: [planner], model, store: first });
const client = writer.forSwarm(planner, 'saturday');
await client.run('Saturday');
await client.wait();
const commits = first.stats().commits;
await writer.close();
await first.close();
const second = sqliteStore(file);
const reader = createRuntime({ swarms: [planner], model, store: second });
console.log(JSON.stringify({ result: await reader.forSwarm(planner, 'saturday').getResult(), committed: commits > 0 }));
await reader.close();
await second.close();
`,
        [file],
      );
      expect(output).toEqual({ result: { status: 'completed', result: 'Go hiking.' }, committed: true });
      expect(existsSync(file)).toBe(true);
    },
    TEST_MS,
  );

  it(
    'xswarm/openai: a swarm on the official client, against a local Chat Completions server',
    async () => {
      const chat = await startOpenAIServer(() => ({ chunks: ['Go ', 'hiking.'], usage: { prompt_tokens: 5, completion_tokens: 2 } }));
      try {
        const output = await runProgram(
          full,
          'openai.mjs',
          `import OpenAI from 'openai';
import { createRuntime, defineSwarm } from 'xswarm';
import { openaiModel } from 'xswarm/openai';
const [baseURL] = process.argv.slice(2);
const planner = defineSwarm({ id: 'planner', instructions: 'Plan.' });
const out = {};
// Configured by options, and given a client of the user's own.
for (const [name, model] of [
  ['options', openaiModel({ model: 'gpt-test', baseURL, apiKey: 'k', maxRetries: 0 })],
  ['client', openaiModel({ model: 'gpt-test', client: new OpenAI({ baseURL, apiKey: 'k', maxRetries: 0 }) })],
]) {
  const runtime = createRuntime({ swarms: [planner], model });
  const client = runtime.forSwarm(planner);
  await client.run('Saturday');
  out[name] = await client.wait();
  await runtime.close();
}
console.log(JSON.stringify(out));
`,
          [chat.url],
        );
        const completed = { status: 'completed', result: 'Go hiking.' };
        expect(output).toEqual({ options: completed, client: completed });
        expect(chat.requests).toHaveLength(2);
        expect(chat.requests[0]).toMatchObject({ model: 'gpt-test', stream: true });
      } finally {
        await chat.close();
      }
    },
    TEST_MS,
  );

  it(
    'xswarm/a2a: a swarm hands off over A2A to a swarm another runtime serves',
    async () => {
      const output = await runProgram(
        full,
        'a2a.mjs',
        `import { createRuntime, defineSwarm, handoff, scriptedModel } from 'xswarm';
import { a2aRemoteAgents } from 'xswarm/a2a';
import { serve } from 'xswarm/server';
const weather = defineSwarm({ id: 'weather', description: 'Answers weather questions', instructions: 'Forecast.' });
const remote = createRuntime({ swarms: [weather], model: scriptedModel(() => ({ text: 'Sunny on Saturday' })) });
const server = await serve(remote, { host: '127.0.0.1', port: 0 });
const planner = defineSwarm({ id: 'planner', instructions: 'Plan with the weather.',
  handoffs: [handoff.toRemoteAgent(server.url + '/a2a/weather/.well-known/agent-card.json')] });
const model = scriptedModel(({ messages }) => {
  const answer = messages.find((m) => m.role === 'tool');
  return answer ? { text: 'Plan: ' + answer.content }
    : { toolCalls: [{ id: 'c1', name: 'handoff_to_weather', arguments: JSON.stringify({ request: 'forecast for Saturday' }) }] };
});
const local = createRuntime({ swarms: [planner], model, remote: a2aRemoteAgents({ headers: { 'x-package-test': '1' } }) });
const client = local.forSwarm(planner);
await client.run('Plan my weekend');
const result = await client.wait();
const [task] = await remote.list({ definitionId: 'weather' });
console.log(JSON.stringify({ result, remote: task?.status }));
await local.close();
await server.close();
await remote.close();
`,
      );
      expect(output).toEqual({ result: { status: 'completed', result: 'Plan: Sunny on Saturday' }, remote: 'completed' });
    },
    TEST_MS,
  );

  it.skipIf(natsServerMissing)(
    'xswarm/nats: a swarm on a real nats-server, read back by a runtime given nats: { servers }',
    async () => {
      const nats = await startNatsServer();
      try {
        const output = await runProgram(
          full,
          'nats.mjs',
          `import { createRuntime, defineSwarm, scriptedModel } from 'xswarm';
import { connectNats, jetstreamStore, natsTransport } from 'xswarm/nats';
const [servers] = process.argv.slice(2);
const planner = defineSwarm({ id: 'planner', instructions: 'Plan.' });
const model = scriptedModel(() => ({ text: 'Go hiking.' }));
const connection = await connectNats({ servers, name: 'package-test' });
const store = jetstreamStore({ connection });
const wired = createRuntime({ swarms: [planner], model, transport: natsTransport(connection), store });
await wired.start();
const client = wired.forSwarm(planner, 'saturday');
await client.run('Saturday');
const result = await client.wait();
// The core's own NATS wiring (the same packages, loaded on demand) sees the swarm in JetStream.
const other = createRuntime({ swarms: [planner], model, nats: { servers } });
await other.start();
const read = await other.forSwarm(planner, 'saturday').getResult();
await other.close();
await wired.close();
// A store given to a runtime is its giver's to close (its KV watch would retry for ever), then the connection.
await store.close();
await connection.drain();
console.log(JSON.stringify({ result, read }));
`,
          [nats.url],
        );
        const completed = { status: 'completed', result: 'Go hiking.' };
        expect(output).toEqual({ result: completed, read: completed });
      } finally {
        await nats.stop();
      }
    },
    TEST_MS,
  );

  it(
    'the xswarm binary: --help, and serve <module> until SIGTERM',
    async () => {
      const bin = join(full, 'node_modules/.bin/xswarm');
      const help = await exec(bin, ['--help'], full);
      expect(help.stderr).toBe('');
      expect(help.code).toBe(0);
      expect(help.stdout).toMatch(/^Usage:\n {2}xswarm run <module>/m);

      await writeFile(
        join(full, 'swarms.mjs'),
        `import { defineSwarm, scriptedModel } from 'xswarm';
export const swarms = [defineSwarm({ id: 'planner', instructions: 'Plan.' })];
export const model = scriptedModel(() => ({ text: 'Go hiking.' }));
`,
      );
      const db = join(full, 'cli', 'state.db');
      const server = spawn(bin, ['serve', 'swarms.mjs', '--port', '0', '--db', db], { cwd: full, env: childEnv(), stdio: ['ignore', 'pipe', 'pipe'] });
      try {
        const url = await serving(server);
        expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
        const started = await fetch(`${url}/swarms/planner`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ input: 'Saturday', swarmId: 'saturday' }),
        });
        expect(started.status).toBe(201);
        let result: unknown;
        for (let i = 0; i < 200; i++) {
          result = await (await fetch(`${url}/swarms/planner/saturday`)).json();
          if ((result as { status: string }).status !== 'running') break;
          await new Promise((r) => setTimeout(r, 25));
        }
        expect(result).toEqual({ status: 'completed', result: 'Go hiking.' });
        const exited = new Promise<number | null>((r) => server.once('exit', (code) => r(code)));
        server.kill('SIGTERM');
        expect(await exited).toBe(0);
        expect(existsSync(db)).toBe(true);
      } finally {
        if (server.exitCode === null && server.signalCode === null) server.kill('SIGKILL');
      }
    },
    TEST_MS,
  );

  it(
    'describeSwarm(planner) in a vitest file of the project: one test per path, all passing',
    async () => {
      await writeFile(
        join(full, 'planner.test.mjs'),
        `import { z } from 'zod';
import { defineAgent, defineSwarm, handoff, tool } from 'xswarm';
import { describeSwarm } from 'xswarm/testing';
const forecast = tool({ name: 'get_forecast', description: 'Forecast for a day', parameters: z.object({ day: z.string() }), execute: ({ day }) => day + ': sunny' });
const weather = defineAgent({ id: 'weather-agent', instructions: 'Forecast.', tools: [forecast] });
const planner = defineSwarm({ id: 'planner', instructions: 'Plan.', handoffs: [handoff.toAgent(weather)] });
describeSwarm(planner);
`,
      );
      const { code, stdout, stderr } = await exec(
        process.execPath,
        ['node_modules/vitest/vitest.mjs', 'run', 'planner.test.mjs', '--reporter=verbose', '--color=false'],
        full,
      );
      expect(code, `${stdout}${stderr}`).toBe(0);
      // vitest colours its summary whatever the flag says when it thinks it may.
      const plain = stripVTControlCharacters(stdout);
      expect(plain).toMatch(/handoff → weather-agent/);
      expect(plain).toMatch(/Tests\s+11 passed \(11\)/);
    },
    TEST_MS,
  );

  it(
    'a TypeScript consumer of every subpath type-checks without skipLibCheck',
    async () => {
      const { code, stdout } = await typecheck(
        full,
        'consumer-subpaths',
        `import OpenAI from 'openai';
import { createRuntime, defineSwarm, handoff, scriptedModel } from 'xswarm';
import { serve, type ServeOptions, type SwarmServer } from 'xswarm/server';
import { DEFAULT_DB_PATH, sqliteStore, type SqliteStore, type SqliteStoreOptions } from 'xswarm/sqlite';
import { openaiModel, type OpenAIModelOptions } from 'xswarm/openai';
import { a2aRemoteAgents, type A2ARemoteOptions } from 'xswarm/a2a';
import { connectNats, jetstreamStore, natsTransport, type JetStreamStore, type JetStreamStoreOptions, type NatsOptions } from 'xswarm/nats';
const planner = defineSwarm({ id: 'planner', instructions: 'Plan.', handoffs: [handoff.toRemoteAgent('http://127.0.0.1:1/a2a/w/.well-known/agent-card.json')] });
const remoteOptions: A2ARemoteOptions = { headers: { authorization: 'Bearer t' } };
// A client of the user's own fits the option.
const openaiOptions: OpenAIModelOptions = { model: 'gpt-4o-mini', client: new OpenAI({ apiKey: 'k', baseURL: 'http://127.0.0.1:1/v1' }) };
const sqliteOptions: SqliteStoreOptions = { synchronous: 'NORMAL' };
const store: SqliteStore = sqliteStore(DEFAULT_DB_PATH, sqliteOptions);
const model = process.env.USE_OPENAI ? openaiModel(openaiOptions) : scriptedModel(() => ({ text: 'ok' }));
const runtime = createRuntime({ swarms: [planner], model, store, remote: a2aRemoteAgents(remoteOptions) });
const serveOptions: ServeOptions = { port: 0, subscribers: { maxFrames: 10 } };
const server: SwarmServer = await serve(runtime, serveOptions);
await server.close();
const natsOptions: NatsOptions = { servers: 'nats://127.0.0.1:4222' };
const connection = await connectNats(natsOptions);
const jetstreamOptions: JetStreamStoreOptions = { connection };
const jetstream: JetStreamStore = jetstreamStore(jetstreamOptions);
createRuntime({ swarms: [planner], model, store: jetstream, transport: natsTransport(connection) });
console.log(store.stats().writeMs);
`,
      );
      expect(stdout).toBe('');
      expect(code).toBe(0);
    },
    TEST_MS,
  );
});

/** Resolves with the URL `xswarm serve` prints once it serves; rejects if it exits first or takes over 30 s. */
function serving(child: ChildProcess): Promise<string> {
  return new Promise((done, fail) => {
    let out = '';
    let err = '';
    const timer = setTimeout(() => fail(new Error(`xswarm serve did not start in 30 s:\n${out}${err}`)), 30_000);
    child.stderr!.on('data', (b: Buffer) => (err += b));
    child.stdout!.on('data', (b: Buffer) => {
      out += b;
      const url = / at (http:\/\/\S+) /.exec(out)?.[1];
      if (url) {
        clearTimeout(timer);
        done(url);
      }
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      fail(new Error(`xswarm serve exited (${code}):\n${out}${err}`));
    });
  });
}

/** The package a module specifier names (`@scope/name` or `name`). */
function packageName(specifier: string): string {
  const parts = specifier.split('/');
  return specifier.startsWith('@') ? parts.slice(0, 2).join('/') : parts[0]!;
}

/**
 * The bare module specifiers of the declaration files reachable from `entry` (relative to the
 * installed package `root`): imports, re-exports, `import('…')` types and `/// <reference types>`,
 * comments left out (the TSDoc examples import xswarm itself).
 */
async function externalImports(root: string, entry: string): Promise<Set<string>> {
  const specifiers = /(?:\bfrom\s*|\bimport\s*\(\s*|\bimport\s+|<reference\s+types=)['"]([^'"]+)['"]/g;
  const seen = new Set<string>();
  const external = new Set<string>();
  const queue = [resolve(root, entry)];
  for (let file = queue.pop(); file !== undefined; file = queue.pop()) {
    if (seen.has(file)) continue;
    seen.add(file);
    const text = (await readFile(file, 'utf8')).replace(/\/\*[\s\S]*?\*\//g, '').replace(/^\s*\/\/(?!\/\s*<reference).*$/gm, '');
    for (const [, specifier] of text.matchAll(specifiers)) {
      if (specifier!.startsWith('.')) queue.push(resolve(dirname(file), specifier!.replace(/\.js$/, '.d.ts')));
      else external.add(specifier!);
    }
  }
  return external;
}
