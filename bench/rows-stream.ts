/**
 * The long-stream row: `events({ since: 0 })` of a finished swarm with {@link EVENTS} events,
 * read on a fresh runtime over SQLite. It reports the peak RSS while reading (and its growth
 * over the RSS before), and events per second: a stream read in pages holds one page at a time.
 *
 * The events are those of a real W1 run, repeated: the run's first event, then its middle
 * events over and over, renumbered, then its final event; the swarm's record is the run's
 * final record with the last sequence number. They are written through the store's own commit
 * API in batches, so the rows are exactly what the store writes, by a child process: the
 * memory used to write them must not be what the reader then reuses.
 *
 * @module
 */
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { sqliteStore, type SwarmEvent } from '../src/index.js';
import { scratchDir } from './disk.js';
import { msSince, sampleRss, settledMemory } from './measure.js';
import type { Figures } from './table.js';
import { createW1Runtime, W1_INPUT, W1_SWARM_ID } from './w1.js';

/** Events in the stream. */
export const EVENTS = 100_000;
/** Events per commit while writing the stream. */
const BATCH = 1000;

/** The events and final record of one W1 run, in memory. */
async function template() {
  const { runtime, swarm } = createW1Runtime(0);
  const client = runtime.forSwarm(swarm);
  await client.run(W1_INPUT);
  await client.wait();
  const events: SwarmEvent[] = [];
  for await (const e of client.events()) events.push(e);
  await runtime.close();
  const record = await runtime.store.load(client.swarmId);
  if (!record || events.length < 3) throw new Error('the template W1 run left no record');
  return { swarmId: client.swarmId, events, record };
}

/**
 * Writes the stream into a new database at `path` (what the row's child process does, see
 * `--fixture` in `run.ts`); returns the swarm id.
 */
export async function writeStream(path: string): Promise<string> {
  const { swarmId, events, record } = await template();
  const writer = sqliteStore(path, { synchronous: 'NORMAL' });
  await writer.commit({ swarmId, events: [], record: { ...record, revision: 1, lastSeq: EVENTS } });
  const middle = events.slice(1, -1);
  const eventAt = (seq: number): SwarmEvent => {
    const e = seq === 1 ? events[0]! : seq === EVENTS ? events.at(-1)! : middle[(seq - 2) % middle.length]!;
    return { ...e, seq };
  };
  for (let seq = 1; seq <= EVENTS; seq += BATCH) {
    await writer.commit({ swarmId, events: Array.from({ length: Math.min(BATCH, EVENTS - seq + 1) }, (_, i) => eventAt(seq + i)) });
  }
  await writer.close();
  return swarmId;
}

/** Runs the row: the stream is written by a child process, then read here. */
export async function longStream(): Promise<Figures> {
  const scratch = scratchDir();
  const path = join(scratch.dir, 'state.db');
  try {
    const out = execFileSync(process.execPath, [...process.execArgv, process.argv[1]!, '--fixture', 'stream', path], {
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    const swarmId = out.trim().split('\n').at(-1)!;
    const store = sqliteStore(path, { synchronous: 'NORMAL' });
    const { runtime } = createW1Runtime(0, store);
    try {
      const before = (await settledMemory()).rss;
      const rss = sampleRss();
      const start = process.hrtime.bigint();
      let count = 0;
      for await (const e of runtime.forSwarm(W1_SWARM_ID, swarmId).events({ since: 0 })) {
        if (e.seq !== ++count) throw new Error(`event ${e.seq} arrived as number ${count}`);
        if (count % 1000 === 0) rss.sample();
      }
      const ms = msSince(start);
      const peak = rss.stop();
      if (count !== EVENTS) throw new Error(`read ${count} events, expected ${EVENTS}`);
      return {
        events: count,
        eventsPerSec: count / (ms / 1000),
        rssBeforeMb: before / 2 ** 20,
        peakRssMb: peak / 2 ** 20,
        peakGrowthMb: (peak - before) / 2 ** 20,
      };
    } finally {
      await runtime.close();
      await store.close();
    }
  } finally {
    scratch.remove();
  }
}
