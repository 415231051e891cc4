/**
 * The budget ledger: accounts (caps, what was spent, what is reserved) and the reservations of
 * calls in flight, kept by the store so every runtime on the same store draws from the same
 * accounts. A call reserves its worst case against every enclosing account at once — all or
 * nothing — and settles with what it really used; reservations are keyed by the call's key, so
 * a call re-made after a restart finds its own reservation instead of taking a second one, and
 * settling twice counts once.
 *
 * The rules are written once here ({@link BudgetBook}) over a small table interface
 * ({@link BudgetTables}): the memory ledger runs them on maps, the SQLite ledger inside one
 * transaction (`sqlite/budgets.ts`).
 *
 * @module
 */
import { BUDGET_LIMITS, type BudgetCaps, type BudgetLimit } from '../../machines/budget.js';

/** What a call uses (or may use) of an account. */
export interface BudgetAmount {
  tokens: number;
  usd: number;
  modelCalls: number;
  toolCalls: number;
}

/** An account as the ledger keeps it. */
export interface BudgetAccount {
  caps: BudgetCaps;
  /** When it was opened (ms since epoch): `wallMs` counts from here. */
  openedAt: number;
  /** What settled calls used. */
  spent: BudgetAmount;
  /** What calls in flight hold. */
  reserved: BudgetAmount;
}

/** A call's hold on its accounts until it settles. */
export interface BudgetReservation {
  accounts: string[];
  amount: BudgetAmount;
  /** Past it, its holder is taken for dead: the reservation is counted as spent (the call may have been billed). */
  expiresAt: number;
}

/** Why a reservation was refused: the first cap of the first account it would exceed. */
export interface BudgetRefusal {
  account: string;
  limit: BudgetLimit;
  max: number;
  /** What settled calls spent of it (for `wallMs`, the ms elapsed). */
  spent: number;
  /** What is left of it, reservations in flight deducted. */
  left: number;
  /** What the call wanted of it. */
  wanted: number;
}

/** A reservation request: the call's key, the accounts (opened with `caps` when absent) and its worst case. */
export interface ReserveRequest {
  key: string;
  accounts: readonly { id: string; caps: BudgetCaps }[];
  amount: BudgetAmount;
  now: number;
  /** How long the reservation holds without its call settling it. */
  ttlMs: number;
}

/**
 * The ledger behind a store. Methods may answer at once (memory, SQLite) or with a promise (a
 * network store).
 */
export interface BudgetLedger {
  /**
   * Reserves `amount` against every account, atomically: all of them, or none when one cap would
   * be exceeded (the refusal says which). Idempotent by `key`: a reservation still held is
   * returned as it is.
   */
  reserve(request: ReserveRequest): BudgetRefusal | undefined | Promise<BudgetRefusal | undefined>;
  /** Settles `key`'s reservation with what the call used; a key not held (settled already) is ignored. */
  settle(key: string, used: BudgetAmount): void | Promise<void>;
  /**
   * Counts what was spent elsewhere, unreserved (a remote peer's reported usage), on every
   * account: the truth is recorded even past a cap, so the next reservation is refused.
   */
  charge(request: Omit<ReserveRequest, 'key' | 'ttlMs'>): void | Promise<void>;
  /**
   * Raises an account's caps (those named; the others stay), opening it with `opening` and them
   * when absent; lowering one is refused with a `RangeError`.
   */
  raise(account: string, caps: BudgetCaps, now: number, opening?: BudgetCaps): void | Promise<void>;
  /** An account as it stands, or undefined when it was never opened. */
  account(id: string): BudgetAccount | undefined | Promise<BudgetAccount | undefined>;
}

/** Nothing used. */
export const zeroAmount = (): BudgetAmount => ({ tokens: 0, usd: 0, modelCalls: 0, toolCalls: 0 });

/**
 * USD in whole nano-dollars: sums of fractions of a dollar drift in floating point (a reservation
 * taken and released would leave -1e-17 behind, a cap could be passed by as much); integers add
 * exactly, and each result is the double nearest its nano-dollar count.
 */
const nano = (usd: number): number => Math.round(usd * 1e9);

/** `a` plus `b` (minus, with `sign` -1), USD counted in whole nano-dollars. */
export const plus = (a: BudgetAmount, b: BudgetAmount, sign = 1): BudgetAmount => ({
  tokens: a.tokens + sign * b.tokens,
  usd: (nano(a.usd) + sign * nano(b.usd)) / 1e9,
  modelCalls: a.modelCalls + sign * b.modelCalls,
  toolCalls: a.toolCalls + sign * b.toolCalls,
});

/** The rows a ledger reads and writes, inside whatever makes one call atomic. */
export interface BudgetTables {
  getAccount(id: string): BudgetAccount | undefined;
  putAccount(id: string, account: BudgetAccount): void;
  getReservation(key: string): BudgetReservation | undefined;
  putReservation(key: string, reservation: BudgetReservation): void;
  deleteReservation(key: string): void;
  /** Keys of reservations whose `expiresAt` is before `now`. */
  expired(now: number): string[];
}

/** The ledger's rules over its tables; each method must run atomically (one transaction). */
export class BudgetBook {
  constructor(private readonly t: BudgetTables) {}

