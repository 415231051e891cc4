/**
 * Reading a swarm's record from JetStream: `load` (the record with its snapshot whole, its
 * message lists read back from their rows and from the outbox not published yet) and `summary`
 * (the record without the snapshot: one KV get, or none for a finished swarm seen here).
 *
 * @module
 */
import { isFinal } from '../result.js';
import type { SwarmRecord, SwarmSummary } from '../types.js';
import type { MessageLists } from './lists.js';
import type { Names } from './names.js';
import { unavailable } from './outage.js';
import { toRecord, toSummary } from './records.js';
import type { RecentValues, Seen } from './seen.js';
import type { Setup } from './setup.js';

/** Loads records and summaries (see `SwarmStore.load`, `summary`). */
export class Loader {
  constructor(
    private readonly setup: Setup,
    private readonly names: Names,
    private readonly seen: Seen,
    private readonly recent: RecentValues,
    private readonly lists: MessageLists,
  ) {}

  /** The record of `swarmId` with its snapshot's message lists put back, and its lease; undefined when there is none. */
  async load(swarmId: string): Promise<SwarmRecord | undefined> {
    try {
      const r = await this.setup.ready();
      for (let attempt = 0; ; attempt++) {
        const cur = await this.seen.read(r.kv, swarmId);
        if (!cur.decoded) return undefined;
        if (!cur.decoded.value) return toRecord(swarmId, cur.decoded, cur.at);
        const lists = await this.lists.read(r.ctx, swarmId, cur.decoded.value, cur.rev);
        // Written meanwhile: the rows read may be the next commit's; read both again.
        const again = await r.kv.get(this.names.key(swarmId));
        if ((again?.revision ?? 0) !== cur.rev && attempt < 5) continue;
        const record = toRecord(swarmId, cur.decoded, cur.at, lists);
        // The holder, so that a command can be sent to it.
        const lease = cur.decoded.value.lease;
        return lease ? { ...record, lease: { ...lease } } : record;
      }
    } catch (e) {
      throw unavailable(e);
    }
  }

  /** The summary of `swarmId` (its record without the snapshot); undefined when there is none. */
  async summary(swarmId: string): Promise<SwarmSummary | undefined> {
    // A final swarm's result does not change: the latest value seen here answers.
    const seen = this.recent.get(swarmId);
    if (seen && isFinal(seen.value.record.status)) return toSummary(swarmId, { value: seen.value }, seen.at);
    try {
      const cur = await this.seen.read((await this.setup.ready()).kv, swarmId);
      return cur.decoded ? toSummary(swarmId, cur.decoded, cur.at) : undefined;
    } catch (e) {
      throw unavailable(e);
    }
  }
}
