/**
 * The SQLite store's notices (see `../notices.ts`): a `stop_requests` table and a `releases`
 * counter in the `meta` table of the store's file, which every process on the file reads. The
 * table is created if absent (a file written before gains it; nothing else changes).
 *
 * @module
 */
import type Database from 'better-sqlite3';
import type { StopRequest, StoreNotices } from '../notices.js';

const SCHEMA = `CREATE TABLE IF NOT EXISTS stop_requests (swarm_id TEXT PRIMARY KEY, reason TEXT NOT NULL, at INTEGER NOT NULL)`;

/** The notices kept in `db` (the store's own connection). */
export function sqliteNotices(db: Database.Database): StoreNotices {
  db.exec(SCHEMA);
  const put = db.prepare<[string, string, number]>(
    `INSERT INTO stop_requests (swarm_id, reason, at) VALUES (?, ?, ?) ON CONFLICT (swarm_id) DO UPDATE SET reason = excluded.reason, at = excluded.at`,
  );
  const all = db.prepare<[], { swarm_id: string; reason: string; at: number }>(`SELECT swarm_id, reason, at FROM stop_requests ORDER BY at`);
  const clear = db.prepare<[string]>(`DELETE FROM stop_requests WHERE swarm_id = ?`);
  const count = db.prepare<[], { value: string }>(`SELECT value FROM meta WHERE key = 'releases'`);
  const bump = db.prepare(`INSERT INTO meta (key, value) VALUES ('releases', '1') ON CONFLICT (key) DO UPDATE SET value = CAST(value AS INTEGER) + 1`);
  return {
    requestStop: (r: StopRequest) => void put.run(r.swarmId, r.reason, r.at),
    stopRequests: () => all.all().map((r) => ({ swarmId: r.swarm_id, reason: r.reason, at: r.at })),
    clearStop: (swarmId) => void clear.run(swarmId),
    releases: () => Number(count.get()?.value ?? 0),
    released: () => void bump.run(),
  };
}
