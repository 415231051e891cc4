/**
 * Draining a runtime (`runtime.drain`, SIGTERM in `xswarm serve` / `xswarm worker`): it refuses
 * new work, lets the model, tool and remote calls in flight finish and commit, holds every call
 * that would begin after them at its durability gate (so each swarm parks at a step boundary,
 * durable, and the call re-runs wherever the swarm is adopted), then closes: its leases are
 * released and the other runtimes are told, so they adopt at once instead of after expiry.
 *
 * @module
 */
import { setImmediate as nextTurn } from 'node:timers/promises';
import { RuntimeDrainingError } from '../errors.js';

/** Options of `runtime.drain`. */
export interface DrainOptions {
  /**
   * How long the drain may take in all, in ms (default {@link DEFAULT_DRAIN_MS}): calls still in
   * flight near it are abandoned without committing (the runtime that adopts their swarm makes
   * them again, under the same idempotency keys), and `drain` resolves within it.
   */
  deadlineMs?: number;
}

/** What `drain` waits at most by default. */
export const DEFAULT_DRAIN_MS = 10_000;

/** How often the drain looks whether the calls in flight have ended. */
const PARK_POLL_MS = 10;

/**
 * The gate every call of a runtime's swarms passes (`SwarmPorts.durable` / `callBegins`): it
 * counts the calls at work, and once the runtime drains it holds each new call at its gate for
 * good (the actor is stopped when the runtime closes; its step is durable, so the call is made
 * again by the runtime that adopts the swarm).
 */
export class CallGate {
  private inFlight = 0;
  private closedAt: number | undefined;

  /** Whether the runtime drains: no new work, no new call. */
  get draining(): boolean {
    return this.closedAt !== undefined;
  }

  /** The number of calls at work now. */
  get working(): number {
    return this.inFlight;
  }

  /** Throws the {@link RuntimeDrainingError} for `what` once draining. */
  assertAccepting(what: string): void {
    if (this.draining) throw new RuntimeDrainingError(what);
  }

  /** Starts draining: calls that have not passed their gate yet never will here. */
  close(): void {
    this.closedAt ??= Date.now();
  }

  /** `durable`, then the gate: held for good once draining. */
  pass(durable: Promise<void>): Promise<void> {
    if (this.draining) return HELD;
    return durable.then(() => (this.draining ? HELD : undefined));
  }

  /** Where a call that must not begin waits once draining: a promise that never settles. */
  held(): Promise<never> {
    return HELD as Promise<never>;
  }

  /** A call passed its gate: counted until the returned function is called. */
  begins(): () => void {
    this.inFlight++;
    let ended = false;
    return () => {
      if (ended) return;
      ended = true;
      this.inFlight--;
    };
  }
}

/** A promise that never settles: where a call waits once its runtime drains. */
const HELD: Promise<void> = new Promise<void>(() => undefined);

/** What a drain reads of the hosts: whether one still commits. */
export interface Committing {
  readonly committing: boolean;
}

/**
 * Resolves once no call is at work and no host commits (checked twice, a turn of the event loop
 * apart, so that a call's result that was settling has been committed or is committing), or at
 * `by` (ms since the epoch), whichever comes first. True when parked, false at the deadline.
 */
export async function parked(gate: CallGate, hosts: () => Iterable<Committing>, by: number): Promise<boolean> {
  const quiet = () => gate.working === 0 && ![...hosts()].some((h) => h.committing);
  while (Date.now() < by) {
    if (quiet()) {
      await nextTurn();
      if (quiet()) return true;
      continue;
    }
    await new Promise((resolve) => setTimeout(resolve, Math.min(PARK_POLL_MS, Math.max(0, by - Date.now()))));
  }
  return quiet();
}

/** The checked deadline of a drain, in ms. */
export function drainDeadline(options: DrainOptions | undefined): number {
  const ms = options?.deadlineMs ?? DEFAULT_DRAIN_MS;
  if (typeof ms !== 'number' || !Number.isFinite(ms) || ms < 0) throw new TypeError(`drain deadlineMs must be a number of ms from 0 up, got ${String(ms)}`);
  return ms;
}

/**
 * The time kept at the end of a drain for closing: releasing the leases, telling the other
 * runtimes, closing the store. A quarter of the deadline, at most a second.
 */
export function closingReserve(deadlineMs: number): number {
  return Math.min(1_000, deadlineMs / 4);
}
