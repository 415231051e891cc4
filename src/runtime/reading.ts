/**
 * Reading swarms, whether this runtime drives them or not: listings, results, waiting for a
 * result, and the ordered event stream (stored events, then live ones), each reporting a swarm
 * this runtime cannot restore as failed with the reason.
 *
 * @module
 */
import type { SwarmEvent } from '../../machines/events.js';
import { addByModel, rolledUp, type UsageByModel, type UsageLedger } from '../../machines/usage.js';
import type { Usage } from '../../machines/messages.js';
import { type Prices, totalsOf, type UsageReport, type UsageTotals, usageReport } from '../usage/report.js';
import type { BudgetGate } from './budget-gate.js';
import type { SwarmConfig } from '../../machines/swarm.js';
import { delay } from '../util/abort.js';
import { assertCursor } from '../events/cursor.js';
import { SwarmError } from '../errors.js';
import { isFinal, type SwarmResult, type SwarmStatus } from '../store/result.js';
import { PAGE_SIZE, readPage } from '../store/pages.js';
import { summaryOf } from '../store/summary.js';
import { labelMatches, leftOutBy, type SwarmFilter, type SwarmSummary } from '../store/types.js';
import type { LiveSwarms } from './live.js';
import { isRuntimeRecord } from '../store/records.js';
import { withChildPauses } from './child-pauses.js';
import type { SwarmHost } from './host.js';
import type { Waiting } from './deploys.js';

/** How many swarms' usage `usageOf` reads at once. */
const USAGE_READS = 32;
/** How often readers poll the store for a swarm that is not live in this runtime. */
const POLL_MS = 200;
/**
 * The same, for a store that announces other processes' writes (`SwarmStore.watch`): only a
 * safety net, the announcement wakes readers.
 */
const WATCHED_POLL_MS = 2_000;

/**
 * The reason a reader's internal wait is let go with (nobody reads it): given, so that an abort
 * does not build a `DOMException` with its stack each time, which a reader following a busy
 * swarm does at every commit.
 */
const LEFT = new Error('the wait is no longer needed');

/**
 * A reader's wake-ups for one swarm: `next` resolves at its next change; `unread(cursor)` says
 * whether the store may hold events after `cursor` that nobody handed the reader yet (a change
 * since the last call that did not say what it holds, or held events after `cursor`);
 * `announced()` says that the store announces every later event, so a change that did not say
 * what it holds (the first look included) asks for no read; `close` lets go.
 */
interface Changes {
  next(signal: AbortSignal): Promise<void>;
  unread(cursor: number): boolean;
  announced(): void;
  close(): void;
}

/** Whether a swarm in this state is still working (its result reads `running`). */
function isMoving(status: SwarmStatus): boolean {
  return status === 'running' || status === 'awaitingHandoff';
}

/** The readers of one runtime's store. */
export class Reading {
  constructor(
    private readonly live: LiveSwarms,
    /** `createRuntime({ prices })`: what each model's tokens cost. */
    private readonly prices?: Prices,
    /** The budget gate, which reads a swarm's budgets in the ledger. */
    private readonly budgets?: Pick<BudgetGate, 'statuses'>,
  ) {}

  /**
   * The store's listing of swarms (teams' and the registry's records left out), with the swarms
   * this runtime found it cannot restore reading failed as {@link result} says; status filters
   * and the limit apply to what is reported.
   */
  async list(filter: SwarmFilter = {}): Promise<SwarmSummary[]> {
    if (filter.definitionId !== undefined) return isRuntimeRecord(filter.definitionId) ? [] : this.stored(filter);
    // Records that are not swarms may take places in a page: read on until the page is full.
    for (let limit = filter.limit; ; limit = 2 * limit!) {
      const page = await this.stored(limit === undefined ? filter : { ...filter, limit });
      const swarms = page.filter((s) => !isRuntimeRecord(s.definitionId));
      if (limit === undefined || swarms.length >= filter.limit! || page.length < limit) return swarms.slice(0, filter.limit);
    }
  }

