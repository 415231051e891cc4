/**
 * The `xswarm` command line: `serve` a module's swarms, `replay` a recorded swarm.
 *
 * @module
 */
import { readFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { pathToFileURL } from 'node:url';
import type { Model } from '../actors/index.js';
import type { AgentDefinition, SwarmDefinition } from './define.js';
import { openaiModel } from './models/openai.js';
import { ReplayDivergenceError } from './replay.js';
import { createRuntime } from './runtime.js';
import { serve } from './lazy.js';
import { DEFAULT_DB_PATH, sqliteStore } from './store/sqlite.js';
import { assertSwarmId, MAX_DERIVED_SWARM_ID_LENGTH } from './swarm-id.js';
import type { Tool } from './tool.js';

const USAGE = `xswarm — an actor runtime for LLM swarms

Usage:
  xswarm serve <module> [--port N] [--host H] [--token-file PATH | --token T] [--db PATH]
               [--allowed-origin O]... [--allowed-host H]... [--insecure-no-token]
      Serves the swarms a module exports (swarms, agents, tools?, model?) over REST + SSE,
      WebSocket, A2A and MCP. State lives in SQLite (default ${DEFAULT_DB_PATH}); unfinished
      swarms resume on start. Without an exported model, OPENAI_API_KEY selects openaiModel.
      The bearer token comes from --token-file or XSWARM_TOKEN (preferred: --token shows it
      in the process list). Bound to 127.0.0.1 by default; another --host needs a token
      unless --insecure-no-token. Browser pages of other origins need --allowed-origin.
  xswarm replay <swarmId> [--db PATH] [--json]
      Re-runs a finished swarm from its journal with zero model and tool calls and prints its
      events; exits 1 if the replay diverges from the recording.
`;

/**
 * What `xswarm serve` expects a module to export.
 *
 * @example
 * const mod: ServedModule = { swarms: [planner], agents: [weather], tools: [forecast] };
 */
export interface ServedModule {
  swarms: SwarmDefinition<any, any>[];
  agents?: AgentDefinition[];
  tools?: Tool[];
  model?: Model;
}

/**
 * Runs the CLI with `argv` (without node and script); resolves with the exit code.
 *
 * @example
 * process.exitCode = await main(['replay', 'swarm-1', '--db', '.xswarm/state.db']);
 */
export async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  try {
    if (command === 'serve') return await serveCommand(rest);
    if (command === 'replay') return await replayCommand(rest);
    process.stdout.write(USAGE);
    return command === undefined || command === '--help' || command === 'help' ? 0 : 2;
  } catch (e) {
    process.stderr.write(`xswarm ${command}: ${e instanceof Error ? e.message : String(e)}\n`);
    return 1;
  }
}

