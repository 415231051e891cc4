/**
 * The SQLite store's writer thread (a `worker_threads` worker started by
 * src/store/sqlite-group.ts): it holds its own connection to the store's file and writes each
 * batch of commits it is posted as one transaction, so that the thread running the swarms is
 * not blocked while a group is written and synced. Each batch is answered once its COMMIT has
 * returned, with every commit's outcome.
 *
 * @module
 */
import { parentPort, workerData } from 'node:worker_threads';
import { type ConnectionOptions, failureData, openConnection, prepareWrites, type SerializedCommit } from './sqlite-writes.js';
import type { WriterReply, WriterRequest } from './sqlite-group.js';

const port = parentPort!;
const { path, options } = workerData as { path: string; options: ConnectionOptions };
const db = openConnection(path, options);
const writes = prepareWrites(db);
// SQLite checkpoints the WAL inside the COMMIT that grows it past 1000 pages, so that batch's
// answer would wait for the copy into the database file. This thread checkpoints after
// answering instead, at about the same pace (the store's own connection keeps SQLite's
// automatic checkpoints for its inline commits).
db.pragma('wal_autocheckpoint = 0');
/**
 * Bytes of JSON written since the last checkpoint, and how many make one due: a commit's text
 * touches a few pages more than its size, so 2 MB of it is about SQLite's own 1000-2000 pages.
 */
let unchecked = 0;
const CHECKPOINT_BYTES = 2 * 1024 * 1024;

port.on('message', (request: WriterRequest) => {
  if (request === 'close') {
    db.close();
    port.close();
    return;
  }
  port.postMessage(write(request));
  for (const c of request) unchecked += (c.record ? c.record.snapshot.length + c.record.result.length : 0) + (c.events?.length ?? 0) + (c.messages?.length ?? 0);
  if (unchecked >= CHECKPOINT_BYTES) {
    unchecked = 0;
    try {
      db.pragma('wal_checkpoint(PASSIVE)');
    } catch {
      // Nothing acknowledged depends on it (the WAL is durable): the next one copies what this one did not.
    }
  }
});

/** Writes `batch` and describes the outcome as data (errors do not cross threads as their classes). */
function write(batch: SerializedCommit[]): WriterReply {
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