  /** The store's listing, with what this runtime cannot restore reported failed. */
  private async stored(filter: SwarmFilter): Promise<SwarmSummary[]> {
    const { store, unrestorable } = this.live;
    if (unrestorable.size === 0) {
      // A waiting swarm keeps its stored status (only a note is added): filters and limits hold as listed.
      const listed = await store.list(filter);
      return this.live.waiting.size === 0 ? listed : listed.map((s) => this.reported(s));
    }
    const wanted = (s: SwarmSummary) => !filter.status || filter.status.includes(s.status);
    // At most `unrestorable.size` listed rows can drop out of the filter: fetch that many more.
    const limit = filter.limit === undefined ? undefined : filter.limit + unrestorable.size;
    const listed = new Map((await store.list({ ...filter, ...(limit === undefined ? {} : { limit }) })).map((s) => [s.swarmId, s]));
    // Stored as unfinished, reported failed: a filter asking for failed ones must find them.
    if (filter.status?.includes('failed')) {
      for (const id of unrestorable.keys()) {
        if (listed.has(id)) continue;
        const record = await store.load(id);
        if (
          !record ||
          (filter.definitionId && record.definitionId !== filter.definitionId) ||
          leftOutBy(filter.notHeldBy, record.lease) ||
          !labelMatches(filter, record.label)
        )
          continue;
        const { snapshot: _s, ...summary } = record;
        listed.set(id, summary);
      }
    }
    return [...listed.values()]
      .map((s) => this.reported(s))
      .filter(wanted)
      .sort((a, b) => b.updatedAt - a.updatedAt)
      .slice(0, filter.limit ?? Infinity);
  }

  /**
   * What every door reports for a swarm: the live host's result, else the stored one as
   * {@link reported} (an unreadable record already reads failed, naming the problem).
   */
  async result(swarmId: string): Promise<SwarmResult> {
    // A running swarm also shows the approvals its child swarms wait for (child-approvals.ts).
    return withChildPauses(await this.ownResult(swarmId), (childId) => this.result(childId));
  }

  private async ownResult(swarmId: string): Promise<SwarmResult> {
    const host = this.live.hosts.get(swarmId);
    if (host) return durableResult(host);
    const record = await summaryOf(this.live.store, swarmId);
    if (!record) throw new SwarmError(`Unknown swarm "${swarmId}"`, 'unknown-swarm');
    return this.reported(record).result;
  }

  /**
   * The tokens of every model call made for a swarm so far (its orchestrator's and its
   * agents'), as durable: the live host's once its steps are recorded, else the stored
   * snapshot's. A child swarm counts its own.
   */
  async usage(swarmId: string): Promise<UsageReport> {
    const context = await this.usageContext(swarmId);
    const report = usageReport(context, this.prices);
    const budget = (context as { config?: SwarmConfig } | undefined)?.config?.budget;
    if (budget && this.budgets) report.budgets = await this.budgets.statuses(swarmId, budget);
    return report;
  }

  /** A swarm's usage rolled up over its children, by model (what its parent counts once, with the handoff's result). */
  async rolledUpUsage(swarmId: string): Promise<UsageByModel> {
    const context = await this.usageContext(swarmId);
    return context?.usageByModel ? rolledUp(context.usageByModel) : {};
  }

  /**
   * The rolled-up usage of several swarms summed (a team's task attempts), priced like a
   * report's total. A swarm never started (an attempt claimed before a crash) or since pruned
   * counts nothing; any other failure to read one rejects rather than under-count.
   */
  async usageOf(swarmIds: readonly string[]): Promise<UsageTotals> {
    let sum: UsageByModel = {};
    // A few reads at a time: a large board's attempts neither queue one by one nor flood the store.
    for (let i = 0; i < swarmIds.length; i += USAGE_READS) {
      const batch = swarmIds.slice(i, i + USAGE_READS).map((id) =>
        this.rolledUpUsage(id).catch((e: unknown): UsageByModel => {
          if (e instanceof SwarmError && e.code === 'unknown-swarm') return {};
          throw e;
        }),
      );
      for (const usage of await Promise.all(batch)) sum = addByModel(sum, usage);
    }
    return totalsOf(sum, this.prices);
  }

