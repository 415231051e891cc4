/**
 * The budgeted W1 row: the same runs as "W1 / memory / sequential", each with a budget on every
 * cap (tokens, USD through a price, model calls, tool calls, a wall-clock deadline), so every
 * model call reserves its worst case in the ledger before it is made and settles after: the
 * cost per model call of budgets, beside the row without one (target ≤ 10 % more).
 *
 * @module
 */
import { timeSequential } from './measure.js';
import type { Figures } from './table.js';
import { createW1Runtime, runW1, W1_MODEL_CALLS } from './w1.js';

/** Caps no W1 run reaches: the row measures the reserving, not a pause. */
const BUDGET = { tokens: 1e9, usd: 1e6, modelCalls: 1e6, toolCalls: 1e6, wallMs: 3_600_000 };

/** W1 in memory, one run at a time, every call reserved against the run's budget. */
export async function budgetedSequential(): Promise<Figures> {
  const { runtime } = createW1Runtime(0, undefined, undefined, BUDGET);
  try {
    const timing = await timeSequential(() => runW1(runtime));
    return { ...timing, usPerModelCall: timing.usPerRun / W1_MODEL_CALLS };
  } finally {
    await runtime.close();
  }
}
