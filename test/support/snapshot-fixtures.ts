/**
 * Stored-snapshot compatibility fixtures (issue 31, item 4): the representative swarms whose
 * stored records and events `scripts/write-snapshot-fixtures.ts` writes into
 * `test/fixtures/snapshots/v<N>/` (memory/JSON form, a SQLite file, JetStream KV values and stream
 * messages as JSON), and how `test/store/snapshot-fixtures.test.ts` loads each form back into a
 * store of today's code. The definitions and the model here are what both sides run: a fixture
 * is continued to its end with them.
 *
 * The scenarios, each left as a runtime closed gracefully leaves it:
 * - `w1`: the W1 planner, finished (three agent handoffs, a tool each);
 * - `approval`: a swarm paused with two pending approvals (gated `ship` calls);
 * - `handoff`: a swarm awaiting a handoff to a child swarm, the child paused with a question;
 * - `team`: a team running, task `a`'s attempt under way, task `b` waiting on it.
 */
import { headers, type NatsConnection } from '@nats-io/transport-node';
import { jetstream, jetstreamManager } from '@nats-io/jetstream';
import { Kvm } from '@nats-io/kv';
import { z } from 'zod';
import { createRuntime, defineSwarm, defineTeam, handoff, type ModelRequest, type ModelResponse, scriptedModel, type SwarmStore, tool } from '../../src/index.js';
import type { SwarmEvent } from '../../machines/events.js';
import type { Commit, SwarmRecord } from '../../src/store/types.js';
import { memoryEffects, W1_RESULT, w1Definitions, w1Respond } from './crash-w1.js';
import { call, calls } from './script.js';

/** Polls `read` until `ok` accepts its value (the script runs outside vitest: no `vi.waitFor`). */
async function until<T>(what: string, read: () => Promise<T>, ok: (value: T) => boolean): Promise<T> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    const value = await read();
    if (ok(value)) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

/** The fixture set this code writes: bump it (a new folder) when a stored format changes; keep the old folders. */
export const FIXTURE_SET = 1;

/** The swarm ids of the scenarios (the handoff's child and the team's attempts are found from them). */
export const FIXTURE_IDS = { w1: 'w1', approval: 'approval', handoff: 'handoff', team: 'team' } as const;

/** What the finished scenarios end with. */
export const FIXTURE_RESULTS = { w1: W1_RESULT, approval: 'shipped a | shipped b', handoff: 'Trip booked: Booked for Monday.' } as const;

/** The fixtures' definitions: what the writer ran and what a reader continues with. */
export function fixtureDefinitions() {
  const { planner, agents } = w1Definitions(memoryEffects());
  const ship = tool({
    name: 'ship',
    description: 'Ships a build',
    parameters: z.object({ build: z.string() }),
    execute: ({ build }) => `shipped ${build}`,
    needsApproval: true,
  });
  const deploy = defineSwarm({ id: 'deploy', instructions: 'Ship.', tools: [ship] });
  const booker = defineSwarm({ id: 'booker', description: 'Books a day', instructions: 'Book a day.' });
  const trip = defineSwarm({ id: 'trip', instructions: 'Plan the trip: have the booker book it.', handoffs: [handoff.toSwarm(booker)] });
  const worker = defineSwarm({ id: 'worker', instructions: 'Work.' });
  const team = defineTeam({ id: 'crew', workers: [{ type: 'any', swarm: worker }] });
  return { swarms: [planner, deploy, trip, booker, worker], agents, teams: [team], team, planner, deploy, trip };
}

const toolResults = (req: ModelRequest) => req.messages.filter((m) => m.role === 'tool').map((m) => m.content);

/**
 * The fixtures' model, a pure function of the request. `workers: 'hang'` (the writer) makes the
 * team's task calls hang until aborted, so the team is stored with a task under way.
 */
