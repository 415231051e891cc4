/**
 * Group commit for the SQLite store: which commits are written inline on the store's
 * connection, which are queued, and the writer thread (src/store/sqlite/writer.ts) that writes
 * each queued group as one transaction while this thread goes on running swarms.
 *
 * @module
 */
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { Worker } from 'node:worker_threads';
import { errorText } from '../../../machines/error-text.js';
import type { Commit } from '../types.js';
import type { SqliteStoreStats } from './stats.js';
import { type BatchFailures, type ConnectionOptions, failureError, type SerializedCommit, serializeCommit, type WriteFailure, type Writes } from './writes.js';

/** Zeroed {@link SqliteStoreStats}: what a store starts counting from. */
export function newStoreStats(): SqliteStoreStats {
  return { commits: 0, transactions: 0, writeMs: 0, syncMs: 0, serializeMs: 0, writerMs: 0 };
}

/** What the store posts to its writer thread: a batch to write, or `'close'`. */
export type WriterRequest = SerializedCommit[] | 'close';

/**
 * The writer thread's answer to a batch: each commit's outcome (null: written; a number: failed
 * with the failure of that earlier commit of the same swarm; else its failure), or the failure
 * of the whole transaction (`ended`: the thread could not open the file and is ending). `ms`:
 * the time the thread spent on it.
 */
export type WriterReply = { outcomes: (null | number | WriteFailure)[]; ms: number } | { error: WriteFailure; ms: number; ended?: true };

/**
 * What the writer thread posts once, before any reply: `true` when its connection is open and
 * prepared (it can write a batch at once), `false` when it could not open it (it answers each
 * batch with that failure).
 */
export type WriterReady = { ready: boolean };

/** Where grouped commits are written: resolves once the batch's transaction has committed, rejects when it failed whole. */
export interface BatchWriter {
  write(batch: SerializedCommit[]): Promise<BatchFailures>;
  /**
   * False while a batch posted now would wait for the writer itself to start (its thread is
   * still loading), which it then starts if it has not; the group writes such a batch on the
   * store's own connection instead. A writer without it is always ready.
   */
  ready?(): boolean;
  /**
   * Whether batches are written on another thread, and once it is up: starts the thread if it
   * has not (true at once when it is ready; false when it could not start or open the file).
   * Only a writer with a thread has it: the group posts large commits to that thread rather
   * than write them on its own (see {@link LARGE_COMMIT}).
   */
  whenReady?(): Promise<boolean>;
  close(): Promise<void>;
}

/** What {@link groupCommit} returns. */
export interface GroupCommit {
  /** Writes `c`; settles once the transaction holding it is durable (or refused). */
  commit(c: Commit): Promise<void>;
  /**
   * Runs `write` (another write on the store's connection: claim, renew, release, prune) once no
   * batch is out to the writer (posted and not yet answered), so it never waits on the writer
   * thread's lock nor slips between two groups of the same swarms; at once when none is.
   */
  exclusive<T>(write: () => T): Promise<T>;
  /**
   * Writes what is queued, waits for it, and ends the writer thread. Commits issued once it has
   * started are refused, as by a closed connection.
   */
  close(): Promise<void>;
}

/**
 * The most commits one batch holds. Under heavy load the commits queued while a batch is
 * written can number many hundreds; written as one transaction, the first of them would wait
 * for the last. Batches of this size keep acknowledgements flowing, so this thread resumes
 * swarms while the writer thread writes the next batch, at a few more syncs (W1, 1000
 * concurrent swarms on SQLite FULL: about 10 % less wall time than unbounded batches).
 */
export const MAX_BATCH = 256;

/**
 * How many batches may be out to the writer at once. With one, the next batch is posted only
 * when this thread handles the last one's acknowledgement, which a busy thread does late, and
 * the writer thread idles meanwhile. With two, the writer thread finds the next batch waiting
 * when it commits one (W1, 1000 concurrent swarms on SQLite FULL, five runs of each
 * alternating: 1.45–1.62× the memory row's wall, median 1.48×, against 1.56–1.72×, median
 * 1.63×, with one). The writer thread writes them in the order posted.
 */
export const MAX_IN_FLIGHT = 2;

