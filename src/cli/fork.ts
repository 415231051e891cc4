/**
 * `xswarm fork <id> (--at-seq N | --at-turn N) [--id NEW] [--instructions TEXT] [--dry-run]
 * [--json] [--module PATH]`: starts a new swarm from a recorded step of another (see
 * docs/forking.md). It prints the fork's plan first: the calls with side effects the source
 * recorded after the fork point, which the new branch may make again. `--dry-run` stops there
 * (nothing is written; no module needed). Otherwise this process drives the fork like
 * `xswarm run` (it needs the module defining the swarm, `--module` or XSWARM_MODULE), from the
 * fork point to its end or a pause. A refused fork exits 5 with the reason.
 *
 * @module
 */
import { parseArgs } from 'node:util';
import type { ForkOptions, ForkPlan } from '../runtime/fork-plan.js';
import { ForkError } from '../runtime/fork-plan.js';
import type { Runtime } from '../runtime/types.js';
import { assertSwarmId, MAX_DERIVED_SWARM_ID_LENGTH } from '../define/swarm-id.js';
import { CliError, EXIT, loadModule, moduleRuntime, openState, STATE_OPTIONS } from './module.js';
import { Progress } from './progress.js';
import { drive } from './run.js';

const USAGE = 'xswarm fork <id> (--at-seq N | --at-turn N) [--id NEW] [--instructions TEXT] [--dry-run] [--json] [--module PATH]';

/** `xswarm fork`; resolves with the exit code. */
export async function forkCommand(args: string[]): Promise<number> {
  const { values, positionals } = parseArgs({
    args,
    allowPositionals: true,
    options: {
      ...STATE_OPTIONS,
      'at-seq': { type: 'string' },
      'at-turn': { type: 'string' },
      id: { type: 'string' },
      instructions: { type: 'string' },
      'dry-run': { type: 'boolean' },
      json: { type: 'boolean' },
      module: { type: 'string' },
    },
  });
  const [sourceId, ...extra] = positionals;
  if (!sourceId) throw new CliError(`which swarm? ${USAGE}`, EXIT.usage);
  if (extra.length > 0) throw new CliError(`unexpected arguments: ${extra.join(' ')} (${USAGE})`, EXIT.usage);
  assertSwarmId(sourceId, MAX_DERIVED_SWARM_ID_LENGTH);
  if (values.id !== undefined) assertSwarmId(values.id);
  const options: ForkOptions = {
    ...pointOf(values['at-seq'], values['at-turn']),
    ...(values.id !== undefined ? { newId: values.id } : {}),
    ...(values.instructions !== undefined ? { instructions: values.instructions } : {}),
  };
  const json = values.json === true;
  const modulePath = values.module ?? (process.env.XSWARM_MODULE || undefined);
  if (!values['dry-run'] && modulePath === undefined) {
    throw new CliError(
      'this process drives the fork: name the module that defines its swarm with --module PATH (or XSWARM_MODULE), or plan it with --dry-run',
      EXIT.usage,
    );
  }
  // The module first: a mistake in it leaves nothing opened.
  const mod = modulePath === undefined ? undefined : await loadModule(modulePath);
  const state = await openState(values, 'fork');
  let runtime: Runtime | undefined;
  try {
    // This process exits once the fork is done: it takes no other runtime's calls, and is not
    // started (it adopts nothing of the database but the fork it makes).
    runtime = await moduleRuntime(state, mod, state.store, { serve: false });
    if (values['dry-run']) {
      printPlan(await refused(runtime.forkPlan(sourceId, options)), json, true);
      return EXIT.ok;
    }
    const plan = await refused(runtime.fork(sourceId, options));
    printPlan(plan, json, false);
    const definitionId = (await state.store.load(plan.swarmId))!.definitionId;
    // From the fork's `forked` fact on: the prefix is the source's.
    return await drive(runtime, runtime.forSwarm(definitionId, plan.swarmId), plan.seq, Progress.for(process.stdout, { json }), {
      module: modulePath!,
      state: state.args,
    });
  } finally {
    await runtime?.close();
    await state.close();
  }
}

/** `--at-seq` / `--at-turn` as a fork point: exactly one, a whole number from 1. */
function pointOf(atSeq: string | undefined, atTurn: string | undefined): ForkOptions {
  if ((atSeq === undefined) === (atTurn === undefined)) throw new CliError(`give exactly one of --at-seq and --at-turn (${USAGE})`, EXIT.usage);
  const text = (atSeq ?? atTurn)!;
  if (!/^[1-9]\d*$/.test(text)) throw new CliError(`--at-${atSeq !== undefined ? 'seq' : 'turn'} takes a whole number from 1, not "${text}"`, EXIT.usage);
  return atSeq !== undefined ? { atSeq: Number(text) } : { atTurn: Number(text) };
}

/** A refused fork as a CLI error: exit 5, its reason in the message. */
async function refused<T>(p: Promise<T>): Promise<T> {
  try {
    return await p;
  } catch (e) {
    if (e instanceof ForkError) throw new CliError(`${e.message} (${e.reason})`, EXIT.conflict);
    throw e;
  }
}

/** The plan: one JSON line with `--json`, else a sentence and a line per call that may run again. */
function printPlan(plan: ForkPlan, json: boolean, dryRun: boolean): void {
  if (json) {
    process.stdout.write(`${JSON.stringify({ ...plan, dryRun })}\n`);
    return;
  }
  const what = dryRun ? 'would fork' : `forked as ${plan.swarmId}:`;
  const lines = [
    `${plan.sourceId} ${what} at seq ${plan.seq} (after turn ${plan.turn}); ${plan.sideEffects.length} recorded call(s) with side effects after it may run again${plan.sideEffects.length > 0 ? ':' : ''}`,
    ...plan.sideEffects.map((c) => `  seq ${c.seq}\t${c.kind} ${c.name}\t${c.callId}\t${c.arguments}\t(${c.agent})`),
  ];
  process.stdout.write(`${lines.join('\n')}\n`);
}
