/**
 * The W1 row with metrics on: the same runs as "W1 / memory / sequential", on a runtime created
 * with `metrics: true` (every durable event counted, every commit timed), scraped once at the
 * end: the cost per model call of the metrics, beside the row without them (whose figures must
 * not move: a runtime without metrics builds none of it).
 *
 * @module
 */
import { timeSequential } from './measure.js';
import type { Figures } from './table.js';
import { createW1Runtime, runW1, W1_MODEL_CALLS } from './w1.js';

/** W1 in memory, one run at a time, with the runtime's Prometheus metrics on. */
export async function metricsSequential(): Promise<Figures> {
  const { runtime } = createW1Runtime(0, undefined, undefined, undefined, { metrics: true });
  try {
    const timing = await timeSequential(() => runW1(runtime));
    // The metrics counted every call: a row whose metrics were off would measure nothing.
    const text = await runtime.metrics!.metrics();
    const counted = /^xswarm_model_calls_total\{[^}]*\} (\d+)$/m.exec(text);
    if (!counted || Number(counted[1]) % W1_MODEL_CALLS !== 0 || Number(counted[1]) === 0)
      throw new Error(`the metrics did not count the runs' model calls: ${counted?.[0]}`);
    return { ...timing, usPerModelCall: timing.usPerRun / W1_MODEL_CALLS };
  } finally {
    await runtime.close();
  }
}