/**
 * The size (characters of its JSON texts: events, message writes, snapshot) from which a commit
 * is posted to the writer thread even when it would be written on the store's connection (a
 * turn's first commit, a lone queued one). Writing it there blocks this thread for as long as
 * its pages take, and for SQLite's automatic checkpoint when its frames bring the WAL to 1000:
 * a slice of a 100,000-task board's creation (1,000 task rows and their events, ~500 KB) took
 * 4 ms, and 20–30 ms (400 ms on a busy disk) when it checkpointed. A commit of this size costs
 * more to write than the thread hop (a W1 step's commit is ~4 KB, written inline as before).
 */
export const LARGE_COMMIT = 64 * 1024;

/** The characters a serialized commit writes (see {@link LARGE_COMMIT}). */
function writtenChars(s: SerializedCommit): number {
  // (A snapshot that serializes to nothing is undefined here: the write refuses it.)
  return (s.events?.length ?? 0) + (s.messages?.length ?? 0) + ((s.record?.snapshot as string | undefined)?.length ?? 0);
}

/**
 * Group commit. The first commit of an event-loop turn is written at once on the store's
 * connection when no batch is out to the writer (a lone swarm waits for nothing but its own
 * transaction, with no thread hop). Commits that arrive after it in the same turn, or while a
 * batch is out, queue; at the end of the turn the queue goes to `writer` as one batch (one
 * transaction, one fsync for many swarms), at most {@link MAX_BATCH} commits a batch and
 * {@link MAX_IN_FLIGHT} batches out at a time, and when a batch is acknowledged the commits
 * queued meanwhile go as the next one. A queue of one commit (a lone swarm's next step) when
 * nothing is out is written on the store's connection instead: a thread hop would cost it more
 * than the write. So is a batch while the writer is not yet ready (its thread still starting):
 * it would wait for the thread, not for its transaction. A commit of {@link LARGE_COMMIT} or
 * more goes to the writer thread even then (alone, or with its batch), waiting for the thread
 * to start if it must: its write would block this thread longer than the hop delays it. Each
 * commit's promise settles only after the transaction holding it has committed. (The end of
 * the turn is `setImmediate`, after every timer and I/O callback due: a microtask would run
 * after each callback and group almost nothing.)
 *
 * A swarm has commits in at most one batch out at a time: its commits queued while one is out
 * wait for that batch's answer, so a refusal still reaches them before they are written (a
 * runtime's swarm waits for each step anyway; this holds for any caller of the store).
 *
 * A commit is serialized once, when it is written or posted (not when queued: its JSON texts
 * then live only as long as the post, which spares the garbage collector), or when it would be
 * written inline (to see whether it is large). A commit that cannot be serialized or is refused
 * fails alone, and so do the same swarm's later commits issued before the failure was reported
 * (in the same batch, or queued behind it).
 */
