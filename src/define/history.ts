/**
 * `history`, as swarms, agents and ad-hoc swarms declare it: what their model sees of a long
 * conversation (see `HistoryPolicy` in `machines/history.ts` and docs/history.md).
 *
 * @module
 */
import type { HistoryPolicy } from '../../machines/history.js';
import { DefinitionError } from '../errors.js';

export type { HistoryPolicy } from '../../machines/history.js';

/** The fewest `maxTokens` accepted: below it the pinned messages alone would not fit any model. */
export const MIN_HISTORY_TOKENS = 256;

/**
 * `value` as a {@link HistoryPolicy} (a fresh, frozen object) when it is one, or undefined when
 * absent; otherwise a {@link DefinitionError} naming `owner`.
 */
export function checkHistory(value: unknown, owner: string): HistoryPolicy | undefined {
  if (value === undefined) return undefined;
  const v = value as Partial<HistoryPolicy> | null;
  const shown = JSON.stringify(value) ?? String(value);
  if (typeof v !== 'object' || v === null) throw new DefinitionError(`${owner}: history must be { maxTokens, strategy }, got ${shown}`);
  if (typeof v.maxTokens !== 'number' || !Number.isInteger(v.maxTokens) || v.maxTokens < MIN_HISTORY_TOKENS) {
    throw new DefinitionError(
      `${owner}: history.maxTokens must be a whole number of at least ${MIN_HISTORY_TOKENS}, got ${JSON.stringify(v.maxTokens) ?? String(v.maxTokens)}`,
    );
  }
  if (v.strategy !== 'trim' && v.strategy !== 'summarize') {
    throw new DefinitionError(`${owner}: history.strategy must be 'trim' or 'summarize', got ${JSON.stringify(v.strategy) ?? String(v.strategy)}`);
  }
  return Object.freeze({ maxTokens: v.maxTokens, strategy: v.strategy });
}
