/**
 * A commit that fails (busy database, I/O error, full disk) never leaves a swarm `running`
 * forever: the write is retried with backoff; when it never goes through, the swarm fails with
 * the storage error as its reason, seen at once by `wait()`, `getResult()`, `events()` and REST
 * from this process, and written to the store once it takes writes again. The step whose write
 * failed is dropped (nothing of it was acknowledged); if the failure cannot be written before
 * the process ends, the next owner continues the swarm from its last durable step.
 */
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { createRuntime, defineSwarm, scriptedModel, type SwarmEvent, sqliteStore } from '../../src/index.js';
import { serve } from '../../src/server/index.js';
import type { Commit, SwarmStore } from '../../src/store/types.js';
import { exited, killAll } from '../support/crash-process.js';
import { memoryEffects, stepLabel, W1_CALLS, W1_RESULT, w1Definitions, w1Model } from '../support/crash-w1.js';
import { NOTE_ROUNDS, model as notesModel, swarms as notesSwarms } from '../fixtures/growing-notes.js';
import { collect } from '../support/script.js';
import { readSse } from '../support/server-clients.js';
import { REPO_ROOT } from '../support/repo-root.js';
import { sleep } from '../support/sleep.js';
import { until } from '../support/wait.js';
import { oneToN, seqs } from '../support/seqs.js';
import { sqliteFilePerTest } from '../support/sqlite-file.js';

/** The test's database file, and what each test opened, closed after it (last opened first). */
const file = sqliteFilePerTest('xswarm-commit-', { ignoreCloseErrors: true });
afterAll(killAll);

const runtime = file.runtime;

/**
 * Counts `store.commit` attempts and the codes of the errors they threw; `inject` may make an
 * attempt (counted from 1) throw instead of writing.
 */
function watched(store: SwarmStore, inject: (attempt: number, commit: Commit) => Error | undefined = () => undefined) {
  const commit = store.commit.bind(store);
  const seen = { attempts: 0, errors: [] as string[] };
  store.commit = (c) => {
    seen.attempts++;
    try {
      const injected = inject(seen.attempts, c);
      if (injected) throw injected;
      // A store may refuse at once or through its promise (SQLite's group commit).
      return commit(c)?.catch((e: unknown) => {
        seen.errors.push((e as { code?: string }).code ?? String(e));
        throw e;
      });
    } catch (e) {
      seen.errors.push((e as { code?: string }).code ?? String(e));
      throw e;
    }
  };
  return seen;
}

function sqliteError(message: string, code: string): Error {
  return Object.assign(new Error(message), { code });
}

/** A raw look at the file, as another process would have it. */
function stored(swarmId: string) {
  const raw = new Database(file.path, { readonly: true });
  try {
    const row = raw.prepare(`SELECT status, result, last_seq FROM swarms WHERE swarm_id = ?`).get(swarmId) as
      | { status: string; result: string; last_seq: number }
      | undefined;
    const events = (raw.prepare(`SELECT body FROM events WHERE swarm_id = ? ORDER BY seq`).all(swarmId) as { body: string }[]).map(
      (r) => JSON.parse(r.body) as SwarmEvent,
    );
    return { row, events };
  } finally {
    raw.close();
  }
}

const shape = (events: SwarmEvent[]) => events.map((e) => `${e.kind}:${e.kind === 'status-update' ? e.metadata.type : ''}`);

/** The W1 swarm run to its end on a fresh file: the reference stream. */
async function cleanShape(): Promise<string[]> {
  const other = join(file.dir, 'clean.db');
  const store = sqliteStore(other);
  const { planner, agents } = w1Definitions(memoryEffects());
  const rt = createRuntime({ swarms: [planner], agents, model: w1Model(), store });
  try {
    const c = rt.forSwarm(planner, 'trip');
    await c.run('Plan my Saturday');
    await c.wait();
    return shape(await store.readEvents('trip', 0));
  } finally {
    await rt.close();
    await store.close();
  }
}

