/**
 * Every reader of a stored stream reads it in pages: a swarm of a few thousand events on SQLite
 * is read through the WebSocket replay (a `ws` client), `xswarm events` (in process, and as a
 * child process), A2A GetTask (the @a2a-js/sdk client) and a child swarm's re-attachment after a
 * restart. Each delivers every event once, in order, as `events({ since })` yields them, while
 * every `readEvents` it makes asks for at most one page. A corrupt row in the middle of a long
 * stream: each door shows what precedes it, then reports it.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { TaskState } from '@a2a-js/sdk';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { z } from 'zod';
import { withDetails } from '../../src/a2a/details.js';
import { taskFromEvents } from '../../src/a2a/mapping.js';
import { eventsCommand } from '../../src/cli/events.js';
import {
  CorruptEventError,
  createRuntime,
  defineSwarm,
  handoff,
  type Runtime,
  scriptedModel,
  sqliteStore,
  type SwarmEvent,
  type SwarmStore,
  tool,
} from '../../src/index.js';
import { serve, type SwarmServer } from '../../src/server/index.js';
import { PAGE_SIZE } from '../../src/store/pages.js';
import { sdkClient } from '../support/a2a-peers.js';
import { killCliProcesses, runCli } from '../support/cli-process.js';
import { Subscriber } from '../support/server-clients.js';
import { seqs } from '../support/seqs.js';
import { tamper } from '../support/sqlite-raw.js';

/** Every `readEvents` call of every SQLite store opened in this file (the CLI opens its own). */
const reads = vi.hoisted(() => [] as { swarmId: string; since: number; limit: number | undefined }[]);
vi.mock('../../src/store/sqlite/store.js', async (importOriginal) => {
  const real = await importOriginal<typeof import('../../src/store/sqlite/store.js')>();
  return {
    ...real,
    sqliteStore: (...args: Parameters<typeof real.sqliteStore>) => {
      const store = real.sqliteStore(...args);
      const readEvents = store.readEvents.bind(store);
      store.readEvents = (swarmId, since, limit) => {
        reads.push({ swarmId, since, limit });
        return readEvents(swarmId, since, limit);
      };
      return store;
    },
  };
});

/** Rounds of parallel tool calls, and calls per round: about 4 events per call. */
const ROUNDS = 4;
const WIDTH = 300;
/** The event of the corrupt swarm whose row is damaged: in its third page. */
const CORRUPT_SEQ = 1234;

const tick = tool({ name: 'tick', description: 'Ticks', parameters: z.object({ n: z.number() }), execute: ({ n }) => `tick ${n}` });
const wide = defineSwarm({ id: 'wide', description: 'Ticks a lot', instructions: 'Tick.', tools: [tick], maxTurns: ROUNDS + 2 });

/** Answers {@link ROUNDS} times with {@link WIDTH} tick calls, then with text. */
const model = scriptedModel((req) => {
  const done = req.messages.filter((m) => m.role === 'tool').length;
  if (done >= ROUNDS * WIDTH) return { text: 'ticked' };
  return { toolCalls: Array.from({ length: WIDTH }, (_, i) => ({ id: `t${done + i}`, name: 'tick', arguments: JSON.stringify({ n: done + i }) })) };
});
/** After the restart nothing may reach a model: the swarms have ended. */
const noModel = scriptedModel(() => {
  throw new Error('no model call expected');
});

let dir: string;
let db: string;
let store: SwarmStore & { close(): Promise<void> };
let rt: Runtime;
let server: SwarmServer;
/** `events({ since: 0 })` of the healthy swarm, and of the corrupt one up to its bad row. */
let expected: SwarmEvent[];
let readable: SwarmEvent[];
/** What `events({ since: 0 })` of the corrupt swarm reports at its bad row. */
let problem: CorruptEventError;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'xswarm-paged-'));
  db = join(dir, 'state.db');
  const writer = sqliteStore(db);
  const first = createRuntime({ swarms: [wide], model, store: writer });
  for (const id of ['w1', 'w2']) await first.forSwarm(wide, id).run('go');
  for (const id of ['w1', 'w2']) expect(await first.forSwarm(wide, id).wait()).toEqual({ status: 'completed', result: 'ticked' });
  await first.close();
  await writer.close();
  tamper(db, `UPDATE events SET body = '{"kind":"status-upd' WHERE swarm_id = 'w2' AND seq = ${CORRUPT_SEQ}`);

  // Served as after a restart, by a runtime that drives nothing.
  store = sqliteStore(db);
  rt = createRuntime({ swarms: [wide], model: noModel, store });
  await rt.start();
  server = await serve(rt);
  expected = [];
  for await (const e of rt.forSwarm(wide, 'w1').events({ since: 0 })) expected.push(e);
  readable = [];
  problem = await (async () => {
    for await (const e of rt.forSwarm(wide, 'w2').events({ since: 0 })) readable.push(e);
  })().then(
    () => {
      throw new Error('the corrupt row was read');
    },
    (e: unknown) => e as CorruptEventError,
  );
}, 60_000);

