/**
 * Renewing a runtime's leases: every third of a lease, in bounded chunks, one renewal at a time.
 *
 * A store renews a lease by rewriting the swarm's row or key (SQLite rewrites the page holding
 * its snapshot, JetStream re-puts its whole record), so renewing 10,000 passivated swarms is
 * 10,000 writes. Sent as one call they hold the event loop for the whole of it (measured with
 * 10,000 passivated swarms: 60–85 ms on SQLite, about 0.5 s on JetStream, every third of a
 * lease); in chunks the process keeps serving between them. A renewal slower than its interval
 * (a slow store, or more swarms than it can renew in time) never has the next one started on top
 * of it: the next starts when it ends.
 *
 * @module
 */
import { setImmediate as nextTurn } from 'node:timers/promises';
import type { SwarmStore } from '../store/types.js';

/** Leases renewed per store call. */
export const RENEW_CHUNK = 256;

/** What a renewal needs: the store, whose leases, how long they last, and which ids to renew now. */
export interface RenewalOptions {
  store: Pick<SwarmStore, 'renew'>;
  owner: string;
  leaseMs: number;
  /** The ids whose leases to renew, read at the start of each renewal. */
  ids: () => readonly string[];
  /** Leases per store call (default {@link RENEW_CHUNK}). */
  chunk?: number;
}

/**
 * Renews `ids()`' leases every third of `leaseMs` until stopped. Each chunk's lease runs
 * `leaseMs` from when that chunk is written. A store that fails a chunk is tried again at the
 * next renewal; the other chunks go on. Used by the runtime's swarms and by its teams.
 */
export class Renewal {
  private timer: NodeJS.Timeout | undefined;
  private state: 'idle' | 'renewing' | 'stopped' = 'idle';
  /** The renewal under way, if any. */
  private running: Promise<void> | undefined;

  constructor(private readonly options: RenewalOptions) {}

  /** Starts renewing; a no-op once started, and once stopped (the owner is closing). */
  start(): void {
    if (this.state !== 'idle') return;
    this.state = 'renewing';
    this.schedule(this.intervalMs());
  }

  /** Stops renewing for good: no chunk is sent after this (one already sent may still land). */
  stop(): void {
    this.state = 'stopped';
    clearTimeout(this.timer);
    this.timer = undefined;
  }

  /** Renews every id's lease now, chunk after chunk (none once stopped); what each period runs. */
  renewNow(): Promise<void> {
    this.running ??= this.renewAll().finally(() => (this.running = undefined));
    return this.running;
  }

  private intervalMs(): number {
    return Math.max(20, this.options.leaseMs / 3);
  }

  private schedule(delayMs: number): void {
    if (this.state === 'stopped') return;
    this.timer = setTimeout(() => {
      const started = Date.now();
      void this.renewNow().finally(() => this.schedule(Math.max(0, this.intervalMs() - (Date.now() - started))));
    }, delayMs);
    this.timer.unref();
  }

  /** Never rejects: a failed chunk (a rejection, or a store that throws) waits for the next renewal. */
  private async renewAll(): Promise<void> {
    const { store, owner, leaseMs, chunk = RENEW_CHUNK } = this.options;
    const ids = [...this.options.ids()];
    for (let i = 0; i < ids.length; i += chunk) {
      // A store that renews synchronously (SQLite) settles at once: without a turn of the event
      // loop between chunks, they would hold it as long as one call did.
      if (i > 0) await nextTurn();
      // Checked after the turn too: a stop made during it sends nothing more.
      if (this.state === 'stopped') return;
      const part = ids.slice(i, i + chunk);
      await Promise.resolve()
        .then(() => store.renew(owner, part, Date.now() + leaseMs))
        .catch(() => undefined);
    }
  }
}
