/**
 * The host of a live swarm and its commits (`SwarmHost`), seen through a recording store
 * wrapper: each completed step is one commit holding its events and its snapshot record; events
 * are numbered 1, 2, 3… without gaps across commits; no step starts before every commit issued
 * before it is durable (`gate()` waits, also for a slow store and across retries), and a call
 * whose swarm was stopped meanwhile never starts; a commit the store refuses stops the swarm
 * before anything else runs.
 */
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import {
  createRuntime,
  defineSwarm,
  handoff,
  LeaseLostError,
  memoryStore,
  type Model,
  type ModelRequest,
  type RemoteAgentClient,
  type Runtime,
  type SwarmEvent,
  tool,
} from '../../src/index.js';
import { CREW_RESULT, JOIN_RESULT, type JoinEffects, joinChildIdOf, joinDefinitions, joinModel } from '../support/crash-join.js';
import { type RecordingOptions, recordingStore } from '../support/recording-store.js';
import { memoryEffects, type SideEffects, stepLabel, W1_CALLS, W1_RESULT, w1Definitions, w1Model } from '../support/crash-w1.js';
import { call, queueModel } from '../support/script.js';
import { sleep } from '../support/sleep.js';
import { oneToN } from '../support/seqs.js';

type Recording = ReturnType<typeof recordingStore>;
/**
 * Told of every model call and tool execution as it starts: the swarm it belongs to and the
 * calls whose outcome it acts on (the tool results a model call sees; a tool's own call).
 */
type Started = (what: string, swarmId: string, callIds: string[], rec: Recording) => void;

const callIdOfKey = (key: string) => key.slice(key.lastIndexOf(':') + 1);
/** The child lifecycle step `e` relays into its parent's stream, if it relays one. */
const relayOf = (e: SwarmEvent) => (e.kind === 'status-update' && e.metadata.type === 'child-swarm' ? e.metadata.lifecycle : undefined);

/** `model`, telling `started` of each call before it is answered. */
function watchModel<M extends Model>(model: M, rec: Recording, started: Started): M {
  const call = model.call.bind(model);
  return Object.assign(model, {
    call: (req: ModelRequest) => {
      const seen = req.messages.filter((m) => m.role === 'tool').map((m) => m.toolCallId!);
      started(`model ${stepLabel(req)}`, req.swarmId, seen, rec);
      return call(req);
    },
  });
}

/** W1 (swarm id `trip`) on a recording store, to its end. */
async function runW1(options: RecordingOptions, started: Started = () => undefined) {
  const rec = recordingStore(memoryStore(), options);
  const runs = memoryEffects();
  const effects: SideEffects = {
    execute(agent, key) {
      started(`tool ${agent}`, 'trip', [callIdOfKey(key)], rec);
      return runs.execute(agent, key);
    },
  };
  const { planner, agents } = w1Definitions(effects);
  const model = watchModel(w1Model(), rec, started);
  const runtime = createRuntime({ swarms: [planner], agents, model, store: rec.store });
  try {
    const client = runtime.forSwarm(planner, 'trip');
    await client.run('Plan my Saturday');
    const result = await client.wait();
    return { rec, result, calls: model.calls(), runs: [...runs.runs.values()], events: await rec.store.readEvents('trip', 0) };
  } finally {
    await runtime.close();
  }
}

/** The parallel join (hub `join`, child `join:t1:2`) on a recording store, to its end. */
async function runJoin(options: RecordingOptions, started: Started = () => undefined) {
  const rec = recordingStore(memoryStore(), options);
  const effects: JoinEffects = { execute: (who, key) => started(`tool ${who}`, '', [callIdOfKey(key)], rec) };
  const { hub, swarms, agents } = joinDefinitions(effects);
  const runtime = createRuntime({ swarms, agents, model: watchModel(joinModel(), rec, started), store: rec.store });
  try {
    const client = runtime.forSwarm(hub, 'join');
    await client.run('Prepare the trip');
    const result = await client.wait();
    const child = await runtime.forSwarm('crew', joinChildIdOf('join')).wait();
    return { rec, result, child };
  } finally {
    await runtime.close();
  }
}

/**
 * A `Started` that collects the starts that came too early: acting on a call whose commit is
 * not durable yet; with `wholeSwarm` (a swarm that runs one step at a time), finding any
 * commit of its swarm not durable yet.
 */
