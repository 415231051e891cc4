/**
 * `xswarm/sqlite`: the durable SQLite store. Needs the optional package better-sqlite3;
 * `sqliteStore()` throws naming it when it is not installed.
 *
 * @example
 * import { createRuntime } from 'xswarm';
 * import { sqliteStore } from 'xswarm/sqlite';
 * const runtime = createRuntime({ swarms, model, store: sqliteStore('.xswarm/state.db') });
 * await runtime.start(); // continues the swarms a previous process left unfinished
 *
 * @module
 */
export { DEFAULT_DB_PATH, sqliteStore } from '../store/sqlite/store.js';
export type { SqliteStore, SqliteStoreOptions } from '../store/sqlite/store.js';
