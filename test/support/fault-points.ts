/**
 * Random fault points for the broker-outage suites: of the `moments` a run passes through (model
 * calls, tool side effects, messages reaching a peer, counted as they happen), `count` are drawn
 * at random, and a fault starts at each drawn moment (or at the first moment after it when the
 * previous fault is still under way). Counting moments rather than drawing times puts every
 * fault inside the run, whatever the machine's speed.
 *
 * The draw is seeded: the seed is printed with the points, and `XSWARM_FAULT_SEED=<seed>` replays
 * the same points.
 */

import { seeded } from './seeded.js';

/** The points of one test. */
export interface FaultPoints {
  readonly seed: number;
  /** The drawn moments (1-based, ascending). */
  readonly points: readonly number[];
  /** What the points are, for a failing assertion's message: the seed and how to replay it. */
  readonly label: string;
  /**
   * Counts a moment; true when a fault is due at it. `ready`: whether a fault may start now (the
   * previous one is over); a due fault waits for the first moment at which it may.
   */
  moment(ready: boolean): boolean;
  /** Faults started so far. */
  readonly started: number;
}

/**
 * Draws `count` distinct moments among the first `moments` (from `XSWARM_FAULT_SEED` when set).
 * Give as `moments` a number the run is sure to reach, so that no fault is due after it ended.
 */
export function faultPoints(name: string, moments: number, count: number): FaultPoints {
  const fromEnv = Number(process.env.XSWARM_FAULT_SEED);
  const seed = Number.isInteger(fromEnv) && process.env.XSWARM_FAULT_SEED !== '' ? fromEnv : Math.floor(Math.random() * 2 ** 31);
  const random = seeded(seed);
  const drawn = new Set<number>();
  while (drawn.size < Math.min(count, moments)) drawn.add(1 + Math.floor(random() * moments));
  const points = [...drawn].sort((a, b) => a - b);
  const label = `${name}: faults at moments ${points.join(', ')} of ${moments} (XSWARM_FAULT_SEED=${seed} replays them)`;
  process.stderr.write(`${label}\n`);
  let seen = 0;
  let started = 0;
  return {
    seed,
    points,
    label,
    moment(ready) {
      seen++;
      if (!ready || started >= points.length || points[started]! > seen) return false;
      started++;
      return true;
    },
    get started() {
      return started;
    },
  };
}
