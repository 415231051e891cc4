/**
 * The SQLite store's writer thread (a `worker_threads` worker started by
 * src/store/sqlite/group.ts): it holds its own connection to the store's file and writes each
 * batch of commits it is posted as one transaction, so that the thread running the swarms is
 * not blocked while a group is written and synced. Each batch is answered once its COMMIT has
 * returned, with every commit's outcome.
 *
 * @module
 */
import { parentPort, workerData } from 'node:worker_threads';
import type Database from 'better-sqlite3';
import { type ConnectionOptions, failureData, openConnection, prepareWrites, type SerializedCommit, type WriteFailure, type Writes } from './writes.js';
import type { WriterReady, WriterReply, WriterRequest } from './group.js';

const port = parentPort!;
const { path, options } = workerData as { path: string; options: ConnectionOptions };
let db: Database.Database | undefined;
let writes: Writes | undefined;
/**
 * Why the connection could not be opened or prepared (a file that is not a database, a schema
 * this code does not know…). Answered as the batch's failure, with SQLite's message and code:
 * thrown, it would reach the parent as a bare `{ code }` (an error of better-sqlite3 is not
 * cloned as an Error), naming nothing.
 */
let broken: WriteFailure | undefined;
try {
  db = openConnection(path, options);
  writes = prepareWrites(db);
  // The store writes its groups on its own connection until this thread can take them at once.
  port.postMessage({ ready: true } satisfies WriterReady);
} catch (e) {
  broken = failureData(e);
  db?.close();
  // Said at once too: a large commit waiting for this thread to come up is written by the store instead.
  port.postMessage({ ready: false } satisfies WriterReady);
}
// Checkpoints: SQLite's own (`wal_autocheckpoint`, 1000 frames), on this connection and on the
// store's. The batch whose COMMIT leaves 1000 frames or more in the WAL copies them into the
// database file before it is answered. Checkpointing after answering instead, on the same
// frame count (read from the WAL index), was measured worse: the store's next inline commit
// runs during that checkpoint and appends frames it does not copy, so no writer ever finds the
// WAL fully copied and restarts it (385 MB of WAL after 50,000 commits, against 5.6 MB; the
// store's thread also spends ~10x less time in checkpoints than with the earlier byte count).
// The store's connection keeps its own automatic checkpoint, which a lone swarm (all its
// commits inline) needs; so an inline commit that finds 1000 frames in the WAL, some of them
// this thread's, copies them before it returns (one checkpoint at a time: the other gives up).

port.on('message', (request: WriterRequest) => {
  if (request === 'close' || broken) {
    // A thread that could not open ends here: the parent starts a fresh one for its next batch.
    if (request !== 'close') port.postMessage({ error: broken!, ms: 0, ended: true } satisfies WriterReply);
    db?.close();
    port.close();
    return;
  }
  port.postMessage(write(writes!, request));
});

/** Writes `batch` and describes the outcome as data (errors do not cross threads as their classes). */
function write(writes: Writes, batch: SerializedCommit[]): WriterReply {
  const start = performance.now();
  try {
    const failures = writes.writeBatch(batch);
    // A swarm's later commits failed by its first failure name that commit's index.
    const first = new Map<unknown, number>();
    const outcomes = failures.map((error, i) => {
      if (error === undefined) return null;
      const at = first.get(error);
      if (at !== undefined) return at;
      first.set(error, i);
      return failureData(error);
    });
    return { outcomes, ms: performance.now() - start };
  } catch (e) {
    return { error: failureData(e), ms: performance.now() - start };
  }
}
