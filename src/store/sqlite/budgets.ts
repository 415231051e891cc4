/**
 * The SQLite store's budget ledger: two tables of the store's file, `budget_accounts` and
 * `budget_reservations`, read and written in one IMMEDIATE transaction per call, so processes
 * sharing the file reserve against the same accounts and never overspend between them. Created
 * if absent (a file written before budgets gains them; nothing else changes).
 *
 * @module
 */
import type Database from 'better-sqlite3';
import { type BudgetAccount, BudgetBook, type BudgetLedger, type BudgetReservation } from '../budgets.js';

const SCHEMA = `
  CREATE TABLE IF NOT EXISTS budget_accounts (id TEXT PRIMARY KEY, account TEXT NOT NULL);
  CREATE TABLE IF NOT EXISTS budget_reservations (key TEXT PRIMARY KEY, reservation TEXT NOT NULL, expires_at INTEGER NOT NULL);
  CREATE INDEX IF NOT EXISTS budget_reservations_expiry ON budget_reservations (expires_at);`;

/** The budget ledger kept in `db` (the store's own connection). */
export function sqliteLedger(db: Database.Database): BudgetLedger {
  db.exec(SCHEMA);
  const getAccount = db.prepare<[string], { account: string }>(`SELECT account FROM budget_accounts WHERE id = ?`);
  const putAccount = db.prepare<[string, string]>(`INSERT INTO budget_accounts (id, account) VALUES (?, ?) ON CONFLICT (id) DO UPDATE SET account = excluded.account`);
  const getReservation = db.prepare<[string], { reservation: string }>(`SELECT reservation FROM budget_reservations WHERE key = ?`);
  const putReservation = db.prepare<[string, string, number]>(
    `INSERT INTO budget_reservations (key, reservation, expires_at) VALUES (?, ?, ?) ON CONFLICT (key) DO UPDATE SET reservation = excluded.reservation, expires_at = excluded.expires_at`,
  );
  const deleteReservation = db.prepare<[string]>(`DELETE FROM budget_reservations WHERE key = ?`);
  const expired = db.prepare<[number], { key: string }>(`SELECT key FROM budget_reservations WHERE expires_at < ?`);
  const book = new BudgetBook({
    getAccount: (id) => parse<BudgetAccount>(getAccount.get(id)?.account),
    putAccount: (id, a) => void putAccount.run(id, JSON.stringify(a)),
    getReservation: (key) => parse<BudgetReservation>(getReservation.get(key)?.reservation),
    putReservation: (key, r) => void putReservation.run(key, JSON.stringify(r), r.expiresAt),
    deleteReservation: (key) => void deleteReservation.run(key),
    expired: (now) => expired.all(now).map((r) => r.key),
  });
  // IMMEDIATE: the write lock is taken before the accounts are read, so no other process can
  // reserve between this one's check and its write.
  const reserve = db.transaction((r: Parameters<BudgetBook['reserve']>[0]) => book.reserve(r));
  const settle = db.transaction((key: string, used: Parameters<BudgetBook['settle']>[1]) => book.settle(key, used));
  const charge = db.transaction((r: Parameters<BudgetBook['charge']>[0]) => book.charge(r));
  const raise = db.transaction((id: string, caps: Parameters<BudgetBook['raise']>[1], now: number, opening?: Parameters<BudgetBook['raise']>[1]) =>
    book.raise(id, caps, now, opening),
  );
  return {
    reserve: (r) => reserve.immediate(r),
    settle: (key, used) => settle.immediate(key, used),
    charge: (r) => charge.immediate(r),
    raise: (id, caps, now, opening) => raise.immediate(id, caps, now, opening),
    account: (id) => parse<BudgetAccount>(getAccount.get(id)?.account),
  };
}

function parse<T>(text: string | undefined): T | undefined {
  return text === undefined ? undefined : (JSON.parse(text) as T);
}