export function fixtureModel(workers: 'hang' | 'answer') {
  return scriptedModel(async (req): Promise<ModelResponse> => {
    const results = toolResults(req);
    switch (req.agentId) {
      case 'deploy':
        return results.length === 0 ? calls(['ship', { build: 'a' }, 's1'], ['ship', { build: 'b' }, 's2']) : { text: results.join(' | ') };
      case 'trip':
        return results.length === 0 ? call('handoff_to_booker', { request: 'Book a day for the trip' }, 'h1') : { text: `Trip booked: ${results[0]}` };
      case 'booker':
        return results.length === 0 ? call('pause', { reason: 'Which day?' }, 'p1') : { text: `Booked for ${results[0]}.` };
      case 'worker':
        if (workers === 'hang') {
          await new Promise<never>((_, reject) => req.signal.addEventListener('abort', () => reject(req.signal.reason), { once: true }));
        }
        return { text: `built ${/Task: (\S+)/.exec(String(req.messages.find((m) => m.role === 'user')?.content))?.[1] ?? '?'}` };
      default:
        return w1Respond(req);
    }
  }, 'fixtures');
}

/** Runs every scenario on `store` and closes the runtime, leaving them stored as described above. */
export async function writeScenarios(store: SwarmStore): Promise<void> {
  const defs = fixtureDefinitions();
  const rt = createRuntime({ swarms: defs.swarms, agents: defs.agents, teams: defs.teams, model: fixtureModel('hang'), store, owner: 'fixture-writer' });
  const w1 = rt.forSwarm(defs.planner, FIXTURE_IDS.w1);
  await w1.run('Plan my Saturday');
  await w1.wait();
  const approval = rt.forSwarm(defs.deploy, FIXTURE_IDS.approval);
  await approval.run('Ship a and b');
  await approval.wait();
  const trip = rt.forSwarm(defs.trip, FIXTURE_IDS.handoff);
  await trip.run('A trip');
  await until(
    'the child to pause',
    () => trip.getResult(),
    (r) => r.status === 'running' && (r.pausedChildren?.length ?? 0) > 0,
  );
  await rt.forTeam(defs.team, FIXTURE_IDS.team).run([
    { id: 'a', subject: 'a' },
    { id: 'b', subject: 'b', dependencies: ['a'] },
  ]);
  await until(
    'the team stored with its first attempt under way',
    async () => [(await store.load(FIXTURE_IDS.team))?.status, (await store.load(`${FIXTURE_IDS.team}:a:1`))?.status],
    ([team, attempt]) => team === 'running' && attempt === 'running',
  );
  await rt.close();
}

/**
 * One stored swarm (or team) in the memory/JSON form, as the memory store keeps it: its latest
 * record as committed (message lists as references), the rows of each of its lists, its events.
 */
export interface StoredEntry {
  record: Omit<SwarmRecord, 'lease'>;
  lists: Record<string, unknown[]>;
  events: SwarmEvent[];
}

/**
 * `store` with its commits recorded: `entries()` is what it holds in the memory/JSON form (the
 * memory store does not expose its entries, so they are rebuilt from what was committed to it).
 */
export function recordingStore(store: SwarmStore): { store: SwarmStore; entries(): StoredEntry[] } {
  const kept = new Map<string, StoredEntry>();
  const recorded: SwarmStore = {
    ...store,
    commit(c) {
      const written = store.commit(c);
      const copy = JSON.parse(JSON.stringify(c)) as Commit;
      const keep = () => {
        let entry = kept.get(c.swarmId);
        if (!entry) kept.set(c.swarmId, (entry = { record: undefined as never, lists: {}, events: [] }));
        entry.events.push(...copy.events);
        if (!copy.record) return;
        const { lease: _lease, ...record } = copy.record as SwarmRecord;
        entry.record = record;
        for (const { list, from, items } of copy.messages ?? []) {
          const rows = (entry.lists[list] ?? []).slice(0, from);
          rows.push(...items);
          if (rows.length > 0) entry.lists[list] = rows;
          else delete entry.lists[list];
        }
      };
      if (written) return written.then(keep);
      keep();
    },
  };
  return { store: recorded, entries: () => [...kept.values()].filter((e) => e.record).sort((a, b) => (a.record.swarmId < b.record.swarmId ? -1 : 1)) };
}

