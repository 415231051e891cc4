/**
 * What the `xswarm` commands share: exit codes and the error that carries one, where the
 * swarms live (a SQLite file, or JetStream on NATS with `--nats`), the user's module of swarms,
 * runtimes on that state, the bearer token and other secrets read from files. The runtime loads
 * with the first command that needs one: `xswarm list` and `xswarm events` read the state with
 * the store alone.
 *
 * @module
 */
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { SwarmError, type SwarmErrorCode } from '../errors.js';
import type { AgentDefinition } from '../define/agent.js';
import type { SwarmDefinition } from '../define/swarm.js';
import type { Tool } from '../define/tool.js';
import type { Model } from '../models/scripted.js';
import type { Runtime, RuntimeOptions } from '../runtime/types.js';
import type { SwarmStore } from '../store/types.js';
import type { TeamDefinition } from '../define/team.js';
import { importOptional, OPTIONAL_PEERS } from '../util/optional.js';
import { DEFAULT_DB_PATH, sqliteStore } from '../store/sqlite/store.js';
import { type NatsOptions, natsPrefix } from '../nats/options.js';

/**
 * The exit codes of every command, documented in the usage text and in docs/cli.md: scripts tell
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
  // NATS is down: nothing was applied; the message says so.
  unavailable: EXIT.failed,
};

/** The exit code for an error a command threw: its own, its `SwarmError` code's, a usage error's, else 1. */
export function exitCodeOf(error: unknown): number {
  if (error instanceof CliError) return error.exitCode;
  if (error instanceof SwarmError) return EXIT_OF_CODE[error.code] ?? EXIT.failed;
  // node:util parseArgs: an unknown option, a missing value, an unexpected positional.
  if (String((error as { code?: unknown })?.code).startsWith('ERR_PARSE_ARGS')) return EXIT.usage;
  return EXIT.failed;
}

/**
 * The options of every command that reads or drives swarms: where they live. `--db` names a
 * SQLite file; `--nats` a NATS server (JetStream keeps the state, and the runtimes on it reach
 * each other), with credentials only from files or the environment, never as values on the
 * command line, where any user sees them in the process list.
 */
export const STATE_OPTIONS = {
  db: { type: 'string' },
  nats: { type: 'string' },
  'nats-user': { type: 'string' },
  'nats-pass-file': { type: 'string' },
  'nats-token-file': { type: 'string' },
  'nats-nkey-file': { type: 'string' },
  'nats-prefix': { type: 'string' },
} as const;

/** The values of {@link STATE_OPTIONS} as parsed. */
export interface StateFlags {
  db?: string | undefined;
  nats?: string | undefined;
  'nats-user'?: string | undefined;
  'nats-pass-file'?: string | undefined;
  'nats-token-file'?: string | undefined;
  'nats-nkey-file'?: string | undefined;
  'nats-prefix'?: string | undefined;
}

/** The SQLite file of a command: `--db`, else `XSWARM_DB`, else {@link DEFAULT_DB_PATH}. */
export function dbPath(flag: string | undefined): string {
  return flag ?? (process.env.XSWARM_DB || DEFAULT_DB_PATH);
}

/**
 * Where a command's swarms live, open: the store, and what a runtime on it needs to reach the
 * other runtimes (with NATS). One connection per command, shared by the store and the runtimes.
 */
export interface State {
  /** For messages: the SQLite file's path, or `NATS at <servers>`. */
  readonly where: string;
  /** The options that name this state again, for the command lines the CLI suggests. */
  readonly args: readonly string[];
  readonly store: SwarmStore;
  /** What a runtime on this state adds to its options: with NATS, the transport and the options. */
  readonly distribution: Pick<RuntimeOptions, 'transport' | 'nats'>;
  /** Closes the store and the connection (runtimes on it are closed first). */
  close(): Promise<void>;
}

/**
 * Opens where the swarms live: the SQLite file of {@link dbPath} (better-sqlite3 loads here), or
 * with `--nats` a NATS connection with its JetStream store. The first connection must succeed
 * (an unreachable server is an error at once, not a wait); after that the client reconnects forever.
 */
