/**
 * Runs that survive a deploy (issue 31, item 4), on a shared SQLite file: a run continues on the
 * definition version it started on while that version is registered; a definition changed between
 * two module versions migrates a stored run with its `migrate`; a definition (or version) missing
 * after a deploy leaves the run waiting, untouched, until a runtime that has it adopts it.
 */
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import {
  createRuntime,
  DefinitionError,
  defineSwarm,
  type MigrationArgs,
  type MigrationSnapshot,
  scriptedModel,
  serve,
  type SwarmDefinition,
  type SwarmEvent,
  tool,
} from '../../src/index.js';
import { askerModel, collect } from '../support/script.js';
import { sqliteFilePerTest } from '../support/sqlite-file.js';
import { sleep } from '../support/sleep.js';
import { until } from '../support/wait.js';

const file = sqliteFilePerTest('xswarm-deploys-');

const V1_INSTRUCTIONS = 'Book a day.';
const V2_INSTRUCTIONS = 'Book a day, then put it in the calendar.';

const calendar = tool({ name: 'calendar', description: 'Adds a day to the calendar.', parameters: z.object({ day: z.string() }), execute: () => 'added' });

/** Version 1 of the asker: it pauses to ask which day, then books it. */
const askerV1 = defineSwarm({ id: 'asker', instructions: V1_INSTRUCTIONS });

/** Version 2, another module version: new instructions, a tool, a result guardrail, and optionally a migration. */
function askerV2(migrate?: (args: MigrationArgs) => MigrationSnapshot | Promise<MigrationSnapshot>): SwarmDefinition {
  return defineSwarm({
    id: 'asker',
    version: 2,
    instructions: V2_INSTRUCTIONS,
    tools: [calendar],
    // Proves which version a run is judged by: v2 rejects what v1 accepts.
    guardrails: { output: [{ name: 'no-tuesday', check: (r) => (String(r).includes('Tuesday') ? 'no bookings on Tuesday' : true) }] },
    ...(migrate ? { migrate } : {}),
  });
}

/** Leaves swarm `id` of asker v1 paused at its question in the test's file (the runtime closed). */
async function pausedOnV1(id = 'victim'): Promise<void> {
  const a = file.runtime({ swarms: [askerV1], model: askerModel(), store: file.open() });
  const client = a.forSwarm(askerV1, id);
  await client.run('x');
  expect((await client.wait()).status).toBe('paused');
  await a.close();
}

/** The swarm's row and events as stored (what a waiting swarm must leave untouched). */
async function stored(id: string) {
  const store = file.open();
  const { lease: _lease, ...record } = (await store.load(id))!;
  return { record, events: await store.readEvents(id, 0) };
}

const system = (req: { messages: readonly { role: string; content: string }[] }) => req.messages[0]?.content;

