/**
 * Batched frames at `/events?swarmId=…&batch=1`: JSON arrays of events (a stored page per frame
 * on replay, a commit's events per frame live), with the same order, `since`, overflow and
 * closes as one event per frame; control frames stay objects. Driven with the `ws` client.
 */
import { describe, expect, it } from 'vitest';
import { isFinalEvent, memoryStore, type SwarmEvent, type SwarmStore } from '../../src/index.js';
import { MAX_FRAME_BYTES, MAX_FRAME_EVENTS } from '../../src/server/event-frames.js';
import type { SwarmRecord } from '../../src/store/types.js';
import { collect } from '../support/script.js';
import { request, Subscriber } from '../support/server-clients.js';
import { sleep } from '../support/sleep.js';
import { range, seqs } from '../support/seqs.js';
import { until } from '../support/wait.js';
import { BIG_TURNS, startPaused, wsFixture } from '../support/ws-swarms.js';

const { start: serveSwarms, open } = wsFixture();
/** Results of 100 KiB, so a stalled subscriber's frames stay under the frame bound. */
const start = (store?: SwarmStore) => serveSwarms({ blobBytes: 100 * 1024, ...(store ? { store } : {}) });

type Raw = SwarmEvent[] | { type: string; [k: string]: unknown };
/** The frames as received: arrays of events, or control objects. */
const raw = (s: Subscriber) => s.frames as unknown as Raw[];
/** The events of every array frame, in order. */
const eventsOf = (s: Subscriber) => raw(s).flatMap((f) => (Array.isArray(f) ? f : []));

