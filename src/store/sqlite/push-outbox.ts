/**
 * The SQLite store's push outbox (see `../push-outbox.ts`): a `push_outbox` table in the store's
 * file, created if absent (a file written before gains it; nothing else changes). The delivery
 * lease of each row (`lease_owner`, `lease_until`: see `PushOutbox.lease`) is taken by a
 * conditional UPDATE, so of several servers on one file exactly one delivers a webhook at a time;
 * a table written before the lease columns existed gains them.
 *
 * @module
 */
import type Database from 'better-sqlite3';
import type { PushOutbox, PushSubscription } from '../push-outbox.js';

const SCHEMA = `CREATE TABLE IF NOT EXISTS push_outbox (
  task_id TEXT NOT NULL, config_id TEXT NOT NULL, definition_id TEXT NOT NULL, config TEXT NOT NULL,
  wire_version TEXT NOT NULL, cursor INTEGER NOT NULL, done INTEGER NOT NULL, created INTEGER NOT NULL,
  PRIMARY KEY (task_id, config_id))`;

/** The lease columns, added to a table created before they existed (NULL: no lease). */
const LEASE_COLUMNS = ['lease_owner TEXT', 'lease_until INTEGER'];

/** Adds the lease columns a table lacks (another connection adding them at the same time is fine). */
function addLeaseColumns(db: Database.Database): void {
  const have = new Set(
    db
      .prepare<[], { name: string }>(`SELECT name FROM pragma_table_info('push_outbox')`)
      .all()
      .map((c) => c.name),
  );
  for (const column of LEASE_COLUMNS) {
    if (have.has(column.split(' ')[0]!)) continue;
    try {
      db.exec(`ALTER TABLE push_outbox ADD COLUMN ${column}`);
    } catch (e) {
      if (!/duplicate column/i.test(String(e))) throw e;
    }
  }
}

interface Row {
  task_id: string;
  config_id: string;
  definition_id: string;
  config: string;
  wire_version: string;
  cursor: number;
  done: number;
}

/** The webhook's address and credentials, kept as one JSON column. */
type Config = Pick<PushSubscription, 'url' | 'token' | 'authentication'>;

function fromRow(r: Row): PushSubscription {
  const config = JSON.parse(r.config) as Config;
  return { taskId: r.task_id, configId: r.config_id, definitionId: r.definition_id, ...config, wireVersion: r.wire_version, cursor: r.cursor, done: r.done === 1 };
}

/** The outbox kept in `db` (the store's own connection). */
export function sqlitePushOutbox(db: Database.Database): PushOutbox {
  db.exec(SCHEMA);
  addLeaseColumns(db);
  const put = db.prepare(
    `INSERT INTO push_outbox (task_id, config_id, definition_id, config, wire_version, cursor, done, created) VALUES (?, ?, ?, ?, ?, ?, ?, ?)
     ON CONFLICT (task_id, config_id) DO UPDATE SET definition_id = excluded.definition_id, config = excluded.config, wire_version = excluded.wire_version, done = MAX(done, excluded.done)`,
  );
  const one = db.prepare<[string, string], Row>(`SELECT * FROM push_outbox WHERE task_id = ? AND config_id = ?`);
  const ofTask = db.prepare<[string], Row>(`SELECT * FROM push_outbox WHERE task_id = ? ORDER BY created, config_id`);
  const remove = db.prepare<[string, string]>(`DELETE FROM push_outbox WHERE task_id = ? AND config_id = ?`);
  const move = db.prepare<[number, number, string, string, number]>(`UPDATE push_outbox SET cursor = ?, done = ? WHERE task_id = ? AND config_id = ? AND cursor <= ?`);
  const open = db.prepare<[], Row>(`SELECT * FROM push_outbox WHERE done = 0 ORDER BY created, task_id, config_id`);
  // Taken when free, expired or already the owner's: one statement, so two servers never both win.
  const take = db.prepare<[string, number, string, string, string, number]>(
    `UPDATE push_outbox SET lease_owner = ?, lease_until = ? WHERE task_id = ? AND config_id = ? AND (lease_owner IS NULL OR lease_owner = ? OR lease_until < ?)`,
  );
  const free = db.prepare<[string, string, string]>(
    `UPDATE push_outbox SET lease_owner = NULL, lease_until = NULL WHERE task_id = ? AND config_id = ? AND lease_owner = ?`,
  );
  return {
    save(s) {
      const config: Config = { url: s.url, ...(s.token ? { token: s.token } : {}), ...(s.authentication ? { authentication: s.authentication } : {}) };
      put.run(s.taskId, s.configId, s.definitionId, JSON.stringify(config), s.wireVersion, s.cursor, s.done ? 1 : 0, Date.now());
    },
    get: (taskId, configId) => {
      const r = one.get(taskId, configId);
      return r && fromRow(r);
    },
    list: (taskId) => ofTask.all(taskId).map(fromRow),
    delete: (taskId, configId) => remove.run(taskId, configId).changes > 0,
    advance: (taskId, configId, cursor, done) => void move.run(cursor, done ? 1 : 0, taskId, configId, cursor),
    pending: () => open.all().map(fromRow),
    lease: (taskId, configId, owner, until) => take.run(owner, until, taskId, configId, owner, Date.now()).changes > 0,
    release: (taskId, configId, owner) => void free.run(taskId, configId, owner),
  };
}
