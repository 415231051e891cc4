/**
 * A run's budgets as its configuration holds them: its own caps (the run's, else its
 * definition's) and the accounts enclosing it (a child's parent chain, a team's, a key's).
 *
 * @module
 */
import type { BudgetAccountRef, SwarmBudget } from '../../machines/budget.js';
import { checkBudget } from '../define/budget.js';
import type { SwarmDefinition, SwarmOverrides } from '../define/swarm.js';
import { DefinitionError } from '../errors.js';

/** The budget of one run of `def`, or undefined when nothing limits it; throws a `DefinitionError` for a bad value. */
export function swarmBudget(def: SwarmDefinition, o: SwarmOverrides, outer: readonly BudgetAccountRef[] | undefined): SwarmBudget | undefined {
  const own = checkBudget(o.budget ?? def.budget, `Swarm "${def.id}"`);
  const refs = [...(outer ?? [])];
  if (o.budgetKey !== undefined) {
    if (typeof o.budgetKey !== 'string' || o.budgetKey === '') throw new DefinitionError(`Swarm "${def.id}": budgetKey must be a non-empty string`);
    refs.push({ key: o.budgetKey });
  }
  if (!own && refs.length === 0) return undefined;
  return { ...(own ? { own } : {}), ...(refs.length > 0 ? { outer: refs } : {}) };
}