export function groupCommit(inline: Writes, writer: BatchWriter, stats: SqliteStoreStats): GroupCommit {
  let queue: Queued[] = [];
  let turnOpen = false;
  /** Batches posted to the writer and not yet answered. */
  let inFlight = 0;
  /** The swarms with a commit in a batch out to the writer. */
  const out = new Set<string>();
  /** Set by `close()`: what is queued is still written, nothing more is taken. */
  let closed = false;
  /** Writes waiting for every batch out to be answered (see `exclusive`). */
  let waiting: (() => void)[] = [];

  /** `c` serialized, the time counted (whether it could be or not). */
  const serialize = (c: Commit): SerializedCommit => {
    const start = performance.now();
    try {
      return serializeCommit(c);
    } finally {
      stats.serializeMs += performance.now() - start;
    }
  };
  /** Writes `c` on the store's connection as its own transaction; answers why when it failed (boxed: anything can be thrown). */
  const writeInline = (c: Commit, serialized?: SerializedCommit, start = performance.now()): { error: unknown } | undefined => {
    try {
      stats.syncMs += inline.writeImmediate(serialized ?? serialize(c));
    } catch (error) {
      return { error };
    } finally {
      stats.writeMs += performance.now() - start;
    }
    stats.transactions++;
    stats.commits++;
    return undefined;
  };
  /** Whether `serialized` goes to the writer thread whatever else is out (see {@link LARGE_COMMIT}). */
  const posted = (serialized: SerializedCommit) => writer.whenReady !== undefined && writtenChars(serialized) >= LARGE_COMMIT;
  const endTurn = () => {
    turnOpen = false;
    if (inFlight === 0 && queue.length === 1) {
      const [q] = queue as [Queued];
      const start = performance.now();
      if (!q.serialized) {
        try {
          q.serialized = serialize(q.commit);
        } catch (error) {
          queue = [];
          q.reject(error);
          return;
        }
      }
      if (!posted(q.serialized)) {
        queue = [];
        const failed = writeInline(q.commit, q.serialized, start);
        if (failed) q.reject(failed.error);
        else q.resolve();
        return;
      }
    }
    send();
  };
  /**
   * Fails the queued commits of the swarms in `failed` with their swarm's error: they were
   * issued before it was reported, on the assumption that the failed commit went through.
   */
  const failQueued = (failed: Map<string, unknown>) => {
    if (failed.size === 0) return;
    queue = queue.filter((q) => {
      if (!failed.has(q.commit.swarmId)) return true;
      q.reject(failed.get(q.commit.swarmId));
      return false;
    });
  };
  /** Takes the first {@link MAX_BATCH} queued commits whose swarm has none out; the others stay queued, in order. */
  const take = (): Queued[] => {
    const taken: Queued[] = [];
    const rest: Queued[] = [];
    for (const q of queue) (taken.length < MAX_BATCH && !out.has(q.commit.swarmId) ? taken : rest).push(q);
    queue = rest;
    return taken;
  };
  /**
   * Posts a batch of what is queued, unless {@link MAX_IN_FLIGHT} are out or a write waits
   * for them (it runs between batches: posting on would starve it under steady load).
   */
  const send = () => {
    if (inFlight >= MAX_IN_FLIGHT || (inFlight > 0 && waiting.length > 0)) return;
    const batch: Queued[] = [];
    const serialized: SerializedCommit[] = [];
    while (batch.length === 0) {
      const taken = take();
      if (taken.length === 0) return;
      const unwritable = new Map<string, unknown>();
      for (const q of taken) {
        if (unwritable.has(q.commit.swarmId)) {
          q.reject(unwritable.get(q.commit.swarmId));
          continue;
        }
        try {
          serialized.push(q.serialized ?? serialize(q.commit));
          batch.push(q);
        } catch (e) {
          unwritable.set(q.commit.swarmId, e);
          q.reject(e);
        }
      }
      failQueued(unwritable);
    }
    const large = serialized.some(posted);
    if (inFlight === 0 && !large && writer.ready?.() === false) {
      // The writer thread is still starting (a few hundred ms under a TypeScript loader, more
      // on a loaded machine): posted now, the batch would wait for it, and every swarm in it
      // with it (a team's first tasks, their workers' heartbeats). Written here, it costs this
      // thread one transaction, as a turn's first commit does, and waits for nothing.
      failQueued(settle(batch, writeHere(serialized)));
      // What is left of a long queue goes at the end of the next turn, not in a loop here: this
      // thread's timers and I/O (heartbeats among them) run between two such transactions.
      if (queue.length > 0 && !turnOpen) {
        turnOpen = true;
        setImmediate(endTurn);
      }
      return;
    }
    // A writer that throws instead of rejecting fails the batch the same way. A large commit
    // waits for a thread still starting, and is written here when none could start.
    const write = (): Promise<BatchFailures> => {
      try {
        return writer.write(serialized);
      } catch (e) {
        return Promise.reject(e);
      }
    };
    const written = !large || writer.ready?.() !== false ? write() : writer.whenReady!().then((up) => (up ? write() : outcomeOf(writeHere(serialized))));
    inFlight++;
    for (const q of batch) out.add(q.commit.swarmId);
    written.then(
      (failures) => answered(batch, settle(batch, { failures })),
      // The transaction itself failed (busy, full, I/O, the thread died): nothing of it was written.
      (error: unknown) => answered(batch, settle(batch, { error })),
    );
    // Several batches may go in one turn (a long queue): the next one waits for no answer.
    send();
  };
  /** Writes `serialized` as one transaction on the store's connection (see `send`). */
  const writeHere = (serialized: SerializedCommit[]): BatchOutcome => {
    const start = performance.now();
    try {
      return { failures: inline.writeBatch(serialized) };
    } catch (error) {
      return { error };
    } finally {
      stats.writeMs += performance.now() - start;
    }
  };
  /** Settles each commit of `batch` by the outcome of its transaction; answers the swarms that failed, with their error. */
  const settle = (batch: Queued[], outcome: BatchOutcome): Map<string, unknown> => {
    const failed = new Map<string, unknown>();
    if ('error' in outcome) {
      // The transaction itself failed: nothing of it was written.
      for (const q of batch) {
        failed.set(q.commit.swarmId, outcome.error);
        q.reject(outcome.error);
      }
      return failed;
    }
    stats.transactions++;
    for (let i = 0; i < batch.length; i++) {
      const q = batch[i]!;
      const error = outcome.failures[i];
      if (error !== undefined) {
        failed.set(q.commit.swarmId, error);
        q.reject(error);
      } else {
        stats.commits++;
        q.resolve();
      }
    }
    return failed;
  };
  /** A batch was answered: its swarms' queued commits may go (or fail with it); writes that waited run once none is out. */
  const answered = (batch: Queued[], failed: Map<string, unknown>) => {
    inFlight--;
    for (const q of batch) out.delete(q.commit.swarmId);
    failQueued(failed);
    if (inFlight === 0) {
      const run = waiting;
      waiting = [];
      for (const write of run) write();
    }
    send();
  };
  const exclusive = <T>(write: () => T): Promise<T> => {
    if (inFlight === 0) {
      try {
        return Promise.resolve(write());
      } catch (e) {
        return Promise.reject(e);
      }
    }
    return new Promise((resolve, reject) =>
      waiting.push(() => {
        try {
          resolve(write());
        } catch (e) {
          reject(e);
        }
      }),
    );
  };
  const close = async () => {
    closed = true;
    while (inFlight > 0 || queue.length > 0) {
      send();
      await exclusive(() => undefined);
    }
    await writer.close();
  };

  return {
    commit(c) {
      if (closed) return Promise.reject(notOpen());
      if (turnOpen || inFlight > 0) {
        if (!turnOpen) {
          turnOpen = true;
          setImmediate(endTurn);
        }
        return new Promise<void>((resolve, reject) => queue.push({ commit: c, resolve, reject }));
      }
      // The turn's first commit: written (and durable) before this call returns, unless large.
      turnOpen = true;
      setImmediate(endTurn);
      const start = performance.now();
      let serialized: SerializedCommit;
      try {
        serialized = serialize(c);
      } catch (error) {
        return Promise.reject(error);
      }
      if (posted(serialized)) return new Promise<void>((resolve, reject) => queue.push({ commit: c, serialized, resolve, reject }));
      const failed = writeInline(c, serialized, start);
      return failed ? Promise.reject(failed.error) : Promise.resolve();
    },
    exclusive,
    close,
  };
}