function earlyStarts(wholeSwarm: boolean): Started & { early: string[] } {
  const early: string[] = [];
  const started: Started = (what, swarmId, callIds, rec) => {
    const pending = rec.pendingCallIds();
    if (callIds.some((id) => pending.has(id)) || (wholeSwarm && rec.pending(swarmId))) early.push(`${what} (${swarmId})`);
  };
  return Object.assign(started, { early });
}

describe('one commit per completed step', () => {
  it('a step’s events and its snapshot record are written in one commit; revisions follow one another', async () => {
    // Not volatile: the host writes a snapshot with every step, as on SQLite.
    const { rec, result } = await runW1({ volatile: false });
    expect(result).toEqual({ status: 'completed', result: W1_RESULT });
    // W1: start, 3 × (handoff, tool start, tool result, handoff result), final answer.
    expect(rec.commits).toHaveLength(14);
    for (const [i, c] of rec.commits.entries()) {
      // Exactly one completed step per commit, with its record and snapshot.
      expect(
        c.kinds.filter((k) => k === 'internal:checkpoint'),
        `commit ${i + 1}: ${c.kinds.join(',')}`,
      ).toHaveLength(1);
      expect(c.record, `commit ${i + 1}`).toMatchObject({ revision: i + 1, lastSeq: c.seqs.at(-1), snapshot: true });
    }
    expect(rec.commits.at(-1)!.record!.status).toBe('completed');
    expect(rec.commits.slice(0, -1).every((c) => c.record!.status === 'running' || c.record!.status === 'awaitingHandoff')).toBe(true);
  });

  it('on a volatile store the records between steps leave the snapshot out; the final one has it', async () => {
    const { rec } = await runW1({});
    expect(rec.commits.map((c) => c.record?.snapshot)).toEqual([...Array<boolean>(13).fill(false), true]);
  });
});

describe('events are numbered without gaps', () => {
  it('each commit continues where the last ended, 1…N per swarm, with parallel branches, a child swarm and relayed lifecycle', async () => {
    const { rec, result, child } = await runJoin({});
    expect(result).toEqual({ status: 'completed', result: JOIN_RESULT });
    expect(child).toEqual({ status: 'completed', result: CREW_RESULT });
    for (const id of ['join', joinChildIdOf('join')]) {
      const mine = rec.commits.filter((c) => c.swarmId === id);
      const seqs = mine.flatMap((c) => c.seqs);
      expect(seqs, id).toEqual(oneToN(seqs.length));
      expect(await rec.store.readEvents(id, 0)).toEqual(mine.flatMap((c) => c.events));
    }
    // The child's lifecycle is relayed into the hub's stream once each, in the hub's numbering:
    // its `completed` with the hub's step that records the child's result, its `started` within
    // the chunk window (with one of the hub's steps when one comes first, else in an events-only commit).
    const relayed = rec.commits.filter((c) => c.swarmId === 'join').flatMap((c) => c.events.filter((e) => relayOf(e) !== undefined));
    expect(relayed.map(relayOf)).toEqual(['started', 'completed']);
    const eventsOnly = rec.commits.filter((c) => c.swarmId === 'join' && !c.record);
    expect(eventsOnly.flatMap((c) => c.events)).toEqual(eventsOnly.length > 0 ? [relayed[0]] : []);
  });
});

