/**
 * Reading a long stream: `events({ since })` of a swarm with 100,000 stored events reads them
 * page by page (`readEvents` with a limit), so the reader's memory does not grow with the
 * stream.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { afterAll, describe, expect, it } from 'vitest';
import type { SwarmEvent } from '../../machines/events.js';
import { scriptedModel } from '../../src/models/scripted.js';
import { createRuntime } from '../../src/runtime/index.js';
import { memoryStore } from '../../src/store/memory.js';
import { sqliteStore } from '../../src/store/sqlite/store.js';
import type { SwarmRecord, SwarmStore } from '../../src/store/types.js';
import { memoryEffects, w1Definitions } from '../support/crash-w1.js';

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

const dirs: string[] = [];
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

const SWARM = 'long';
const TOTAL = 100_000;
const PAD = 'x'.repeat(200);

/** Event `seq` of the long swarm: tool starts, and a final status update at the end. */
function event(seq: number): SwarmEvent {
  if (seq === TOTAL) {
    return {
      kind: 'status-update',
      taskId: SWARM,
      contextId: SWARM,
      status: { state: 'completed', timestamp: new Date(1_700_000_000_000).toISOString() },
      final: true,
      metadata: { type: 'completed' },
      seq,
      swarmId: SWARM,
    } as SwarmEvent;
  }
  return { kind: 'internal:tool-start', agent: 'a', toolName: 't', callId: `c${seq}`, arguments: `{"pad":"${PAD}"}`, timestamp: seq, seq, swarmId: SWARM } as SwarmEvent;
}

function record(revision: number, lastSeq: number, status: SwarmRecord['status']): SwarmRecord {
  return {
    swarmId: SWARM,
    definitionId: 'planner',
    definitionVersion: 1,
    machineVersion: 1,
    status,
    revision,
    snapshot: { status: status === 'completed' ? 'done' : 'active', value: {}, context: {} },
    result: status === 'completed' ? { status: 'completed', result: 'done' } : { status: 'running', currentTurn: 1, maxTurns: 10 },
    lastSeq,
    updatedAt: 1_700_000_000_000 + revision,
  };
}

/** Writes the long swarm through the store's commit API, 5,000 events a commit. */
async function writeLongSwarm(store: SwarmStore): Promise<void> {
  const CHUNK = 5_000;
  let revision = 0;
  for (let from = 1; from <= TOTAL; from += CHUNK) {
    const to = Math.min(TOTAL, from + CHUNK - 1);
    const events: SwarmEvent[] = [];
    for (let s = from; s <= to; s++) events.push(event(s));
    await store.commit({
      swarmId: SWARM,
      events,
      record: record(++revision, to, to === TOTAL ? 'completed' : 'running'),
      lease: { owner: 'writer', until: Date.now() + 60_000 },
    });
  }
}

describe('a stream of 100,000 events', () => {
  it('readEvents pages: `limit` events after `since`, in order, on both stores', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'xswarm-long-'));
    dirs.push(dir);
    for (const store of [memoryStore(), sqliteStore(join(dir, 'pages.db'))]) {
      await store.commit({ swarmId: SWARM, events: [1, 2, 3, 4, 5].map(event), record: record(1, 5, 'running') });
      expect((await store.readEvents(SWARM, 0, 2)).map((e) => e.seq)).toEqual([1, 2]);
      expect((await store.readEvents(SWARM, 2, 2)).map((e) => e.seq)).toEqual([3, 4]);
      expect((await store.readEvents(SWARM, 4, 2)).map((e) => e.seq)).toEqual([5]);
      expect(await store.readEvents(SWARM, 5, 2)).toEqual([]);
      expect((await store.readEvents(SWARM, 1)).map((e) => e.seq)).toEqual([2, 3, 4, 5]);
      await store.close();
    }
  });

  it('events({ since }) on SQLite: every event once, in order, with bounded heap growth while reading', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'xswarm-long-'));
    dirs.push(dir);
    const store = sqliteStore(join(dir, 'state.db'), { synchronous: 'NORMAL' });
    const { planner, agents } = w1Definitions(memoryEffects());
    const runtime = createRuntime({ swarms: [planner], agents, model: scriptedModel(() => ({ text: 'unused' })), store });
    try {
      await writeLongSwarm(store);
      const reads: number[] = [];
      const readEvents = store.readEvents.bind(store);
      store.readEvents = (id, since, limit) => {
        reads.push(limit ?? Infinity);
        return readEvents(id, since, limit);
      };

      const since = 10;
      gc();
      const base = process.memoryUsage().heapUsed;
      let peak = 0;
      let count = 0;
      let last = since;
      for await (const e of runtime.forSwarm(planner, SWARM).events({ since })) {
        if (e.seq !== last + 1) throw new Error(`event ${e.seq} after ${last}`);
        last = e.seq;
        count++;
        if (count % 10_000 === 0) {
          gc();
          peak = Math.max(peak, process.memoryUsage().heapUsed - base);
        }
      }
      expect(count).toBe(TOTAL - since);
      expect(last).toBe(TOTAL);
      // Read in pages, never the whole stream at once.
      expect(reads.length).toBeGreaterThan(100);
      expect(Math.max(...reads)).toBeLessThanOrEqual(1_000);
      // The whole stream held at once is well over 50 MB of heap.
      expect(peak).toBeLessThan(20 * 1024 * 1024);
    } finally {
      await runtime.close();
      await store.close();
    }
  }, 60_000);
});
