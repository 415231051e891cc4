/**
 * `xswarm inspect [swarmId] [--team DEF/TEAM] [--url URL] [--with-token] [--open]`: the address
 * of the inspector page (served by `xswarm serve` at `/inspector/`) opened on a swarm or a team.
 *
 * It prints `<url>/inspector/#swarm=<id>` (`#team=<definition>/<team>` for a team; the list
 * alone without either) and, with `--open`, asks the system to open it in a browser (`xdg-open`,
 * `open` on macOS, `start` on Windows); when that fails it says so, the printed address stays.
 * The server is `--url`, default `http://127.0.0.1:4000` (what `xswarm serve` listens on by
 * default). Nothing is sent to the server: the page itself asks for the swarm.
 *
 * The token is left out unless `--with-token` asks for it (then `--token-file PATH`, `--token T`
 * or `XSWARM_TOKEN`): it goes in the fragment (`&token=`), which the browser never sends to any
 * server and the page removes from the address bar at once; but the printed line holds it, so
 * it may end up in a terminal's scrollback or a shell history.
 *
 * @module
 */
import { spawn } from 'node:child_process';
import { parseArgs } from 'node:util';
import { assertSwarmId, MAX_DERIVED_SWARM_ID_LENGTH, swarmIdProblem } from '../define/swarm-id.js';
import { CliError, EXIT, readToken } from './module.js';

/** The server `xswarm serve` listens on by default: where the page is unless `--url` says otherwise. */
export const DEFAULT_SERVER_URL = 'http://127.0.0.1:4000';

/** What the page is opened on. */
export type InspectTarget = { swarmId: string } | { team: { definitionId: string; teamId: string } } | undefined;

/** A fragment value percent-encoded, but for `:` (a child swarm's id reads as it is). */
const encode = (value: string) => encodeURIComponent(value).replace(/%3A/g, ':');

/**
 * The page's address on a server: `<server>/inspector/` with the fragment that selects the
 * swarm or team (and carries the token, when given). Each part is percent-encoded.
 */
export function inspectorUrl(server: string, target: InspectTarget, token?: string): string {
  const parts: string[] = [];
  if (target && 'swarmId' in target) parts.push(`swarm=${encode(target.swarmId)}`);
  else if (target) parts.push(`team=${encode(target.team.definitionId)}/${encode(target.team.teamId)}`);
  if (token !== undefined) parts.push(`token=${encode(token)}`);
  return `${server.replace(/\/+$/, '')}/inspector/${parts.length > 0 ? `#${parts.join('&')}` : ''}`;
}

/** `xswarm inspect`; resolves with the exit code. */
export async function inspectCommand(args: string[]): Promise<number> {
  const { values, positionals } = parseArgs({
    args,
    allowPositionals: true,
    options: {
      url: { type: 'string' },
      team: { type: 'string' },
      'with-token': { type: 'boolean' },
      token: { type: 'string' },
      'token-file': { type: 'string' },
      open: { type: 'boolean' },
    },
  });
  const [swarmId, ...extra] = positionals;
  if (extra.length > 0) throw new CliError(`unexpected arguments: ${extra.join(' ')}`, EXIT.usage);
  if (swarmId !== undefined && values.team !== undefined) throw new CliError('give a swarm id or --team, not both', EXIT.usage);
  let target: InspectTarget;
  if (swarmId !== undefined) {
    assertSwarmId(swarmId, MAX_DERIVED_SWARM_ID_LENGTH);
    target = { swarmId };
  } else if (values.team !== undefined) {
    target = { team: parseTeam(values.team) };
  }
  const server = parseServer(values.url ?? DEFAULT_SERVER_URL);
  let token: string | undefined;
  if (values['with-token']) {
    token = await readToken(values.token, values['token-file']);
    if (token === undefined) throw new CliError('--with-token needs a token: --token-file PATH, --token T or XSWARM_TOKEN', EXIT.usage);
  } else if (values.token !== undefined || values['token-file'] !== undefined) {
    throw new CliError('--token and --token-file go with --with-token (the token is put in the address only when asked)', EXIT.usage);
  }
  const url = inspectorUrl(server, target, token);
  process.stdout.write(`${url}\n`);
  if (values.open) {
    const failure = await openInBrowser(url);
    if (failure) process.stderr.write(`xswarm inspect: could not open a browser (${failure}); open the address above\n`);
  }
  return EXIT.ok;
}

/** `--team <definitionId>/<teamId>`, each part a valid id. */
function parseTeam(value: string): { definitionId: string; teamId: string } {
  const slash = value.indexOf('/');
  const definitionId = slash < 0 ? '' : value.slice(0, slash);
  const teamId = slash < 0 ? '' : value.slice(slash + 1);
  if (definitionId === '' || teamId === '') throw new CliError(`--team takes <definitionId>/<teamId>, not "${value}"`, EXIT.usage);
  const problem = swarmIdProblem(definitionId) ?? swarmIdProblem(teamId);
  if (problem) throw new CliError(`--team ${value}: ${problem.replace('a swarm id', 'an id')}`, EXIT.usage);
  return { definitionId, teamId };
}

/** The server's base URL: http(s), no path beyond `/`, no query or fragment. */
function parseServer(value: string): string {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new CliError(`--url takes the server's address, e.g. ${DEFAULT_SERVER_URL}, not "${value}"`, EXIT.usage);
  }
  if ((url.protocol !== 'http:' && url.protocol !== 'https:') || url.search || url.hash || url.username || url.password) {
    throw new CliError(`--url takes an http(s) address without query, fragment or credentials, e.g. ${DEFAULT_SERVER_URL}, not "${value}"`, EXIT.usage);
  }
  return `${url.origin}${url.pathname.replace(/\/+$/, '')}`;
}

/** The system's command that opens an address in the default browser. */
function opener(url: string): { command: string; args: string[] } {
  if (process.platform === 'darwin') return { command: 'open', args: [url] };
  // `start` is a shell built-in; its first quoted argument is a window title.
  if (process.platform === 'win32') return { command: 'cmd', args: ['/c', 'start', '""', url.replace(/&/g, '^&')] };
  return { command: 'xdg-open', args: [url] };
}

/**
 * Opens `url` in a browser; resolves with why it failed (the opener is missing or exits
 * non-zero), or undefined. An opener still running after a few seconds is left to it.
 */
function openInBrowser(url: string): Promise<string | undefined> {
  const { command, args } = opener(url);
  return new Promise((resolve) => {
    const child = spawn(command, args, { stdio: 'ignore', detached: true });
    const timer = setTimeout(() => {
      child.unref();
      resolve(undefined);
    }, 5_000);
    child.once('error', (e) => {
      clearTimeout(timer);
      resolve(`${command}: ${(e as NodeJS.ErrnoException).code ?? e.message}`);
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      resolve(code === 0 ? undefined : `${command} exited with ${code}`);
    });
  });
}