  reserve(r: ReserveRequest): BudgetRefusal | undefined {
    // Holders that died: what they held counts as spent (their calls may have been billed).
    for (const key of this.t.expired(r.now)) {
      const held = this.t.getReservation(key);
      if (held) this.settle(key, held.amount);
    }
    const existing = this.t.getReservation(r.key);
    if (existing) {
      this.t.putReservation(r.key, { ...existing, expiresAt: r.now + r.ttlMs });
      return undefined;
    }
    const accounts: [string, BudgetAccount][] = [];
    for (const { id, caps } of r.accounts) {
      const account = this.t.getAccount(id) ?? { caps, openedAt: r.now, spent: zeroAmount(), reserved: zeroAmount() };
      const refusal = refusalOf(id, account, r.amount, r.now);
      if (refusal) return refusal;
      accounts.push([id, account]);
    }
    for (const [id, account] of accounts) this.t.putAccount(id, { ...account, reserved: plus(account.reserved, r.amount) });
    this.t.putReservation(r.key, { accounts: accounts.map(([id]) => id), amount: r.amount, expiresAt: r.now + r.ttlMs });
    return undefined;
  }

  settle(key: string, used: BudgetAmount): void {
    const held = this.t.getReservation(key);
    if (!held) return;
    for (const id of held.accounts) {
      const account = this.t.getAccount(id);
      if (account) this.t.putAccount(id, { ...account, spent: plus(account.spent, used), reserved: plus(account.reserved, held.amount, -1) });
    }
    this.t.deleteReservation(key);
  }

  charge(r: Omit<ReserveRequest, 'key' | 'ttlMs'>): void {
    for (const { id, caps } of r.accounts) {
      const account = this.t.getAccount(id) ?? { caps, openedAt: r.now, spent: zeroAmount(), reserved: zeroAmount() };
      this.t.putAccount(id, { ...account, spent: plus(account.spent, r.amount) });
    }
  }

  raise(id: string, caps: BudgetCaps, now: number, opening: BudgetCaps = {}): void {
    const account = this.t.getAccount(id);
    if (!account) return this.t.putAccount(id, { caps: { ...opening, ...caps }, openedAt: now, spent: zeroAmount(), reserved: zeroAmount() });
    for (const limit of BUDGET_LIMITS) {
      const was = account.caps[limit];
      const next = caps[limit];
      if (next !== undefined && was !== undefined && next < was) throw new RangeError(`budget ${limit} can only be raised: it is ${was}, ${next} is lower`);
    }
    this.t.putAccount(id, { ...account, caps: { ...account.caps, ...caps } });
  }
}

/** The first cap of `account` that `amount` would exceed at `now`, or undefined. */
export function refusalOf(id: string, account: BudgetAccount, amount: BudgetAmount, now: number): BudgetRefusal | undefined {
  for (const limit of BUDGET_LIMITS) {
    const max = account.caps[limit];
    if (max === undefined) continue;
    if (limit === 'wallMs') {
      const elapsed = now - account.openedAt;
      if (elapsed >= max) return { account: id, limit, max, spent: elapsed, left: 0, wanted: 0 };
      continue;
    }
    const wanted = amount[limit];
    if (wanted === 0) continue;
    const spent = account.spent[limit];
    if (limit === 'usd') {
      const left = nano(max) - nano(spent) - nano(account.reserved.usd);
      if (nano(wanted) > left) return { account: id, limit, max, spent, left: Math.max(0, left) / 1e9, wanted };
      continue;
    }
    const left = max - spent - account.reserved[limit];
    if (wanted > left) return { account: id, limit, max, spent, left: Math.max(0, left), wanted };
  }
  return undefined;
}

const NONE: string[] = [];

/**
 * A ledger in memory: for the memory store, and for a store that keeps none (its accounts then
 * live as long as the process and are not shared with other processes).
 */
export function memoryLedger(): BudgetLedger {
  const accounts = new Map<string, BudgetAccount>();
  const reservations = new Map<string, BudgetReservation>();
  // The earliest expiry of any reservation (or later): before it, no scan is needed.
  let earliest = Number.POSITIVE_INFINITY;
  const book = new BudgetBook({
    getAccount: (id) => accounts.get(id),
    putAccount: (id, a) => void accounts.set(id, a),
    getReservation: (key) => reservations.get(key),
    putReservation: (key, r) => {
      reservations.set(key, r);
      if (r.expiresAt < earliest) earliest = r.expiresAt;
    },
    deleteReservation: (key) => void reservations.delete(key),
    expired: (now) => {
      if (now <= earliest) return NONE;
      const keys: string[] = [];
      earliest = Number.POSITIVE_INFINITY;
      for (const [key, r] of reservations) {
        if (r.expiresAt < now) keys.push(key);
        else if (r.expiresAt < earliest) earliest = r.expiresAt;
      }
      return keys;
    },
  });
  return {
    reserve: (r) => book.reserve(r),
    settle: (key, used) => book.settle(key, used),
    charge: (r) => book.charge(r),
    raise: (id, caps, now, opening) => book.raise(id, caps, now, opening),
    account: (id) => {
      const a = accounts.get(id);
      return a && structuredClone(a);
    },
  };
}