/** What a commit or batch issued once the store is closing fails with: better-sqlite3's own error for a closed connection. */
export function notOpen(): TypeError {
  return new TypeError('The database connection is not open');
}

/** How a batch's transaction ended: each commit's failure (undefined: written), or the failure of the whole. */
type BatchOutcome = { failures: BatchFailures } | { error: unknown };

/** A batch's failures as {@link BatchWriter.write} resolves them, or its transaction's failure thrown. */
function outcomeOf(outcome: BatchOutcome): BatchFailures {
  if ('error' in outcome) throw outcome.error;
  return outcome.failures;
}

/** A queued commit and its caller's promise. */
interface Queued {
  commit: Commit;
  /** Its serialized form, when it was serialized before it queued (to see whether it is large). */
  serialized?: SerializedCommit;
  resolve(): void;
  reject(err: unknown): void;
}

/**
 * Writes batches on the store's own connection, in this thread: for a database no second
 * connection can open (`:memory:`, a temporary file), where there is no writer thread.
 */
export function localWriter(writes: Writes, stats: SqliteStoreStats): BatchWriter {
  return {
    async write(batch) {
      const start = performance.now();
      try {
        return writes.writeBatch(batch);
      } finally {
        stats.writeMs += performance.now() - start;
      }
    },
    async close() {},
  };
}

