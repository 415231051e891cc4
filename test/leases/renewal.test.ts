/**
 * Lease renewal (`src/leases/renewal.ts`): every id renewed once per period, in chunks with a turn of
 * the event loop between them, never two renewals at once, nothing sent once stopped; and a
 * runtime with many passivated swarms renews them that way.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createRuntime, defineSwarm, sqliteStore } from '../../src/index.js';
import { RENEW_CHUNK, Renewal } from '../../src/leases/renewal.js';
import type { SwarmFilter, SwarmStore } from '../../src/store/types.js';
import { askerModel } from '../support/script.js';
import { sleep } from '../support/sleep.js';
import { until } from '../support/wait.js';

interface Call {
  ids: readonly string[];
  until: number;
  /** `Date.now()` when the call was made. */
  at: number;
}

/** A store that records renewals and answers after `delayMs` (at once, synchronously settled, when 0). */
function recordingStore(delayMs = 0, fail?: (call: Call) => boolean) {
  const calls: Call[] = [];
  let inFlight = 0;
  let maxInFlight = 0;
  const store: Pick<SwarmStore, 'renew'> = {
    renew(_owner, ids, until) {
      const call = { ids: [...ids], until, at: Date.now() };
      calls.push(call);
      if (fail?.(call)) {
        // A custom store may throw instead of rejecting: renewal must not stop for either.
        if (call.ids[0] === 's2') throw new Error('renewal refused at once');
        return Promise.reject(new Error('renewal refused'));
      }
      if (delayMs === 0) return Promise.resolve();
      maxInFlight = Math.max(maxInFlight, ++inFlight);
      return sleep(delayMs).then(() => void inFlight--);
    },
  };
  return { store, calls, maxInFlight: () => maxInFlight };
}

const ids = (n: number) => Array.from({ length: n }, (_, i) => `s${i}`);
const stops: Renewal[] = [];
afterEach(() => {
  for (const r of stops.splice(0)) r.stop();
});
function renewal(options: ConstructorParameters<typeof Renewal>[0]): Renewal {
  const r = new Renewal(options);
  stops.push(r);
  return r;
}

describe('lease renewal', () => {
  it('renews every id once, in chunks of at most the chunk size', async () => {
    const { store, calls } = recordingStore();
    await renewal({ store, owner: 'me', leaseMs: 10_000, ids: () => ids(600), chunk: 256 }).renewNow();
    expect(calls.map((c) => c.ids.length)).toEqual([256, 256, 88]);
    expect(calls.flatMap((c) => c.ids)).toEqual(ids(600));
  });

  it('runs each chunk’s lease from when that chunk is written', async () => {
    // Chunks 40 ms apart: a lease computed once per renewal would end 40 and 80 ms early.
    const { store, calls } = recordingStore(40);
    await renewal({ store, owner: 'me', leaseMs: 10_000, ids: () => ids(6), chunk: 2 }).renewNow();
    expect(calls).toHaveLength(3);
    expect(calls[2]!.at - calls[0]!.at).toBeGreaterThanOrEqual(70);
    // The store reads the clock just after the renewal did: a millisecond may have passed.
    for (const c of calls) expect(c.until).toBeGreaterThanOrEqual(c.at + 10_000 - 5);
  });

  it('renews every third of a lease, not more often', async () => {
    const { store, calls } = recordingStore();
    const started = Date.now();
    // Every 100 ms.
    renewal({ store, owner: 'me', leaseMs: 300, ids: () => ids(1), chunk: 1 }).start();
    await sleep(350);
    const elapsed = Date.now() - started;
    expect(calls.length).toBeGreaterThanOrEqual(2);
    expect(calls.length).toBeLessThanOrEqual(Math.floor(elapsed / 100));
    expect(calls[0]!.at - started).toBeGreaterThanOrEqual(95);
    for (let i = 1; i < calls.length; i++) expect(calls[i]!.at - calls[i - 1]!.at).toBeGreaterThanOrEqual(95);
  });

  it('a renewal asked for while one is under way is that one: each id is sent once', async () => {
    const { store, calls } = recordingStore(10);
    const r = renewal({ store, owner: 'me', leaseMs: 10_000, ids: () => ids(5), chunk: 2 });
    const first = r.renewNow();
    expect(r.renewNow()).toBe(first);
    await first;
    expect(calls.flatMap((c) => c.ids)).toEqual(ids(5));
  });

  it('gives the event loop a turn between chunks, even when the store settles at once', async () => {
    const { store, calls } = recordingStore();
    let callsWhenTurned = -1;
    setImmediate(() => (callsWhenTurned = calls.length));
    await renewal({ store, owner: 'me', leaseMs: 10_000, ids: () => ids(1000), chunk: 100 }).renewNow();
    expect(calls).toHaveLength(10);
    // The callback ran after the first chunk was sent and before the last.
    expect(callsWhenTurned).toBeGreaterThanOrEqual(1);
    expect(callsWhenTurned).toBeLessThan(10);
  });

  it('renews every third of a lease, and a renewal slower than that never overlaps the next', async () => {
    const { store, calls, maxInFlight } = recordingStore(50);
    // Every 20 ms; each renewal takes 2 × 50 ms.
    renewal({ store, owner: 'me', leaseMs: 60, ids: () => ids(4), chunk: 2 }).start();
    await sleep(600);
    expect(maxInFlight()).toBe(1);
    // Renewals followed each other: at least three whole ones, each of its two chunks.
    expect(calls.length).toBeGreaterThanOrEqual(6);
    for (let i = 0; i + 1 < calls.length; i += 2) expect([...calls[i]!.ids, ...calls[i + 1]!.ids]).toEqual(ids(4));
  });

  it('goes on past a chunk the store refuses or throws on, and keeps renewing', async () => {
    const unhandled: unknown[] = [];
    const onUnhandled = (e: unknown) => unhandled.push(e);
    process.on('unhandledRejection', onUnhandled);
    try {
      // Every renewal's first two chunks fail: s0's rejects, s2's throws.
      const { store, calls } = recordingStore(0, (c) => c.ids[0] !== 's4');
      renewal({ store, owner: 'me', leaseMs: 90, ids: () => ids(6), chunk: 2 }).start();
      await sleep(200);
      expect(calls.length).toBeGreaterThanOrEqual(6);
      expect(calls.slice(0, 6).map((c) => c.ids[0])).toEqual(['s0', 's2', 's4', 's0', 's2', 's4']);
      expect(unhandled).toEqual([]);
    } finally {
      process.off('unhandledRejection', onUnhandled);
    }
  });

  it('sends nothing once stopped, not even the rest of a renewal under way, and does not start again', async () => {
    const { store, calls } = recordingStore(30);
    const r = renewal({ store, owner: 'me', leaseMs: 60, ids: () => ids(6), chunk: 2 });
    const renewing = r.renewNow();
    await sleep(10);
    r.stop();
    await renewing;
    expect(calls).toHaveLength(1);
    r.start();
    await sleep(100);
    expect(calls).toHaveLength(1);
  });

  it('sends nothing after a stop made between two chunks', async () => {
    const { store, calls } = recordingStore();
    const r = renewal({ store, owner: 'me', leaseMs: 10_000, ids: () => ids(6), chunk: 2 });
    const renewing = r.renewNow();
    // Runs in the turn the renewal gives the event loop after its first chunk.
    setImmediate(() => r.stop());
    await renewing;
    expect(calls).toHaveLength(1);
  });
});

