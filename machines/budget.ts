/**
 * Budgets as plain JSON, as a swarm's configuration holds them (the snapshot keeps them, so a
 * restored swarm draws from the same accounts). The machine never reads them: the runtime
 * reserves each call against them before it is made (`src/runtime/budget-gate.ts`), in a ledger
 * kept by the store (`src/store/budgets.ts`).
 *
 * @module
 */

/** The caps of a budget; each absent cap is unlimited. */
export interface BudgetCaps {
  /** Input plus output tokens of model calls. */
  tokens?: number;
  /** Cost in USD of model calls, through the runtime's price table. */
  usd?: number;
  /** Model calls made (failed ones count). */
  modelCalls?: number;
  /** Tool calls run. */
  toolCalls?: number;
  /** Milliseconds from the account's opening (its swarm's first call): a deadline. */
  wallMs?: number;
}

/** The names of the caps, in the order reasons list them. */
export const BUDGET_LIMITS = ['tokens', 'usd', 'modelCalls', 'toolCalls', 'wallMs'] as const;

/** One cap's name. */
export type BudgetLimit = (typeof BUDGET_LIMITS)[number];

/**
 * One account a swarm's calls draw from: its id in the ledger (`swarm:<swarmId>`,
 * `team:<teamId>`), with its caps as they were when the swarm started (the ledger keeps the
 * current ones: it opens an account with these only if it does not exist yet). `key` names a
 * key budget instead (`createRuntime({ budgetKeys })`), whose account is that of the current
 * window.
 */
export type BudgetAccountRef = { id: string; caps: BudgetCaps } | { key: string };

/**
 * What a swarm's calls draw from: the enclosing budgets (`outer`: its parent's chain, its team,
 * its key), outermost first, and its own caps (`own`: the account `swarm:<swarmId>`). Every one
 * is checked, so the lower limit wins. Absent from a configuration without any.
 */
export interface SwarmBudget {
  own?: BudgetCaps;
  outer?: BudgetAccountRef[];
}

/** The ledger id of a swarm's own budget account. */
export const swarmAccount = (swarmId: string): string => `swarm:${swarmId}`;

/**
 * The accounts a child of swarm `swarmId` (a child swarm, a team worker) draws from: all of the
 * swarm's, its own account last. Empty when the swarm has no budget.
 */
export function enclosingAccounts(swarmId: string, budget: SwarmBudget | undefined): BudgetAccountRef[] {
  if (!budget) return [];
  return [...(budget.outer ?? []), ...(budget.own ? [{ id: swarmAccount(swarmId), caps: budget.own }] : [])];
}
