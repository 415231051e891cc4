/**
 * The `xswarm` command line: `run` a swarm with live progress, `list` swarms, read their
 * `events`, `pause` / `resume` / `stop` them, `serve` a module's swarms, host a module's agents
 * and swarms for other processes (`worker`), `replay` a recorded swarm, `inspect` one in the
 * inspector page. Every command works on
 * the same SQLite file, or with `--nats` on the same NATS server. Each command's module loads
 * when it runs, so `xswarm list` loads no server.
 *
 * @module
 */
import { errorText } from '../../machines/error-text.js';
import { DEFAULT_DB_PATH } from '../store/sqlite/store.js';
import { CliError, EXIT, exitCodeOf } from './module.js';

const USAGE = `xswarm — an actor runtime for LLM swarms

Usage:
  xswarm run <module> <definition> [input] [--id ID] [--json]
      Runs a swarm of the module in this process and shows its progress (turns, handoffs,
      tool calls, child swarms, pauses), then its result. --json prints every event as one
      JSON line instead. A pause asks for the human's answer on stdin (a terminal prompt, or
      the next line of a pipe); when stdin ends, the swarm stays paused (exit 3).
  xswarm list [--status S]... [--definition D] [--name N] [--component C] [--limit N] [--json]
      The swarms of the database, most recently updated first (S: running, awaitingHandoff,
      paused, completed, failed, stopped; several with commas or a repeated --status).
      --name and --component keep the named runs with that name or component id.
  xswarm events <id> [--since N] [--follow] [--json]
      A swarm's events after event N; --follow waits for the next ones until the final event,
      whichever process drives the swarm.
  xswarm pause <id> [reason] [--type HITL|EMERGENCY|APPROVAL_NEEDED]
  xswarm resume <id> [message] [--pause-id P] [--answer JSON]
  xswarm stop <id> [reason]
  xswarm extend <id> [maxTurns] [--budget '{"usd":5}']
  xswarm approve <id> <approvalId> [--always]
  xswarm reject <id> <approvalId> <reason>
      Command a swarm. With --url URL [--token-file PATH] the command goes to the xswarm serve
      process at URL (the token also from XSWARM_TOKEN). With --nats, a live process holding
      the swarm (any: serve, worker, run) gets it over NATS. Else this process takes the swarm
      over, which needs --module PATH (or XSWARM_MODULE) and no live process holding it (e.g.
      after xswarm run exited at a pause); resume then drives the swarm like run. A stop of a
      swarm another process holds on the same database file is left there for it. resume
      --pause-id names the pause answered (a stale one is refused); --answer gives a typed
      answer as JSON (checked against the pause's response schema) instead of the message.
  xswarm serve <module> [--port N] [--host H] [--token-file PATH | --token T]
               [--allowed-origin O]... [--allowed-host H]... [--insecure-no-token]
               [--inspect [--inspect-port N]] [--drain-ms N] [--log-level L] [--public-metrics]
      Serves the module's swarms over REST + SSE, WebSocket, A2A and MCP; unfinished swarms
      resume on start. The bearer token comes from --token-file or XSWARM_TOKEN (preferred:
      --token shows it in the process list). Bound to 127.0.0.1 by default; another --host
      needs a token unless --insecure-no-token. Browser pages of other origins need
      --allowed-origin. --inspect also runs the Stately inspector's relay on 127.0.0.1 (a free
      port unless --inspect-port; needs @statelyai/inspect): open the printed INSPECT URL.
      SIGTERM or SIGINT drains it: new work gets 503, its swarms park at a step boundary and
      are released to the other processes on the store, within --drain-ms (default 10000);
      then it exits 0. A second signal exits at once.
      Logs JSON lines to stderr at --log-level (debug, info, warn, error; default info);
      Prometheus metrics at GET /metrics, behind the token unless --public-metrics.
  xswarm replay <id> [--json]
      Re-runs a finished swarm from its journal with zero model and tool calls and prints its
      events; exits 1 if the replay diverges from the recording.
  xswarm fork <id> (--at-seq N | --at-turn N) [--id NEW] [--instructions TEXT] [--dry-run] [--json] [--module PATH]
      Starts a new swarm from a recorded step of swarm <id> (--at-turn N: just before its
      orchestrator's turn N; --at-seq N: just after its event N), replayed with zero model and
      tool calls, then driven live here like run (needs the module). It first lists the calls
      with side effects recorded after that point, which the fork may make again; --dry-run
      only lists them. A fork the runtime cannot restore exactly is refused (exit 5).
  xswarm inspect [id] [--team DEF/TEAM] [--url URL] [--with-token] [--open]
      Prints the address of the inspector page (xswarm serve serves it at /inspector/) on
      that swarm or team (the list without either); --open also opens it in a browser. --url
      is the server (default http://127.0.0.1:4000). --with-token puts the token (--token-file,
      --token or XSWARM_TOKEN) in the address's fragment, which no server receives.
  xswarm worker <module> --nats URL [--drain-ms N] [--log-level L]
      Hosts the module's agents and swarms (it may export agents alone) for every process on
      that NATS: their handoffs to an agent or swarm they lack come here. Runs until SIGINT or
      SIGTERM, then drains as serve does (new calls go to the other workers) and exits 0.
      Logs as serve does.

Where the swarms live: every command takes --db PATH (default: XSWARM_DB, else
${DEFAULT_DB_PATH}), or --nats URL[,URL…] to keep them in JetStream on a NATS server: then
every process on that NATS sees every swarm, run hands off to workers, serve reads and
commands any swarm, and pause/resume/stop reach the live process holding the swarm. The
first connection must succeed (else exit 1); later outages are waited out. NATS credentials
never go on the command line: --nats-user U with --nats-pass-file PATH (or XSWARM_NATS_PASS),
--nats-token-file PATH (or XSWARM_NATS_TOKEN), --nats-nkey-file PATH (a seed; or
XSWARM_NATS_NKEY). --nats-prefix P keeps deployments of one account apart (default xswarm).
A module exports swarms, agents, and optionally tools and model; without a model,
OPENAI_API_KEY selects openaiModel (XSWARM_MODEL, default gpt-4o-mini).

Exit codes: 0 done (the swarm completed); 1 the swarm failed or was stopped, or an error
(NATS unreachable or unavailable included); 2 bad usage (unknown command or option, missing
argument, invalid id, input or cursor); 3 the swarm is paused waiting for a human; 4 unknown
swarm or definition; 5 the command does not fit the swarm (it has ended, is not paused, or
another live process drives it).
`;

