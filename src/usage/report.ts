/**
 * A swarm's usage report (`client.usage()`): its own model calls' tokens (the orchestrator's and
 * its agents'), by model, and the total rolled up over its children; with a price table
 * (`createRuntime({ prices })`), their cost in USD. A model without a price is listed as
 * unpriced and no USD is guessed for it: a total with an unpriced model has no `usd`.
 *
 * @module
 */
import type { Usage } from '../../machines/messages.js';
import type { BudgetCaps, BudgetLimit } from '../../machines/budget.js';
import { addByModel, type ModelUsage, type UsageByModel, type UsageLedger } from '../../machines/usage.js';

/** What one model's tokens cost, in USD per million tokens. Cached input: `inputPerMTok` if not given. */
export interface ModelPrice {
  inputPerMTok: number;
  outputPerMTok: number;
  cachedInputPerMTok?: number;
}

/** A price table: model name (`Model.name`) → its prices. */
export type Prices = Record<string, ModelPrice>;

/** One model's row of a report: its usage and, when it has a price, what it cost. */
export interface ModelUsageReport extends ModelUsage {
  usd?: number;
}

/** Usage summed over models, with its cost (absent if a model is unpriced; those are listed). */
export interface UsageTotals {
  inputTokens: number;
  outputTokens: number;
  cachedInputTokens: number;
  modelCalls: number;
  byModel: Record<string, ModelUsageReport>;
  /** The cost in USD, present only when every model used has a price (none used: 0). */
  usd?: number;
  /** Models used that have no price in the table: no USD is guessed for them. */
  unpriced?: string[];
}

/**
 * A swarm's usage: the top-level fields are its own model calls' (orchestrator and agents; the
 * meaning `inputTokens`/`outputTokens` always had); `total` adds its children's (child swarms,
 * remote peers that report usage), rolled up over every level.
 */
export interface UsageReport extends UsageTotals {
  total: UsageTotals;
  /**
   * The budgets the swarm draws from (see docs/budgets.md), outermost first, its own last, as
   * they stand in the ledger: absent for a swarm without any.
   */
  budgets?: BudgetStatus[];
}

/** What a budget's spend is counted in. */
export type BudgetSpend = Record<Exclude<BudgetLimit, 'wallMs'>, number>;

/**
 * One budget account as it stands: its caps, what settled calls spent and what calls in flight
 * hold, and what is left of each cap (for `wallMs`, the ms left before its deadline).
 */
export interface BudgetStatus {
  account: string;
  caps: BudgetCaps;
  spent: BudgetSpend;
  reserved: BudgetSpend;
  left: Partial<Record<BudgetLimit, number>>;
}

const PRICE_KEYS = ['inputPerMTok', 'outputPerMTok', 'cachedInputPerMTok'] as const;

/** Checks `createRuntime`'s `prices`; throws a `TypeError` naming the wrong entry. */
export function checkPrices(prices: unknown): Prices | undefined {
  if (prices === undefined) return undefined;
  if (!prices || typeof prices !== 'object' || Array.isArray(prices)) {
    throw new TypeError('createRuntime: prices must be { [modelName]: { inputPerMTok, outputPerMTok, cachedInputPerMTok? } }');
  }
  for (const [name, price] of Object.entries(prices)) {
    if (!price || typeof price !== 'object') throw new TypeError(`createRuntime: prices["${name}"] must be { inputPerMTok, outputPerMTok, cachedInputPerMTok? }`);
    for (const key of PRICE_KEYS) {
      const v = (price as Record<string, unknown>)[key];
      if (v === undefined && key === 'cachedInputPerMTok') continue;
      if (typeof v !== 'number' || !Number.isFinite(v) || v < 0) {
        throw new TypeError(`createRuntime: prices["${name}"].${key} must be a finite number of USD per million tokens, 0 or more (got ${String(v)})`);
      }
    }
  }
  return prices as Prices;
}

/** The cost of one model's usage: cached input tokens (part of the input) at the cached price. */
function costOf(u: ModelUsage, price: ModelPrice): number {
  const cached = Math.min(u.cachedInputTokens, u.inputTokens);
  const usd = (u.inputTokens - cached) * price.inputPerMTok + cached * (price.cachedInputPerMTok ?? price.inputPerMTok) + u.outputTokens * price.outputPerMTok;
  return usd / 1_000_000;
}

/** Totals and costs of a usage by model. */
export function totalsOf(byModel: UsageByModel, prices: Prices | undefined): UsageTotals {
  const totals: UsageTotals = { inputTokens: 0, outputTokens: 0, cachedInputTokens: 0, modelCalls: 0, byModel: {} };
  let usd = 0;
  const unpriced: string[] = [];
  for (const [name, u] of Object.entries(byModel).sort(([a], [b]) => a.localeCompare(b))) {
    totals.inputTokens += u.inputTokens;
    totals.outputTokens += u.outputTokens;
    totals.cachedInputTokens += u.cachedInputTokens;
    totals.modelCalls += u.calls;
    const price = prices && Object.hasOwn(prices, name) ? prices[name] : undefined;
    if (price) {
      const cost = costOf(u, price);
      usd += cost;
      totals.byModel[name] = { ...u, usd: cost };
    } else {
      totals.byModel[name] = { ...u };
      unpriced.push(name);
    }
  }
  if (unpriced.length > 0) totals.unpriced = unpriced;
  else totals.usd = usd;
  return totals;
}

/**
 * The report of a swarm whose context holds `usage` (its own tokens) and `usageByModel` (absent
 * in a snapshot taken before usage was kept by model: its own tokens then are all it has).
 */
export function usageReport(context: { usage?: Usage; usageByModel?: UsageLedger } | undefined, prices: Prices | undefined): UsageReport {
  const ledger = context?.usageByModel ?? { own: {}, children: {} };
  const own = totalsOf(ledger.own, prices);
  const usage = context?.usage ?? { inputTokens: 0, outputTokens: 0 };
  return {
    ...own,
    // The swarm's own tokens as counted since it began (a snapshot from before the ledger has them only here).
    inputTokens: usage.inputTokens,
    outputTokens: usage.outputTokens,
    cachedInputTokens: usage.cachedInputTokens ?? own.cachedInputTokens,
    total: totalsOf(addByModel(ledger.own, ledger.children), prices),
  };
}
