/**
 * Builders for store tests: events, records and commits with fixed, predictable contents, so
 * that every store (SQLite, JetStream) is held to the same contract with the same data.
 */
import type { Commit, SwarmEvent, SwarmRecord, SwarmStatus } from '../../src/index.js';

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
    result:
      status === 'completed'
        ? { status: 'completed', result: `done ${swarmId}` }
        : { status: 'running', currentTurn: revision, maxTurns: 10 },
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
