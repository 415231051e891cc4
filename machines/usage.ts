/**
 * Usage by model: how many model calls, and how many input, output and cached input tokens
 * they reported, per model name. A swarm keeps its own calls' (orchestrator and agents) apart
 * from its children's (child swarms' and remote peers' rolled-up totals, added once each when
 * the handoff's result is recorded), so a report can give both.
 *
 * Plain JSON: it lives in the swarm machine's context, hence in every snapshot.
 *
 * @module
 */
import type { Usage } from './messages.js';

/** What one model's calls used. `inputTokens` includes `cachedInputTokens` (as OpenAI reports them). */
export interface ModelUsage {
  calls: number;
  inputTokens: number;
  outputTokens: number;
  cachedInputTokens: number;
}

/** Usage per model name. */
export type UsageByModel = Record<string, ModelUsage>;

/** A swarm's usage by model: its own model calls', and its children's rolled-up totals. */
export interface UsageLedger {
  own: UsageByModel;
  children: UsageByModel;
}

/** The name a call is counted under when its model is not known (a journal recorded before models were named). */
export const UNKNOWN_MODEL = 'unknown';

/** An empty ledger. */
export const emptyLedger = (): UsageLedger => ({ own: {}, children: {} });

/** `total` plus one usage, tokens and all (`usage` may also carry a token count only). */
function plus(total: ModelUsage | undefined, calls: number, usage: Usage | undefined): ModelUsage {
  return {
    calls: (total?.calls ?? 0) + calls,
    inputTokens: (total?.inputTokens ?? 0) + (usage?.inputTokens ?? 0),
    outputTokens: (total?.outputTokens ?? 0) + (usage?.outputTokens ?? 0),
    cachedInputTokens: (total?.cachedInputTokens ?? 0) + (usage?.cachedInputTokens ?? 0),
  };
}

/** `byModel` with one more call of `model`, which reported `usage` (or nothing). */
export function addCall(byModel: UsageByModel, model: string | undefined, usage: Usage | undefined): UsageByModel {
  const name = model ?? UNKNOWN_MODEL;
  return { ...byModel, [name]: plus(byModel[name], 1, usage) };
}

/** The sum of two usages by model. */
export function addByModel(a: UsageByModel, b: UsageByModel): UsageByModel {
  const sum: UsageByModel = { ...a };
  for (const [name, u] of Object.entries(b)) sum[name] = plus(sum[name], u.calls, u);
  return sum;
}

/** A ledger's rolled-up total: its own calls plus its children's. */
export const rolledUp = (ledger: UsageLedger): UsageByModel => addByModel(ledger.own, ledger.children);

/** Whether `value` is a usage by model (a peer's report is checked before it is counted). */
export function isUsageByModel(value: unknown): value is UsageByModel {
  if (!value || typeof value !== 'object' || Array.isArray(value)) return false;
  return Object.values(value).every(
    (u) =>
      !!u &&
      typeof u === 'object' &&
      (['calls', 'inputTokens', 'outputTokens', 'cachedInputTokens'] as const).every((k) => {
        const n = (u as Record<string, unknown>)[k];
        return typeof n === 'number' && Number.isFinite(n) && n >= 0;
      }),
  );
}