describe("a child's lifecycle relayed into its parent's stream", () => {
  it('a child that runs longer than the chunk window: its start is committed on its own while it runs, its end with the step that records its result', async () => {
    // Each commit durable 40 ms after it is issued: the crew's four take 160 ms, past the 25 ms window.
    const { rec, result } = await runJoin({ delayMs: 40 });
    expect(result).toEqual({ status: 'completed', result: JOIN_RESULT });
    const hub = rec.commits.filter((c) => c.swarmId === 'join');
    const eventsOnly = hub.filter((c) => !c.record);
    expect(eventsOnly.map((c) => c.events.map(relayOf))).toEqual([['started']]);
    // Durable before the crew's last commit: the parent's stream told of the start while the crew ran.
    const crewLast = rec.commits.findLastIndex((c) => c.swarmId === joinChildIdOf('join'));
    expect(rec.commits.indexOf(eventsOnly[0]!)).toBeLessThan(crewLast);
    const ended = hub.find((c) => c.events.some((e) => relayOf(e) === 'completed'));
    expect(ended?.record).toBeDefined();
  });

  it("a child that ends within the window: its start goes with one of the parent's step commits, no commit of its own", async () => {
    const { rec, result } = await runJoin({});
    expect(result).toEqual({ status: 'completed', result: JOIN_RESULT });
    const hub = rec.commits.filter((c) => c.swarmId === 'join');
    const relays = hub.flatMap((c) => c.events.filter((e) => relayOf(e) !== undefined));
    expect(relays.map(relayOf)).toEqual(['started', 'completed']);
    // Events are stamped as their commit is issued. The start's window opened once the hub heard
    // of the crew's first commit, so no sooner than the crew's first stamp; when the hub's step
    // that relays the crew's end was issued less than 20 ms after that (as here unless the
    // machine stalled), the window had not closed: nothing of the hub is committed without a
    // record. The code before committed the start on its own at once.
    const stamp = (events: SwarmEvent[]) => events.flatMap((e) => ('timestamp' in e && typeof e.timestamp === 'number' ? [e.timestamp] : []))[0];
    const crewFirst = stamp(rec.commits.find((c) => c.swarmId === joinChildIdOf('join'))!.events);
    const endRelayed = stamp(hub.find((c) => c.events.some((e) => relayOf(e) === 'completed'))!.events);
    expect(crewFirst).toBeTypeOf('number');
    expect(endRelayed).toBeTypeOf('number');
    if (endRelayed! - crewFirst! < 20) {
      expect(hub.filter((c) => !c.record)).toEqual([]);
      expect(hub.find((c) => c.events.some((e) => relayOf(e) === 'started'))?.record).toBeDefined();
    }
  });
});

describe('gate(): no step starts before the commits issued before it are durable', () => {
  it('a slow store (each commit durable 5 ms after it is issued): every model call and tool waits for it', async () => {
    const started = earlyStarts(true);
    const { rec, result, calls, runs } = await runW1({ delayMs: 5 }, started);
    expect(result).toEqual({ status: 'completed', result: W1_RESULT });
    expect(started.early).toEqual([]);
    expect(calls).toEqual(W1_CALLS);
    expect(runs).toEqual([1, 1, 1]);
    expect(rec.commits).toHaveLength(14);
  });

  it('parallel branches and a child swarm on a slow store: no branch acts on a result before its commit is durable', async () => {
    // Branches run side by side: one may start while another's commit is in flight, but never
    // on the strength of an outcome that is not durable yet.
    const started = earlyStarts(false);
    const { rec, result } = await runJoin({ delayMs: 5 }, started);
    expect(result).toEqual({ status: 'completed', result: JOIN_RESULT });
    expect(started.early).toEqual([]);
    // The crew's `completed` is relayed with the hub's step recording its result: no commit of
    // its own; its `started` has one only when the crew outlasts the chunk window.
    const eventsOnly = rec.commits.filter((c) => !c.record);
    expect(eventsOnly.length).toBeLessThanOrEqual(1);
    expect(rec.commits).toHaveLength(14 + eventsOnly.length);
  });

  it('a commit that fails twice, then goes through: nothing starts until the retry made it durable', async () => {
    const started = earlyStarts(true);
    // The fourth commit (the weather tool's result) fails twice, as a busy database would.
    const { rec, result, calls, runs, events } = await runW1({ inject: (n) => (n === 4 || n === 5 ? new Error('database is busy') : undefined) }, started);
    expect(result).toEqual({ status: 'completed', result: W1_RESULT });
    expect(rec.attempts()).toBe(16);
    expect(started.early).toEqual([]);
    expect(calls).toEqual(W1_CALLS);
    expect(runs).toEqual([1, 1, 1]);
    expect(events.map((e) => e.seq)).toEqual(oneToN(events.length));
  });

  /**
   * Starts swarm `s` (defined with `parts`) on a store whose commits become durable 150 ms after
   * they are issued (`options` add to the runtime's); its first response is `first`, a call.
   * Stops it while that call waits for the response's commit, then waits past that commit: the
   * stopped call would have begun by now. `afterwards` looks at the runtime before it closes.
   */
  async function stopWhileGated(
    parts: Partial<Parameters<typeof defineSwarm>[0]>,
    first: ReturnType<typeof call>,
    options: Partial<Parameters<typeof createRuntime>[0]> = {},
    afterwards: (runtime: Runtime) => Promise<void> = async () => undefined,
  ) {
    const rec = recordingStore(memoryStore(), { delayMs: 150 });
    let responded!: () => void;
    const answered = new Promise<void>((resolve) => (responded = resolve));
    const model = queueModel({
      s: [
        () => {
          responded();
          return first;
        },
        { text: 'done' },
      ],
    });
    const s = defineSwarm({ id: 's', instructions: 'Book.', ...parts });
    const runtime = createRuntime({ ...options, swarms: [s, ...(options.swarms ?? [])], model, store: rec.store });
    try {
      const client = runtime.forSwarm(s, 'dinner');
      await client.run('Book a table');
      await answered;
      // The response is judged and the round opened within a few ms: its call now waits for
      // the response's commit.
      await sleep(30);
      expect(rec.pending('dinner')).toBe(true);
      await client.stop('no longer needed');
      await sleep(250);
      expect(await client.getResult()).toEqual({ status: 'stopped', reason: 'no longer needed' });
      expect(model.requests).toHaveLength(1);
      await afterwards(runtime);
    } finally {
      await runtime.close();
    }
  }

  it('a tool call whose swarm is stopped while it waits for its step to be durable never starts', async () => {
    let executed = 0;
    const book = tool({ name: 'book', description: 'Books the table.', parameters: z.object({}), execute: () => (executed++, 'booked') });
    await stopWhileGated({ tools: [book] }, call('book', {}, 'b1'));
    expect(executed).toBe(0);
  });

  it('a remote agent call whose swarm is stopped while it waits for its step to be durable is never sent', async () => {
    let sent = 0;
    const remote: RemoteAgentClient = {
      card: async () => ({ name: 'booker', description: 'Books tables.' }),
      send: async () => (sent++, { ok: true, content: 'booked' }),
    };
    await stopWhileGated({ handoffs: [handoff.toRemoteAgent('http://127.0.0.1:9/card.json')] }, call('handoff_to_booker', { request: 'a table' }, 'r1'), { remote });
    expect(sent).toBe(0);
  });

  it('a child swarm whose parent is stopped while the handoff waits for its step to be durable is never started', async () => {
    const kitchen = defineSwarm({ id: 'kitchen', instructions: 'Cook.' });
    await stopWhileGated({ handoffs: [handoff.toSwarm(kitchen)] }, call('handoff_to_kitchen', { request: 'a table' }, 'k1'), { swarms: [kitchen] }, async (runtime) => {
      expect(await runtime.list({ definitionId: 'kitchen' })).toEqual([]);
    });
  });
});

