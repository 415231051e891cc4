/**
 * Long conversations on SQLite: a step writes the messages it added, not the conversation
 * (bytes per step stay flat as the conversation grows), and a run interrupted mid-way is
 * restored exactly: the same events and result as an uninterrupted run, and replay yields them.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import {
  createRuntime,
  defineAgent,
  defineSwarm,
  handoff,
  memoryStore,
  type Model,
  type ModelRequest,
  type ModelResponse,
  type Runtime,
  type SwarmEvent,
  type SwarmStore,
  scriptedModel,
  sqliteStore,
  tool,
} from '../../src/index.js';
import { CONFIG_LIST } from '../../src/store/messages.js';
import type { Commit } from '../../src/store/types.js';
import { forbiddenModel } from '../support/crash-w1.js';
import { collect } from '../support/script.js';
import { peek } from '../support/sqlite-raw.js';

/** Turns of the long conversation. */
const TURNS = 200;
/** Size of each tool result. */
const RESULT_BYTES = 2048;

let dir: string;
let cleanup: (() => Promise<void>)[] = [];

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'xswarm-long-'));
});
afterEach(async () => {
  for (const close of cleanup.reverse()) await close().catch(() => undefined);
  cleanup = [];
  rmSync(dir, { recursive: true, force: true });
});

/** Page `n`: {@link RESULT_BYTES} characters that differ from page to page. */
function pageText(n: number): string {
  const line = `page ${n}: the quick brown fox jumps over the lazy dog. `;
  return line.repeat(Math.ceil(RESULT_BYTES / line.length)).slice(0, RESULT_BYTES);
}

const readPage = tool({
  name: 'read_page',
  description: 'Reads one page of the document',
  parameters: z.object({ page: z.number() }),
  execute: ({ page }) => pageText(page),
});

/** The orchestrator reads {@link TURNS} pages itself. */
const reader = defineSwarm({ id: 'reader', instructions: 'Read the document page by page, then summarize it.', tools: [readPage], maxTurns: TURNS + 10 });

/** The orchestrator hands the reading to an agent, whose conversation is as long. */
const agentTurns = 60;
const readerAgent = defineAgent({ id: 'reader-agent', description: 'Reads documents', instructions: 'Read every page.', tools: [readPage], maxTurns: agentTurns + 5 });
const delegator = defineSwarm({ id: 'delegator', instructions: 'Have the document read.', handoffs: [handoff.toAgent(readerAgent)] });

const toolResults = (req: ModelRequest) => req.messages.filter((m) => m.role === 'tool').length;

/** The answer to a request: a pure function of it (the reading goes on until `pages`). */
function respond(req: ModelRequest): ModelResponse {
  const n = toolResults(req);
  if (req.agentId === 'delegator') {
    return n === 0
      ? { toolCalls: [{ id: 'h0', name: 'handoff_to_reader_agent', arguments: JSON.stringify({ request: 'Read it all.' }) }] }
      : { text: 'The agent read it.' };
  }
  const pages = req.agentId === 'reader' ? TURNS : agentTurns;
  if (n < pages) return { toolCalls: [{ id: `p${n}`, name: 'read_page', arguments: JSON.stringify({ page: n }) }] };
  return { text: `Read ${n} pages.` };
}

/**
 * The model. `hold(req)` true makes that call hang until it is aborted (a runtime closing);
 * `held` resolves when it does. `onCall` sees every request first.
 */
function model(options: { hold?: (req: ModelRequest) => boolean; onCall?: (req: ModelRequest) => void } = {}): Model & { held: Promise<void> } {
  let onHeld!: () => void;
  const held = new Promise<void>((resolve) => (onHeld = resolve));
  const m = scriptedModel(async (req) => {
    options.onCall?.(req);
    if (options.hold?.(req)) {
      onHeld();
      await new Promise<never>((_, reject) => req.signal.addEventListener('abort', () => reject(req.signal.reason), { once: true }));
    }
    return respond(req);
  }, 'long');
  return Object.assign(m, { held });
}

/**
 * `base` counting the bytes of each commit as the SQLite store writes them: the snapshot,
 * result, events and messages, each serialized as stored.
 */