  /** The usage fields of a swarm's durable context: the live host's once recorded, else the stored snapshot's. */
  private async usageContext(swarmId: string): Promise<{ usage?: Usage; usageByModel?: UsageLedger } | undefined> {
    const host = this.live.hosts.get(swarmId);
    if (host) {
      await host.durable().catch(() => undefined);
      return host.context();
    }
    const record = await this.live.store.load(swarmId);
    // A team's or the registry's record is not a swarm.
    if (!record || isRuntimeRecord(record.definitionId)) throw new SwarmError(`Unknown swarm "${swarmId}"`, 'unknown-swarm');
    return (record.snapshot as { context?: { usage?: Usage; usageByModel?: UsageLedger } } | undefined)?.context;
  }

  /**
   * Resolves with the result once the swarm is paused or has ended. When `signal` aborts (the
   * caller no longer needs the result: a team's released attempt), rejects with its reason and
   * lets go of every watch, poll and waker at once.
   */
  async wait(swarmId: string, signal?: AbortSignal): Promise<SwarmResult> {
    // Set up on the first wait for a swarm not live here, then kept for the whole wait.
    let changes: Changes | undefined;
    try {
      for (;;) {
        signal?.throwIfAborted();
        const host = this.live.hosts.get(swarmId);
        if (host) {
          // Live here: its status is in memory and its next commit wakes us (no poll timer); the
          // result is built once it is not running. A host that has just ended answers too: its
          // final commit is durable.
          if (isMoving(host.status())) await host.nextCommit(signal);
          if (!isMoving(host.status())) return durableResult(host);
          continue;
        }
        // The poll is released as soon as it is not needed: a timer left behind per wait would
        // outlive the swarm by a poll interval.
        const parked = new AbortController();
        const leave = () => parked.abort(LEFT);
        signal?.addEventListener('abort', leave, { once: true });
        changes ??= this.changes(swarmId);
        try {
          const next = changes.next(parked.signal);
          const result = await this.result(swarmId);
          if (result.status !== 'running' || this.live.unrestorable.has(swarmId)) return result;
          // A closed runtime no longer drives or re-reads it: waiting on would never end.
          if (this.live.closed && !this.live.hosts.has(swarmId)) throw new SwarmError(`This runtime is closed; swarm "${swarmId}" is still ${result.status}`, 'closed');
          await next;
        } finally {
          signal?.removeEventListener('abort', leave);
          parked.abort(LEFT);
        }
      }
    } finally {
      changes?.close();
    }
  }