describe('a commit the store refuses', () => {
  it('another owner took the swarm: the host stops at once, nothing after runs, the refused step reaches no reader', async () => {
    const delivered: SwarmEvent[] = [];
    const rec = recordingStore(memoryStore(), {
      // The fifth commit (the weather agent's answer) finds the lease taken by another runtime.
      inject: (n, c) => (n === 5 ? new LeaseLostError(c.swarmId, 'someone-else') : undefined),
    });
    const { planner, agents } = w1Definitions(memoryEffects());
    const model = w1Model();
    const runtime = createRuntime({ swarms: [planner], agents, model, store: rec.store });
    try {
      runtime.subscribe((e) => delivered.push(e));
      await runtime.forSwarm(planner, 'trip').run('Plan my Saturday');
      await sleep(300);
      // Not retried: the lease is someone else's.
      expect(rec.attempts()).toBe(5);
      expect(rec.commits).toHaveLength(4);
      // The answer whose commit was refused was the last thing that ran.
      expect(model.calls()).toEqual(W1_CALLS.slice(0, 3));
      const stored = await rec.store.readEvents('trip', 0);
      expect(stored.map((e) => e.seq)).toEqual(oneToN(stored.length));
      expect(delivered).toEqual(stored);
    } finally {
      await runtime.close();
    }
  });

  it('wait() on a swarm this runtime lost ends with a clear error once the runtime closes, instead of polling forever', async () => {
    const rec = recordingStore(memoryStore(), {
      inject: (n, c) => (n === 5 ? new LeaseLostError(c.swarmId, 'someone-else') : undefined),
    });
    const { planner, agents } = w1Definitions(memoryEffects());
    const runtime = createRuntime({ swarms: [planner], agents, model: w1Model(), store: rec.store });
    const client = runtime.forSwarm(planner, 'trip');
    await client.run('Plan my Saturday');
    await sleep(200);
    const waiting = client.wait();
    await runtime.close();
    await expect(waiting).rejects.toMatchObject({ name: 'SwarmError', code: 'closed' });
  });
});
