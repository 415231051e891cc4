/**
 * Adoption of swarms in a shared store: the unfinished swarms nobody holds are claimed, checked
 * and restored, at start and whenever an owner stops renewing; a passivated swarm comes back by
 * that same restore (see `passivation.ts`), and a dead holder's lease on this host is taken over
 * at once. (Leases are renewed, and released at close, by the live swarms: `live.ts`.)
 *
 * @module
 */
import { errorText } from '../../machines/error-text.js';
import type { SwarmEvent, SwarmEventBody } from '../../machines/events.js';
import { SWARM_MACHINE_VERSION, type SwarmCommand } from '../../machines/swarm.js';
import type { Catalog } from '../catalog/catalog.js';
import { heldByOther } from '../leases/holder.js';
import type { Owner } from '../leases/owner.js';
import { isRuntimeRecord } from '../store/records.js';
import { isFinal, UNFINISHED_STATUSES } from '../store/result.js';
import { summaryOf } from '../store/summary.js';
import { CorruptEventError, type SwarmRecord, type SwarmSummary } from '../store/types.js';
import type { SwarmHost } from './host.js';
import type { LiveSwarms } from './live.js';
import { restorePlan, versionLabel, type Waiting } from './deploys.js';
import { migrateRecord } from './migration.js';
import type { Logger } from '../util/logger.js';

/** Adoption: this runtime taking over the stored swarms nobody drives. */
export class Leases {
  private adoptTimer: NodeJS.Timeout | undefined;
  /** Stopped (the runtime drains or closes): nothing is claimed or restored any more. */
  private stopped = false;
  private readonly owner: string;
  private readonly leaseMs: number;

  constructor(
    private readonly live: LiveSwarms,
    private readonly catalog: Catalog,
    private readonly holder: Owner,
    /** The runtime's logger (`createRuntime({ logger })`); undefined: silent. */
    private readonly log?: Logger,
  ) {
    this.owner = holder.id;
    this.leaseMs = holder.leaseMs;
  }

  /** Adopts what can be adopted now, then keeps watching (every half lease) for more. */
  async watch(): Promise<void> {
    await this.adopt();
    if (!this.adoptTimer) {
      this.adoptTimer = setInterval(
        () =>
          void this.adopt('others').catch((e: unknown) => this.log?.warn({ owner: this.owner, error: errorText(e) }, 'adoption scan failed; retried at the next scan')),
        Math.max(50, this.leaseMs / 2),
      );
      this.adoptTimer.unref();
    }
  }

  /**
   * Restores every unfinished swarm nobody else holds a live lease on. The listing carries no
   * snapshots, so the periodic scan costs one query when there is nothing to adopt.
   *
   * `scan: 'others'` (the periodic scan) does not list the swarms whose live lease is this
   * owner's (one it leased but no longer drives is seen once that lease, no longer renewed, ran
   * out): listing 10,000 passivated swarms every half lease held the event loop 155 ms on
   * SQLite. The first scan and the ones made on demand list them too: a process restarted
   * with the same owner id takes back at once the swarms its predecessor held under it.
   */
  async adopt(scan: 'all' | 'others' = 'all'): Promise<void> {
    const { live } = this;
    const now = Date.now();
    const filter = scan === 'others' ? { status: UNFINISHED_STATUSES, notHeldBy: { owner: this.owner, at: now } } : { status: UNFINISHED_STATUSES };
    const listed = await live.store.list(filter);
    for (const summary of listed) {
      if (live.closed) return;
      await this.consider(summary, now);
    }
    // A swarm that waited and is no longer unfinished (another runtime finished it, it was pruned) waits no more.
    if (live.waiting.size > 0) {
      const unfinished = new Set(listed.map((s) => s.swarmId));
      for (const id of live.waiting.keys()) if (!unfinished.has(id)) live.waiting.delete(id);
    }
  }