/** Starts W1 as swarm `trip` on `store`, on a runtime of this file: its tool effects, its model and its client. */
async function startW1(store: SwarmStore) {
  const effects = memoryEffects();
  const { planner, agents } = w1Definitions(effects);
  const model = w1Model();
  const client = runtime({ swarms: [planner], agents, model, store }).forSwarm(planner, 'trip');
  await client.run('Plan my Saturday');
  return { effects, model, client };
}

/** The W1 run ends as a clean one: completed, every model call and tool effect once, the same stream, numbered 1..N. */
async function expectCleanRun({ effects, model, client }: Awaited<ReturnType<typeof startW1>>): Promise<void> {
  expect(await client.wait()).toEqual({ status: 'completed', result: W1_RESULT });
  expect(model.calls()).toEqual(W1_CALLS);
  expect([...effects.runs.values()]).toEqual([1, 1, 1]);
  const { events } = stored('trip');
  expect(seqs(events)).toEqual(oneToN(events.length));
  expect(shape(events)).toEqual(await cleanShape());
}

describe('a commit that fails for a while', () => {
  it('is retried with backoff: the swarm completes as if nothing happened, every step once', async () => {
    const store = file.open();
    // The fourth commit fails three times (a busy database), then goes through.
    const seen = watched(store, (n) => (n >= 4 && n <= 6 ? sqliteError('database is locked', 'SQLITE_BUSY') : undefined));
    await expectCleanRun(await startW1(store));
    expect(seen.errors).toEqual(['SQLITE_BUSY', 'SQLITE_BUSY', 'SQLITE_BUSY']);
  });

  it('real SQLite: another connection holds the write lock for 300 ms mid-run; the swarm still completes', async () => {
    const store = file.open({ busyTimeoutMs: 20 });
    const seen = watched(store);
    const locker = new Database(file.path);
    file.track(locker);
    const effects = memoryEffects();
    const { planner, agents } = w1Definitions(effects);
    const inner = w1Model();
    const call = inner.call.bind(inner);
    const model = Object.assign(inner, {
      call: async (req: Parameters<typeof inner.call>[0]) => {
        const answer = await call(req);
        if (stepLabel(req) === 'calendar-agent#0') {
          // The answer's commit will find the database locked.
          locker.exec('BEGIN IMMEDIATE');
          setTimeout(() => locker.exec('COMMIT'), 300);
        }
        return answer;
      },
    });
    const c = runtime({ swarms: [planner], agents, model, store }).forSwarm(planner, 'trip');
    await c.run('Plan my Saturday');
    expect(await c.wait()).toEqual({ status: 'completed', result: W1_RESULT });
    // The lock made some attempts fail; retries got the step through.
    expect(seen.errors.length).toBeGreaterThan(0);
    expect(new Set(seen.errors)).toEqual(new Set(['SQLITE_BUSY']));
    expect(inner.calls()).toEqual(W1_CALLS);
    expect([...effects.runs.values()]).toEqual([1, 1, 1]);
    const { events } = stored('trip');
    expect(seqs(events)).toEqual(oneToN(events.length));
    expect(shape(events)).toEqual(await cleanShape());
  });
});

/**
 * Makes the commits `lost` picks land in the store and fail all the same, as when the SQLite
 * writer thread dies between its COMMIT and its reply: the runtime gets an error for a commit
 * that went through. Records the store's refusals by class.
 */
function losesAcks(store: SwarmStore, lost: (attempt: number, c: Commit) => boolean) {
  const commit = store.commit.bind(store);
  const seen = { attempts: 0, lost: 0, refused: [] as string[] };
  store.commit = async (c) => {
    const attempt = ++seen.attempts;
    try {
      await commit(c);
    } catch (e) {
      seen.refused.push((e as Error).constructor.name);
      throw e;
    }
    if (lost(attempt, c)) {
      seen.lost++;
      throw new Error('The SQLite writer thread exited (code 1) before the transaction was acknowledged');
    }
  };
  return seen;
}

