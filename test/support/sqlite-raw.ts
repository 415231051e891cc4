/**
 * Raw SQL on a SQLite store's file, for what the store API cannot do: looking at the stored
 * rows as bytes, and damaging them. Each call opens a connection of its own and closes it.
 */
import Database from 'better-sqlite3';
import { expect } from 'vitest';

/** The rows `sql` selects from the file at `path`, read on a read-only connection. */
export function peek<T>(path: string, sql: string, ...params: unknown[]): T[] {
  const db = new Database(path, { readonly: true });
  try {
    return db.prepare(sql).all(...params) as T[];
  } finally {
    db.close();
  }
}

/**
 * Runs `sql` on the file at `path`; it must change exactly one stored row. Events are rows of
 * the `events` view (a step's events share one `steps` row): the view's trigger rewrites that
 * row, which `changes` does not count and `total_changes()` does.
 */
export function tamper(path: string, sql: string, ...params: unknown[]): void {
  const db = new Database(path);
  const total = () => (db.prepare('SELECT total_changes() AS n').get() as { n: number }).n;
  try {
    const before = total();
    db.prepare(sql).run(...params);
    expect(total() - before).toBe(1);
  } finally {
    db.close();
  }
}
