/**
 * A budget ledger over a key-value store with compare-and-set (a JetStream KV bucket): one value
 * per account, holding the account and the holds of the calls in flight on it. A reservation
 * takes its hold on each account in turn, each by compare-and-set on that account's revision
 * (re-read and decided again when another writer came first), and releases those it took when
 * one account refuses: no account is ever over a cap, whichever processes reserve at once. A hold
 * left by a process that died before it settled expires on its account (counted as spent at its
 * worst case, as the other ledgers do), so a half-made reservation costs capacity for a while,
 * never an overspend.
 *
 * @module
 */
import type { BudgetCaps } from '../../machines/budget.js';
import { type BudgetAccount, BudgetBook, type BudgetAmount, type BudgetLedger, type BudgetRefusal, plus, type ReserveRequest, refusalOf, zeroAmount } from './budgets.js';

/** A value and its revision (0: absent). */
export interface CasValue {
  value: string;
  revision: number;
}

/** What the ledger needs of a key-value store. */
export interface CasBackend {
  /** The value under `key`, or undefined when there is none. */
  get(key: string): Promise<CasValue | undefined>;
  /** Writes `value` if `key` is still at `revision` (0: absent); false when another writer came first. */
  put(key: string, value: string, revision: number): Promise<boolean>;
}

/** What one account's value holds: the account, and the holds of calls in flight by call key. */
interface AccountValue {
  account: BudgetAccount;
  holds: Record<string, { amount: BudgetAmount; expiresAt: number }>;
}

/** The key of an account's value: `b.` and its id in base64url (keys take few characters). */
const keyOf = (id: string) => `b.${Buffer.from(id).toString('base64url')}`;

/** A budget ledger over `backend` (see the module's note). */
export function casLedger(backend: CasBackend): BudgetLedger {
  // The accounts each call holds, for its settle (a process that restarted learns them again
  // when the call is made again; a hold nobody settles expires).
  const held = new Map<string, string[]>();

  /** Applies `change` to account `id` by compare-and-set, re-reading until it is written or `change` declines. */
  async function update<R>(id: string, change: (cur: AccountValue | undefined) => { next?: AccountValue; result: R }): Promise<R> {
    for (;;) {
      const cur = await backend.get(keyOf(id));
      const { next, result } = change(cur ? (JSON.parse(cur.value) as AccountValue) : undefined);
      if (!next || (await backend.put(keyOf(id), JSON.stringify(next), cur?.revision ?? 0))) return result;
    }
  }

  /** `v` with its expired holds counted as spent (their holders died: their calls may have been billed). */
  function swept(v: AccountValue, now: number): AccountValue {
    let account = v.account;
    let holds = v.holds;
    for (const [key, h] of Object.entries(v.holds)) {
      if (h.expiresAt >= now) continue;
      if (holds === v.holds) holds = { ...v.holds };
      delete holds[key];
      account = { ...account, spent: plus(account.spent, h.amount), reserved: plus(account.reserved, h.amount, -1) };
    }
    return holds === v.holds ? v : { account, holds };
  }

  async function release(ids: readonly string[], key: string, used?: BudgetAmount): Promise<void> {
    for (const id of ids) {
      await update(id, (cur) => {
        const hold = cur?.holds[key];
        if (!cur || !hold) return { result: undefined };
        const { [key]: _gone, ...holds } = cur.holds;
        const account = { ...cur.account, reserved: plus(cur.account.reserved, hold.amount, -1), spent: used ? plus(cur.account.spent, used) : cur.account.spent };
        return { next: { account, holds }, result: undefined };
      });
    }
  }

  return {
    async reserve(r: ReserveRequest): Promise<BudgetRefusal | undefined> {
      const taken: string[] = [];
      for (const { id, caps } of r.accounts) {
        const refusal = await update<BudgetRefusal | undefined>(id, (cur) => {
          const v = swept(cur ?? { account: { caps, openedAt: r.now, spent: zeroAmount(), reserved: zeroAmount() }, holds: {} }, r.now);
          const mine = v.holds[r.key];
          // The call made again (after a restart): its hold is found, not taken twice.
          if (mine) return { next: { ...v, holds: { ...v.holds, [r.key]: { ...mine, expiresAt: r.now + r.ttlMs } } }, result: undefined };
          const refused = refusalOf(id, v.account, r.amount, r.now);
          if (refused) return { ...(v !== cur && cur ? { next: v } : {}), result: refused };
          const account = { ...v.account, reserved: plus(v.account.reserved, r.amount) };
          return { next: { account, holds: { ...v.holds, [r.key]: { amount: r.amount, expiresAt: r.now + r.ttlMs } } }, result: undefined };
        });
        if (refusal) {
          await release(taken, r.key);
          return refusal;
        }
        taken.push(id);
      }
      held.set(r.key, taken);
      return undefined;
    },
    async settle(key, used) {
      const ids = held.get(key);
      if (!ids) return;
      held.delete(key);
      await release(ids, key, used);
    },
    async charge(r) {
      for (const { id, caps } of r.accounts) {
        await update(id, (cur) => {
          const v = cur ?? { account: { caps, openedAt: r.now, spent: zeroAmount(), reserved: zeroAmount() }, holds: {} };
          return { next: { ...v, account: { ...v.account, spent: plus(v.account.spent, r.amount) } }, result: undefined };
        });
      }
    },
    async raise(id: string, caps: BudgetCaps, now: number, opening?: BudgetCaps) {
      await update(id, (cur) => {
        // The same rules as the other ledgers: BudgetBook's, on this one account.
        let account: BudgetAccount | undefined = cur?.account;
        new BudgetBook({
          getAccount: () => account,
          putAccount: (_id, a) => void (account = a),
          getReservation: () => undefined,
          putReservation: () => undefined,
          deleteReservation: () => undefined,
          expired: () => [],
        }).raise(id, caps, now, opening);
        return { next: { account: account!, holds: cur?.holds ?? {} }, result: undefined };
      });
    },
    async account(id) {
      const cur = await backend.get(keyOf(id));
      return cur ? swept(JSON.parse(cur.value) as AccountValue, Date.now()).account : undefined;
    },
  };
}
