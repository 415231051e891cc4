/**
 * `xswarm serve <module>`: serves a module's swarms over REST + SSE, WebSocket, A2A and MCP
 * until SIGINT or SIGTERM, which drain it (`--drain-ms`, default 10 000; a second signal exits at
 * once: see `drain-signal.ts`); unfinished swarms of the database resume on start. With `--nats`
 * the state is in JetStream: every swarm there can be read and commanded through this server,
 * whichever process drives it, and handoffs reach the definitions other runtimes host. With
 * `--inspect` every actor reports to a relay on 127.0.0.1 that the Stately inspector and
 * `@statelyai/inspect`'s receivers read (`--inspect-port`, default: a free port, printed).
 *
 * @module
 */
import { parseArgs } from 'node:util';
import type { Runtime } from '../runtime/types.js';
import { serve } from '../server/lazy.js';
import { importOptional, installed, OPTIONAL_PEERS } from '../util/optional.js';
import type { InspectRelay } from '../inspect/relay.js';
import { DRAIN_OPTIONS, drainMs, exitAtSecondSignal } from './drain-signal.js';
import { cliLogger, LOG_LEVEL_OPTION } from './log-level.js';
import { CliError, EXIT, loadModule, moduleRuntime, openState, readToken, STATE_OPTIONS, untilStopped } from './module.js';

/** `xswarm serve`; resolves with the exit code once stopped by a signal. */
export async function serveCommand(args: string[]): Promise<number> {
  const { values, positionals } = parseArgs({
    args,
    allowPositionals: true,
    options: {
      ...STATE_OPTIONS,
      ...DRAIN_OPTIONS,
      port: { type: 'string' },
      host: { type: 'string' },
      token: { type: 'string' },
      'token-file': { type: 'string' },
      'insecure-no-token': { type: 'boolean' },
      'allowed-origin': { type: 'string', multiple: true },
      'allowed-host': { type: 'string', multiple: true },
      inspect: { type: 'boolean' },
      'inspect-port': { type: 'string' },
      ...LOG_LEVEL_OPTION,
      'public-metrics': { type: 'boolean' },
    },
  });
  const logger = cliLogger(values['log-level']);
  // Read before anything starts, so a bad token source fails fast.
  const token = await readToken(values.token, values['token-file']);
  const path = positionals[0];
  if (!path) throw new CliError('which module? xswarm serve <module>', EXIT.usage);
  const port = values.port === undefined ? 4000 : Number(values.port);
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new CliError(`--port takes a port number, not "${values.port}"`, EXIT.usage);
  const inspectPort = values['inspect-port'] === undefined ? 0 : Number(values['inspect-port']);
  if (!Number.isInteger(inspectPort) || inspectPort < 0 || inspectPort > 65535) {
    throw new CliError(`--inspect-port takes a port number, not "${values['inspect-port']}"`, EXIT.usage);
  }
  if (values['inspect-port'] !== undefined && !values.inspect) throw new CliError('--inspect-port goes with --inspect', EXIT.usage);
  const drainDeadlineMs = drainMs(values['drain-ms']);
  const mod = await loadModule(path, 'served');
  const state = await openState(values, 'serve');
  let runtime: Runtime | undefined;
  let server: Awaited<ReturnType<typeof serve>>;
  let relay: InspectRelay | undefined;
  try {
    // The relay first: the swarms resumed by start() report to it from their first step.
    if (values.inspect) relay = await startRelay(inspectPort, token);
    // A served runtime has its metrics on where prom-client is installed: GET /metrics (behind
    // the token unless --public-metrics); without it, /metrics answers 404 and a warning says why.
    const metrics = OPTIONAL_PEERS.metrics.every(installed);
    if (!metrics) logger.warn({}, `metrics off: GET /metrics needs ${OPTIONAL_PEERS.metrics.join(' ')} (npm install ${OPTIONAL_PEERS.metrics.join(' ')})`);
    runtime = await moduleRuntime(state, mod, state.store, { ...(relay ? { inspect: relay.inspect } : {}), observe: { logger, ...(metrics ? { metrics: true } : {}) } });
    await runtime.start();
    server = await serve(runtime, {
      port,
      ...(values.host ? { host: values.host } : {}),
      ...(token ? { token } : {}),
      ...(values['insecure-no-token'] ? { insecureNoToken: true } : {}),
      ...(values['allowed-origin'] ? { allowedOrigins: values['allowed-origin'] } : {}),
      ...(values['allowed-host'] ? { allowedHosts: values['allowed-host'] } : {}),
      ...(values['public-metrics'] ? { publicMetrics: true } : {}),
    });
  } catch (e) {
    // A refused bind (non-loopback without a token, port in use) must not leave swarms running.
    await runtime?.close();
    await relay?.close();
    await state.close();
    throw e;
  }
  const served = [...mod.swarms.map((s) => s.id), ...mod.teams.map((t) => `team ${t.id}`)];
  process.stdout.write(`xswarm serving ${served.join(', ')} at ${server.url} (state: ${state.where})\n`);
  for (const s of mod.swarms) {
    process.stdout.write(`  REST  POST ${server.url}/swarms/${s.id}\n  A2A   ${server.url}/a2a/${s.id}/.well-known/agent-card.json\n`);
  }
  for (const t of mod.teams) process.stdout.write(`  REST  POST ${server.url}/teams/${t.id}/<teamId>/run\n`);
  if (runtime.metrics) process.stdout.write(`  METRICS ${server.url}/metrics\n`);
  process.stdout.write(`  MCP   ${server.url}/mcp\n  WS    ${server.url.replace('http', 'ws')}/events\n  PAGE  ${server.url}/inspector/ (the inspector page)\n`);
  if (relay) process.stdout.write(`  INSPECT ${relay.url} (Stately inspector; @statelyai/inspect receivers: ${relay.wsUrl})\n`);
  logger.info({ url: server.url, state: state.where }, 'xswarm serving');
  await untilStopped();
  logger.info({}, 'xswarm stopping');
  // Draining: new runs get 503 meanwhile, the swarms park and go to the other processes.
  const exited = exitAtSecondSignal(drainDeadlineMs);
  await runtime.drain({ deadlineMs: drainDeadlineMs });
  await server.close();
  await runtime.close();
  exited();
  await relay?.close();
  await state.close();
  return EXIT.ok;
}

/**
 * `--inspect`: the relay of the Stately inspector's protocol on 127.0.0.1 (see
 * `src/inspect/relay.ts`), behind the server's token when there is one. Its packages load only here.
 */
async function startRelay(port: number, token: string | undefined): Promise<InspectRelay> {
  const { inspectRelay } = await importOptional('xswarm serve --inspect', OPTIONAL_PEERS.inspect, () => import('../inspect/relay.js'));
  return inspectRelay({ port, ...(token ? { token } : {}) });
}