function measured(base: SwarmStore) {
  const state = { bytes: 0, commits: [] as { bytes: number; messages: number; lists: string[] }[] };
  const store: SwarmStore = Object.assign(Object.create(base) as SwarmStore, {
    commit(c: Commit) {
      let bytes = 0;
      for (const e of c.events) bytes += JSON.stringify(e).length;
      if (c.record) bytes += JSON.stringify(c.record.snapshot ?? null).length + JSON.stringify(c.record.result).length;
      let messages = 0;
      for (const w of c.messages ?? []) {
        for (const m of w.items) bytes += JSON.stringify(m).length;
        messages += w.items.length;
      }
      state.bytes += bytes;
      state.commits.push({ bytes, messages, lists: (c.messages ?? []).map((w) => w.list) });
      return base.commit(c);
    },
  });
  return Object.assign(state, { store });
}

function open(file: string) {
  const store = sqliteStore(join(dir, file), { synchronous: 'NORMAL' });
  cleanup.push(() => store.close());
  return store;
}

function runtime(options: Parameters<typeof createRuntime>[0]): Runtime {
  const rt = createRuntime(options);
  cleanup.push(() => rt.close());
  return rt;
}

/**
 * How many messages each list of swarm "doc" holds in `file`: its steps' message writes applied
 * in order (a list deleted or never written is absent); the swarm row's bookkeeping must agree.
 */
function storedLists(file: string): Record<string, number> {
  const lists: Record<string, number> = {};
  const rows = peek<{ messages: string }>(
    join(dir, file),
    `SELECT t.messages FROM steps t JOIN swarms s ON t.key / 4294967296 = s.no WHERE s.swarm_id = 'doc' AND t.messages IS NOT NULL ORDER BY t.key`,
  );
  for (const { messages } of rows) {
    for (const w of JSON.parse(messages) as { list: string; from: number; items: unknown[] }[]) {
      expect(w.from).toBe(w.from === 0 ? 0 : lists[w.list]);
      lists[w.list] = w.from + w.items.length;
      if (lists[w.list] === 0) delete lists[w.list];
    }
  }
  const [row] = peek<{ list_lengths: string }>(join(dir, file), `SELECT list_lengths FROM swarms WHERE swarm_id = 'doc'`);
  expect(JSON.parse(row!.list_lengths)).toEqual(lists);
  return lists;
}

/** Events without what differs between two runs of the same conversation: their times. */
function timeless(events: readonly SwarmEvent[]): unknown[] {
  return JSON.parse(JSON.stringify(events, (k, v: unknown) => (k === 'timestamp' || k === 'durationMs' ? undefined : v))) as unknown[];
}

/** Runs `definition` to its end on a new runtime over `store`; returns its events and result. */
async function uninterrupted(definition: typeof reader, store: SwarmStore, m: Model = model()) {
  const rt = runtime({ swarms: [definition], agents: [readerAgent], model: m, store });
  const client = rt.forSwarm(definition, 'doc');
  await client.run('Read the document.');
  const result = await client.wait();
  return { result, events: await collect(client.events()) };
}

/**
 * Runs `definition` until the model is asked `holdAt` (a request the first runtime never gets
 * an answer to), closes that runtime and its store, and finishes the swarm on a new runtime over
 * `reopen()`. Returns what the second runtime reports, and the commits it made.
 */
async function interrupted(definition: typeof reader, first: SwarmStore, reopen: () => SwarmStore, holdAt: (req: ModelRequest) => boolean) {
  const m1 = model({ hold: holdAt });
  const a = runtime({ swarms: [definition], agents: [readerAgent], model: m1, store: first });
  await a.forSwarm(definition, 'doc').run('Read the document.');
  await m1.held;
  await a.close();
  await first.close(); // the memory store's close keeps its data: it stands for a shared store
  const second = measured(reopen());
  const b = runtime({ swarms: [definition], agents: [readerAgent], model: model(), store: second.store });
  await b.start();
  const client = b.forSwarm(definition, 'doc');
  const result = await client.wait();
  return { result, events: await collect(client.events()), commits: second.commits, store: second.store };
}

