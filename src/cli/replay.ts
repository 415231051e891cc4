/**
 * `xswarm replay <id> [--json]`: re-runs a finished swarm from its journal with zero model and
 * tool calls and prints its events; exits 1 when the replay diverges from the recording.
 *
 * @module
 */
import { parseArgs } from 'node:util';
import { ReplayDivergenceError } from '../runtime/replay.js';
import type { Runtime } from '../runtime/types.js';
import { assertSwarmId, MAX_DERIVED_SWARM_ID_LENGTH } from '../define/swarm-id.js';
import { CliError, EXIT, moduleRuntime, openState, STATE_OPTIONS } from './module.js';

/** `xswarm replay`; resolves with the exit code. */
export async function replayCommand(args: string[]): Promise<number> {
  const { values, positionals } = parseArgs({
    args,
    allowPositionals: true,
    options: { ...STATE_OPTIONS, json: { type: 'boolean' } },
  });
  const swarmId = positionals[0];
  if (!swarmId) throw new CliError('which swarm? xswarm replay <swarmId>', EXIT.usage);
  // Checked before the store is opened: a malformed id names no swarm (child ids are long).
  assertSwarmId(swarmId, MAX_DERIVED_SWARM_ID_LENGTH);
  const state = await openState(values, 'replay');
  let runtime: Runtime | undefined;
  try {
    // Replay needs no definitions: the machine runs from the stored journal alone.
    runtime = await moduleRuntime(state, undefined);
    let n = 0;
    for await (const e of runtime.replay(swarmId)) {
      n++;
      process.stdout.write(values.json ? `${JSON.stringify(e)}\n` : `${e.seq}\t${e.kind}${e.kind === 'status-update' ? `\t${e.metadata.type}` : ''}\n`);
    }
    process.stderr.write(`replayed ${n} events of ${swarmId}: identical to the recording, 0 model calls, 0 tool calls\n`);
    return EXIT.ok;
  } catch (e) {
    if (e instanceof ReplayDivergenceError) {
      process.stderr.write(`${e.message}\n`);
      return EXIT.failed;
    }
    throw e;
  } finally {
    await runtime?.close();
    await state.close();
  }
}
