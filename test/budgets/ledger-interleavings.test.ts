/**
 * The budget ledger never overspends, in any interleaving: a property test over seeded random
 * interleavings of many calls reserving and settling against nested accounts (a root, its
 * children), some dying mid-call (their reservation expires and counts at its worst case), some
 * re-made after a "restart" (same key: the reservation is found, not taken twice) and settled
 * twice (counted once) — on the memory ledger, and on SQLite with two stores on one file (two
 * processes' worth of connections) taking turns.
 */
import { describe, expect, it } from 'vitest';
import { type BudgetAmount, type BudgetLedger, memoryLedger } from '../../src/store/budgets.js';
import { sqliteStore } from '../../src/index.js';
import { sqliteFilePerTest } from '../support/sqlite-file.js';
import { seeded } from '../support/seeded.js';

const file = sqliteFilePerTest('xswarm-budget-ledger-');

const ROOT = { tokens: 1000, usd: 0.5, modelCalls: 12, toolCalls: 6 };
const CHILD = { tokens: 400, modelCalls: 5 };

type Op = { call: number; step: 'reserve' | 'settle' | 'die' | 'retry' | 'settle-again' };

/** One interleaving: each call reserves, then settles (or dies, or is retried and settled twice), the calls' steps shuffled together. */
function interleaving(rand: () => number, calls: number): Op[] {
  const queues: Op[][] = [];
  for (let c = 0; c < calls; c++) {
    const r = rand();
    queues.push(
      r < 0.1
        ? [
            { call: c, step: 'reserve' },
            { call: c, step: 'die' },
          ]
        : r < 0.25
          ? [
              { call: c, step: 'reserve' },
              { call: c, step: 'retry' },
              { call: c, step: 'settle' },
              { call: c, step: 'settle-again' },
            ]
          : [
              { call: c, step: 'reserve' },
              { call: c, step: 'settle' },
            ],
    );
  }
  const ops: Op[] = [];
  while (queues.some((q) => q.length > 0)) {
    const open = queues.filter((q) => q.length > 0);
    ops.push(open[Math.floor(rand() * open.length)]!.shift()!);
  }
  return ops;
}

/** Runs one interleaving on `ledgers` (taking turns) and checks after every step that no account is over a cap. */
async function check(seed: number, ledgers: BudgetLedger[]): Promise<{ granted: number; refused: number }> {
  const rand = seeded(seed);
  const calls = 40;
  const plan = Array.from({ length: calls }, (_, c) => {
    const child = c % 3; // 0: the root's own calls; 1, 2: two children drawing from the root
    const accounts = [{ id: `root:${seed}`, caps: ROOT }, ...(child ? [{ id: `child${child}:${seed}`, caps: CHILD }] : [])];
    const tool = rand() < 0.3;
    const worst: BudgetAmount = tool
      ? { tokens: 0, usd: 0, modelCalls: 0, toolCalls: 1 }
      : { tokens: 20 + Math.floor(rand() * 150), usd: rand() * 0.08, modelCalls: 1, toolCalls: 0 };
    // What the call really used: at most its worst case.
    const used: BudgetAmount = tool ? worst : { ...worst, tokens: Math.floor(worst.tokens * rand()), usd: worst.usd * rand() };
    return { key: `k${seed}:${c}`, accounts, worst, used };
  });
  let now = 1_000;
  // Longer than any interleaving: only the dead calls expire, at the sweep below.
  const ttlMs = 1_000;
  const granted = new Set<number>();
  let refused = 0;
  let turn = 0;
  const ledger = () => ledgers[turn++ % ledgers.length]!;
  const ops = interleaving(rand, calls);
  const died = new Set(ops.flatMap((o) => (o.step === 'die' ? [o.call] : [])));
  for (const op of ops) {
    now += 1;
    const p = plan[op.call]!;
    if (op.step === 'reserve' || op.step === 'retry') {
      const refusal = await ledger().reserve({ key: p.key, accounts: p.accounts, amount: p.worst, now, ttlMs });
      if (refusal) {
        // A refusal names a cap that the call would really have exceeded.
        expect(refusal.wanted).toBeGreaterThan(refusal.left);
        if (op.step === 'reserve') refused++;
      } else granted.add(op.call);
    } else if (op.step === 'settle' || op.step === 'settle-again') {
      if (granted.has(op.call)) await ledger().settle(p.key, p.used);
    }
    // 'die': nothing settles it; it expires.
    for (const id of [`root:${seed}`, `child1:${seed}`, `child2:${seed}`]) {
      const a = await ledger().account(id);
      if (!a) continue;
      for (const limit of ['tokens', 'usd', 'modelCalls', 'toolCalls'] as const) {
        const cap = a.caps[limit];
        if (cap === undefined) continue;
        // A plain check: expect() in this innermost loop would cost most of the test's time.
        if (a.spent[limit] + a.reserved[limit] > cap) throw new Error(`seed ${seed}: ${id} is over its ${limit} cap after ${op.step} of call ${op.call}`);
      }
    }
  }
  // Past every expiry, one more reservation sweeps the dead calls' holds into spent: still within the caps.
  now += ttlMs + 1;
  await ledger().reserve({
    key: `sweep:${seed}`,
    accounts: [{ id: `root:${seed}`, caps: ROOT }],
    amount: { tokens: 0, usd: 0, modelCalls: 0, toolCalls: 0 },
    now,
    ttlMs,
  });
  const root = (await ledger().account(`root:${seed}`))!;
  expect(root.reserved).toEqual({ tokens: 0, usd: 0, modelCalls: 0, toolCalls: 0 });
  // Spent is exactly what the granted calls used (dead ones at their worst case), each counted once.
  const expected = [...granted].reduce(
    (sum, c) => {
      const p = plan[c]!;
      const u = died.has(c) ? p.worst : p.used;
      return { tokens: sum.tokens + u.tokens, modelCalls: sum.modelCalls + u.modelCalls, toolCalls: sum.toolCalls + u.toolCalls };
    },
    { tokens: 0, modelCalls: 0, toolCalls: 0 },
  );
  expect({ tokens: root.spent.tokens, modelCalls: root.spent.modelCalls, toolCalls: root.spent.toolCalls }).toEqual(expected);
  expect(root.spent.usd).toBeLessThanOrEqual(ROOT.usd + 1e-9);
  return { granted: granted.size, refused };
}

describe('the budget ledger never overspends', () => {
  it('memory: 200 seeded interleavings of 40 calls over a root and two children', async () => {
    let refused = 0;
    for (let seed = 1; seed <= 200; seed++) {
      refused += (await check(seed, [memoryLedger()])).refused;
    }
    // The caps were reached often enough for the property to mean something.
    expect(refused).toBeGreaterThan(200);
  });

  it('SQLite: two stores on one file take turns, as two processes would (20 interleavings)', async () => {
    const a = file.open({ synchronous: 'NORMAL' });
    const b = sqliteStore(file.path, { synchronous: 'NORMAL' });
    file.track(b);
    for (let seed = 1001; seed <= 1020; seed++) {
      await check(seed, [a.budgets!, b.budgets!]);
    }
  });
});