describe('a conversation of 200 turns with 2 KB tool results', () => {
  it('writes per step what the step added: bytes per step at turn 200 are those at turn 10, the stored snapshot stays small', async () => {
    const base = open('a.db');
    const m = measured(base);
    const at: number[] = [];
    const { result } = await uninterrupted(reader, m.store, model({ onCall: (req) => (at[toolResults(req)] = m.bytes) }));
    expect(result).toEqual({ status: 'completed', result: `Read ${TURNS} pages.` });
    const perTurn = (from: number, to: number) => (at[to]! - at[from - 1]!) / (to - from + 1);
    const early = perTurn(6, 15);
    const late = perTurn(TURNS - 9, TURNS);
    // A turn writes its 2 KB result a few times over (event, message), not the conversation.
    expect(early).toBeGreaterThan(RESULT_BYTES);
    expect(early).toBeLessThan(10 * RESULT_BYTES);
    expect(late / early).toBeLessThanOrEqual(2);
    // Rewriting the conversation at every step would write it ~3 times per turn: 400 KB at turn 200.
    expect(Math.max(...m.commits.map((c) => c.bytes))).toBeLessThan(20 * RESULT_BYTES);

    // What is stored: a snapshot without the conversation, and the conversation as appends.
    const [row] = peek<{ size: number; status: string }>(join(dir, 'a.db'), `SELECT length(snapshot) AS size, status FROM swarms WHERE swarm_id = 'doc'`);
    expect(row).toEqual({ size: expect.any(Number), status: 'completed' });
    expect(row!.size).toBeLessThan(10 * RESULT_BYTES);
    // system, user, then an assistant message and a tool result per turn, and the answer.
    expect(storedLists('a.db')).toEqual({ '': 2 + 2 * TURNS + 1, [CONFIG_LIST]: 1 });
    // Loading puts the conversation back where the machine had it.
    const loaded = (await base.load('doc'))!.snapshot as { context: { messages: { role: string; content: string }[]; config: { instructions: string } } };
    expect(loaded.context.messages).toHaveLength(2 + 2 * TURNS + 1);
    expect(loaded.context.messages[2 * TURNS + 1]).toEqual({ role: 'tool', content: pageText(TURNS - 1), toolCallId: `p${TURNS - 1}` });
    // The config was written once, with the first step, and is referenced by every snapshot.
    expect(m.commits.filter((c) => c.lists.includes(CONFIG_LIST))).toHaveLength(1);
    const [stored] = peek<{ snapshot: string }>(join(dir, 'a.db'), `SELECT snapshot FROM swarms WHERE swarm_id = 'doc'`);
    expect(JSON.parse(stored!.snapshot).context.config).toEqual({ xswarm$value: CONFIG_LIST });
    expect(loaded.context.config.instructions).toBe(reader.instructions);
  });

  it('closed at turn 100 and restored on a new runtime: the same events and result as an uninterrupted run, replay equal, still appending', async () => {
    const whole = await uninterrupted(reader, open('a.db'));
    const cut = await interrupted(
      reader,
      open('b.db'),
      () => open('b.db'),
      (req) => req.agentId === 'reader' && toolResults(req) === 100,
    );
    expect(cut.result).toEqual(whole.result);
    expect(timeless(cut.events)).toEqual(timeless(whole.events));
    // The restored host appends to the stored lists: no step after the restore rewrote the
    // conversation, nor the config it references.
    expect(Math.max(...cut.commits.map((c) => c.messages))).toBeLessThanOrEqual(2);
    expect(cut.commits.filter((c) => c.lists.includes(CONFIG_LIST))).toEqual([]);
    expect(Math.max(...cut.commits.map((c) => c.bytes))).toBeLessThan(20 * RESULT_BYTES);

    // Replay on a new connection yields exactly the stored events, with no model call.
    const replayer = runtime({ swarms: [reader], model: forbiddenModel(), store: open('b.db') });
    expect(await collect(replayer.replay('doc'))).toEqual(cut.events);
  });

  it("an agent's long conversation is stored as rows too, restored mid-way, and deleted once the agent is done", async () => {
    const whole = await uninterrupted(delegator, open('a.db'));
    expect(whole.result).toEqual({ status: 'completed', result: 'The agent read it.' });
    const cut = await interrupted(
      delegator,
      open('b.db'),
      () => open('b.db'),
      (req) => req.agentId === 'reader-agent' && toolResults(req) === agentTurns / 2,
    );
    expect(cut.result).toEqual(whole.result);
    expect(timeless(cut.events)).toEqual(timeless(whole.events));
    expect(Math.max(...cut.commits.map((c) => c.messages))).toBeLessThanOrEqual(2);
    expect(cut.commits.filter((c) => c.lists.includes(CONFIG_LIST))).toEqual([]);
    // The agent finished: only the orchestrator's conversation remains (and the swarm's config).
    expect(Object.keys(storedLists('b.db')).sort()).toEqual(['', CONFIG_LIST]);
    const replayer = runtime({ swarms: [delegator], agents: [readerAgent], model: forbiddenModel(), store: open('b.db') });
    expect(await collect(replayer.replay('doc'))).toEqual(cut.events);
  });

  it('the memory store takes the same commits: a runtime closed mid-way is continued by another one over the same store', async () => {
    const whole = await uninterrupted(reader, memoryStore());
    const shared = memoryStore();
    const cut = await interrupted(
      reader,
      shared,
      () => shared,
      (req) => toolResults(req) === 100,
    );
    expect(cut.result).toEqual(whole.result);
    expect(timeless(cut.events)).toEqual(timeless(whole.events));
  });

  it('a record stored whole (its conversation in the snapshot, no message rows) still loads, and is continued', async () => {
    const whole = await uninterrupted(reader, open('a.db'));
    const first = open('b.db');
    const m1 = model({ hold: (req) => toolResults(req) === 100 });
    const a = runtime({ swarms: [reader], model: m1, store: first });
    await a.forSwarm(reader, 'doc').run('Read the document.');
    await m1.held;
    await a.close();
    // Written as before conversations were rows: the snapshot inline, the rows gone.
    const snapshot = (await first.load('doc'))!.snapshot;
    await first.close();
    const db = new Database(join(dir, 'b.db'));
    db.prepare(`UPDATE swarms SET snapshot = ? WHERE swarm_id = 'doc'`).run(JSON.stringify(snapshot));
    db.prepare(`UPDATE steps SET messages = NULL`).run();
    db.prepare(`UPDATE swarms SET list_lengths = NULL, messages_key = NULL`).run();
    db.close();

    const second = measured(open('b.db'));
    const b = runtime({ swarms: [reader], model: model(), store: second.store });
    await b.start();
    const client = b.forSwarm(reader, 'doc');
    expect(await client.wait()).toEqual(whole.result);
    expect(timeless(await collect(client.events()))).toEqual(timeless(whole.events));
    // The first snapshot after the restore wrote the conversation as rows (with the answer to
    // the held call) and the config as its one-row list; the next ones appended.
    const writing = second.commits.filter((c) => c.messages > 0).map((c) => c.messages);
    expect(writing[0]).toBe(2 + 2 * 100 + 1 + 1);
    expect(Math.max(...writing.slice(1))).toBeLessThanOrEqual(2);
    expect(storedLists('b.db')).toEqual({ '': 2 + 2 * TURNS + 1, [CONFIG_LIST]: 1 });
  });

  it('a stored message that is not JSON fails the unfinished swarm, in load and in listings alike', async () => {
    const store = open('a.db');
    const m1 = model({ hold: (req) => toolResults(req) === 5 });
    const a = runtime({ swarms: [reader], model: m1, store });
    await a.forSwarm(reader, 'doc').run('Read the document.');
    await m1.held;
    await a.close();
    const db = new Database(join(dir, 'a.db'));
    // The messages written with the second step that wrote any.
    const second = db.prepare(`SELECT key FROM steps WHERE messages IS NOT NULL ORDER BY key LIMIT 1 OFFSET 1`).get() as { key: number };
    db.prepare(`UPDATE steps SET messages = '[{"list":"","from":2,"items":[not json' WHERE key = ?`).run(second.key);
    db.close();
    const loaded = await store.load('doc');
    expect(loaded).toMatchObject({ status: 'failed', snapshot: undefined });
    expect(loaded?.problem).toMatch(/^stored snapshot is corrupt \(the messages stored with event \d+ are not JSON/);
    const [listed] = await store.list({ status: ['failed'] });
    expect(listed).toMatchObject({ swarmId: 'doc', status: 'failed', problem: loaded!.problem, result: loaded!.result });
    expect(await store.list({ status: ['running', 'awaitingHandoff'] })).toEqual([]);
  });
});
