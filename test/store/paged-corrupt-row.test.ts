/**
 * A paged reader at a corrupt row whose corrupt event is itself readable: a row holding more
 * lines than its range (events 1–3, four lines) is reported at its last event, which parses.
 * Whatever the page size, a reader delivers the events before it, then throws, rather than
 * starting its next page after the row and skipping the corruption.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CorruptEventError, createRuntime, defineSwarm, scriptedModel, sqliteStore, type SwarmEvent } from '../../src/index.js';
import { storedPages } from '../../src/store/pages.js';
import { event, step } from '../support/store-fixtures.js';

let dir: string;
let store: ReturnType<typeof sqliteStore>;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'xswarm-paged-row-'));
  const path = join(dir, 'state.db');
  store = sqliteStore(path);
  await store.commit(step('s', 1, 1, 3));
  await store.commit(step('s', 2, 4, 6, 'A', { status: 'completed' }));
  const db = new Database(path);
  try {
    // The row of events 1–3 gains a fourth line (a readable event).
    expect(db.prepare(`UPDATE steps SET events = events || char(10) || ? WHERE first_seq = 1`).run(JSON.stringify(event('s', 99))).changes).toBe(1);
  } finally {
    db.close();
  }
});

afterAll(async () => {
  await store.close();
  rmSync(dir, { recursive: true, force: true });
});

/** The seqs `read` yields before it throws, and what it throws (failing the test if it does not). */
async function untilThrow(read: AsyncIterable<SwarmEvent | SwarmEvent[]>): Promise<{ seqs: number[]; error: unknown }> {
  const seqs: number[] = [];
  try {
    for await (const item of read) for (const e of [item].flat()) seqs.push(e.seq);
  } catch (error) {
    return { seqs, error };
  }
  throw new Error(`read ${seqs.join(',')} without an error`);
}

describe('a row with more lines than its range', () => {
  it('storedPages yields the events before its last one, then throws its CorruptEventError, at any page size', async () => {
    for (const size of [2, 3, 4, 500]) {
      const { seqs, error } = await untilThrow(storedPages(store, 's', 0, size));
      expect(seqs, `page size ${size}`).toEqual([1, 2]);
      expect(error).toBeInstanceOf(CorruptEventError);
      expect(error).toMatchObject({ swarmId: 's', seq: 3 });
    }
  });

  it('events({ since }) of the runtime does the same', async () => {
    const planner = defineSwarm({ id: 'planner', description: 'Plans', instructions: 'Plan.' });
    const rt = createRuntime({
      swarms: [planner],
      model: scriptedModel(() => {
        throw new Error('no model call expected');
      }),
      store,
    });
    try {
      const { seqs, error } = await untilThrow(rt.forSwarm(planner, 's').events({ since: 0 }));
      expect(seqs).toEqual([1, 2]);
      expect(error).toMatchObject({ swarmId: 's', seq: 3 });
    } finally {
      await rt.close();
    }
  });
});