describe('a definition changed between two module versions', () => {
  it('a paused run is migrated by the function, called once with from 1 and to 2, and completes on version 2', async () => {
    await pausedOnV1();
    const calls: MigrationArgs[] = [];
    const v2 = askerV2((args) => {
      calls.push(structuredClone(args));
      return { ...args.snapshot, config: { ...args.snapshot.config, instructions: V2_INSTRUCTIONS, tools: ['calendar'] } };
    });
    const model = askerModel();
    const b = file.runtime({ swarms: [v2], model, store: file.open(), leaseMs: 100 });
    await b.start();
    // Several adoption scans pass: the function is still called once.
    await sleep(250);
    expect(calls).toHaveLength(1);
    expect(calls[0]).toMatchObject({ from: 1, to: 2, snapshot: { status: 'paused', input: 'x', turn: 1, config: { instructions: V1_INSTRUCTIONS, tools: [] } } });
    expect(calls[0]!.snapshot.messages.map((m) => m.role)).toEqual(['system', 'user', 'assistant']);

    // Recorded: the record is version 2, and the fact says so, in the stream.
    const after = await stored('victim');
    expect(after.record).toMatchObject({ definitionVersion: 2, status: 'paused' });
    const migrated = after.events.filter((e) => e.kind === 'status-update' && e.metadata.type === 'migrated');
    expect(migrated).toHaveLength(1);
    expect(migrated[0]).toMatchObject({ status: { state: 'input-required' }, final: false, metadata: { type: 'migrated', definitionId: 'asker', from: 1, to: 2 } });
    const listed = (await b.list()).find((s) => s.swarmId === 'victim');
    expect(listed?.waitingFor).toBeUndefined();

    // It continues on version 2: its instructions and tool, and its guardrail judges the result.
    const client = b.forSwarm(v2, 'victim');
    await client.resume('Monday');
    expect(await client.wait()).toEqual({ status: 'completed', result: 'Booked for Monday.' });
    expect(system(model.requests[0]!)).toBe(V2_INSTRUCTIONS);
    expect(model.requests[0]!.tools.map((t) => t.name)).toContain('calendar');
    expect((await stored('victim')).record).toMatchObject({ definitionVersion: 2, status: 'completed' });
    expect(calls).toHaveLength(1);
    // The run replays, the migration included.
    const replayed = await collect(b.replay('victim'));
    expect(replayed.map((e: SwarmEvent) => e.seq)).toEqual((await stored('victim')).events.map((e) => e.seq));
  });

  it('without a migration, it continues on the old version while both are registered; new runs use the new one', async () => {
    await pausedOnV1();
    const v2 = askerV2();
    const model = askerModel();
    const b = file.runtime({ swarms: [askerV1, v2], model, store: file.open() });
    await b.start();
    const old = b.forSwarm('asker', 'victim');
    await old.resume('Tuesday');
    // Version 1 has no guardrail against Tuesday: judged by v1, it completes.
    expect(await old.wait()).toEqual({ status: 'completed', result: 'Booked for Tuesday.' });
    expect(system(model.requests[0]!)).toBe(V1_INSTRUCTIONS);
    expect(model.requests[0]!.tools.map((t) => t.name)).not.toContain('calendar');
    const oldRecord = (await stored('victim')).record;
    expect(oldRecord.definitionVersion).toBe(1);
    expect((await stored('victim')).events.some((e) => e.kind === 'status-update' && e.metadata.type === 'migrated')).toBe(false);

    // A new run starts on version 2, and v2's guardrail judges it.
    const fresh = b.forSwarm('asker', 'fresh');
    await fresh.run('y');
    expect((await fresh.wait()).status).toBe('paused');
    expect(system(model.requests.at(-1)!)).toBe(V2_INSTRUCTIONS);
    await fresh.resume('Tuesday');
    expect(await fresh.wait()).toMatchObject({ status: 'failed', rejected: { guardrail: 'no-tuesday' } });
    expect((await stored('fresh')).record.definitionVersion).toBe(2);
    // Each replays, judged by the version it ran on.
    await expect(collect(b.replay('victim'))).resolves.not.toHaveLength(0);
    await expect(collect(b.replay('fresh'))).resolves.not.toHaveLength(0);
  });

  it('a migration that throws or returns an invalid snapshot leaves the stored run untouched; it waits with the error', async () => {
    await pausedOnV1('threw');
    await pausedOnV1('invalid');
    const before = { threw: await stored('threw'), invalid: await stored('invalid') };
    let calls = 0;
    const v2 = askerV2(({ snapshot }) => {
      calls++;
      if (snapshot.messages.length > 0 && calls === 1) throw new Error('cannot read this conversation');
      return { ...snapshot, config: { ...snapshot.config, tools: ['no_such_tool'] } };
    });
    const model = askerModel();
    const b = file.runtime({ swarms: [v2], model, store: file.open(), leaseMs: 100 });
    await b.start();
    await sleep(250);
    // Once each: a failed migration is not retried by the runtime it failed in.
    expect(calls).toBe(2);
    const listed = new Map((await b.list()).map((s) => [s.swarmId, s]));
    for (const id of ['threw', 'invalid']) {
      expect(listed.get(id), id).toMatchObject({ status: 'paused', waitingFor: 'asker@1' });
      expect((await stored(id)).record).toEqual(before[id as 'threw' | 'invalid'].record);
      expect((await stored(id)).events).toEqual(before[id as 'threw' | 'invalid'].events);
    }
    const reasons = [listed.get('threw')!.waitingReason, listed.get('invalid')!.waitingReason];
    expect(reasons[0]).toMatch(
      /Migration of swarm "(threw|invalid)" from "asker" version 1 to 2 failed: (migrate threw: cannot read this conversation|it names tool "no_such_tool")/,
    );
    expect(reasons.join(' ')).toContain('migrate threw: cannot read this conversation');
    expect(reasons.join(' ')).toContain('it names tool "no_such_tool", which is not registered');
    expect(model.requests).toHaveLength(0);
  });
});

