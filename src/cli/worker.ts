/**
 * `xswarm worker <module> --nats <url>`: a process that hosts the module's agents and swarm
 * definitions for every runtime on the same NATS (and prefix) until SIGINT or SIGTERM, which drain
 * it (`--drain-ms`, default 10 000; a second signal exits at once). A handoff
 * elsewhere to one of its agents, or a run of one of its swarms, may land here; several workers
 * of one module share the calls. It also adopts the unfinished swarms of its definitions that a
 * dead process left behind.
 *
 * @module
 */
import { parseArgs } from 'node:util';
import type { Runtime } from '../runtime/types.js';
import { DRAIN_OPTIONS, drainMs, exitAtSecondSignal } from './drain-signal.js';
import { cliLogger, LOG_LEVEL_OPTION } from './log-level.js';
import { CliError, EXIT, loadModule, moduleRuntime, openState, STATE_OPTIONS, untilStopped } from './module.js';

/** `xswarm worker`; resolves with the exit code once stopped by a signal. */
export async function workerCommand(args: string[]): Promise<number> {
  const { values, positionals } = parseArgs({ args, allowPositionals: true, options: { ...STATE_OPTIONS, ...DRAIN_OPTIONS, ...LOG_LEVEL_OPTION } });
  const logger = cliLogger(values['log-level']);
  const [path, ...extra] = positionals;
  if (!path) throw new CliError('which module? xswarm worker <module> --nats <url>', EXIT.usage);
  if (extra.length > 0) throw new CliError(`unexpected arguments: ${extra.join(' ')}`, EXIT.usage);
  // A worker serves other processes: alone on a SQLite file nobody would reach it.
  if (values.nats === undefined) throw new CliError('a worker serves other runtimes over NATS: xswarm worker <module> --nats <url>', EXIT.usage);
  const drainDeadlineMs = drainMs(values['drain-ms']);
  const mod = await loadModule(path, 'definitions');
  const state = await openState(values, 'worker');
  let runtime: Runtime | undefined;
  try {
    runtime = await moduleRuntime(state, mod, state.store, { observe: { logger } });
    // Serving (and adopting) starts here: once it resolves, handoffs reach this process.
    await runtime.start();
  } catch (e) {
    await runtime?.close();
    await state.close();
    throw e;
  }
  const hosted = [
    ...(mod.agents.length > 0 ? [`agents ${mod.agents.map((a) => a.id).join(', ')}`] : []),
    ...(mod.swarms.length > 0 ? [`swarms ${mod.swarms.map((s) => s.id).join(', ')}`] : []),
  ];
  process.stdout.write(`xswarm worker hosting ${hosted.join('; ')} on ${state.where} (pid ${process.pid}; Ctrl-C stops)\n`);
  logger.info({ state: state.where, pid: process.pid }, 'xswarm worker started');
  await untilStopped();
  logger.info({}, 'xswarm worker stopping');
  // Graceful: new calls go to the other workers; the swarms held here park at a step boundary and
  // are released (adopted at once elsewhere; their callers' calls follow them).
  const exited = exitAtSecondSignal(drainDeadlineMs);
  await runtime.drain({ deadlineMs: drainDeadlineMs });
  await runtime.close();
  await state.close();
  exited();
  return EXIT.ok;
}
