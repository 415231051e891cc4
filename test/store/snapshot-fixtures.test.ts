/**
 * Stored-snapshot compatibility: every fixture folder in `test/fixtures/snapshots/` (written by
 * `scripts/write-snapshot-fixtures.ts`, one per fixture set, old sets kept) is read with today's
 * code, in each of its forms (memory/JSON, a SQLite file, JetStream KV values and stream
 * messages): each stored swarm is restored, continued to its end, and replayed. An upgrade that
 * breaks stored runs (XState's next major, a format change) fails here instead of in production.
 */
import { copyFileSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createRuntime, memoryStore, type PendingApproval, type Runtime, type SwarmStore, sqliteStore } from '../../src/index.js';
import { connectNats, jetstreamStore } from '../../src/entries/nats.js';
import { natsServerMissing, startNatsServer } from '../support/nats-server.js';
import {
  FIXTURE_IDS,
  FIXTURE_RESULTS,
  fixtureDefinitions,
  fixtureModel,
  type JetStreamDump,
  loadEntries,
  loadJetStream,
  type StoredEntry,
} from '../support/snapshot-fixtures.js';
import { collect } from '../support/script.js';

const root = join(import.meta.dirname, '..', 'fixtures', 'snapshots');
const sets = readdirSync(root).filter((d) => /^v\d+$/.test(d));

/** What each test opened, closed after it, last first. */
const opened: (() => Promise<unknown> | unknown)[] = [];
afterEach(async () => {
  for (const close of opened.splice(0).reverse()) await close();
});

type Form = 'memory' | 'sqlite' | 'jetstream';

/** A store holding fixture set `set` in `form`, closed after the test. */
async function fixtureStore(set: string, form: Form): Promise<SwarmStore> {
  const dir = join(root, set);
  if (form === 'memory') {
    const store = memoryStore();
    await loadEntries(store, JSON.parse(readFileSync(join(dir, 'memory.json'), 'utf8')) as StoredEntry[]);
    return store;
  }
  if (form === 'sqlite') {
    // A copy: the fixture file itself is never written.
    const tmp = mkdtempSync(join(tmpdir(), 'xswarm-fixture-'));
    opened.push(() => rmSync(tmp, { recursive: true, force: true }));
    copyFileSync(join(dir, 'state.db'), join(tmp, 'state.db'));
    const store = sqliteStore(join(tmp, 'state.db'));
    opened.push(() => store.close());
    return store;
  }
  const server = await startNatsServer();
  opened.push(() => server.stop());
  const connection = await connectNats({ servers: server.url });
  opened.push(() => connection.drain());
  // The streams and bucket are made by a store's first use; the dump is then written raw.
  const setup = jetstreamStore({ connection });
  await setup.list({});
  await loadJetStream(connection, JSON.parse(readFileSync(join(dir, 'jetstream.json'), 'utf8')) as JetStreamDump);
  await setup.close();
  const store = jetstreamStore({ connection });
  opened.push(() => store.close());
  return store;
}

/** Expects the stored events of `swarmId` to be numbered 1…n and its replay to reproduce them. */
async function replays(rt: Runtime, store: SwarmStore, swarmId: string): Promise<void> {
  const events = await store.readEvents(swarmId, 0);
  expect(
    events.map((e) => e.seq),
    swarmId,
  ).toEqual(events.map((_, i) => i + 1));
  expect(await collect(rt.replay(swarmId)), swarmId).toEqual(events);
}

const forms: Form[] = ['memory', 'sqlite', ...(natsServerMissing ? [] : (['jetstream'] as const))];

describe.each(sets)('snapshot fixtures %s', (set) => {
  it.each(forms)('%s: every stored swarm restores, continues to its end and replays', async (form) => {
    const store = await fixtureStore(set, form);
    const defs = fixtureDefinitions();
    const rt = createRuntime({ swarms: defs.swarms, agents: defs.agents, teams: defs.teams, model: fixtureModel('answer'), store });
    opened.push(() => rt.close());
    await rt.start();

    // A finished W1: read as it ended, and replayed.
    expect(await rt.forSwarm(defs.planner, FIXTURE_IDS.w1).getResult()).toEqual({ status: 'completed', result: FIXTURE_RESULTS.w1 });

    // Paused with two pending approvals: approved, it runs both calls and completes.
    const approval = rt.forSwarm(defs.deploy, FIXTURE_IDS.approval);
    const paused = await approval.getResult();
    expect(paused).toMatchObject({ status: 'paused', reason: { type: 'APPROVAL_NEEDED' } });
    const pending = (paused as { reason: { pendingApprovals: PendingApproval[] } }).reason.pendingApprovals;
    expect(pending).toHaveLength(2);
    for (const p of pending) await approval.approve(p.approvalId);
    expect(await approval.wait()).toEqual({ status: 'completed', result: FIXTURE_RESULTS.approval });

    // Awaiting a handoff to a paused child: the child answered, the parent completes.
    const trip = rt.forSwarm(defs.trip, FIXTURE_IDS.handoff);
    const waiting = await trip.getResult();
    expect(waiting).toMatchObject({ status: 'running', pausedChildren: [{ reason: { message: 'Which day?' } }] });
    const childId = (waiting as { pausedChildren: { swarmId: string }[] }).pausedChildren[0]!.swarmId;
    await rt.forSwarm('booker', childId).resume('Monday');
    expect(await trip.wait()).toEqual({ status: 'completed', result: FIXTURE_RESULTS.handoff });

    // A running team with a task under way: it finishes both tasks.
    const team = rt.forTeam(defs.team, FIXTURE_IDS.team);
    const summary = await team.wait();
    expect(summary).toMatchObject({ status: 'completed', counts: { total: 2, completed: 2 } });

    for (const id of [FIXTURE_IDS.w1, FIXTURE_IDS.approval, FIXTURE_IDS.handoff, childId, `${FIXTURE_IDS.team}:a:1`, `${FIXTURE_IDS.team}:b:1`]) {
      await replays(rt, store, id);
    }
  });

  it('holds every form, and says what wrote it', () => {
    for (const f of ['memory.json', 'state.db', 'jetstream.json', 'manifest.json']) expect(existsSync(join(root, set, f)), f).toBe(true);
    expect(JSON.parse(readFileSync(join(root, set, 'manifest.json'), 'utf8'))).toMatchObject({ fixtureSet: Number(set.slice(1)) });
  });
});