describe('a commit that went through but whose acknowledgement was lost', () => {
  it("a step's commit: the retry finds it stored under this runtime's lease, and the swarm goes on, every step once", async () => {
    const store = file.open();
    const seen = losesAcks(store, (n) => n === 4);
    await expectCleanRun(await startW1(store));
    // The retry was refused as a conflict with the commit it repeated, which was the answer.
    expect(seen).toMatchObject({ lost: 1, refused: ['RevisionConflictError'] });
    expect(stored('trip').row?.status).toBe('completed');
  });

  it('streamed chunks (a commit of events only): the retry finds the same events stored, and the stream has each once', async () => {
    const store = file.open();
    const seen = losesAcks(store, (_, c) => !c.record && seen.lost === 0);
    const s = defineSwarm({ id: 'streamer', instructions: 'go' });
    const model = scriptedModel(async (req) => {
      // Longer than the host's chunk window: the first chunk is committed on its own.
      req.onText?.('Go ');
      await sleep(60);
      req.onText?.('hiking.');
      return { text: 'Go hiking.' };
    });
    const c = runtime({ swarms: [s], model, store }).forSwarm(s, 'stream-1');
    await c.run('x');
    expect(await c.wait()).toEqual({ status: 'completed', result: 'Go hiking.' });
    expect(seen).toMatchObject({ lost: 1, refused: ['RevisionConflictError'] });
    const { events } = stored('stream-1');
    expect(seqs(events)).toEqual(oneToN(events.length));
    const chunks = events.filter((e) => e.kind === 'artifact-update' && e.artifact.name === 'stream');
    expect(chunks.map((e) => (e.kind === 'artifact-update' ? e.artifact.parts.map((p) => (p.kind === 'text' ? p.text : '')).join('') : '')).join('')).toBe('Go hiking.');
  });

  it.each([
    ['another writer moved the revision on', `UPDATE swarms SET revision = revision + 1 WHERE swarm_id = 'trip'`, 'RevisionConflictError'],
    ['another owner took the lease, at the same revision', `UPDATE swarms SET owner = 'B' WHERE swarm_id = 'trip'`, 'LeaseLostError'],
  ])('a conflict with a step that is not its own still stops the runtime from driving the swarm: %s', async (_, tamper, refusal) => {
    const store = file.open();
    // The fourth commit lands and its acknowledgement is lost; before the retry, the stored
    // swarm is changed so that it is no longer this runtime's commit under this runtime's lease.
    const seen = losesAcks(store, (n) => {
      if (n !== 4) return false;
      const raw = new Database(file.path);
      raw.prepare(tamper).run();
      raw.close();
      return true;
    });
    const { model } = await startW1(store);
    await until(
      'a refused commit',
      async () => seen.refused.length,
      (n) => n > 0,
    );
    await sleep(200);
    expect(seen).toMatchObject({ lost: 1, refused: [refusal] });
    // Nothing more was asked of the model once the commit was refused.
    const calls = model.calls().length;
    await sleep(100);
    expect(model.calls().length).toBe(calls);
    expect(calls).toBeLessThan(W1_CALLS.length);
    expect(stored('trip').row?.status).not.toBe('completed');
  });

  it('streamed chunks stored differently from what it wrote are not taken for its own: it stops driving the swarm', async () => {
    const store = file.open();
    const seen = losesAcks(store, (_, c) => {
      if (c.record || seen.lost > 0) return false;
      // Another writer's chunk at the same seq.
      const first = c.events[0]!;
      const raw = new Database(file.path);
      raw.prepare(`UPDATE events SET body = ? WHERE swarm_id = 'stream-1' AND seq = ?`).run(JSON.stringify({ ...first, metadata: { other: true } }), first.seq);
      raw.close();
      return true;
    });
    const s = defineSwarm({ id: 'streamer', instructions: 'go' });
    let answered = false;
    const model = scriptedModel(async (req) => {
      req.onText?.('Go ');
      await sleep(60);
      req.onText?.('hiking.');
      answered = true;
      return { text: 'Go hiking.' };
    });
    await runtime({ swarms: [s], model, store })
      .forSwarm(s, 'stream-1')
      .run('x');
    await until(
      'a refused commit',
      async () => seen.refused.length,
      (n) => n > 0,
    );
    await until(
      'the model to answer',
      async () => answered,
      (a) => a,
    );
    await sleep(200);
    expect(seen).toMatchObject({ lost: 1, refused: ['RevisionConflictError'] });
    expect(stored('stream-1').row?.status).toBe('running');
  });
});

