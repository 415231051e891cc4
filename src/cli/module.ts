/**
 * What the `xswarm` commands share: exit codes and the error that carries one, the database
 * path, the user's module of swarms, runtimes on the SQLite file, the bearer token. The runtime
 * loads with the first command that needs one: `xswarm list` and `xswarm events` read the file
 * with the store alone.
 *
 * @module
 */
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { SwarmError, type SwarmErrorCode } from '../errors.js';
import type { AgentDefinition, Model, Runtime, SwarmDefinition, SwarmStore, Tool } from '../index.js';
import { DEFAULT_DB_PATH, sqliteStore } from '../store/sqlite.js';

/**
 * The exit codes of every command, documented in the usage text and the README: scripts tell
 * a swarm that needs a human (3) from one that failed (1) and from a mistake in the command (2).
 */
export const EXIT = {
  ok: 0,
  /** The swarm failed or was stopped, or the command could not do its work (store, module, network). */
  failed: 1,
  /** Bad usage: an unknown command or option, a missing argument, an invalid id, input or cursor. */
  usage: 2,
  /** The swarm is paused waiting for a human and no answer came (stdin ended, or Ctrl-C). */
  paused: 3,
  /** No such swarm or swarm definition. */
  notFound: 4,
  /** The command does not fit the swarm: it has ended, is not paused, or another live process drives it. */
  conflict: 5,
} as const;

/** An error that ends a command with a given exit code; its message goes to stderr as is. */
export class CliError extends Error {
  override readonly name = 'CliError';
  constructor(
    message: string,
    readonly exitCode: number = EXIT.failed,
  ) {
    super(message);
  }
}

const EXIT_OF_CODE: Partial<Record<SwarmErrorCode, number>> = {
  'unknown-definition': EXIT.notFound,
  'unknown-swarm': EXIT.notFound,
  'invalid-input': EXIT.usage,
  'invalid-id': EXIT.usage,
  'invalid-cursor': EXIT.usage,
  'id-in-use': EXIT.conflict,
  'wrong-state': EXIT.conflict,
  'not-live': EXIT.conflict,
};

/** The exit code for an error a command threw: its own, its `SwarmError` code's, a usage error's, else 1. */
export function exitCodeOf(error: unknown): number {
  if (error instanceof CliError) return error.exitCode;
  if (error instanceof SwarmError) return EXIT_OF_CODE[error.code] ?? EXIT.failed;
  // node:util parseArgs: an unknown option, a missing value, an unexpected positional.
  if (String((error as { code?: unknown })?.code).startsWith('ERR_PARSE_ARGS')) return EXIT.usage;
  return EXIT.failed;
}

/** The options every command that opens the database takes. */
export const DB_OPTION = { db: { type: 'string' } } as const;

/** The SQLite file of a command: `--db`, else `XSWARM_DB`, else {@link DEFAULT_DB_PATH}. */
export function dbPath(flag: string | undefined): string {
  return flag ?? (process.env.XSWARM_DB || DEFAULT_DB_PATH);
}

/** Opens the SQLite store at {@link dbPath} (better-sqlite3 loads here, on first use). */
export function openStore(flag: string | undefined): SwarmStore & { readonly path: string } {
  return sqliteStore(dbPath(flag));
}

/**
 * What a module given to `xswarm serve`, `run`, `resume`, `pause` or `stop` exports (named or
 * as its default export): the swarms, the agents they hand off to, tools known by name, the model.
 */
export interface ServedModule {
  swarms: SwarmDefinition<any, any>[];
  agents?: AgentDefinition[];
  tools?: Tool[];
  model?: Model;
}

/** A loaded module: its path as given, and its exports with the model chosen. */
export interface LoadedModule {
  path: string;
  swarms: SwarmDefinition<any, any>[];
  agents: AgentDefinition[];
  tools: Tool[];
  model: Model;
}

/**
 * Imports the user's module. Without an exported model, `OPENAI_API_KEY` selects `openaiModel`
 * (`XSWARM_MODEL`, default gpt-4o-mini).
 */
export async function loadModule(path: string): Promise<LoadedModule> {
  const file = resolve(path);
  if (!existsSync(file)) throw new CliError(`no module at ${path}`, EXIT.usage);
  const mod = (await import(pathToFileURL(file).href)) as Partial<ServedModule> & { default?: Partial<ServedModule> };
  const served = { ...mod.default, ...mod };
  if (!Array.isArray(served.swarms) || served.swarms.length === 0) throw new CliError(`${path} exports no \`swarms\` array`, EXIT.usage);
  let model = served.model;
  if (!model && process.env.OPENAI_API_KEY) {
    const { openaiModel } = await import('../index.js');
    model = openaiModel({ model: process.env.XSWARM_MODEL || 'gpt-4o-mini' });
  }
  if (!model) throw new CliError(`${path} exports no \`model\` and OPENAI_API_KEY is not set`, EXIT.usage);
  return { path, swarms: served.swarms, agents: served.agents ?? [], tools: served.tools ?? [], model };
}

/** A runtime that drives the module's swarms on `store`. */
export async function moduleRuntime(mod: LoadedModule, store: SwarmStore): Promise<Runtime> {
  const { createRuntime } = await import('../index.js');
  return createRuntime({ swarms: mod.swarms, agents: mod.agents, tools: mod.tools, model: mod.model, store });
}

/**
 * A runtime that only reads `store` (events, replays): it has no definitions and a model that
 * refuses every call, and it is never started, so it adopts nothing.
 */
export async function readingRuntime(store: SwarmStore): Promise<Runtime> {
  const { createRuntime } = await import('../index.js');
  return createRuntime({ model: { name: 'none', call: () => Promise.reject(new Error('this command calls no model')) }, store });
}

/**
 * The bearer token for `serve` and for commands sent with `--url`: `--token-file` (its content,
 * surrounding whitespace trimmed) or `XSWARM_TOKEN`, which keep it out of the process list, or
 * `--token`.
 */
export async function readToken(flag: string | undefined, file: string | undefined): Promise<string | undefined> {
  if (flag !== undefined && file !== undefined) throw new CliError('give the token once: --token or --token-file', EXIT.usage);
  let token = flag;
  if (file !== undefined) {
    try {
      token = (await readFile(file, 'utf8')).trim();
    } catch (e) {
      throw new CliError(`cannot read the token file ${file}: ${(e as Error).message}`);
    }
    if (token === '') throw new CliError(`the token file ${file} is empty`);
  }
  token ??= process.env.XSWARM_TOKEN || undefined;
  if (token !== undefined && token.trim() === '') throw new CliError('the token is empty');
  return token;
}

/** Quotes a shell argument when it needs it, for the command lines the CLI suggests. */
export function shellQuote(arg: string): string {
  return /^[\w@%+=:,./-]+$/.test(arg) ? arg : `'${arg.replace(/'/g, `'\\''`)}'`;
}
