/**
 * What every crash fixture process shares: a SQLite store that dies right after its N-th commit
 * (`KILL_AFTER_COMMIT`), a runtime configured from the environment the test sets (`OWNER`,
 * `LEASE_MS`), and a log of model calls (`MODEL_LOG`).
 */
import { appendFileSync } from 'node:fs';
import type { Model, ModelRequest } from '../../src/models/scripted.js';
import { createRuntime, type Runtime, type RuntimeOptions } from '../../src/runtime/index.js';
import { sqliteStore } from '../../src/store/sqlite/store.js';
import type { Commit } from '../../src/store/types.js';

/**
 * A SQLite store at `db` that counts its commits and SIGKILLs the process right after commit
 * number `KILL_AFTER_COMMIT` (when set). `afterCommit` sees each commit before a kill.
 */
export function killableStore(db: string, afterCommit?: (commit: Commit) => void) {
  const killAfter = Number(process.env.KILL_AFTER_COMMIT ?? 0);
  const store = sqliteStore(db);
  const commit = store.commit.bind(store);
  let commits = 0;
  let dying = false;
  store.commit = (c) =>
    // Once the commit is durable, before its caller's continuation. Commits written in the same
    // transaction (group commit) are durable together: from commit N on, each is still counted
    // and seen, its caller never continues, and the process dies before anything else runs.
    commit(c).then(() => {
      commits++;
      afterCommit?.(c);
      if (commits === killAfter) {
        dying = true;
        setImmediate(() => process.kill(process.pid, 'SIGKILL'));
      }
      if (dying) return new Promise<void>(() => undefined);
    });
  return { store, commits: () => commits };
}

/** A runtime whose owner id and lease come from `OWNER` and `LEASE_MS` when they are set. */
export function runtimeFromEnv(options: RuntimeOptions): Runtime {
  return createRuntime({
    ...options,
    ...(process.env.LEASE_MS ? { leaseMs: Number(process.env.LEASE_MS) } : {}),
    ...(process.env.OWNER ? { owner: process.env.OWNER } : {}),
  });
}

/** Makes `model` append the label of every call it answers to `file` (when given). */
export function logModelCalls(model: Model, file: string | undefined, label: (req: ModelRequest) => string): void {
  if (!file) return;
  const call = model.call.bind(model);
  (model as { call: Model['call'] }).call = (req) => {
    appendFileSync(file, `${label(req)}\n`);
    return call(req);
  };
}