  /**
   * Adopts one swarm, as {@link adopt} would if it listed it: what a caller waiting on that one
   * swarm needs (a team's attempt whose swarm a previous process left), in O(1) store reads
   * instead of a listing of every unfinished swarm.
   */
  async adoptOne(swarmId: string): Promise<void> {
    const { live } = this;
    if (live.closed || live.hosts.has(swarmId) || live.passivated.has(swarmId) || live.starting.has(swarmId) || live.unrestorable.has(swarmId)) return;
    if (live.waiting.get(swarmId)?.retry === false) return;
    const summary = await summaryOf(live.store, swarmId);
    if (!summary || isFinal(summary.status) || live.closed) return;
    await this.consider(summary, Date.now());
  }

  /** Adopts the listed swarm when nobody else may drive it and it can be restored here. */
  private async consider(listed: SwarmSummary, now: number): Promise<void> {
    const { live } = this;
    const id = listed.swarmId;
    if (live.hosts.has(id) || live.passivated.has(id) || live.starting.has(id) || live.unrestorable.has(id)) return;
    // A team's record is its team host's to restore (see src/team/teams.ts), the agent
    // registry's is the runtime's (src/registry/persistence.ts): neither is a swarm.
    if (isRuntimeRecord(listed.definitionId)) return;
    // A live lease of a process of this host that has died (a crash, then a restart) is not
    // waited out: the claim takes it from that very owner, or fails if someone else took it.
    const held = heldByOther(listed.lease, this.owner, now);
    const takeover = held?.takeover;
    if (held && !takeover) {
      // Someone drives it: it waits for nothing any more.
      live.waiting.delete(id);
      return;
    }
    if (live.waiting.get(id)?.retry === false) return;
    // A definition (or version) this runtime lacks: the swarm waits, untouched, for a runtime
    // that has it (among runtimes serving each other, it is another's to take). Checked again
    // at every scan, without loading the swarm.
    const plan = restorePlan(this.catalog, listed.definitionId, listed.definitionVersion);
    if (plan.kind === 'wait') {
      live.waiting.set(id, plan.waiting);
      return;
    }
    const candidate = await live.store.load(id);
    if (!candidate || isFinal(candidate.status)) return;
    // Check that it can be restored before claiming it: a broken row is left untouched.
    const dryRun = this.restored(candidate, candidate.lastSeq, true);
    if (!dryRun) return;
    dryRun.discard();
    // Two adoption passes may run at once (start's timer, a parent re-attaching a child).
    if (live.starting.has(id) || live.passivated.has(id)) return;
    const adopted = await this.restore(id, takeover);
    if (adopted) this.log?.info({ swarmId: id, definitionId: listed.definitionId, previousOwner: listed.lease?.owner }, 'swarm adopted');
  }

  /**
   * Claims a stored swarm and launches its host from its record, with the events the record does
   * not cover yet: how adoption takes a swarm over, and how a passivated swarm (whose lease this
   * runtime kept) comes back. Undefined when the claim fails (another runtime holds it), the swarm
   * ended, or it cannot be restored (then it is reported failed with the reason). `first` is
   * applied before anything of the swarm runs again (see {@link SwarmHost.start}).
   */
  async restore(id: string, takeover?: string, first?: SwarmCommand): Promise<SwarmHost | undefined> {
    const { live } = this;
    if (live.closed || this.stopped || live.starting.has(id)) return undefined;
    live.starting.add(id);
    try {
      if (!(await live.store.claim(id, this.holder.lease(), Date.now(), takeover))) return undefined;
      // Re-read: the previous owner may have written between loading and claiming.
      const stored = await live.store.load(id);
      const tail = stored ? await this.tailOf(stored) : undefined;
      if (!stored || !tail || isFinal(stored.status) || live.hosts.has(id) || live.closed) return undefined;
      const lastSeq = tail.at(-1)?.seq ?? stored.lastSeq;
      const migrated = await this.migrated(stored, lastSeq);
      if (!migrated || live.hosts.has(id) || live.closed) return undefined;
      const host = this.restored(migrated.record, lastSeq);
      if (!host) return undefined;
      live.launch(host, first);
      // The migrated record is written at once, with the fact saying so (after the start's own commit, if any).
      if (migrated.fact) host.recordFact(migrated.fact);
      live.waiting.delete(id);
      return host;
    } finally {
      live.starting.delete(id);
    }
  }