/** The commands; each one's module loads when it runs. */
const COMMANDS: Record<string, (args: string[]) => Promise<number>> = {
  run: async (args) => (await import('./run.js')).runCommand(args),
  list: async (args) => (await import('./list.js')).listCommand(args),
  events: async (args) => (await import('./events.js')).eventsCommand(args),
  pause: async (args) => (await import('./commands.js')).swarmCommand('pause', args),
  resume: async (args) => (await import('./commands.js')).swarmCommand('resume', args),
  stop: async (args) => (await import('./commands.js')).swarmCommand('stop', args),
  extend: async (args) => (await import('./commands.js')).swarmCommand('extend', args),
  approve: async (args) => (await import('./commands.js')).swarmCommand('approve', args),
  reject: async (args) => (await import('./commands.js')).swarmCommand('reject', args),
  serve: async (args) => (await import('./serve.js')).serveCommand(args),
  replay: async (args) => (await import('./replay.js')).replayCommand(args),
  worker: async (args) => (await import('./worker.js')).workerCommand(args),
  inspect: async (args) => (await import('./inspect.js')).inspectCommand(args),
  fork: async (args) => (await import('./fork.js')).forkCommand(args),
};

/**
 * Runs the CLI with `argv` (without node and script); resolves with the exit code (see the
 * usage text: 0 ok, 1 failed, 2 usage, 3 paused, 4 not found, 5 conflict).
 */
export async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  if (command === undefined || command === '--help' || command === '-h' || command === 'help') {
    process.stdout.write(USAGE);
    return EXIT.ok;
  }
  const run = Object.hasOwn(COMMANDS, command) ? COMMANDS[command] : undefined;
  try {
    if (!run) throw new CliError(`unknown command "${command}"; one of ${Object.keys(COMMANDS).join(', ')} (xswarm --help)`, EXIT.usage);
    if (rest.includes('--help') || rest.includes('-h')) {
      process.stdout.write(USAGE);
      return EXIT.ok;
    }
    return await run(rest);
  } catch (e) {
    process.stderr.write(`xswarm${run ? ` ${command}` : ''}: ${errorText(e)}\n`);
    return exitCodeOf(e);
  }
}