afterAll(async () => {
  killCliProcesses();
  await server?.close();
  await rt?.close();
  await store?.close();
  rmSync(dir, { recursive: true, force: true });
});

/**
 * The `readEvents` calls on `swarmId` made while `read` runs. Each asks for one page, except
 * the tail reads from the swarm's recorded `lastSeq` (events an events-only commit may have put
 * after it), which are short by nature; there must be at least `pages` paged reads.
 */
async function pagedReads<T>(swarmId: string, pages: number, read: () => Promise<T>): Promise<T> {
  const from = reads.length;
  const value = await read();
  const lastSeq = (await store.load(swarmId))!.lastSeq;
  const made = reads.slice(from).filter((r) => r.swarmId === swarmId);
  for (const r of made) if (r.since !== lastSeq) expect(r.limit, JSON.stringify(r)).toBeLessThanOrEqual(PAGE_SIZE);
  expect(made.filter((r) => r.limit !== undefined && r.since < lastSeq).length).toBeGreaterThanOrEqual(pages);
  return value;
}

const pagesOf = (events: number) => Math.ceil(events / PAGE_SIZE);
const wsUrl = (query: string) => `${server.url.replace(/^http/, 'ws')}/events?${query}`;

describe('a stream of a few thousand stored events', () => {
  it('is what events({ since }) yields: every event once, in order, to the final one', () => {
    expect(expected.length).toBeGreaterThan(4_000);
    expect(seqs(expected)).toEqual(expected.map((_, i) => i + 1));
    expect(expected.at(-1)).toMatchObject({ kind: 'status-update', final: true });
    expect(seqs(readable)).toEqual(readable.map((_, i) => i + 1));
    expect(readable).toHaveLength(CORRUPT_SEQ - 1);
    expect(problem).toBeInstanceOf(CorruptEventError);
    expect(problem).toMatchObject({ code: 'corrupt', swarmId: 'w2', seq: CORRUPT_SEQ });
  });

  it('the WebSocket replay sends it page by page, at the subscriber’s pace, and closes after the final event', async () => {
    for (const since of [0, 777]) {
      const sub = await pagedReads('w1', pagesOf(expected.length - since), async () => {
        const s = await Subscriber.open(wsUrl(`swarmId=w1&since=${since}`));
        expect(await s.closed).toEqual({ code: 1000, reason: 'final event sent' });
        return s;
      });
      expect(sub.frames).toEqual(expected.slice(since));
    }
  });

  it('the WebSocket replay of a corrupt row: the events before it, then 1011 naming it', async () => {
    const sub = await pagedReads('w2', pagesOf(CORRUPT_SEQ - 1), async () => {
      const s = await Subscriber.open(wsUrl('swarmId=w2'));
      await s.closed;
      return s;
    });
    expect(sub.frames).toEqual(readable);
    const closed = await sub.closed;
    expect(closed.code).toBe(1011);
    expect(closed.reason).toMatch(new RegExp(`^Event stream failed: Cannot read event ${CORRUPT_SEQ} of swarm "w2"`));
  });

  it('`xswarm events` prints it page by page; at a corrupt row it prints what precedes it, then fails naming it', async () => {
    /** Runs the command in this process (its store is one of the recorded ones); what it printed. */
    const command = async (args: string[]) => {
      const printed: string[] = [];
      const write = vi.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => {
        printed.push(String(chunk));
        return true;
      });
      try {
        const outcome = await eventsCommand([...args, '--db', db, '--json']).catch((e: unknown) => e);
        return {
          outcome,
          events: printed
            .join('')
            .split('\n')
            .filter(Boolean)
            .map((l) => JSON.parse(l) as SwarmEvent),
        };
      } finally {
        write.mockRestore();
      }
    };
    for (const since of [0, 777]) {
      const run = await pagedReads('w1', pagesOf(expected.length - since), () => command(['w1', '--since', String(since)]));
      expect(run.outcome).toBe(0);
      expect(run.events).toEqual(expected.slice(since));
    }
    const broken = await pagedReads('w2', pagesOf(CORRUPT_SEQ - 1), () => command(['w2']));
    expect(broken.events).toEqual(readable);
    expect(broken.outcome).toBeInstanceOf(CorruptEventError);
    expect((broken.outcome as Error).message).toBe(problem.message);

    // The command line itself, as a user runs it.
    const [healthy, corrupt] = await Promise.all([runCli(['events', 'w1', '--db', db, '--json']), runCli(['events', 'w2', '--db', db, '--json'])]);
    expect(healthy.code, healthy.stderr).toBe(0);
    expect(healthy.stdout).toBe(expected.map((e) => `${JSON.stringify(e)}\n`).join(''));
    expect(corrupt.code).toBe(1);
    expect(corrupt.stdout).toBe(readable.map((e) => `${JSON.stringify(e)}\n`).join(''));
    expect(corrupt.stderr).toBe(`xswarm events: ${problem.message}\n`);
  }, 60_000);

  it('A2A GetTask (the SDK client) builds the task page by page; at a corrupt row, the task so far, failed naming it', async () => {
    const client = await sdkClient(`${server.url}/a2a/wide/.well-known/agent-card.json`, 'v1.0');
    // As A2A peers see it: with the result artifact's description and metadata.
    const whole = taskFromEvents(expected.map((e) => withDetails(e, { definitionId: 'wide' })));
    const task = await pagedReads('w1', pagesOf(expected.length), () => client.getTask({ tenant: '', id: 'w1' }));
    expect(task.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    // A finished task read whole also reports the swarm's usage (one call per turn of the script).
    const { usage, ...metadata } = task.metadata as Record<string, unknown>;
    expect({ ...task, metadata }).toEqual(whole);
    expect(usage).toMatchObject({ scripted: { calls: expect.any(Number), inputTokens: 0 } });

    const broken = await pagedReads('w2', pagesOf(CORRUPT_SEQ - 1), () => client.getTask({ tenant: '', id: 'w2' }));
    expect(broken.status?.state).toBe(TaskState.TASK_STATE_FAILED);
    expect(broken.metadata).toMatchObject({ problem: problem.message });
    const before = taskFromEvents(readable);
    expect({ ...broken, status: undefined, metadata: undefined }).toEqual({ ...before, status: undefined, metadata: undefined });
  });

  it('a child swarm re-attached after a restart finds what its parent relayed reading the parent’s stream page by page; the rest is relayed once', async () => {
    const helper = defineSwarm({ id: 'helper', description: 'Asks a human', instructions: 'Ask which day.' });
    const boss = defineSwarm({ id: 'boss', instructions: 'Tick, then delegate.', tools: [tick], handoffs: [handoff.toSwarm(helper)], maxTurns: ROUNDS + 3 });
    // The boss ticks as `wide` does (a long stream), then hands off to the helper, which asks
    // a human; each answers from what its conversation holds, so a restarted runtime goes on.
    const delegating = scriptedModel((req) => {
      const results = req.messages.filter((m) => m.role === 'tool').length;
      if (req.agentId === 'helper')
        return results === 0 ? { toolCalls: [{ id: 'p1', name: 'pause', arguments: JSON.stringify({ reason: 'Which day?' }) }] } : { text: 'Monday it is' };
      if (results < ROUNDS * WIDTH) return model.call(req);
      return results === ROUNDS * WIDTH
        ? { toolCalls: [{ id: 'h1', name: 'handoff_to_helper', arguments: JSON.stringify({ request: 'Ask the day.' }) }] }
        : { text: 'delegated' };
    });
    const file = join(dir, 'child.db');
    const lifecycles = (events: SwarmEvent[]) =>
      events.flatMap((e) =>
        e.kind === 'status-update' && e.metadata.type === 'child-swarm'
          ? [{ lifecycle: e.metadata.lifecycle, childSeq: e.metadata.childSeq, child: e.metadata.childSwarmId }]
          : [],
      );

    const before = sqliteStore(file);
    const first = createRuntime({ swarms: [boss, helper], model: delegating, store: before });
    await first.forSwarm(boss, 'b1').run('go');
    const relayed: SwarmEvent[] = [];
    for await (const e of first.forSwarm(boss, 'b1').events({ since: 0 })) {
      relayed.push(e);
      if (lifecycles([e])[0]?.lifecycle === 'paused') break;
    }
    await first.close();
    await before.close();
    const child = lifecycles(relayed)[0]!.child;

    const after = sqliteStore(file);
    const second = createRuntime({ swarms: [boss, helper], model: delegating, store: after });
    try {
      const lastSeq = (await after.load('b1'))!.lastSeq;
      expect(lastSeq).toBeGreaterThan(4 * ROUNDS * WIDTH);
      const from = reads.length;
      await second.start();
      await second.forSwarm(helper, child).resume('Monday');
      expect(await second.forSwarm(boss, 'b1').wait()).toEqual({ status: 'completed', result: 'delegated' });
      const made = reads.slice(from).filter((r) => r.swarmId === 'b1');
      // The scan from the start is paged; the other reads are tails from the recorded lastSeq.
      const scans = made.filter((r) => r.since < lastSeq);
      expect(scans.length).toBeGreaterThanOrEqual(pagesOf(lastSeq));
      for (const r of scans) expect(r.limit, JSON.stringify(r)).toBeLessThanOrEqual(PAGE_SIZE);

      const events: SwarmEvent[] = [];
      for await (const e of second.forSwarm(boss, 'b1').events({ since: 0 })) events.push(e);
      expect(seqs(events)).toEqual(events.map((_, i) => i + 1));
      const told = lifecycles(events);
      expect(told.map((t) => t.lifecycle)).toEqual(['started', 'paused', 'resumed', 'completed']);
      expect(told.map((t) => t.childSeq)).toEqual([...new Set(told.map((t) => t.childSeq))].sort((a, b) => a - b));
    } finally {
      await second.close();
      await after.close();
    }
  }, 60_000);
});
