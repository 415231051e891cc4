/**
 * Waiting out a store that cannot reach its server (the JetStream store while NATS is down or
 * restarting). Such a store's reads fail at once with a `SwarmError` code `unavailable`, and its
 * commits give up with the same error once the outage outlasts their retries. Whoever must not
 * turn an outage into an outcome — a hosted call following its child, the agent registry writing
 * its record — waits here until the store answers again and tries again, instead of reporting a
 * failure that nothing actually had.
 *
 * @module
 */
import { delay } from '../util/abort.js';
import { SwarmError } from '../errors.js';
import type { SwarmStore } from './types.js';

/** The longest pause between two attempts while the store stays unreachable. */
const MAX_PAUSE_MS = 1_000;
/** How often the store's connection is looked at while it is known to be down. */
const POLL_MS = 50;

/** Whether `e` says that the store (NATS) cannot be reached right now: worth waiting out, not an outcome. */
export function isUnavailable(e: unknown): boolean {
  return e instanceof SwarmError && e.code === 'unavailable';
}

/**
 * Runs `attempt` until it settles with anything but an {@link isUnavailable} failure, pausing
 * between attempts: while the store says it is disconnected (`connected()` false), until it is
 * back, then with a growing pause (JetStream may answer a little after the connection is back).
 * An outage is waited out for as long as whoever asked still needs the answer, with no deadline
 * of its own: once `signal` has aborted, an unavailable failure is raised as it is (the first
 * attempt is always made), and a wait under way rejects with the signal's reason.
 */
export async function untilReachable<T>(store: Pick<SwarmStore, 'connected'>, attempt: () => Promise<T>, signal?: AbortSignal): Promise<T> {
  for (let i = 0; ; i++) {
    try {
      return await attempt();
    } catch (e) {
      if (!isUnavailable(e) || signal?.aborted) throw e;
    }
    await pauseForStore(store, i, signal);
    signal?.throwIfAborted();
  }
}

/**
 * The pause before attempt `i + 1` of something that failed with the store unreachable: until the
 * store says it is connected again (at once for a store that does not say), then a pause growing
 * with `i`. Resolves early (never rejects) when `signal` aborts.
 */
export async function pauseForStore(store: Pick<SwarmStore, 'connected'>, i: number, signal?: AbortSignal): Promise<void> {
  while (store.connected?.() === false && !signal?.aborted) await delay(POLL_MS, signal);
  await delay(Math.min(MAX_PAUSE_MS, 25 * 2 ** Math.min(i, 6)), signal);
}
