/**
 * The JetStream store's budget ledger: the compare-and-set ledger (`../cas-budgets.ts`) over a KV
 * bucket of its own (`<prefix>_budgets`, created on first use), so every runtime on the same NATS
 * and prefix draws from the same accounts.
 *
 * @module
 */
import { type CasBackend, casLedger } from '../cas-budgets.js';
import type { BudgetLedger } from '../budgets.js';
import type { Names } from './names.js';
import { isWrongSequence, unavailable } from './outage.js';
import type { Setup } from './setup.js';
import { sideBucket } from './side-bucket.js';

/** The ledger of a JetStream store opened by `setup`. */
export function jetstreamLedger(setup: Setup, names: Names, timeoutMs: number): BudgetLedger {
  const kv = sideBucket(setup, names.budgetBucket, timeoutMs, unavailable);
  const backend: CasBackend = {
    async get(key) {
      const entry = await (await kv()).get(key).catch((e: unknown) => {
        throw unavailable(e);
      });
      return entry && entry.operation === 'PUT' ? { value: entry.string(), revision: entry.revision } : undefined;
    },
    async put(key, value, revision) {
      try {
        await (await kv()).put(key, value, { previousSeq: revision, timeout: timeoutMs });
        return true;
      } catch (e) {
        if (isWrongSequence(e)) return false;
        throw unavailable(e);
      }
    },
  };
  return casLedger(backend);
}
