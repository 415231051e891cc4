/**
 * Builders for store tests: events, records and commits with fixed, predictable contents, so
 * that every store (SQLite, JetStream, memory) is held to the same contract with the same data;
 * and contract checks run on each store.
 */
import { expect } from 'vitest';
import type { Commit, SwarmEvent, SwarmRecord, SwarmStatus } from '../../src/index.js';
import type { SwarmFilter, SwarmStore } from '../../src/store/types.js';

/** The fixed clock the builders stamp times from, so timestamps are predictable. */
export const T0 = 1_700_000_000_000;

/** A status-update event of `swarmId` at `seq`, carrying `text` so tests can tell events apart. */
export function event(swarmId: string, seq: number, text = `e${seq}`): SwarmEvent {
  return {
    kind: 'status-update',
    taskId: swarmId,
    contextId: swarmId,
    status: { state: 'working', timestamp: new Date(T0 + seq).toISOString() },
    final: false,
    metadata: { type: 'resumed', message: text },
    seq,
    swarmId,
  };
}

/** The record of `swarmId` at `revision`, with events up to `lastSeq`; `over` replaces any field. */
export function record(swarmId: string, revision: number, lastSeq: number, over: Partial<SwarmRecord> = {}): SwarmRecord {
  const status: SwarmStatus = over.status ?? 'running';
  return {
    swarmId,
    definitionId: 'planner',
    definitionVersion: 1,
    machineVersion: 1,
    status,
    revision,
    snapshot: { status: 'active', value: { running: 'thinking' }, context: { turn: revision }, children: {} },
    result: status === 'completed' ? { status: 'completed', result: `done ${swarmId}` } : { status: 'running', currentTurn: revision, maxTurns: 10 },
    lastSeq,
    updatedAt: T0 + revision,
    ...over,
  };
}

/** A commit of events `from..to` with the record at `revision`, leased to `owner` for a minute. */
export function step(swarmId: string, revision: number, from: number, to: number, owner = 'A', over: Partial<SwarmRecord> = {}): Commit {
  const events = [];
  for (let s = from; s <= to; s++) events.push(event(swarmId, s));
  return { swarmId, events, record: record(swarmId, revision, to, over), lease: { owner, until: Date.now() + 60_000 } };
}

/**
 * The `notHeldBy` listing filter, the same on every store: it leaves out exactly the swarms
 * whose lease the owner holds past the given time (held by another owner, by nobody, or no
 * longer held: listed), and composes with the status filter.
 */
export async function expectNotHeldByFilter(store: SwarmStore): Promise<void> {
  await store.commit(step('mine', 1, 1, 1, 'A'));
  await store.commit(step('theirs', 1, 1, 1, 'B'));
  await store.commit(step('lapsing', 1, 1, 1, 'A'));
  await store.commit(step('released', 1, 1, 1, 'A'));
  await store.commit(step('paused', 1, 1, 1, 'A', { status: 'paused' }));
  await store.commit(step('done', 1, 1, 1, 'C', { status: 'completed' }));
  await store.release('A', ['released']);
  const soon = Date.now() + 1_000;
  await store.renew('A', ['lapsing'], soon);
  const ids = async (filter: SwarmFilter) => (await store.list(filter)).map((s) => s.swarmId).sort();
  expect(await ids({ notHeldBy: { owner: 'A', at: Date.now() } })).toEqual(['done', 'released', 'theirs']);
  // At the lapsing lease's end it is no longer held.
  expect(await ids({ notHeldBy: { owner: 'A', at: soon } })).toEqual(['done', 'lapsing', 'released', 'theirs']);
  expect(await ids({ notHeldBy: { owner: 'B', at: Date.now() } })).toEqual(['done', 'lapsing', 'mine', 'paused', 'released']);
  expect(await ids({ status: ['running', 'paused'], notHeldBy: { owner: 'A', at: Date.now() } })).toEqual(['released', 'theirs']);
  // Without it, every swarm is listed.
  expect(await ids({})).toEqual(['done', 'lapsing', 'mine', 'paused', 'released', 'theirs']);
}