  /**
   * The swarm's events after `since`, until its final event. A cursor beyond the end of a swarm
   * that has ended is refused (`invalid-cursor`); beyond the end of an unfinished one, the
   * reader waits for the events after it. `'latest'` starts after the swarm's last event now
   * (only what happens from here on; an unknown swarm is refused with `unknown-swarm`). When
   * `signal` aborts, or the consumer stops iterating, everything the reader registered to wait
   * is released at once.
   */
  async *events(swarmId: string, since: number | 'latest', signal?: AbortSignal): AsyncGenerator<SwarmEvent> {
    const { live } = this;
    let cursor = since === 'latest' ? await this.latestSeq(swarmId) : since;
    let yielded = false;
    let reread = false;
    // The store is read at the next turn whatever the changes say (the last read gave a whole
    // page, or the swarm ended after it).
    let force = false;
    // One controller per wait, aborted when the wait is not needed any more (events were read
    // instead, the caller's signal fired, the consumer left): it unregisters the wait.
    let parked: AbortController | undefined;
    const leave = () => parked?.abort(LEFT);
    signal?.addEventListener('abort', leave, { once: true });
    const changes = this.changes(swarmId);
    // The host of the swarm live here whose committed events this reader keeps in memory (see
    // `SwarmHost.keepCommitted`), and how to let go of them.
    let kept: { host: SwarmHost; release: () => void } | undefined;
    try {
      for (;;) {
        if (signal?.aborted) return;
        parked?.abort(LEFT);
        parked = new AbortController();
        // Taken before reading, so a commit landing during the read still wakes us.
        const next = changes.next(parked.signal);
        const host = live.hosts.get(swarmId);
        if (host && host !== kept?.host) {
          kept?.release();
          kept = { host, release: host.keepCommitted() };
        }
        // A swarm live here: its latest durable events from memory, exactly as stored (a host
        // that has just ended, too: what it committed last). Else, or when the cursor is older
        // than those, one page of the store at a time (a long stream is never held whole); at a
        // corrupt event, the events before it, and the next read, which starts at it, throws.
        let batch = kept?.host.committedAfter(cursor, PAGE_SIZE);
        if (kept && kept.host !== host && !batch?.length) {
          // Ended: another process may write after it (it lost its lease), the store says.
          kept.release();
          kept = undefined;
          batch = undefined;
        }
        if (!batch && !host) {
          // A swarm driven elsewhere, followed through the store's announcements: the events the
          // store already holds here; else the store is read only when a change may have brought
          // more (nothing changed since the last look: what it said then still holds).
          const known = live.store.knownEvents?.(swarmId, cursor);
          if (known?.length) {
            batch = known.slice(0, PAGE_SIZE);
            // Whatever the swarm commits after these will wake this reader with its seq: the read
            // a change of unknown content (or the first look) asks for would find nothing more.
            if (live.store.announcesAfter?.(swarmId, known.at(-1)!.seq)) changes.announced();
          } else if (!force && !changes.unread(cursor)) {
            if (live.unrestorable.has(swarmId) || live.closed) return;
            await next;
            continue;
          }
        }
        force = false;
        if (!batch) {
          batch = await readPage(live.store, swarmId, cursor);
          // A whole page read: the next turn reads on (a shorter one held all there was then).
          force = batch.length >= PAGE_SIZE;
        }
        if (signal?.aborted) return;
        if (batch.length > 0) {
          // Not waiting this time: let the wait go before handing events out.
          parked.abort(LEFT);
          for (const event of batch) {
            yield event;
            yielded = true;
            cursor = event.seq;
            if (event.kind === 'status-update' && event.final) return;
            if (signal?.aborted) return;
          }
          continue;
        }
        // A failure the store could not take yet ends the stream from memory.
        const unrecorded = live.hosts.get(swarmId)?.unrecordedEnd();
        if (unrecorded) {
          if (unrecorded.seq > cursor) yield unrecorded;
          return;
        }
        if (!live.hosts.has(swarmId)) {
          const record = await summaryOf(live.store, swarmId);
          if (!record) {
            // Pruned while we were reading it: its stream simply ends.
            if (!yielded) throw new SwarmError(`Unknown swarm "${swarmId}"`, 'unknown-swarm');
            return;
          }
          // It ended after our read (its host is gone): read what it wrote last, once.
          if (isFinal(record.status) && record.lastSeq > cursor && !reread) {
            reread = true;
            force = true;
            continue;
          }
          assertCursor(record, cursor);
          if (isFinal(record.status) || live.unrestorable.has(swarmId) || live.closed) return;
        }
        await next;
      }
    } finally {
      signal?.removeEventListener('abort', leave);
      parked?.abort(LEFT);
      changes.close();
      kept?.release();
    }
  }

