/**
 * The kinds of pause, listed once: the pause tool's schema, the judge and the REST API read
 * this list, and `PauseReason['type']` is derived from it.
 *
 * @module
 */
import type { BudgetLimit } from './budget.js';

/** Every kind of pause a swarm may be in. */
export const PAUSE_TYPES = ['HITL', 'EMERGENCY', 'APPROVAL_NEEDED'] as const;

/** One kind of pause a model or a human may ask for. */
export type PauseType = (typeof PAUSE_TYPES)[number];

/**
 * The pause the runtime makes itself when a limit would be exceeded (`onLimit: 'pause'`): never
 * asked for by a model or a client, so not in {@link PAUSE_TYPES}.
 */
export const LIMIT_PAUSE = 'LIMIT';

/**
 * What a limit pause says tripped: the limit, what was spent of it, and what is left.
 * `struggling` is stall detection (`stall` on a swarm, see `stall.ts`): `rule` says which.
 */
export interface LimitTrip {
  limit: 'maxTurns' | 'struggling' | BudgetLimit;
  max: number;
  spent: number;
  left: number;
  /** For `struggling`: the rule that tripped, and the repeated tool for `repeats`. */
  rule?: 'repeats' | 'turnsWithoutNewResult';
  toolName?: string;
  /** For a budget: the ledger account that tripped (`swarm:<id>`, `key:<key>@<window>`, `team:<id>`). */
  account?: string;
}