/** Starts a writer thread with its `workerData`. */
export type StartWriterThread = (workerData: { path: string; options: ConnectionOptions }) => Worker;

/**
 * Writes batches on the writer thread, started with the first batch or when asked whether it
 * is {@link BatchWriter.ready} (it is once the thread says its connection is open), holding its
 * own connection to `path` (resolved now: the thread opens it later, maybe after a
 * `process.chdir`) with the same `options`. It does not keep the process alive while no batch is out. Batches posted
 * before the last is answered queue in the thread, which writes and answers them in order. A
 * thread that fails is forgotten at once, and the next batch starts a fresh one; each thread
 * settles only the batches it was posted (all of them when it fails: one it had not answered
 * may or may not have committed), so a dying thread's late events never touch its successor's
 * batches. Once `close()` has started, batches are refused and no thread is started again.
 */
export function threadWriter(startThread: StartWriterThread, path: string, options: ConnectionOptions, stats: SqliteStoreStats): BatchWriter {
  const file = resolve(path);
  let current: Thread | undefined;
  let closed = false;
  const ready = (): boolean => {
    if (current === undefined && !closed) {
      try {
        current = start();
      } catch {
        // Not startable now: the batch is written on the store's connection, the next one tries again.
        return false;
      }
    }
    return current?.ready === true;
  };
  const start = (): Thread => {
    const worker = startThread({ path: file, options });
    const thread: Thread = { worker, pending: [], ready: undefined, waiting: [] };
    /** Tells those waiting for the thread whether it is up (see `whenReady`). */
    const up = (ready: boolean) => {
      for (const tell of thread.waiting.splice(0)) tell(ready);
    };
    /** The oldest batch this thread was posted, now answered: the thread may idle once none is left. */
    const settle = () => {
      const p = thread.pending.shift();
      if (thread.pending.length === 0) worker.unref();
      return p;
    };
    /** Fails every batch this thread was posted and has not answered: it is going. */
    const settleAll = (error: Error) => {
      up(false);
      for (const p of thread.pending.splice(0)) p.reject(error);
      worker.unref();
    };
    const forget = () => {
      if (current === thread) current = undefined;
    };
    worker.on('message', (reply: WriterReply | WriterReady) => {
      if ('ready' in reply) {
        thread.ready = reply.ready;
        up(reply.ready);
        return;
      }
      stats.writerMs += reply.ms;
      const p = settle();
      if ('error' in reply) {
        const error = failureError(reply.error);
        p?.reject(error);
        if (reply.ended) {
          // Not posted to again (and made to end, should it linger): the next batch goes to a
          // fresh thread. The batches posted behind this one were not written either.
          forget();
          void worker.terminate();
          settleAll(error);
        }
        return;
      }
      // One error object per failure: a swarm's later commits share its first one's.
      const errors: (Error | undefined)[] = [];
      for (const outcome of reply.outcomes) errors.push(outcome === null ? undefined : typeof outcome === 'number' ? errors[outcome] : failureError(outcome));
      p?.resolve(errors);
    });
    worker.on('error', (error: unknown) => {
      // The thread is going: the next batch must not be posted to it.
      forget();
      void worker.terminate();
      settleAll(threadError(error));
    });
    worker.on('exit', (code) => {
      forget();
      settleAll(new Error(`The SQLite writer thread exited (code ${code}) before the transaction was acknowledged`));
    });
    // Ref'd only while a batch is out: a thread started ahead of its first batch keeps nothing
    // alive. (After the listeners: adding a 'message' listener refs the worker's port again.)
    worker.unref();
    return thread;
  };
  return {
    write(batch) {
      return new Promise((resolve, reject) => {
        if (closed) throw notOpen();
        // Starting the thread can throw (resources, options): the batch fails like any other.
        const thread = (current ??= start());
        // Posted first: a batch that cannot be posted fails, and leaves no answer expected of the thread.
        thread.worker.postMessage(batch satisfies WriterRequest);
        thread.worker.ref();
        thread.pending.push({ resolve, reject });
      });
    },
    ready,
    whenReady() {
      ready();
      const thread = current;
      if (thread?.ready !== undefined || thread === undefined) return Promise.resolve(thread?.ready === true);
      // Kept alive while waited for: a batch waits for it.
      thread.worker.ref();
      return new Promise<boolean>((resolve) =>
        thread.waiting.push((up) => {
          if (thread.pending.length === 0) thread.worker.unref();
          resolve(up);
        }),
      );
    },
    async close() {
      closed = true;
      const thread = current;
      if (!thread) return;
      current = undefined;
      const { worker } = thread;
      worker.ref();
      const exited = new Promise((resolve) => worker.once('exit', resolve));
      worker.postMessage('close' satisfies WriterRequest);
      await exited;
    },
  };
}