/** Writes the memory/JSON form into a store (a fresh one): each record as its first revision, with its lists' rows and its events. */
export async function loadEntries(store: SwarmStore, entries: readonly StoredEntry[]): Promise<void> {
  for (const { record, lists, events } of entries) {
    const messages = Object.entries(lists).map(([list, items]) => ({ list, from: 0, items }));
    await store.commit({ swarmId: record.swarmId, events, record: { ...record, revision: 1 }, ...(messages.length > 0 ? { messages } : {}) });
  }
}

/** A JetStream message as stored in the fixture: its subject, headers and body (JSON when it is). */
export interface StreamMessage {
  stream: string;
  subject: string;
  headers: Record<string, string[]>;
  data: unknown;
}

/**
 * The JetStream form: the KV values (as JSON, in revision order, each with its KV revision: the
 * commit messages name the revision whose outbox they are) and the streams' messages.
 */
export interface JetStreamDump {
  bucket: string;
  values: { key: string; revision: number; value: unknown }[];
  messages: StreamMessage[];
}

const decoder = new TextDecoder();

function parsed(bytes: Uint8Array): unknown {
  const text = decoder.decode(bytes);
  try {
    return JSON.parse(text);
  } catch {
    return { $text: text };
  }
}

function bytesOf(value: unknown): string {
  return typeof value === 'object' && value !== null && '$text' in value ? String((value as { $text: string }).$text) : JSON.stringify(value);
}

/** Dumps the store's bucket and streams (prefix `xswarm`). */
export async function dumpJetStream(nc: NatsConnection, prefix = 'xswarm'): Promise<JetStreamDump> {
  const jsm = await jetstreamManager(nc);
  const messages: StreamMessage[] = [];
  for (const stream of [`${prefix}_events`, `${prefix}_messages`]) {
    const info = await jsm.streams.info(stream);
    for (let seq = info.state.first_seq; seq <= info.state.last_seq && info.state.messages > 0; seq++) {
      const m = await jsm.streams.getMessage(stream, { seq }).catch(() => null);
      if (!m) continue;
      const h: Record<string, string[]> = {};
      for (const [k, v] of m.header ?? []) h[k] = v;
      messages.push({ stream, subject: m.subject, headers: h, data: parsed(m.data) });
    }
  }
  const bucket = `${prefix}_swarms`;
  const kv = await new Kvm(jetstream(nc)).open(bucket);
  const entries: { key: string; value: unknown; revision: number }[] = [];
  for await (const key of await kv.keys()) {
    const e = await kv.get(key);
    if (e && e.operation === 'PUT') entries.push({ key, value: parsed(e.value), revision: e.revision });
  }
  entries.sort((a, b) => a.revision - b.revision);
  return { bucket, values: entries, messages };
}

/**
 * Writes a dump into a NATS whose store was set up (the streams and bucket exist: open a
 * `jetstreamStore` and list once first): the stream messages in order, then the KV values.
 */
export async function loadJetStream(nc: NatsConnection, dump: JetStreamDump): Promise<void> {
  const js = jetstream(nc);
  for (const m of dump.messages) {
    const h = headers();
    for (const [k, values] of Object.entries(m.headers)) for (const v of values) h.append(k, v);
    await js.publish(m.subject, bytesOf(m.data), { headers: h });
  }
  const kv = await new Kvm(js).open(dump.bucket);
  // Each value at its own KV revision: a key of no swarm takes the revisions in between, then is purged.
  let at = 0;
  for (const { key, revision, value } of dump.values) {
    while (at < revision - 1) at = await kv.put(PAD_KEY, '');
    at = await kv.put(key, bytesOf(value));
    if (at !== revision) throw new Error(`KV value "${key}" landed at revision ${at}, not ${revision}: the bucket was not fresh`);
  }
  await kv.purge(PAD_KEY);
}

/** The key that fills the KV revisions between the fixture's values (see {@link loadJetStream}). */
const PAD_KEY = 'fixture_pad';
