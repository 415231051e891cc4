/**
 * The inspected W1 row: the same runs as "W1 / memory / sequential", on a runtime whose actors
 * all report to an inspection relay (`createRuntime({ inspect: relay.inspect })`, no viewer
 * connected): the cost per model call of watching, beside the row without an observer.
 *
 * @module
 */
import { inspectRelay } from '../src/inspect/relay.js';
import { timeSequential } from './measure.js';
import type { Figures } from './table.js';
import { createW1Runtime, runW1, W1_MODEL_CALLS } from './w1.js';

/** W1 in memory, one run at a time, every actor inspected through the relay. */
export async function inspectedSequential(): Promise<Figures> {
  const relay = await inspectRelay({ port: 0 });
  const { runtime } = createW1Runtime(0, undefined, relay.inspect);
  try {
    const timing = await timeSequential(() => runW1(runtime));
    // Every finished run's actors were dropped by the relay: what it holds does not grow.
    await new Promise((r) => setTimeout(r, 10));
    if (relay.liveActors() !== 0) throw new Error(`the relay still holds ${relay.liveActors()} actors after the runs`);
    return { ...timing, usPerModelCall: timing.usPerRun / W1_MODEL_CALLS };
  } finally {
    await runtime.close();
    await relay.close();
  }
}