describe('a runtime with many passivated swarms', () => {
  let dir: string | undefined;
  afterEach(() => {
    if (dir) rmSync(dir, { recursive: true, force: true });
    dir = undefined;
  });

  it('renews the leases of all of them, in chunks, and its adoption scans do not list them', async () => {
    dir = mkdtempSync(join(tmpdir(), 'xswarm-renewal-'));
    const sqlite = sqliteStore(join(dir, 'state.db'), { synchronous: 'NORMAL' });
    const renewed: string[][] = [];
    const scanned: number[] = [];
    const store: SwarmStore = Object.assign(Object.create(null), sqlite, {
      renew: (owner: string, swarmIds: readonly string[], until: number) => {
        renewed.push([...swarmIds]);
        return sqlite.renew(owner, swarmIds, until);
      },
      list: async (filter: SwarmFilter) => {
        const listed = await sqlite.list(filter);
        scanned.push(listed.length);
        return listed;
      },
    });
    const swarm = defineSwarm({ id: 'asker', instructions: 'Ask which day.' });
    const count = RENEW_CHUNK + 44;
    const leaseMs = 600;
    const rt = createRuntime({ swarms: [swarm], model: askerModel(), store, passivateAfterMs: 20, leaseMs });
    try {
      // Started: it also scans the store for swarms to adopt, every half lease.
      await rt.start();
      await Promise.all(
        ids(count).map(async (id) => {
          const client = rt.forSwarm(swarm, id);
          await client.run('Book a day.');
          expect((await client.wait()).status).toBe('paused');
        }),
      );
      await until('every swarm passivated', () => rt.stats().passivated >= count, { timeout: 5_000 });
      expect(rt.stats().passivated).toBe(count);
      renewed.length = 0;
      scanned.length = 0;
      // Over a whole lease: at least one renewal of every swarm, in chunks.
      await sleep(leaseMs + 100);
      expect(renewed.length).toBeGreaterThanOrEqual(2);
      for (const chunk of renewed) expect(chunk.length).toBeLessThanOrEqual(RENEW_CHUNK);
      expect(new Set(renewed.flat())).toEqual(new Set(ids(count)));
      // And the store holds each lease past the time they would have lapsed unrenewed.
      const listed = await sqlite.list({ status: ['paused'] });
      expect(listed).toHaveLength(count);
      for (const s of listed) expect(s.lease?.until).toBeGreaterThan(Date.now());
      // Its scans ran and read none of the swarms it holds.
      expect(scanned.length).toBeGreaterThanOrEqual(1);
      expect(scanned).toEqual(scanned.map(() => 0));
    } finally {
      await rt.close();
      await sqlite.close();
    }
  });
});