describe('a commit refused with something other than an Error', () => {
  it("a swarm's first commit: run() fails naming what the store threw, not [object Object]", async () => {
    const store = file.open();
    const commit = store.commit.bind(store);
    // What a store (or a library under it) may throw: a bare object with a code.
    store.commit = (c) => (c.record?.revision === 1 ? Promise.reject({ code: 'E_DISK', detail: 'no room' }) : commit(c));
    const { planner, agents } = w1Definitions(memoryEffects());
    const rt = runtime({ swarms: [planner], agents, model: w1Model(), store });
    await expect(rt.forSwarm(planner, 'trip').run('Plan my Saturday')).rejects.toMatchObject({
      name: 'SwarmError',
      code: 'store',
      message: 'Swarm "trip" could not be recorded: {"code":"E_DISK","detail":"no room"}',
    });
  });
});

describe('a commit that keeps failing', () => {
  it('fails the swarm with the storage error: wait, getResult, events and REST say so at once; the store gets it once it recovers', async () => {
    const store = file.open();
    let broken = true;
    // From the fifth commit on, every write fails until the "disk" is repaired.
    watched(store, (n) => (broken && n >= 5 ? sqliteError('disk I/O error', 'SQLITE_IOERR_WRITE') : undefined));
    const effects = memoryEffects();
    const { planner, agents } = w1Definitions(effects);
    const model = w1Model();
    const rt = runtime({ swarms: [planner], agents, model, store });
    const server = await serve(rt, { port: 0 });
    file.track(server);
    const c = rt.forSwarm(planner, 'trip');
    await c.run('Plan my Saturday');
    const durable = stored('trip');

    const started = Date.now();
    const result = await c.wait();
    // The retries take about 1.5 s; then the verdict is immediate.
    expect(Date.now() - started).toBeLessThan(4_000);
    expect(result).toEqual({ status: 'failed', reason: expect.stringMatching(/^Storage failure, .*: disk I\/O error$/) });
    expect(await c.getResult()).toEqual(result);
    const callsAtFailure = model.calls();

    // Events: what the store holds, then the failure, with the next sequence number.
    const events = await collect(c.events());
    const { events: inStore, row } = stored('trip');
    expect(row?.status).toBe('awaitingHandoff');
    expect(events.slice(0, -1)).toEqual(inStore);
    expect(events.at(-1)).toMatchObject({
      seq: inStore.length + 1,
      kind: 'status-update',
      final: true,
      metadata: { type: 'failed', reason: result.status === 'failed' ? result.reason : '' },
    });
    // The failure's kind is recorded with it: the runtime could not go on.
    expect(events.at(-1)).toMatchObject({ metadata: { error: { kind: 'runtime' } } });
    // Nothing of the failed step was stored, and nothing after it ran.
    expect(inStore.length).toBeGreaterThanOrEqual(durable.events.length);
    await sleep(200);
    expect(model.calls()).toEqual(callsAtFailure);

    // REST, the same answer; commands are refused as for any ended swarm.
    const get = await fetch(`${server.url}/swarms/planner/trip`);
    expect(get.status).toBe(200);
    expect(await get.json()).toEqual(result);
    const sse = await readSse(`${server.url}/swarms/planner/trip/events`);
    expect(sse.ended).toBe(true);
    expect(sse.events.map((e) => e.data)).toEqual(events);
    await expect(c.pause('now')).rejects.toMatchObject({ name: 'SwarmError', code: 'wrong-state' });

    // The store recovers: the failure is written as shown, with the same sequence number.
    broken = false;
    await until(
      'trip stored as failed',
      async () => stored('trip').row?.status,
      (status) => status === 'failed',
      { timeout: 3_000 },
    );
    const after = stored('trip');
    expect(JSON.parse(after.row!.result)).toEqual(result);
    expect(after.events).toEqual(events);
    expect(seqs(after.events)).toEqual(oneToN(after.events.length));
    expect(await c.getResult()).toEqual(result);
  });

  it('real SQLite: a write lock held for seconds fails the swarm ("database is locked"), recorded once released', async () => {
    const store = file.open({ busyTimeoutMs: 20 });
    const locker = new Database(file.path);
    file.track(locker);
    const { planner, agents } = w1Definitions(memoryEffects());
    const inner = w1Model();
    const call = inner.call.bind(inner);
    const model = Object.assign(inner, {
      call: async (req: Parameters<typeof inner.call>[0]) => {
        const answer = await call(req);
        if (stepLabel(req) === 'calendar-agent#0') locker.exec('BEGIN IMMEDIATE');
        return answer;
      },
    });
    const c = runtime({ swarms: [planner], agents, model, store }).forSwarm(planner, 'trip');
    await c.run('Plan my Saturday');
    const started = Date.now();
    const result = await c.wait();
    expect(Date.now() - started).toBeLessThan(4_000);
    expect(result).toEqual({ status: 'failed', reason: expect.stringMatching(/database is locked/) });
    expect(inner.calls()).toEqual(W1_CALLS.slice(0, 5));
    locker.exec('COMMIT');
    await until(
      'trip stored as failed',
      async () => stored('trip').row?.status,
      (status) => status === 'failed',
      { timeout: 3_000 },
    );
    const { events, row } = stored('trip');
    expect(JSON.parse(row!.result)).toEqual(result);
    expect(seqs(events)).toEqual(oneToN(events.length));
    expect(events.at(-1)).toMatchObject({ metadata: { type: 'failed' } });
  });

  it('a full disk under `xswarm serve`: REST reports the failure, and it is recorded in the room the failed step left', async () => {
    // A 2 MB file-size limit: the WAL cannot grow past it (the kernel refuses the write, EFBIG).
    const child = spawn('sh', ['-c', `ulimit -f 2048; exec "${process.execPath}" bin/xswarm.js serve test/fixtures/growing-notes.ts --db "${file.path}" --port 0`], {
      cwd: REPO_ROOT,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    file.track(async () => {
      child.kill('SIGKILL');
      await exited(child);
    });
    let stderr = '';
    child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
    const url = await new Promise<string>((resolve, reject) => {
      let out = '';
      child.stdout!.on('data', (d: Buffer) => {
        out += d.toString();
        const m = /serving notes at (http:\/\/\S+)/.exec(out);
        if (m) resolve(m[1]!);
      });
      child.once('exit', () => reject(new Error(`serve exited: ${stderr}`)));
    });
    const start = await fetch(`${url}/swarms/notes`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ input: 'take notes', swarmId: 'n1' }),
    });
    expect(start.status, await start.clone().text()).toBe(201);

    const result = await until(
      'n1 to end',
      async () => (await (await fetch(`${url}/swarms/notes/n1`)).json()) as { status: string; reason?: string },
      (r) => r.status !== 'running',
      { timeout: 15_000, interval: 100 },
    );
    expect(result).toEqual({ status: 'failed', reason: expect.stringMatching(/^Storage failure, .*(disk I\/O error|database or disk is full)/) });
    const sse = await readSse(`${url}/swarms/notes/n1/events`);
    expect(sse.events.at(-1)?.data).toMatchObject({ final: true, metadata: { type: 'failed', reason: result.reason } });

    // The failure is small (its record names the stored conversation instead of carrying it):
    // it is written in the room the failed step left, as REST reported it.
    child.kill('SIGTERM');
    await exited(child);
    const durable = stored('n1');
    expect(durable.row?.status).toBe('failed');
    expect(JSON.parse(durable.row!.result)).toEqual(result);
    expect(seqs(durable.events)).toEqual(oneToN(durable.events.length));
    expect(durable.events).toEqual(sse.events.map((e) => e.data));
    // The steps before it stayed durable: the notes taken are stored.
    expect(durable.events.filter((e) => e.kind === 'internal:tool-complete').length).toBeGreaterThan(0);
    expect(durable.events.filter((e) => e.kind === 'internal:tool-complete').length).toBeLessThan(NOTE_ROUNDS);

    // A restart without the limit reads the same ended swarm.
    const rt = runtime({ swarms: notesSwarms, model: notesModel, store: file.open() });
    await rt.start();
    expect(await rt.forSwarm('notes', 'n1').getResult()).toEqual(result);
  }, 30_000);
});
