/**
 * Budget values as users write them (`defineSwarm({ budget })`, `withParameters({ budget })`,
 * `adhoc().run({ budget })`, `defineTeam({ budget })`, `createRuntime({ keyBudgets })`,
 * `client.extend({ budget })`), checked once where they are given.
 *
 * @module
 */
import { BUDGET_LIMITS, type BudgetCaps } from '../../machines/budget.js';
import { DefinitionError } from '../errors.js';

export type { BudgetCaps } from '../../machines/budget.js';

/**
 * A budget: caps on what a swarm (with its agents and children) may spend. Each absent cap is
 * unlimited. `tokens`: input plus output tokens of model calls; `usd`: their cost through the
 * runtime's price table; `modelCalls`, `toolCalls`: calls made; `wallMs`: a deadline, in ms from
 * the swarm's first call.
 */
export type Budget = BudgetCaps;

/** A key's budget over a time window (`createRuntime({ keyBudgets })`): e.g. a tenant per day. */
export interface KeyBudget {
  budget: Budget;
  /** The window, in ms: spend counts in windows of this length from the epoch (86_400_000: per UTC day). */
  windowMs: number;
}

/**
 * Why `value` is not a budget, or undefined when it is one: an object whose caps, when present,
 * are finite numbers ≥ 0 (calls and ms whole), with no other keys.
 */
export function budgetProblem(value: unknown): string | undefined {
  if (!value || typeof value !== 'object' || Array.isArray(value)) return `a budget must be an object { ${BUDGET_LIMITS.join('?, ')}? }, got ${show(value)}`;
  for (const [key, cap] of Object.entries(value)) {
    if (!(BUDGET_LIMITS as readonly string[]).includes(key)) return `unknown budget cap "${key}" (caps: ${BUDGET_LIMITS.join(', ')})`;
    if (cap === undefined) continue;
    if (typeof cap !== 'number' || !Number.isFinite(cap) || cap < 0) return `budget ${key} must be a finite number ≥ 0, got ${show(cap)}`;
    if (key !== 'tokens' && key !== 'usd' && !Number.isInteger(cap)) return `budget ${key} must be a whole number, got ${cap}`;
  }
  return undefined;
}

/** `value` as a budget (its defined caps only), or undefined when absent; throws a {@link DefinitionError} naming `owner`. */
export function checkBudget(value: unknown, owner: string): Budget | undefined {
  if (value === undefined) return undefined;
  const problem = budgetProblem(value);
  if (problem) throw new DefinitionError(`${owner}: ${problem}`);
  return Object.fromEntries(Object.entries(value as Budget).filter(([, v]) => v !== undefined)) as Budget;
}

/** Checks `createRuntime`'s `keyBudgets`; throws a `TypeError` naming the wrong entry. */
export function checkKeyBudgets(value: unknown): Record<string, KeyBudget> | undefined {
  if (value === undefined) return undefined;
  if (!value || typeof value !== 'object' || Array.isArray(value)) throw new TypeError('createRuntime: keyBudgets must be { [key]: { budget, windowMs } }');
  for (const [key, entry] of Object.entries(value as Record<string, KeyBudget>)) {
    const problem = entry && typeof entry === 'object' ? budgetProblem(entry.budget) : 'must be { budget, windowMs }';
    if (problem) throw new TypeError(`createRuntime: keyBudgets["${key}"]: ${problem}`);
    if (typeof entry.windowMs !== 'number' || !Number.isInteger(entry.windowMs) || entry.windowMs < 1) {
      throw new TypeError(`createRuntime: keyBudgets["${key}"].windowMs must be a whole number of ms ≥ 1, got ${show(entry.windowMs)}`);
    }
  }
  return value as Record<string, KeyBudget>;
}

function show(value: unknown): string {
  return typeof value === 'number' ? String(value) : (JSON.stringify(value) ?? String(value));
}