describe('a definition missing after a deploy', () => {
  it('waits (listed in its stored status, naming it, not failed), untouched, and a runtime that has it adopts it later', async () => {
    await pausedOnV1();
    const before = await stored('victim');
    const other = defineSwarm({ id: 'other', instructions: 'Something else.' });
    const otherModel = askerModel();
    const b = file.runtime({ swarms: [other], model: otherModel, store: file.open(), leaseMs: 100 });
    await b.start();

    const listed = (await b.list()).find((s) => s.swarmId === 'victim');
    expect(listed).toMatchObject({ status: 'paused', waitingFor: 'asker@1' });
    expect(listed?.waitingReason).toMatch(/its definition "asker" is not registered with this runtime; it waits for a runtime that has asker@1/);
    const result = await b.forSwarm('asker', 'victim').getResult();
    expect(result).toMatchObject({ status: 'paused', waitingFor: 'asker@1', reason: { message: 'Which day?' } });
    expect(await b.list({ status: ['failed'] })).toEqual([]);
    // A command says why it cannot be done here.
    await expect(b.forSwarm('asker', 'victim').resume('Monday')).rejects.toThrow(/asker@1/);
    await sleep(250);
    expect(await stored('victim')).toEqual(before);
    expect(otherModel.requests).toHaveLength(0);

    // Another deploy has it: it adopts the waiting run, which completes.
    const model = askerModel();
    const c = file.runtime({ swarms: [askerV1], model, store: file.open(), leaseMs: 100 });
    await c.start();
    const client = c.forSwarm(askerV1, 'victim');
    await client.resume('Monday');
    expect(await client.wait()).toEqual({ status: 'completed', result: 'Booked for Monday.' });
    // B sees it driven, then finished: no note any more.
    await until('B to list it completed', async () => (await b.list()).find((s) => s.swarmId === 'victim')?.status === 'completed');
    expect((await b.list()).find((s) => s.swarmId === 'victim')?.waitingFor).toBeUndefined();
    expect(otherModel.requests).toHaveLength(0);
  });

  it('a running swarm whose definition is missing waits too: wait() goes on until a runtime with it finishes it', async () => {
    // Paused, then resumed on a runtime that closes before the model answers: stored running.
    await pausedOnV1();
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    const slow = askerModel();
    const a = file.runtime({ swarms: [askerV1], model: { name: 'slow', call: async (req) => (await held, slow.call(req)) }, store: file.open() });
    await a.start();
    await a.forSwarm(askerV1, 'victim').resume('Friday');
    await a.close();
    release();
    expect((await stored('victim')).record.status).toBe('running');

    const b = file.runtime({ swarms: [], model: askerModel(), store: file.open(), leaseMs: 100 });
    await b.start();
    expect((await b.list()).find((s) => s.swarmId === 'victim')).toMatchObject({ status: 'running', waitingFor: 'asker@1' });
    expect(await b.forSwarm('asker', 'victim').getResult()).toMatchObject({ status: 'running', waitingFor: 'asker@1' });
    const waited = b.forSwarm('asker', 'victim').wait();
    const c = file.runtime({ swarms: [askerV1], model: askerModel(), store: file.open(), leaseMs: 100 });
    await c.start();
    expect(await waited).toEqual({ status: 'completed', result: 'Booked for Friday.' });
  });

  it('the REST server shows it the same way: its stored status, waitingFor, and a command refused naming the version', async () => {
    await pausedOnV1();
    const b = file.runtime({ swarms: [askerV2()], model: askerModel(), store: file.open() });
    await b.start();
    const server = await serve(b);
    file.track(server);
    const got = await fetch(`${server.url}/swarms/asker/victim`);
    expect(got.status).toBe(200);
    expect(await got.json()).toMatchObject({ status: 'paused', waitingFor: 'asker@1' });
    const listed = (await (await fetch(`${server.url}/swarms/asker`)).json()) as { swarmId: string }[];
    expect(listed.find((s) => s.swarmId === 'victim')).toMatchObject({ status: 'paused', waitingFor: 'asker@1', result: { status: 'paused', waitingFor: 'asker@1' } });
    const resumed = await fetch(`${server.url}/swarms/asker/victim/resume`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{"message":"Monday"}',
    });
    expect(resumed.status).toBeGreaterThanOrEqual(400);
    expect(JSON.stringify(await resumed.json())).toContain('asker@1');
  });
});

describe('versions of one definition', () => {
  const model = scriptedModel(() => ({ text: 'ok' }));

  it('several versions of an id register together; the highest is current; one version twice is a duplicate', () => {
    const v2 = askerV2();
    const rt = createRuntime({ swarms: [v2, askerV1], model });
    expect(rt.definition('asker')).toBe(v2);
    expect(rt.definitions().filter((c) => c.id === 'asker')).toHaveLength(1);
    // An older version's tools register too (here v2's calendar, whichever comes first).
    expect(() => createRuntime({ swarms: [askerV1, defineSwarm({ id: 'asker', instructions: 'Another.' })], model })).toThrow(DefinitionError);
    expect(() => createRuntime({ swarms: [askerV1, defineSwarm({ id: 'asker', instructions: 'Another.' })], model })).toThrow(/Duplicate swarm id "asker"/);
  });

  it('a version must be a positive integer, and migrate a function', () => {
    expect(() => defineSwarm({ id: 'x', instructions: 'x', version: 0 })).toThrow(/version must be a positive integer/);
    expect(() => defineSwarm({ id: 'x', instructions: 'x', version: 1.5 })).toThrow(DefinitionError);
    expect(() => defineSwarm({ id: 'x', instructions: 'x', migrate: 'no' as never })).toThrow(/migrate must be a function/);
  });
});