async function serveCommand(args: string[]): Promise<number> {
  const { values, positionals } = parseArgs({
    args,
    allowPositionals: true,
    options: {
      port: { type: 'string' },
      host: { type: 'string' },
      token: { type: 'string' },
      'token-file': { type: 'string' },
      'insecure-no-token': { type: 'boolean' },
      'allowed-origin': { type: 'string', multiple: true },
      'allowed-host': { type: 'string', multiple: true },
      db: { type: 'string' },
    },
  });
  // Read before anything starts, so a bad token source fails fast.
  const token = await serveToken(values.token, values['token-file']);
  const path = positionals[0];
  if (!path) throw new Error('which module? xswarm serve <module>');
  const mod = (await import(pathToFileURL(resolve(path)).href)) as Partial<ServedModule> & { default?: Partial<ServedModule> };
  const served = { ...mod.default, ...mod };
  if (!Array.isArray(served.swarms) || served.swarms.length === 0) throw new Error(`${path} exports no \`swarms\` array`);
  const model = served.model ?? (process.env.OPENAI_API_KEY ? openaiModel({ model: process.env.XSWARM_MODEL || 'gpt-4o-mini' }) : undefined);
  if (!model) throw new Error(`${path} exports no \`model\` and OPENAI_API_KEY is not set`);
  const store = sqliteStore(values.db ?? DEFAULT_DB_PATH);
  const runtime = createRuntime({
    swarms: served.swarms,
    agents: served.agents ?? [],
    tools: served.tools ?? [],
    model,
    store,
  });
  await runtime.start();
  let server: Awaited<ReturnType<typeof serve>>;
  try {
    server = await serve(runtime, {
      port: values.port ? Number(values.port) : 4000,
      ...(values.host ? { host: values.host } : {}),
      ...(token ? { token } : {}),
      ...(values['insecure-no-token'] ? { insecureNoToken: true } : {}),
      ...(values['allowed-origin'] ? { allowedOrigins: values['allowed-origin'] } : {}),
      ...(values['allowed-host'] ? { allowedHosts: values['allowed-host'] } : {}),
    });
  } catch (e) {
    // A refused bind (non-loopback without a token, port in use) must not leave swarms running.
    await runtime.close();
    await store.close();
    throw e;
  }
  process.stdout.write(`xswarm serving ${served.swarms.map((s) => s.id).join(', ')} at ${server.url} (state: ${store.path})\n`);
  for (const s of served.swarms) {
    process.stdout.write(`  REST  POST ${server.url}/swarms/${s.id}\n  A2A   ${server.url}/a2a/${s.id}/.well-known/agent-card.json\n`);
  }
  process.stdout.write(`  MCP   ${server.url}/mcp\n  WS    ${server.url.replace('http', 'ws')}/events\n`);
  await new Promise<void>((resolveStop) => {
    const stop = () => resolveStop();
    process.once('SIGINT', stop);
    process.once('SIGTERM', stop);
  });
  await server.close();
  await runtime.close();
  await store.close();
  return 0;
}

/**
 * The bearer token of `xswarm serve`: `--token-file` (its content, surrounding whitespace
 * trimmed) or `XSWARM_TOKEN`, which keep it out of the process list, or `--token`.
 */
async function serveToken(flag: string | undefined, file: string | undefined): Promise<string | undefined> {
  if (flag !== undefined && file !== undefined) throw new Error('give the token once: --token or --token-file');
  let token = flag;
  if (file !== undefined) {
    try {
      token = (await readFile(file, 'utf8')).trim();
    } catch (e) {
      throw new Error(`cannot read the token file ${file}: ${(e as Error).message}`);
    }
    if (token === '') throw new Error(`the token file ${file} is empty`);
  }
  token ??= process.env.XSWARM_TOKEN || undefined;
  if (token !== undefined && token.trim() === '') throw new Error('the token is empty');
  return token;
}

async function replayCommand(args: string[]): Promise<number> {
  const { values, positionals } = parseArgs({
    args,
    allowPositionals: true,
    options: { db: { type: 'string' }, json: { type: 'boolean' } },
  });
  const swarmId = positionals[0];
  if (!swarmId) throw new Error('which swarm? xswarm replay <swarmId>');
  // Checked before the store is opened: a malformed id names no swarm (child ids are long).
  assertSwarmId(swarmId, MAX_DERIVED_SWARM_ID_LENGTH);
  const store = sqliteStore(values.db ?? DEFAULT_DB_PATH);
  // Replay needs no definitions: the machine runs from the stored journal alone.
  const runtime = createRuntime({ model: { name: 'replay', call: () => Promise.reject(new Error('replay calls no model')) }, store });
  try {
    let n = 0;
    for await (const e of runtime.replay(swarmId)) {
      n++;
      process.stdout.write(values.json ? `${JSON.stringify(e)}\n` : `${e.seq}\t${e.kind}${e.kind === 'status-update' ? `\t${e.metadata.type}` : ''}\n`);
    }
    process.stderr.write(`replayed ${n} events of ${swarmId}: identical to the recording, 0 model calls, 0 tool calls\n`);
    return 0;
  } catch (e) {
    if (e instanceof ReplayDivergenceError) {
      process.stderr.write(`${e.message}\n`);
      return 1;
    }
    throw e;
  } finally {
    await runtime.close();
    await store.close();
  }
}
