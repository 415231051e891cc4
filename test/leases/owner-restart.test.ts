/**
 * A restarted process reclaims the swarms of its dead predecessor at once: leases record the
 * holder's host and pid, and a holder of this host whose process is gone is not waited out. A
 * live holder (two processes on one store on purpose) still keeps its swarms for its whole lease.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createRuntime, memoryStore, type Runtime, sqliteStore } from '../../src/index.js';
import type { SwarmStore } from '../../src/store/types.js';
import { exited, firstLine, killAll, runFixture, startFixture, W1_FIXTURE } from '../support/crash-process.js';
import { memoryEffects, readLines, stepLabel, W1_CALLS, W1_RESULT, w1Definitions, w1Model } from '../support/crash-w1.js';
import { sleep } from '../support/sleep.js';
import { until } from '../support/wait.js';

let dir: string;
let db: string;
let effects: string;
const closers: (() => Promise<void>)[] = [];

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'xswarm-owner-'));
  db = join(dir, 'state.db');
  effects = join(dir, 'effects.txt');
});
afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close().catch(() => undefined);
  rmSync(dir, { recursive: true, force: true });
});
afterAll(killAll);

function row(swarmId: string) {
  const raw = new Database(db, { readonly: true });
  try {
    return raw.prepare(`SELECT owner, lease_until, owner_host, owner_pid FROM swarms WHERE swarm_id = ?`).get(swarmId) as {
      owner: string;
      lease_until: number;
      owner_host: string;
      owner_pid: number;
    };
  } finally {
    raw.close();
  }
}

/** A W1 runtime on the test's file with default options but `leaseMs`. */
function w1Runtime(leaseMs?: number): { runtime: Runtime; model: ReturnType<typeof w1Model>; effects: ReturnType<typeof memoryEffects> } {
  const store = sqliteStore(db);
  const memory = memoryEffects();
  const { planner, agents } = w1Definitions(memory);
  const model = w1Model();
  const runtime = createRuntime({ swarms: [planner], agents, model, store, ...(leaseMs ? { leaseMs } : {}) });
  closers.push(
    () => store.close(),
    () => runtime.close(),
  );
  return { runtime, model, effects: memory };
}

/** Starts the W1 fixture (default owner, 15 s lease) holding at the calendar agent's answer. */
async function holdingChild(swarmId: string) {
  const child = startFixture(W1_FIXTURE, [db, effects, swarmId, 'hold'], { HOLD_AT: 'calendar-agent#1' });
  const held = await firstLine<{ held: string; pid: number }>(child);
  expect(held.held).toBe('calendar-agent#1');
  return { child, pid: held.pid };
}

