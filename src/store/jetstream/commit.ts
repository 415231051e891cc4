/**
 * Committing a swarm's step to JetStream (the protocol is described at `jetstreamStore`): a commit
 * with a record is one compare-and-set KV update whose value holds the record, the lease and
 * the commit's outbox, then the outbox's one publish (see `./batch.ts`), in the background: the
 * swarm's next write awaits it (see `./outbox.ts`); a commit
 * without a record publishes its events (one message) after any outbox of the swarm not known
 * to be published. A record is
 * refused as the SQLite store refuses it (a new swarm that exists, a lease another owner holds,
 * a revision that does not follow the stored one).
 *
 * @module
 */
import { nextListLengths } from '../messages.js';
import { type Commit, LeaseLostError, RevisionConflictError, type StoreStats } from '../types.js';
import type { Outages } from './outage.js';
import type { OutboxPublisher } from './outbox.js';
import { RECORD_FORMAT, type StoredValue } from './records.js';
import type { Known, Seen } from './seen.js';
import type { Broker, Setup } from './setup.js';
import type { KeyWriter } from './writer.js';

/** Writes commits, one at a time per swarm, waiting through outages. */
export class Committer {
  /** Commits written (acknowledged), each in a transaction of its own. */
  readonly stats: StoreStats = { commits: 0, transactions: 0 };

  constructor(
    private readonly setup: Setup,
    private readonly writer: KeyWriter,
    private readonly seen: Seen,
    private readonly outbox: OutboxPublisher,
    private readonly outages: Outages,
  ) {}

  /**
   * Writes `c`; resolves once its KV update is acknowledged (its outbox's publish follows, before
   * the swarm's next write), or for a commit without a record once its events' publish is.
   */
  commit(c: Commit): Promise<void> {
    const p = (async () => {
      const what = `Commit of swarm "${c.swarmId}"`;
      // While NATS is unreachable at the start too, the commit waits for it. An opened broker
      // stays open until the store closes: it is not asked for again at every commit.
      const r = this.setup.opened ?? (await this.outages.retry(what, () => this.setup.ready()));
      await this.writer.locked(c.swarmId, () => (c.record ? this.commitRecord(r, c, what) : this.commitEvents(r, c, what)));
      this.stats.commits++;
      this.stats.transactions++;
    })();
    return this.writer.track(p);
  }

  private async commitRecord(r: Broker, c: Commit, what: string): Promise<void> {
    // A new swarm's first record is written as a create, without reading the key first.
    const written = await this.writer.update(r, c.swarmId, what, (cur) => nextValue(c, cur), c.record!.revision === 1);
    const value = written?.decoded?.value;
    const outbox = value?.outbox;
    if (!written || !value || !outbox) return;
    let retry = false;
    // The commit is durable (its outbox is in the value): the publish goes on in the background,
    // and the swarm's next write waits for it (see OutboxPublisher.inBackground).
    const publishing = this.outages
      .retry(what, async () => {
        // A retry after the value was replaced: its next writer published this outbox first.
        if (retry && (await this.seen.read(r.kv, c.swarmId)).rev !== written.rev) return;
        retry = true;
        await this.outbox.publish(r.ctx, c.swarmId, outbox, written.rev, value.record.lastSeq);
      })
      .then(() => {
        written.published = true;
        // A re-read meanwhile remembered the same revision as another object.
        const now = this.seen.get(c.swarmId);
        if (now?.rev === written.rev) now.published = true;
      });
    this.writer.track(this.outbox.inBackground(c.swarmId, publishing));
  }

  private async commitEvents(r: Broker, c: Commit, what: string): Promise<void> {
    await this.outbox.settled(c.swarmId);
    await this.outages.retry(what, async () => {
      // The record's outbox first, so the stream keeps the events in order.
      const cur = this.seen.get(c.swarmId);
      const value = cur?.decoded?.value;
      if (cur && !cur.published && value?.outbox) {
        await this.outbox.publish(r.ctx, c.swarmId, value.outbox, cur.rev, value.record.lastSeq);
        cur.published = true;
      }
      await this.outbox.events(r.ctx, c.swarmId, c.events);
    });
  }
}

/**
 * The value commit `c` (with a record) writes over `cur`: its record, the writer's lease, its
 * outbox and the stored lengths of the swarm's message lists. Throws when the commit is refused.
 */
function nextValue(c: Commit, cur: Known): Omit<StoredValue, 'w'> {
  const record = c.record!;
  const refused = refusal(c, cur);
  if (refused) throw refused;
  const { lease: _l, problem: _p, ...rest } = record;
  const held = cur.decoded?.value?.lease;
  // As in the SQLite store: the writer's lease is extended, never shortened.
  const lease = c.lease ? { ...c.lease, until: Math.max(c.lease.until, held?.owner === c.lease.owner ? held.until : 0) } : held;
  const stored = record.revision === 1 ? undefined : cur.decoded?.value?.lists;
  // No `fresh` lists: a commit message's list writes are applied in order, so a rewrite
  // replaces what came before it without a purge (see `./lists.ts`).
  const outbox = c.events.length > 0 || (c.messages?.length ?? 0) > 0 ? { events: c.events, messages: c.messages ?? [] } : undefined;
  const lists: { lengths?: Record<string, number>; bad?: string } = c.messages?.length ? nextListLengths(stored, c.messages) : { lengths: stored };
  // The writer is wrong about what is stored: nothing of the step is written.
  if (lists.bad) throw new Error(`Swarm "${c.swarmId}": ${lists.bad}`);
  return {
    v: RECORD_FORMAT,
    record: rest,
    ...(lease ? { lease } : {}),
    ...(outbox ? { outbox } : {}),
    ...(lists.lengths && Object.keys(lists.lengths).length > 0 ? { lists: lists.lengths } : {}),
  };
}

/** Why `commit` may not replace `cur`: the same checks, in the same order, as the SQLite store. */
function refusal(c: Commit, cur: Known): Error | undefined {
  const r = c.record!;
  const stored = cur.decoded ? (cur.decoded.value?.record.revision ?? 0) : 0;
  const holder = cur.decoded?.value?.lease?.owner;
  if (r.revision === 1) return cur.decoded ? new RevisionConflictError(r.swarmId, 0, stored) : undefined;
  if (cur.decoded && c.lease && holder && holder !== c.lease.owner) return new LeaseLostError(r.swarmId, holder);
  if (!cur.decoded?.value || stored !== r.revision - 1) return new RevisionConflictError(r.swarmId, r.revision - 1, stored);
  return undefined;
}
