/**
 * The in-memory store: for tests and for runtimes that need no durability.
 *
 * @module
 */
import type { SwarmEvent } from '../../machines/events.js';
import { isFinal } from '../result.js';
import { type Commit, RevisionConflictError, type SwarmRecord, type SwarmStore } from './types.js';

/**
 * Creates an in-memory store. Records keep the snapshot object as is (snapshots are never
 * mutated), so a write costs no serialization. Share one store between runtimes to simulate
 * a restart in a test.
 *
 * @example
 * const store = memoryStore();
 * const runtime = createRuntime({ swarms, model, store });
 */
export function memoryStore(): SwarmStore {
  const records = new Map<string, SwarmRecord>();
  const logs = new Map<string, SwarmEvent[]>();
  return {
    async load(swarmId) {
      return records.get(swarmId);
    },
    commit({ swarmId, events, record }) {
      let log = logs.get(swarmId);
      if (!log) logs.set(swarmId, (log = []));
      const first = events[0];
      if (first && first.seq !== log.length + 1) {
        throw new Error(`Event gap for swarm "${swarmId}": expected seq ${log.length + 1}, got ${first.seq}`);
      }
      if (record) {
        const stored = records.get(swarmId)?.revision ?? 0;
        if (record.revision !== stored + 1) throw new RevisionConflictError(swarmId, record.revision - 1, stored);
        records.set(swarmId, record);
      }
      for (const e of events) log.push(e);
    },
    async readEvents(swarmId, since) {
      return (logs.get(swarmId) ?? []).slice(Math.max(0, since));
    },
    async listUnfinished() {
      return [...records.values()].filter((r) => !isFinal(r.status));
    },
    async close() {},
  } satisfies SwarmStore & { commit(c: Commit): void };
}
