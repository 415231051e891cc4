/**
 * The in-memory store: for tests and for runtimes that need no durability.
 *
 * @module
 */
import type { SwarmEvent } from '../../machines/events.js';
import { isFinal } from './result.js';
import { assembleSnapshot } from './messages.js';
import { memoryLedger } from './budgets.js';
import { memoryPushOutbox } from './push-outbox.js';
import { type Commit, labelMatches, type Lease, LeaseLostError, leftOutBy, RevisionConflictError, type SwarmRecord, type SwarmStore } from './types.js';

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
  /** Everything stored of each swarm, in one entry: a commit looks it up once. */
  const swarms = new Map<string, Stored>();
  return {
    volatile: true,
    budgets: memoryLedger(),
    pushOutbox: memoryPushOutbox(),
    async load(swarmId) {
      const entry = swarms.get(swarmId);
      const stored = entry?.record;
      if (!entry || !stored) return undefined;
      const lease = entry.lease;
      const record = lease ? { ...stored, lease: { ...lease } } : stored;
      if (record.snapshot === undefined) return record;
      return { ...record, snapshot: assembleSnapshot(record.snapshot, entry.lists ?? new Map()) };
    },
    commit({ swarmId, events, record, lease, messages }: Commit) {
      let entry = swarms.get(swarmId);
      const log = entry?.log ?? [];
      const first = events[0];
      if (first && first.seq !== log.length + 1) {
        throw new Error(`Event gap for swarm "${swarmId}": expected seq ${log.length + 1}, got ${first.seq}`);
      }
      if (record) {
        const stored = entry?.record?.revision ?? 0;
        const holder = entry?.lease;
        if (record.revision > 1 && lease && holder && holder.owner !== lease.owner) throw new LeaseLostError(swarmId, holder.owner);
        if (record.revision !== stored + 1) throw new RevisionConflictError(swarmId, record.revision - 1, stored);
      }
      if (!entry) swarms.set(swarmId, (entry = { log }));
      if (record) {
        entry.record = record;
        if (lease) entry.lease = { ...lease };
        if (messages && messages.length > 0) {
          const own = (entry.lists ??= new Map());
          for (const { list, from, items } of messages) {
            const rows = own.get(list) ?? [];
            rows.length = Math.min(rows.length, from);
            for (const m of items) rows.push(m);
            if (rows.length > 0) own.set(list, rows);
            else own.delete(list);
          }
        }
      }
      for (const e of events) log.push(e);
    },
    async readEvents(swarmId, since, limit) {
      // The event of seq n is at index n - 1.
      const from = Math.max(0, since);
      return (swarms.get(swarmId)?.log ?? []).slice(from, limit === undefined ? undefined : from + limit);
    },
    async list(filter = {}) {
      const records: SwarmRecord[] = [];
      for (const { record, lease } of swarms.values()) if (record && !leftOutBy(filter.notHeldBy, lease)) records.push(record);
      return records
        .filter(
          (r) =>
            (!filter.definitionId || r.definitionId === filter.definitionId) && (!filter.status || filter.status.includes(r.status)) && labelMatches(filter, r.label),
        )
        .sort((a, b) => b.updatedAt - a.updatedAt)
        .slice(0, filter.limit ?? Infinity)
        .map(({ snapshot: _s, ...summary }) => {
          const lease = swarms.get(summary.swarmId)?.lease;
          return lease ? { ...summary, lease: { ...lease } } : summary;
        });
    },
    async claim(swarmId, lease, now, takeover) {
      const entry = swarms.get(swarmId);
      const record = entry?.record;
      if (!entry || !record || isFinal(record.status)) return false;
      const holder = entry.lease;
      if (holder && holder.owner !== lease.owner && holder.owner !== takeover && holder.until > now) return false;
      entry.lease = { ...lease };
      return true;
    },
    async renew(owner, swarmIds, until) {
      for (const id of swarmIds) {
        const holder = swarms.get(id)?.lease;
        if (holder?.owner === owner) holder.until = until;
      }
    },
    async release(owner, swarmIds) {
      for (const id of swarmIds) {
        const entry = swarms.get(id);
        if (entry?.lease?.owner === owner) entry.lease = undefined;
      }
    },
    async prune(olderThan) {
      let n = 0;
      for (const [id, { record: r }] of swarms) {
        if (r && isFinal(r.status) && r.updatedAt < olderThan) {
          swarms.delete(id);
          n++;
        }
      }
      return n;
    },
    async remove(swarmIds) {
      let n = 0;
      for (const id of swarmIds) {
        const r = swarms.get(id)?.record;
        if (r && isFinal(r.status) && swarms.delete(id)) n++;
      }
      return n;
    },
    async close() {},
  };
}

/** What the memory store holds of one swarm. */
interface Stored {
  /** Its record, from the first commit that had one. */
  record?: SwarmRecord;
  lease?: Lease | undefined;
  /** Its events: the event of seq n at index n - 1. */
  log: SwarmEvent[];
  /** Its message lists, by list id (records reference them, as in the SQLite store). */
  lists?: Map<string, unknown[]> | undefined;
}