export async function openState(flags: StateFlags, command: string): Promise<State> {
  if (flags.nats === undefined) {
    const stray = (Object.keys(flags) as (keyof StateFlags)[]).find((k) => k.startsWith('nats-') && flags[k] !== undefined);
    if (stray) throw new CliError(`--${stray} needs --nats <url>`, EXIT.usage);
    const store = sqliteStore(dbPath(flags.db));
    return { where: store.path, args: flags.db === undefined ? [] : ['--db', flags.db], store, distribution: {}, close: () => store.close() };
  }
  if (flags.db !== undefined) throw new CliError('give one place for the swarms: --db or --nats', EXIT.usage);
  const nats = await natsOptions(flags, command);
  const servers = nats.servers as string[];
  const prefix = natsPrefix(nats);
  const { natsParts } = await importOptional('xswarm --nats', OPTIONAL_PEERS.nats, () => import('../distribution/nats-parts.js'));
  const parts = await natsParts(nats, prefix);
  const args = ['--nats', flags.nats];
  for (const key of ['nats-user', 'nats-pass-file', 'nats-token-file', 'nats-nkey-file', 'nats-prefix'] as const) {
    if (flags[key] !== undefined) args.push(`--${key}`, flags[key]);
  }
  return {
    where: `NATS at ${servers.join(', ')}${prefix === 'xswarm' ? '' : ` (prefix ${prefix})`}`,
    args,
    store: parts.store,
    distribution: { transport: parts.transport, nats },
    async close() {
      await parts.store.close();
      await parts.close();
    },
  };
}

/**
 * The connection options of `--nats` and its credentials: the password from `--nats-pass-file`
 * or `XSWARM_NATS_PASS`, the token from `--nats-token-file` or `XSWARM_NATS_TOKEN`, the nkey
 * seed from `--nats-nkey-file` or `XSWARM_NATS_NKEY`. A URL carrying credentials is refused.
 */
async function natsOptions(flags: StateFlags, command: string): Promise<NatsOptions> {
  const servers = flags
    .nats!.split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '');
  if (servers.length === 0) throw new CliError('--nats takes a server URL, e.g. nats://127.0.0.1:4222', EXIT.usage);
  for (const server of servers) {
    if (/^[a-z]+:\/\/[^/]*@/i.test(server)) {
      throw new CliError(
        `--nats ${server.replace(/\/\/[^/]*@/, '//…@')}: no credentials in the URL (the process list shows them); use --nats-user with --nats-pass-file or XSWARM_NATS_PASS, --nats-token-file or XSWARM_NATS_TOKEN, --nats-nkey-file or XSWARM_NATS_NKEY`,
        EXIT.usage,
      );
    }
  }
  const pass = await readSecret(flags['nats-pass-file'], 'XSWARM_NATS_PASS', 'NATS password');
  const token = await readSecret(flags['nats-token-file'], 'XSWARM_NATS_TOKEN', 'NATS token');
  const nkeySeed = await readSecret(flags['nats-nkey-file'], 'XSWARM_NATS_NKEY', 'nkey seed');
  const user = flags['nats-user'];
  if (pass !== undefined && user === undefined) throw new CliError('a NATS password needs --nats-user', EXIT.usage);
  if (user !== undefined && pass === undefined) throw new CliError('--nats-user needs the password: --nats-pass-file PATH or XSWARM_NATS_PASS', EXIT.usage);
  const options: NatsOptions = {
    servers,
    name: `xswarm ${command}`,
    // Fail at once when no server answers: a command must not hang on a typo or a stopped server.
    waitOnFirstConnect: false,
    ...(user !== undefined ? { user, pass } : {}),
    ...(token !== undefined ? { token } : {}),
    ...(nkeySeed !== undefined ? { nkeySeed } : {}),
    ...(flags['nats-prefix'] !== undefined ? { prefix: flags['nats-prefix'] } : {}),
  };
  try {
    natsPrefix(options);
  } catch (e) {
    throw new CliError(`--nats-prefix: ${(e as Error).message}`, EXIT.usage);
  }
  return options;
}

/**
 * What a module given to `xswarm serve`, `run`, `worker`, `resume`, `pause` or `stop` exports
 * (named or as its default export): the swarms, the agents they hand off to, tools known by
 * name, the model, and teams (`defineTeam`: `serve` serves them, a worker leads them). A module
 * for `xswarm worker` may export agents alone.
 */
export interface ServedModule {
  swarms?: SwarmDefinition<any, any>[];
  agents?: AgentDefinition[];
  teams?: TeamDefinition[];
  tools?: Tool[];
  model?: Model;
}

/** A loaded module: its path as given, and its exports with the model chosen. */
export interface LoadedModule {
  path: string;
  swarms: SwarmDefinition<any, any>[];
  agents: AgentDefinition[];
  teams: TeamDefinition[];
  tools: Tool[];
  model: Model;
}

/**
 * Imports the user's module. It must export swarms; for `serve` (`needs: 'served'`) swarms or
 * teams (whose workers may run elsewhere); for a worker (`needs: 'definitions'`) swarms, agents
 * or teams. Without an exported model,
 * `OPENAI_API_KEY` selects `openaiModel` (`XSWARM_MODEL`, default gpt-4o-mini).
 */