  /**
   * The record to restore `record` from: as stored when it continues on its own version (or
   * cannot be restored here, which {@link restored} reports); migrated to the current version
   * by its `migrate`, with the fact to record, when the plan says so. Undefined when it must
   * wait (a definition missing, a migration that failed): noted in `live.waiting`, the stored
   * data untouched.
   */
  private async migrated(record: SwarmRecord, lastSeq: number): Promise<{ record: SwarmRecord; fact?: SwarmEventBody } | undefined> {
    if (record.problem) return { record };
    const plan = restorePlan(this.catalog, record.definitionId, record.definitionVersion);
    if (plan.kind === 'continue') return { record };
    if (plan.kind === 'wait') {
      await this.wait(record.swarmId, plan.waiting);
      return undefined;
    }
    // The stored snapshot must restore on its own first: a broken row is reported, not migrated.
    const dryRun = this.restored(record, lastSeq, true);
    if (!dryRun) return undefined;
    dryRun.discard();
    const outcome = await migrateRecord(record, plan.definition, this.catalog, plan.from);
    if ('problem' in outcome) {
      // Not retried here (it would fail alike); a runtime with a fixed migrate, or the old version, adopts it.
      await this.wait(record.swarmId, { waitingFor: versionLabel(record.definitionId, plan.from), reason: outcome.problem, retry: false });
      return undefined;
    }
    return outcome;
  }

  /** Notes that a swarm claimed here waits, and lets go of the claim: nobody drives it, any runtime may adopt it. */
  private async wait(swarmId: string, waiting: Waiting): Promise<void> {
    this.live.waiting.set(swarmId, waiting);
    await this.live.store.release(this.owner, [swarmId]).catch(() => undefined);
  }

  /** Stops watching, and adopting or restoring anything (the runtime drains or closes). */
  stop(): void {
    this.stopped = true;
    clearInterval(this.adoptTimer);
  }

  /**
   * The host of a stored swarm, restored but not started (building it restores the actor: a
   * dry run when it is discarded), or undefined when it cannot be restored here: it is then
   * reported failed with the reason (its stored data stays exactly as it is).
   */
  private restored(record: SwarmRecord, lastSeq: number, dryRun = false): SwarmHost | undefined {
    // An unreadable record already reads failed, naming its problem, wherever it is read.
    if (record.problem) return undefined;
    let problem =
      this.restoreProblem(record) ?? (record.snapshot === undefined ? 'no snapshot was stored (the runtime that ran it on a volatile store did not close)' : undefined);
    if (!problem) {
      try {
        return this.live.createHost(record.swarmId, record.definitionId, { record, lastSeq }, { dryRun });
      } catch (e) {
        problem = errorText(e);
      }
    }
    this.live.unrestorable.set(record.swarmId, `Cannot restore swarm "${record.swarmId}": ${problem}`);
    this.log?.warn({ swarmId: record.swarmId, definitionId: record.definitionId, problem }, 'swarm cannot be restored here; it reads failed');
    return undefined;
  }

  /**
   * Why a record cannot be restored here at all. A definition or version this runtime lacks is
   * not one (the swarm waits: see {@link migrated}); a swarm machine version change is: the
   * machine's states, actor keys and children are the code's, which no `migrate` of a context
   * can rewrite.
   */
  private restoreProblem(record: SwarmRecord): string | undefined {
    // Which version it continues on (its own, or the current one by migration) is the plan's.
    if (!this.catalog.has(record.definitionId)) return `its definition "${record.definitionId}" is not registered with this runtime`;
    if (record.machineVersion !== SWARM_MACHINE_VERSION) {
      return `its snapshot was written by swarm machine version ${record.machineVersion}, this runtime runs version ${SWARM_MACHINE_VERSION}`;
    }
    return undefined;
  }

  /**
   * The events a restored swarm's record does not cover yet (their numbers continue its
   * stream), or undefined when one cannot be read: the swarm is then reported failed.
   */
  private async tailOf(record: SwarmRecord): Promise<SwarmEvent[] | undefined> {
    try {
      return await this.live.store.readEvents(record.swarmId, record.lastSeq);
    } catch (e) {
      if (!(e instanceof CorruptEventError)) throw e;
      this.live.unrestorable.set(record.swarmId, `Cannot restore swarm "${record.swarmId}": ${e.message}`);
      return undefined;
    }
  }
}
