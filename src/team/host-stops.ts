/**
 * The stops a team owes the attempts it gave up (released, its worker respawned, the team
 * stopped). Such an attempt's swarm may be held by a worker process that does not answer, or by
 * nobody while no worker process is up: a stop sent once could be lost, and a worker process
 * started later would adopt the attempt and finish it — the task's work done twice. So each
 * stop is kept (in the team's persisted snapshot, so a restarted leader keeps trying) and sent
 * again with backoff until the attempt's stored status is final. An attempt that completed all
 * the same (its stop lost the race) is not the task's result — the board refuses stale attempts
 * — and is reported once, so an operator sees the duplicate work.
 *
 * @module
 */
import type { TeamRuntimePort } from './host-types.js';
import { isFinal } from '../store/result.js';

/** A released attempt whose swarm is not known to have ended yet (persisted with the team). */
export interface PendingStop {
  swarmId: string;
  definitionId: string;
  taskId: string;
  attempt: number;
  reason: string;
}

/** What the pending stops need from their team host. */
export interface PendingStopsDeps {
  port: Pick<TeamRuntimePort, 'stop' | 'stored'>;
  /** The first wait before a stop is sent again; each further one doubles, up to {@link MAX_RETRY_MS}. */
  retryMs: number;
  /** The set changed: the team persists its snapshot. */
  changed: () => void;
  /** The attempt completed although the team had released it (reported once). */
  completedAnyway: (stop: PendingStop) => void;
}

/** The longest wait between two stops of one attempt. */
const MAX_RETRY_MS = 30_000;
/**
 * How many times an attempt whose swarm the store does not know is looked for before it is
 * dropped: its start may still be in flight when it is released (then the swarm shows up).
 */
const UNKNOWN_TRIES = 6;

interface Entry {
  stop: PendingStop;
  due: number;
  waitMs: number;
  unknown: number;
}

/** The stops one team host still owes, retried on a timer of their own (they outlive a run). */
export class PendingStops {
  readonly #deps: PendingStopsDeps;
  readonly #entries = new Map<string, Entry>();
  #timer: ReturnType<typeof setTimeout> | undefined;
  #running = false;
  #closed = false;

  constructor(deps: PendingStopsDeps) {
    this.#deps = deps;
  }

  /** Owes a stop to this attempt; the first one is sent at once. */
  add(stop: PendingStop): void {
    if (this.#closed || this.#entries.has(stop.swarmId)) return;
    this.#put(stop);
    this.#deps.changed();
  }

  /** The stops still owed, for the team's snapshot. */
  list(): PendingStop[] {
    return [...this.#entries.values()].map((e) => e.stop);
  }

  /** Takes the stops a previous process owed over (a restored team it drives). */
  restore(stops: readonly PendingStop[]): void {
    for (const stop of stops) if (!this.#closed && !this.#entries.has(stop.swarmId)) this.#put(stop);
  }

  /** Stops retrying (the host closes); what is owed stays in the last persisted snapshot. */
  close(): void {
    this.#closed = true;
    clearTimeout(this.#timer);
    this.#timer = undefined;
  }

  #put(stop: PendingStop): void {
    this.#entries.set(stop.swarmId, { stop, due: Date.now(), waitMs: this.#deps.retryMs, unknown: 0 });
    this.#schedule();
  }

  #schedule(): void {
    if (this.#closed || this.#running) return;
    clearTimeout(this.#timer);
    this.#timer = undefined;
    if (this.#entries.size === 0) return;
    const due = Math.min(...[...this.#entries.values()].map((e) => e.due));
    this.#timer = setTimeout(() => void this.#run(), Math.max(0, due - Date.now()));
    this.#timer.unref?.();
  }

  async #run(): Promise<void> {
    this.#running = true;
    try {
      const now = Date.now();
      for (const entry of [...this.#entries.values()]) {
        if (this.#closed) return;
        if (entry.due > now) continue;
        if (await this.#settled(entry)) continue;
        entry.due = Date.now() + entry.waitMs;
        entry.waitMs = Math.min(MAX_RETRY_MS, entry.waitMs * 2);
      }
    } finally {
      this.#running = false;
      this.#schedule();
    }
  }

  /** Sends the stop when the attempt has not ended; true once nothing more is owed to it. */
  async #settled(entry: Entry): Promise<boolean> {
    const { port } = this.#deps;
    const { stop } = entry;
    try {
      if (this.#ended(entry, await port.stored(stop.swarmId))) return true;
      if (entry.unknown > 0) return false;
      await port.stop(stop.swarmId, stop.reason);
      return this.#ended(entry, await port.stored(stop.swarmId));
    } catch {
      // Not delivered (nobody holding or hosting it answered, the store or the transport is
      // down): sent again at the next try.
      return false;
    }
  }

  /** Whether the attempt's stored result is final (then it is dropped, reported when completed). */
  #ended(entry: Entry, result: Awaited<ReturnType<PendingStopsDeps['port']['stored']>>): boolean {
    // Closed meanwhile: what is owed stays as last persisted, for the next driver.
    if (this.#closed) return false;
    if (result === undefined) {
      entry.unknown += 1;
      if (entry.unknown < UNKNOWN_TRIES) return false;
    } else {
      entry.unknown = 0;
      if (!isFinal(result.status)) return false;
      if (result.status === 'completed') this.#deps.completedAnyway(entry.stop);
    }
    this.#entries.delete(entry.stop.swarmId);
    this.#deps.changed();
    return true;
  }
}
