/**
 * `xswarm list [--status s] [--definition d] [--name n] [--component c] [--limit n] [--json]`:
 * the swarms of the database (or of JetStream, with `--nats`), most recently updated first; a
 * NAME column shows the names (and component ids) of named runs when there are any.
 *
 * @module
 */
import { parseArgs } from 'node:util';
import type { SwarmStatus } from '../store/result.js';
import type { SwarmSummary } from '../store/types.js';
import { SWARM_STATUSES } from '../store/result.js';
import { CliError, EXIT, openState, STATE_OPTIONS } from './module.js';

/** The statuses a listing filters on: a swarm machine's top-level states. */

/** `xswarm list`; resolves with the exit code. */
export async function listCommand(args: string[]): Promise<number> {
  const { values, positionals } = parseArgs({
    args,
    allowPositionals: true,
    options: {
      ...STATE_OPTIONS,
      status: { type: 'string', multiple: true },
      definition: { type: 'string' },
      name: { type: 'string' },
      component: { type: 'string' },
      limit: { type: 'string' },
      json: { type: 'boolean' },
    },
  });
  if (positionals.length > 0) throw new CliError(`unexpected arguments: ${positionals.join(' ')}`, EXIT.usage);
  // --status paused --status failed, or --status paused,failed
  const statuses = values.status?.flatMap((s) => s.split(',')).map((s) => s.trim());
  const unknown = statuses?.find((s) => !SWARM_STATUSES.includes(s as SwarmStatus));
  if (unknown !== undefined) throw new CliError(`unknown status "${unknown}"; one of ${SWARM_STATUSES.join(', ')}`, EXIT.usage);
  const limit = values.limit === undefined ? undefined : Number(values.limit);
  if (limit !== undefined && (!Number.isSafeInteger(limit) || limit < 1)) throw new CliError(`--limit takes a positive number, not "${values.limit}"`, EXIT.usage);
  const state = await openState(values, 'list');
  try {
    const swarms = await state.store.list({
      ...(statuses ? { status: statuses as SwarmStatus[] } : {}),
      ...(values.definition !== undefined ? { definitionId: values.definition } : {}),
      ...(values.name !== undefined ? { name: values.name } : {}),
      ...(values.component !== undefined ? { componentId: values.component } : {}),
      ...(limit !== undefined ? { limit } : {}),
    });
    if (values.json) process.stdout.write(`${JSON.stringify(swarms)}\n`);
    else process.stdout.write(table(swarms));
    return EXIT.ok;
  } finally {
    await state.close();
  }
}

/** The swarms as aligned columns: id, definition, status, last update, and what they wait on or ended with. */
function table(swarms: SwarmSummary[]): string {
  if (swarms.length === 0) return '';
  // The NAME column only when a listed run has a label: listings of unnamed runs read as before.
  const named = swarms.some((s) => s.label);
  const rows = swarms.map((s) => [s.swarmId, s.definitionId, ...(named ? [nameOf(s)] : []), s.status, new Date(s.updatedAt).toISOString(), note(s)]);
  const all = [['SWARM', 'DEFINITION', ...(named ? ['NAME'] : []), 'STATUS', 'UPDATED', ''], ...rows];
  const widths = all[0]!.map((_, i) => Math.max(...all.map((r) => r[i]!.length)));
  return (
    all
      .map((r) =>
        r
          .map((cell, i) => (i === r.length - 1 ? cell : cell.padEnd(widths[i]!)))
          .join('  ')
          .trimEnd(),
      )
      .join('\n') + '\n'
  );
}

/** A named run's name, with its component id in brackets. */
function nameOf(s: SwarmSummary): string {
  const { name, componentId } = s.label ?? {};
  return [name, componentId === undefined ? undefined : `[${componentId}]`].filter((x) => x !== undefined).join(' ');
}

/** A paused swarm's question, an ended swarm's reason, the live holder of a running one. */
function note(s: SwarmSummary): string {
  const r = s.result;
  if (r.status === 'paused') return r.reason.message.replace(/\s+/g, ' ');
  if (r.status === 'failed' || r.status === 'stopped') return r.reason.replace(/\s+/g, ' ');
  // Only a running swarm's lease says who drives it (a finished swarm's lease is left to run out).
  if (r.status === 'running' && s.lease && s.lease.until > Date.now() && s.lease.pid) return `held by pid ${s.lease.pid}`;
  return '';
}