describe('batch=1', () => {
  it('replays after `since` in array frames, then streams each commit as one frame, then closes with 1000', async () => {
    const { url, ws, rt } = await start();
    await startPaused(url, 'hitl', 'h1');
    const stored = await rt.store.readEvents('h1', 0);
    expect(stored.length).toBeGreaterThan(3);

    const sub = await open(`${ws}/events?swarmId=h1&since=2&batch=1`);
    await sub.waitFor(() => eventsOf(sub).length === stored.length - 2);
    // The replay: one stored page, so one frame.
    expect(raw(sub)).toEqual([stored.slice(2)]);
    const replayed = raw(sub).length;

    expect((await request(url, 'POST', '/swarms/hitl/h1/resume', { message: 'Sunday' })).status).toBe(200);
    expect((await sub.closed).code).toBe(1000);
    const all = await collect(rt.forSwarm('hitl', 'h1').events());
    expect(isFinalEvent(all.at(-1)!)).toBe(true);
    expect(eventsOf(sub)).toEqual(all.slice(2));
    // Every frame is an array; live ones hold what a commit made visible, several events at once.
    const live = raw(sub).slice(replayed) as SwarmEvent[][];
    expect(live.every(Array.isArray)).toBe(true);
    expect(live.length).toBeLessThan(all.length - stored.length);
    expect(Math.max(...live.map((f) => f.length))).toBeGreaterThan(1);
  });

  it('splits a long replay into frames of at most one page, resumes with `since` without a gap', async () => {
    const store = memoryStore();
    const { ws, rt } = await start(store);
    // A finished swarm of 1,203 events, written straight into the store.
    await rt.forSwarm('hitl', 'seed').run('x');
    await until(
      'seed to pause',
      () => rt.store.load('seed'),
      (r) => r?.status === 'paused',
    );
    const first = await rt.store.readEvents('seed', 0);
    const record = (await rt.store.load('seed'))!;
    const filler = Array.from({ length: 1200 - first.length }, (_, i) => ({
      seq: first.length + i + 1,
      swarmId: 'long',
      timestamp: Date.now(),
      kind: 'internal:checkpoint',
      step: 'agent-step',
    })) as SwarmEvent[];
    const events = [...first.map((e) => ({ ...e, swarmId: 'long' })), ...filler];
    const final = {
      seq: 1201,
      swarmId: 'long',
      timestamp: Date.now(),
      kind: 'status-update',
      final: true,
      status: { state: 'completed', timestamp: new Date().toISOString() },
    };
    events.push(final as unknown as SwarmEvent);
    const done: SwarmRecord = { ...record, swarmId: 'long', status: 'completed', revision: 1, lastSeq: events.length, updatedAt: Date.now() };
    delete done.lease;
    await store.commit({ swarmId: 'long', events, record: done });
    expect(isFinalEvent(events.at(-1)!)).toBe(true);

    const sub = await open(`${ws}/events?swarmId=long&batch=1`);
    expect((await sub.closed).code).toBe(1000);
    expect(seqs(eventsOf(sub))).toEqual(range(1, events.length));
    expect(raw(sub).every((f) => Array.isArray(f) && f.length <= MAX_FRAME_EVENTS)).toBe(true);
    expect(raw(sub).length).toBe(Math.ceil(events.length / MAX_FRAME_EVENTS));

    const later = await open(`${ws}/events?swarmId=long&since=700&batch=1`);
    expect((await later.closed).code).toBe(1000);
    expect(seqs(eventsOf(later))).toEqual(range(701, events.length));
  });

  it('a stalled batched subscriber overflows (an object frame, 1013); frames stay within the byte bound; since=lastSeq continues', async () => {
    const { url, ws, rt } = await start();
    await startPaused(url, 'big', 'big1');
    const slow = await open(`${ws}/events?swarmId=big1&batch=1`);
    await slow.waitFor(() => eventsOf(slow).length > 0);
    const socket = (slow.ws as unknown as { _socket: { pause(): void; resume(): void } })._socket;
    socket.pause();

    const started = Date.now();
    await request(url, 'POST', '/swarms/big/big1/resume', { message: 'go' });
    expect(await rt.forSwarm('big', 'big1').wait()).toEqual({ status: 'completed', result: 'big done' });
    expect(Date.now() - started).toBeLessThan(5_000);
    const all = await collect(rt.forSwarm('big', 'big1').events());

    await sleep(50);
    socket.resume();
    expect((await slow.closed).code).toBe(1013);
    const overflow = raw(slow).at(-1) as { type: string; swarmId: string; lastSeq: number };
    expect(overflow).toMatchObject({ type: 'overflow', swarmId: 'big1' });
    const got = eventsOf(slow);
    expect(seqs(got)).toEqual(range(1, overflow.lastSeq));
    expect(overflow.lastSeq).toBeLessThan(all.length);

    const again = await open(`${ws}/events?swarmId=big1&since=${overflow.lastSeq}&batch=1`);
    expect((await again.closed).code).toBe(1000);
    expect([...got, ...eventsOf(again)]).toEqual(all);
    // The whole run replayed: frames of several events stay within the byte bound.
    const replay = await open(`${ws}/events?swarmId=big1&batch=1`);
    expect((await replay.closed).code).toBe(1000);
    expect(eventsOf(replay)).toEqual(all);
    const frames = raw(replay) as SwarmEvent[][];
    expect(frames.length).toBeGreaterThan(BIG_TURNS / 3);
    for (const f of frames) if (f.length > 1) expect(JSON.stringify(f).length).toBeLessThanOrEqual(MAX_FRAME_BYTES + 1);
  });

  it('refuses a bad batch value and batch outside one-swarm mode (400); batch=0 is one event per frame', async () => {
    const { url, ws } = await start();
    await startPaused(url, 'hitl', 'h2');
    await expect(Subscriber.open(`${ws}/events?swarmId=h2&batch=yes`)).rejects.toMatchObject({ status: 400 });
    await expect(Subscriber.open(`${ws}/events?batch=1`)).rejects.toMatchObject({ status: 400 });
    const plain = await open(`${ws}/events?swarmId=h2&batch=0`);
    await plain.waitFor((f) => f.length >= 3);
    expect(raw(plain).some(Array.isArray)).toBe(false);
  });
});