/**
 * What a writer thread's uncaught `error` rejects its batch with: the error itself when it
 * crossed the thread as an Error; otherwise (a thrown value that is not one, or an error whose
 * class the structured clone does not know, which arrives as its own fields only) an Error
 * that shows it, keeping its `code`.
 */
export function threadError(error: unknown): Error {
  if (error instanceof Error) return error;
  const code = (error as { code?: unknown } | null)?.code;
  const failure = new Error(`The SQLite writer thread failed: ${errorText(error)}`);
  return typeof code === 'string' ? Object.assign(failure, { code }) : failure;
}

/** A writer thread and the batches posted to it and not yet answered, oldest first (it answers them in order). */
interface Thread {
  worker: Worker;
  /**
   * What the thread has said of its connection (a {@link WriterReady}; undefined: nothing yet):
   * true, open (a batch posted now is written at once); false, it could not open it.
   */
  ready: boolean | undefined;
  pending: { resolve(failures: BatchFailures): void; reject(error: unknown): void }[];
  /** Told whether the thread came up (its connection open) or went before it did. */
  waiting: ((ready: boolean) => void)[];
}

/**
 * How to start src/store/sqlite-writer: from the compiled `.js` beside this module (the
 * package, or a bundle that emits it beside itself), else from the TypeScript source (a
 * checkout run by vitest, tsx or bin/xswarm.js) loaded through tsx registered in the thread: a
 * loader the parent registered with `register()` does not reach a worker (one given as
 * `--import tsx` does, through the inherited `execArgv`; tsx then registers twice, which is
 * harmless). Undefined when
 * neither is there (a bundle that left it out): the store then writes its groups itself.
 */
export function writerThread(): StartWriterThread | undefined {
  const execArgv = threadExecArgv();
  const compiled = new URL('./writer.js', import.meta.url);
  if (existsSync(compiled)) return (workerData) => new Worker(compiled, { workerData, execArgv });
  const source = new URL('./writer.ts', import.meta.url);
  const api = existsSync(source) ? tsxApi() : undefined;
  if (!api) return undefined;
  const code = `import(${JSON.stringify(api)}).then((tsx) => { tsx.register(); return import(${JSON.stringify(source.href)}); });`;
  return (workerData) => new Worker(code, { eval: true, workerData, execArgv });
}

/**
 * The node options of the writer thread: the process's, as a worker inherits them by default
 * (so that e.g. `--cpu-prof` profiles it too), but none when the process was started with
 * `--input-type` (`node --input-type=module -e …`): that option refuses to load the thread's
 * module, and a list given explicitly may hold no process-wide option (`--expose-gc`).
 */
function threadExecArgv(): string[] | undefined {
  return process.execArgv.some((arg) => arg === '--input-type' || arg.startsWith('--input-type=')) ? [] : undefined;
}

/** The URL of tsx's ESM API (`tsx/esm/api`, its `import` export: the CommonJS one cannot register in a worker), if tsx is installed. */
function tsxApi(): string | undefined {
  let manifest: string;
  try {
    manifest = createRequire(import.meta.url).resolve('tsx/package.json');
  } catch {
    return undefined;
  }
  const exports = (JSON.parse(readFileSync(manifest, 'utf8')) as { exports: Record<string, { import: { default: string } }> }).exports;
  return pathToFileURL(join(dirname(manifest), exports['./esm/api']!.import.default)).href;
}