describe('restart on the same store', () => {
  it('the lease names its holder: owner unique per process, host and pid recorded', async () => {
    const { child, pid } = await holdingChild('named');
    const lease = row('named');
    expect(lease.owner_pid).toBe(pid);
    expect(lease.owner_host).toEqual(expect.any(String));
    expect(lease.owner).toContain(`:${pid}:`);
    // The listing carries the same lease.
    const { runtime } = w1Runtime();
    const [summary] = await runtime.list();
    expect(summary?.lease).toEqual({ owner: lease.owner, until: expect.any(Number), host: lease.owner_host, pid });
    child.kill('SIGKILL');
    await exited(child);
  });

  it('after kill -9, a new process with default options resumes the swarm at once, not after the 15 s lease', async () => {
    const { child } = await holdingChild('crashed');
    const { lease_until: leaseUntil } = row('crashed');
    expect(leaseUntil - Date.now()).toBeGreaterThan(10_000);
    child.kill('SIGKILL');
    await exited(child);

    // A real process, as `xswarm serve` restarting: default owner and lease.
    const started = Date.now();
    const resumed = await runFixture(W1_FIXTURE, [db, effects, 'crashed', 'resume']);
    expect(resumed.code, resumed.stderr).toBe(0);
    expect(JSON.parse(resumed.stdout.trim()).result).toEqual({ status: 'completed', result: W1_RESULT });
    expect(Date.now()).toBeLessThan(leaseUntil);
    expect(Date.now() - started).toBeLessThan(10_000);
    // Every side effect once.
    expect(readLines(effects)).toEqual([
      'crashed:t1:h0:weather-agent:t1:t_weather',
      'crashed:t2:h1:calendar-agent:t1:t_calendar',
      'crashed:t3:h2:allergen-agent:t1:t_allergen',
    ]);
  });

  it('a second live process cannot take the swarm; once the holder dies it adopts within a second', async () => {
    const { child, pid } = await holdingChild('shared');
    const holder = row('shared').owner;
    // This process is the second one: default owner, and a short lease so that its adoption
    // scan runs every 150 ms during the test.
    const { runtime, model, effects: memory } = w1Runtime(300);
    await runtime.start();
    await sleep(1_200);
    expect(model.calls('shared')).toEqual([]);
    expect(row('shared')).toMatchObject({ owner: holder, owner_pid: pid });
    await expect(runtime.forSwarm('planner', 'shared').pause('mine now')).rejects.toMatchObject({ code: 'not-live' });

    child.kill('SIGKILL');
    await exited(child);
    const killed = Date.now();
    const client = runtime.forSwarm('planner', 'shared');
    // `wait()` answers from the store until this runtime adopted the swarm.
    const result = await until(
      'the swarm to end',
      () => client.wait(),
      (r) => r.status !== 'running',
      { timeout: 5_000, interval: 20 },
    );
    expect(result).toEqual({ status: 'completed', result: W1_RESULT });
    expect(Date.now() - killed).toBeLessThan(2_000);
    // It ran the rest of the swarm, from the step the dead holder was in.
    expect(model.calls('shared')).toEqual(W1_CALLS.slice(5));
    expect([...readLines(effects), ...memory.keys()]).toEqual([
      'shared:t1:h0:weather-agent:t1:t_weather',
      'shared:t2:h1:calendar-agent:t1:t_calendar',
      'shared:t3:h2:allergen-agent:t1:t_allergen',
    ]);
    expect(row('shared').owner).not.toBe(holder);
  });

  it('a live holder in this very process (another runtime) is not taken over either', async () => {
    const a = w1Runtime();
    const held = w1Model({ hold: (req) => stepLabel(req) === 'weather-agent#0' });
    const store = sqliteStore(db);
    const { planner, agents } = w1Definitions(memoryEffects());
    const first = createRuntime({ swarms: [planner], agents, model: held, store });
    closers.push(
      () => store.close(),
      () => first.close(),
    );
    await first.forSwarm(planner, 'local').run('Plan my Saturday');
    await held.held;
    await a.runtime.start();
    await sleep(300);
    expect(a.model.calls('local')).toEqual([]);
    expect(row('local').owner_pid).toBe(process.pid);
  });
});

describe('claim with takeover', () => {
  /** A running swarm `s1` whose lease `owner` holds for the next minute. */
  function heldBy(store: SwarmStore, owner: string) {
    const now = Date.now();
    store.commit({
      swarmId: 's1',
      events: [],
      lease: { owner, until: now + 60_000, host: 'h', pid: 1 },
      record: {
        swarmId: 's1',
        definitionId: 'planner',
        definitionVersion: 1,
        machineVersion: 1,
        status: 'running',
        revision: 1,
        snapshot: {},
        result: { status: 'running', currentTurn: 0, maxTurns: 10 },
        lastSeq: 0,
        updatedAt: now,
      },
    });
    return now;
  }

  for (const [name, open] of [
    ['memory', () => memoryStore()],
    ['sqlite', () => sqliteStore(db)],
  ] as const) {
    it(`${name}: takes a live lease from the named (dead) owner only, compare-and-set`, async () => {
      const store = open();
      closers.push(() => store.close());
      const now = heldBy(store, 'dead');
      const mine = { owner: 'me', until: now + 60_000, host: 'h', pid: 2 };
      expect(await store.claim('s1', mine, now)).toBe(false);
      // Someone else took it meanwhile: naming the dead owner no longer takes it.
      expect(await store.claim('s1', { owner: 'other', until: now + 60_000 }, now, 'dead')).toBe(true);
      expect(await store.claim('s1', mine, now, 'dead')).toBe(false);
      expect(await store.claim('s1', mine, now, 'other')).toBe(true);
      const [summary] = await store.list();
      expect(summary?.lease).toEqual(mine);
    });
  }
});