  /** The seq of the swarm's last event now: numbered by its host here, else as stored. */
  private async latestSeq(swarmId: string): Promise<number> {
    const host = this.live.hosts.get(swarmId);
    if (host) return host.lastSeq;
    const record = await summaryOf(this.live.store, swarmId);
    if (!record) throw new SwarmError(`Unknown swarm "${swarmId}"`, 'unknown-swarm');
    return record.lastSeq;
  }

  /**
   * A stored swarm as this runtime reports it: failed with the reason when it is unfinished and
   * could not be restored here (another runtime may still finish it; then the store says so).
   */
  private reported<S extends SwarmSummary>(s: S): S {
    const problem = this.live.unrestorable.get(s.swarmId);
    if (isFinal(s.status) || this.live.hosts.has(s.swarmId)) return s;
    if (problem) return { ...s, status: 'failed', result: { status: 'failed', reason: problem } };
    const waiting = this.live.waiting.get(s.swarmId);
    return waiting ? withWaiting(s, waiting) : s;
  }

  /**
   * Resolves at the swarm's next commit when it is live here; otherwise after a short poll
   * interval, since another process (or this runtime's adoption) may be driving it. Resolves at
   * once when `signal` aborts, and then leaves no listener, waker or timer behind.
   */
  private nextChange(swarmId: string, signal?: AbortSignal): Promise<void> {
    const host = this.live.hosts.get(swarmId);
    if (host) return host.nextCommit(signal);
    return delay(POLL_MS, signal);
  }

  /**
   * One reader's wake-ups for a swarm, as {@link nextChange} gives them; with a store that
   * announces other processes' writes, one watch serves the reader for its whole life (a watch
   * per wait could miss a write made while it is being set up).
   */
  private changes(swarmId: string): Changes {
    const { store } = this.live;
    if (!store.watch) return { next: (signal) => this.nextChange(swarmId, signal), unread: () => true, announced() {}, close() {} };
    let changed = false;
    let wake: (() => void) | undefined;
    // What the changes since the last `unread` said: the highest last seq named, and whether one
    // named none (anything may have changed). The first read is always made.
    let heard = 0;
    let unknown = true;
    const stop = store.watch(swarmId, (lastSeq) => {
      if (lastSeq === undefined) unknown = true;
      else heard = Math.max(heard, lastSeq);
      changed = true;
      wake?.();
    });
    return {
      unread: (cursor) => {
        const more = unknown || heard > cursor;
        unknown = false;
        heard = 0;
        return more;
      },
      announced: () => {
        unknown = false;
      },
      next: (signal) => {
        const host = this.live.hosts.get(swarmId);
        if (host) return host.nextCommit(signal);
        if (changed) {
          changed = false;
          return Promise.resolve();
        }
        return new Promise<void>((resolve) => {
          const done = () => {
            if (wake === done) {
              wake = undefined;
              changed = false;
            }
            resolve();
          };
          wake = done;
          // The safety net reads the store: a change may have been missed.
          void delay(WATCHED_POLL_MS, signal).then(() => {
            if (!signal.aborted) unknown = true;
            done();
          });
        });
      },
      close: stop,
    };
  }
}

/**
 * A stored swarm that waits for a definition version (see `deploys.ts`) as it is reported: its
 * stored status and result, with what it waits for and why (in the listing and in the result).
 */
function withWaiting<S extends SwarmSummary>(s: S, waiting: Waiting): S {
  const note = { waitingFor: waiting.waitingFor, waitingReason: `Swarm "${s.swarmId}" waits: ${waiting.reason}` };
  const result = s.result.status === 'running' || s.result.status === 'paused' ? { ...s.result, ...note } : s.result;
  return { ...s, ...note, result };
}

/**
 * A live host's result once every commit issued so far is durable. Its state in memory can be
 * a step ahead of the store (group commit writes a step at the end of the event-loop turn):
 * what a door answers must already be recorded, so that reading the swarm's events or record
 * right after agrees with it.
 */
async function durableResult(host: SwarmHost): Promise<SwarmResult> {
  await host.durable().catch(() => undefined);
  return host.result();
}
