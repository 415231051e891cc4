/**
 * `xswarm events <id> [--since n] [--follow] [--json]`: a swarm's stored events, and with
 * `--follow` the ones that come after, whichever process drives it, until its final event.
 *
 * @module
 */
import { parseArgs } from 'node:util';
import { assertCursor } from '../events/cursor.js';
import { storedPages } from '../store/pages.js';
import { assertSwarmId, MAX_DERIVED_SWARM_ID_LENGTH } from '../define/swarm-id.js';
import { CliError, EXIT, moduleRuntime, openState, STATE_OPTIONS } from './module.js';
import { Progress } from './progress.js';

/** `xswarm events`; resolves with the exit code. */
export async function eventsCommand(args: string[]): Promise<number> {
  const { values, positionals } = parseArgs({
    args,
    allowPositionals: true,
    options: { ...STATE_OPTIONS, since: { type: 'string' }, follow: { type: 'boolean', short: 'f' }, json: { type: 'boolean' } },
  });
  const [swarmId, ...extra] = positionals;
  if (!swarmId || extra.length > 0) throw new CliError('which swarm? xswarm events <id> [--since n] [--follow] [--json]', EXIT.usage);
  assertSwarmId(swarmId, MAX_DERIVED_SWARM_ID_LENGTH);
  const since = values.since === undefined ? 0 : Number(values.since);
  if (!Number.isSafeInteger(since) || since < 0 || values.since?.trim() === '') {
    throw new CliError(`--since takes an event number (0 or more), not "${values.since}"`, EXIT.usage);
  }
  const state = await openState(values, 'events');
  const { store } = state;
  const progress = Progress.for(process.stdout, { json: values.json === true, all: true });
  try {
    const record = await store.load(swarmId);
    if (!record) throw new CliError(`unknown swarm "${swarmId}" in ${state.where}`, EXIT.notFound);
    assertCursor(record, since);
    if (!values.follow) {
      // Page by page, so a long stream is never held whole; at a corrupt event the pages show
      // what can be read, then the read throws, saying where the stream breaks.
      for await (const page of storedPages(store, swarmId, since)) for (const event of page) progress.event(event);
      return EXIT.ok;
    }
    // A runtime that drives nothing: it reads the stored stream and polls it for what the
    // swarm's owner (any process) commits next, until the final event.
    const runtime = await moduleRuntime(state, undefined);
    const stop = new AbortController();
    const interrupt = () => stop.abort();
    process.once('SIGINT', interrupt);
    try {
      for await (const event of runtime.forSwarm(record.definitionId, swarmId).events({ since, signal: stop.signal })) progress.event(event);
      return EXIT.ok;
    } finally {
      process.off('SIGINT', interrupt);
      await runtime.close();
    }
  } finally {
    await state.close();
  }
}
