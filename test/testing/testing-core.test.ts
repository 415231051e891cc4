/**
 * The framework-neutral core of `xswarm/testing`: sample values from JSON Schema, the crash
 * points, the invariant checks on hand-made event lists (each must see what breaks it), and a
 * swarm's paths run on SQLite files (one per run, in a temp folder) instead of memory.
 */
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { activityAgents, activityPlanner } from '../../examples/activity-planner/index.js';
import { type SwarmEvent, sqliteStore } from '../../src/index.js';
import { jsonSchemaOf } from '../../src/define/tool.js';
import { checkSwarm, crashPoints, describeFailure, sampleOf } from '../../src/entries/testing.js';
import { effectsOnce, oneFinal, ordered, sameReplay, sameStream } from '../../src/testing/invariants.js';
import { tempDirs } from '../support/temp-dirs.js';

const tempDir = tempDirs();

describe('sampleOf', () => {
  it('gives values the zod schemas of definitions accept', () => {
    const schemas = [
      z.string().min(12),
      z.object({ day: z.string(), people: z.number().int().positive(), kind: z.enum(['hike', 'swim']), note: z.string().optional() }),
      z.array(z.object({ at: z.iso.datetime(), mail: z.email() })).min(2),
      z.union([z.literal('a'), z.number()]),
      z.object({ ok: z.boolean(), nested: z.object({ id: z.uuid() }), n: z.number().min(5) }),
    ];
    for (const schema of schemas) expect(schema.safeParse(sampleOf(jsonSchemaOf(schema))).success, JSON.stringify(jsonSchemaOf(schema))).toBe(true);
  });
});

describe('crashPoints', () => {
  it('every commit but the last, or n of them spread evenly', () => {
    expect(crashPoints(5)).toEqual([1, 2, 3, 4]);
    expect(crashPoints(1)).toEqual([]);
    expect(crashPoints(11, 2)).toEqual([3, 8]);
    expect(crashPoints(11, 0)).toEqual([]);
    expect(crashPoints(3, 10)).toEqual([1, 2]);
  });
});

/** A status update of swarm `s` with seq `seq`, final or not. */
function status(seq: number, final: boolean, s = 's'): SwarmEvent {
  const state = final ? 'completed' : 'working';
  const message = { kind: 'message' as const, role: 'agent' as const, messageId: `m${seq}`, parts: [{ kind: 'text' as const, text: 'done' }], taskId: s, contextId: s };
  return {
    kind: 'status-update',
    taskId: s,
    contextId: s,
    status: { state, timestamp: new Date(0).toISOString(), ...(final ? { message } : {}) },
    final,
    metadata: final ? { type: 'completed', result: 'done' } : { type: 'turn-completed', turn: seq, maxTurns: 10, activeAgent: s },
    seq,
    swarmId: s,
  } as SwarmEvent;
}

describe('the invariant checks', () => {
  it('one final event, and last', () => {
    expect(oneFinal([status(1, false), status(2, true)], true)).toEqual([]);
    expect(oneFinal([status(1, false)], true)).toEqual(['no final event']);
    expect(oneFinal([status(1, false)], false)).toEqual([]);
    expect(oneFinal([status(1, true), status(2, true)], true)).toEqual(['2 final events (seqs 1, 2)']);
    expect(oneFinal([status(1, true), status(2, false)], true)).toEqual(['the final event (seq 1) is followed by seq 2']);
  });

  it('seqs 1..N of the swarm, each a valid event', () => {
    expect(ordered('s', [status(1, false), status(2, true)])).toEqual([]);
    expect(ordered('s', [status(1, false), status(3, true)])).toEqual(['event 2 has seq 3']);
    expect(ordered('s', [status(1, false, 't')])).toEqual(expect.arrayContaining(['seq 1 names swarm t']));
    const invalid = { ...status(1, true), final: false } as SwarmEvent;
    expect(ordered('s', [invalid])[0]).toMatch(/^seq 1 \(status-update\) is not a valid event: final: final must be true in state completed/);
  });

  it('replay and crash streams compare events, times and approval ids aside', () => {
    const run = [status(1, false), status(2, true)];
    expect(sameReplay(run, run)).toEqual([]);
    expect(sameReplay(run, [run[0]!])).toEqual(['the replay differs from the run at seq 2 (1 events replayed, 2 recorded)']);
    expect(sameReplay(run, new Error('diverged at seq 2'))).toEqual(['the replay failed: diverged at seq 2']);
    const later = run.map((e) => ({ ...e, status: { ...(e as { status: object }).status, timestamp: new Date(5).toISOString() } })) as SwarmEvent[];
    expect(sameStream(run, later)).toEqual([]);
    expect(sameStream(run, [run[0]!, status(2, false)])).toEqual([
      "the events differ from the clean run's at seq 2: status-update:turn-completed where the clean run has status-update:completed (at status.state)",
    ]);
  });

  it('side effects per call, against the clean run', () => {
    const clean = new Map([['k1', 1]]);
    expect(effectsOnce(clean, new Map([['k1', 1]]))).toEqual([]);
    expect(effectsOnce(clean, new Map([['k1', 2]]))).toEqual(['the call with idempotency key k1 made 2 side effects (1 in the clean run)']);
  });
});

it('the activity planner on SQLite files: every path passes, with a crash at three commits of each', async () => {
  const dir = tempDir('xswarm-testing-sqlite-');
  let n = 0;
  const reports = await checkSwarm(activityPlanner, { agents: activityAgents, paths: 'shortest', crashes: 3, store: () => sqliteStore(join(dir, `run-${++n}.db`)) });
  expect(reports.flatMap((r) => r.failures).map(describeFailure)).toEqual([]);
  expect(reports.map((r) => r.result?.status)).toEqual([
    'completed',
    'completed',
    'completed',
    'completed',
    'failed',
    'completed',
    'stopped',
    'completed',
    'stopped',
    'stopped',
  ]);
  // One store per run: the clean run and each crash run of each path.
  expect(n).toBe(reports.reduce((sum, r) => sum + 1 + r.crashes, 0));
}, 30_000);
