/**
 * The compare-and-set ledger (the JetStream store's) never overspends, with calls reserving and
 * settling truly at once: a property test over seeded schedules of 30 concurrent calls on a
 * root and two children, against a key-value backend whose every read and write yields for a
 * random while (so compare-and-set conflicts happen). Every value ever written is checked: no
 * account is over a cap at any moment; at the end nothing is held and the spend is exactly what
 * the granted calls used.
 */
import { describe, expect, it } from 'vitest';
import { type CasBackend, casLedger } from '../../src/store/cas-budgets.js';
import type { BudgetAmount } from '../../src/store/budgets.js';
import { seeded } from '../support/seeded.js';

const ROOT = { tokens: 1000, modelCalls: 10, toolCalls: 5 };
const CHILD = { tokens: 400, modelCalls: 4 };

/** A key-value store in memory whose operations yield for a seeded random number of ticks; it checks each value written. */
function yieldingBackend(rand: () => number, check: (value: string) => void): CasBackend & { conflicts: number } {
  const data = new Map<string, { value: string; revision: number }>();
  let revision = 0;
  const pause = async () => {
    for (let i = Math.floor(rand() * 4); i > 0; i--) await Promise.resolve();
  };
  const backend = {
    conflicts: 0,
    async get(key: string) {
      await pause();
      const v = data.get(key);
      return v && { ...v };
    },
    async put(key: string, value: string, expected: number) {
      await pause();
      if ((data.get(key)?.revision ?? 0) !== expected) {
        backend.conflicts++;
        return false;
      }
      check(value);
      data.set(key, { value, revision: ++revision });
      return true;
    },
  };
  return backend;
}

describe('the compare-and-set ledger never overspends', () => {
  it('100 seeded schedules of 30 concurrent calls', async () => {
    let conflicts = 0;
    let refused = 0;
    for (let seed = 1; seed <= 100; seed++) {
      const rand = seeded(seed);
      const backend = yieldingBackend(rand, (value) => {
        const { account } = JSON.parse(value) as { account: { caps: Record<string, number>; spent: BudgetAmount; reserved: BudgetAmount } };
        for (const limit of ['tokens', 'modelCalls', 'toolCalls'] as const) {
          const cap = account.caps[limit];
          if (cap !== undefined && account.spent[limit] + account.reserved[limit] > cap) throw new Error(`seed ${seed}: over the ${limit} cap`);
        }
      });
      const ledger = casLedger(backend);
      const used: BudgetAmount[] = [];
      await Promise.all(
        Array.from({ length: 30 }, async (_, c) => {
          const child = c % 3;
          const accounts = [{ id: 'root', caps: ROOT }, ...(child ? [{ id: `child${child}`, caps: CHILD }] : [])];
          const tool = rand() < 0.3;
          const worst: BudgetAmount = tool
            ? { tokens: 0, usd: 0, modelCalls: 0, toolCalls: 1 }
            : { tokens: 20 + Math.floor(rand() * 150), usd: 0, modelCalls: 1, toolCalls: 0 };
          const real = tool ? worst : { ...worst, tokens: Math.floor(worst.tokens * rand()) };
          const refusal = await ledger.reserve({ key: `k${c}`, accounts, amount: worst, now: 1000, ttlMs: 60_000 });
          if (refusal) {
            refused++;
            return;
          }
          used.push(real);
          await ledger.settle(`k${c}`, real);
          // Settling again counts nothing more.
          await ledger.settle(`k${c}`, real);
        }),
      );
      conflicts += backend.conflicts;
      const root = (await ledger.account('root'))!;
      expect(root.reserved).toEqual({ tokens: 0, usd: 0, modelCalls: 0, toolCalls: 0 });
      expect(root.spent.tokens).toBe(used.reduce((n, u) => n + u.tokens, 0));
      expect(root.spent.modelCalls + root.spent.toolCalls).toBe(used.length);
    }
    // The schedules did race (compare-and-set lost) and did reach the caps.
    expect(conflicts).toBeGreaterThan(100);
    expect(refused).toBeGreaterThan(100);
  });
});