export async function loadModule(path: string, needs: 'swarms' | 'served' | 'definitions' = 'swarms'): Promise<LoadedModule> {
  const file = resolve(path);
  if (!existsSync(file)) throw new CliError(`no module at ${path}`, EXIT.usage);
  const mod = (await import(pathToFileURL(file).href)) as ServedModule & { default?: ServedModule };
  const served = { ...mod.default, ...mod };
  const swarms = Array.isArray(served.swarms) ? served.swarms : [];
  const agents = Array.isArray(served.agents) ? served.agents : [];
  const teams = Array.isArray(served.teams) ? served.teams : [];
  if (needs === 'swarms' && swarms.length === 0) throw new CliError(`${path} exports no \`swarms\` array`, EXIT.usage);
  if (needs === 'served' && swarms.length === 0 && teams.length === 0) throw new CliError(`${path} exports neither \`swarms\` nor \`teams\``, EXIT.usage);
  if (swarms.length === 0 && agents.length === 0 && teams.length === 0) throw new CliError(`${path} exports neither \`swarms\`, \`agents\` nor \`teams\``, EXIT.usage);
  let model = served.model;
  if (!model && process.env.OPENAI_API_KEY) {
    const { openaiModel } = await import('../models/openai.js');
    model = openaiModel({ model: process.env.XSWARM_MODEL || 'gpt-4o-mini' });
  }
  if (!model) throw new CliError(`${path} exports no \`model\` and OPENAI_API_KEY is not set`, EXIT.usage);
  return { path, swarms, agents, teams, tools: served.tools ?? [], model };
}

/** The model of a runtime that only reads and commands: it refuses every call. */
const NO_MODEL: Model = { name: 'none', call: () => Promise.reject(new Error('this command calls no model')) };

/**
 * The one way the commands build a runtime: on `state` (its store, or `store` over it), with
 * the module's definitions and model, or without a module a runtime that only reads and sends
 * commands (no definitions, a model that refuses every call; never started, so it adopts
 * nothing). With NATS it reaches the other runtimes: it serves the module's definitions, hands
 * off to those it lacks, and relays commands to the holders of swarms it does not drive;
 * `serve: false` for a process that exits once its own swarm is done (`run`, a takeover): it
 * takes no other runtime's calls.
 */
export async function moduleRuntime(
  state: State,
  mod: LoadedModule | undefined,
  store: SwarmStore = state.store,
  { serve = true, inspect, observe }: { serve?: boolean; inspect?: RuntimeOptions['inspect']; observe?: Pick<RuntimeOptions, 'logger' | 'metrics'> } = {},
): Promise<Runtime> {
  const { createRuntime } = await import('../runtime/index.js');
  const definitions = mod ? { swarms: mod.swarms, agents: mod.agents, teams: mod.teams, tools: mod.tools, model: mod.model } : { model: NO_MODEL };
  return createRuntime({ ...definitions, store, ...state.distribution, ...(serve ? {} : { hosting: { serve: false } }), ...(inspect ? { inspect } : {}), ...observe });
}

/** Resolves on the first SIGINT or SIGTERM: how long-running commands (`serve`, `worker`) wait to stop. */
export function untilStopped(): Promise<void> {
  return new Promise((resolveStop) => {
    const stop = () => {
      process.off('SIGINT', stop);
      process.off('SIGTERM', stop);
      resolveStop();
    };
    process.once('SIGINT', stop);
    process.once('SIGTERM', stop);
  });
}

/**
 * The bearer token for `serve` and for commands sent with `--url`: `--token-file` (its content,
 * surrounding whitespace trimmed) or `XSWARM_TOKEN`, which keep it out of the process list, or
 * `--token`.
 */
export async function readToken(flag: string | undefined, file: string | undefined): Promise<string | undefined> {
  if (flag !== undefined && file !== undefined) throw new CliError('give the token once: --token or --token-file', EXIT.usage);
  const token = flag ?? (await readSecret(file, 'XSWARM_TOKEN', 'token'));
  if (token !== undefined && token.trim() === '') throw new CliError('the token is empty');
  return token;
}

/**
 * A secret kept out of the process list: the content of `file` (surrounding whitespace trimmed),
 * else the environment variable `env` when set, else undefined.
 */
async function readSecret(file: string | undefined, env: string, what: string): Promise<string | undefined> {
  if (file === undefined) return process.env[env] || undefined;
  let secret: string;
  try {
    secret = (await readFile(file, 'utf8')).trim();
  } catch (e) {
    throw new CliError(`cannot read the ${what} file ${file}: ${(e as Error).message}`);
  }
  if (secret === '') throw new CliError(`the ${what} file ${file} is empty`);
  return secret;
}

/** Quotes a shell argument when it needs it, for the command lines the CLI suggests. */
export function shellQuote(arg: string): string {
  return /^[\w@%+=:,./-]+$/.test(arg) ? arg : `'${arg.replace(/'/g, `'\\''`)}'`;
}
