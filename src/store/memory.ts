/**
 * The in-memory store: for tests and for runtimes that need no durability.
 *
 * @module
 */
import type { SwarmEvent } from '../../machines/events.js';
import { isFinal } from '../result.js';
import { assembleSnapshot } from './messages.js';
import { type Commit, type Lease, LeaseLostError, RevisionConflictError, type SwarmRecord, type SwarmStore } from './types.js';

/**
 * Creates an in-memory store. It is volatile: a swarm's snapshot is written when the swarm
 * ends or its runtime closes (records keep the snapshot object as is, never serialized).
 * Share one store between runtimes to simulate a restart after `close()` in a test.
 *
 * @example
 * import { createRuntime, memoryStore } from 'xswarm';
 * const store = memoryStore();
 * const runtime = createRuntime({ swarms, model, store });
 */
export function memoryStore(): SwarmStore {
  const records = new Map<string, SwarmRecord>();
  const leases = new Map<string, Lease>();
  const logs = new Map<string, SwarmEvent[]>();
  /** Each swarm's message lists, by list id (records reference them, as in the SQLite store). */
  const lists = new Map<string, Map<string, unknown[]>>();
  return {
    volatile: true,
    async load(swarmId) {
      const stored = records.get(swarmId);
      const lease = leases.get(swarmId);
      const record = stored && lease ? { ...stored, lease: { ...lease } } : stored;
      if (record?.snapshot === undefined) return record;
      return { ...record, snapshot: assembleSnapshot(record.snapshot, lists.get(swarmId) ?? new Map()) };
    },
    commit({ swarmId, events, record, lease, messages }: Commit) {
      const log = logs.get(swarmId) ?? [];
      const first = events[0];
      if (first && first.seq !== log.length + 1) {
        throw new Error(`Event gap for swarm "${swarmId}": expected seq ${log.length + 1}, got ${first.seq}`);
      }
      if (record) {
        const stored = records.get(swarmId)?.revision ?? 0;
        const holder = leases.get(swarmId);
        if (record.revision > 1 && lease && holder && holder.owner !== lease.owner) throw new LeaseLostError(swarmId, holder.owner);
        if (record.revision !== stored + 1) throw new RevisionConflictError(swarmId, record.revision - 1, stored);
        records.set(swarmId, record);
        if (lease) leases.set(swarmId, { ...lease });
        if (messages && messages.length > 0) {
          let own = lists.get(swarmId);
          if (!own) lists.set(swarmId, (own = new Map()));
          for (const { list, from, items } of messages) {
            const rows = own.get(list) ?? [];
            rows.length = Math.min(rows.length, from);
            for (const m of items) rows.push(m);
            if (rows.length > 0) own.set(list, rows);
            else own.delete(list);
          }
        }
      }
      logs.set(swarmId, log);
      for (const e of events) log.push(e);
    },
    async readEvents(swarmId, since, limit) {
      // The event of seq n is at index n - 1.
      const from = Math.max(0, since);
      return (logs.get(swarmId) ?? []).slice(from, limit === undefined ? undefined : from + limit);
    },
    async list(filter = {}) {
      return [...records.values()]
        .filter((r) => (!filter.definitionId || r.definitionId === filter.definitionId) && (!filter.status || filter.status.includes(r.status)))
        .sort((a, b) => b.updatedAt - a.updatedAt)
        .slice(0, filter.limit ?? Infinity)
        .map(({ snapshot: _s, ...summary }) => {
          const lease = leases.get(summary.swarmId);
          return lease ? { ...summary, lease: { ...lease } } : summary;
        });
    },
    async claim(swarmId, lease, now, takeover) {
      const record = records.get(swarmId);
      if (!record || isFinal(record.status)) return false;
      const holder = leases.get(swarmId);
      if (holder && holder.owner !== lease.owner && holder.owner !== takeover && holder.until > now) return false;
      leases.set(swarmId, { ...lease });
      return true;
    },
    async renew(owner, swarmIds, until) {
      for (const id of swarmIds) {
        const holder = leases.get(id);
        if (holder?.owner === owner) holder.until = until;
      }
    },
    async release(owner, swarmIds) {
      for (const id of swarmIds) if (leases.get(id)?.owner === owner) leases.delete(id);
    },
    async prune(olderThan) {
      let n = 0;
      for (const [id, r] of records) {
        if (isFinal(r.status) && r.updatedAt < olderThan) {
          records.delete(id);
          logs.delete(id);
          lists.delete(id);
          leases.delete(id);
          n++;
        }
      }
      return n;
    },
    async close() {},
  };
}
