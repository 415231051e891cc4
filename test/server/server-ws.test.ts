/**
 * WebSocket subscribers at `/events`, driven with the `ws` client: one swarm (replay, then
 * live, reconnects with `since`), every swarm, slow subscribers, refused upgrades.
 */
import { describe, expect, it } from 'vitest';
import { factOf, isFinalEvent, type SwarmEvent } from '../../src/index.js';
import { collect } from '../support/script.js';
import { type Frame, isEvent, request, Subscriber } from '../support/server-clients.js';
import { sleep } from '../support/sleep.js';
import { until } from '../support/wait.js';
import { range, seqs } from '../support/seqs.js';
import { BIG_TURNS, startPaused, status, wsFixture } from '../support/ws-swarms.js';

const { start, open, closeServer } = wsFixture();

const hasFinal = (frames: Frame[]) => frames.some((f) => isEvent(f) && isFinalEvent(f));

describe('one swarm', () => {
  it('replays after `since`, then streams live events until the final one, then closes with 1000', async () => {
    const { url, ws, rt } = await start();
    await startPaused(url, 'hitl', 'h1');
    const stored = await rt.store.readEvents('h1', 0);
    expect(stored.length).toBeGreaterThan(3);

    const sub = await open(`${ws}/events?swarmId=h1&since=2`);
    // The replay: everything stored after seq 2.
    await sub.waitFor((f) => f.length === stored.length - 2);
    expect(sub.events).toEqual(stored.slice(2));
    // Live: resume, and the rest arrives.
    expect((await request(url, 'POST', '/swarms/hitl/h1/resume', { message: 'Sunday' })).status).toBe(200);
    const closed = await sub.closed;
    expect(closed.code).toBe(1000);
    const all = await collect(rt.forSwarm('hitl', 'h1').events());
    expect(sub.frames).toEqual(all.slice(2));
    expect(isFinalEvent(all.at(-1)!)).toBe(true);
  });

  it('a subscriber that disconnects mid-stream and reconnects with `since` misses nothing and sees nothing twice', async () => {
    const { url, ws, rt } = await start();
    await request(url, 'POST', '/swarms/ticks', { input: 'go', swarmId: 't1' });
    const first = await open(`${ws}/events?swarmId=t1`);
    await first.waitFor((f) => f.length >= 5);
    // What this client saw before it went away; frames still in flight are not "seen".
    const seen = first.events.slice();
    first.ws.close();
    // Mid-stream: the swarm had not finished when this client left.
    expect(hasFinal(seen)).toBe(false);
    const since = seen.at(-1)!.seq;

    const second = await open(`${ws}/events?swarmId=t1&since=${since}`);
    expect((await second.closed).code).toBe(1000);
    const all = await collect(rt.forSwarm('ticks', 't1').events());
    expect([...seen, ...second.events]).toEqual(all);
    expect(seqs([...seen, ...second.events])).toEqual(range(1, all.length));
  });

  it('a finished swarm is replayed and closed; `definitionId` is checked when given', async () => {
    const { url, ws, rt } = await start();
    await request(url, 'POST', '/swarms/ticks', { input: 'go', swarmId: 'done' });
    await until(
      'done to be completed',
      () => status(url, 'ticks', 'done'),
      (r) => r.status === 'completed',
    );
    const sub = await open(`${ws}/events?swarmId=done&definitionId=ticks`);
    expect((await sub.closed).code).toBe(1000);
    expect(sub.frames).toEqual(await collect(rt.forSwarm('ticks', 'done').events()));
    await expect(Subscriber.open(`${ws}/events?swarmId=done&definitionId=hitl`)).rejects.toMatchObject({ status: 404 });
  });
});

describe('every swarm', () => {
  it('streams the events of every swarm that commits after the subscription started', async () => {
    const { url, ws, rt } = await start();
    // A swarm that finished before the subscription: none of its events may appear.
    await request(url, 'POST', '/swarms/ticks', { input: 'old', swarmId: 'old' });
    await until(
      'old to be completed',
      () => status(url, 'ticks', 'old'),
      (r) => r.status === 'completed',
    );
    // A swarm waiting since before: only what it does from now on.
    await startPaused(url, 'hitl', 'waiting');
    const waitingBefore = (await rt.store.readEvents('waiting', 0)).length;

    const sub = await open(`${ws}/events`);
    await sub.waitFor((f) => f.some((x) => 'type' in x && x.type === 'subscribed'));
    expect(sub.frames).toEqual([{ type: 'subscribed' }]);

    await request(url, 'POST', '/swarms/ticks', { input: 'new', swarmId: 'new' });
    await request(url, 'POST', '/swarms/hitl/waiting/resume', { message: 'Sunday' });
    const finals = (f: Frame[]) => f.filter((x) => isEvent(x) && isFinalEvent(x)).length;
    await sub.waitFor((f) => finals(f) === 2);

    const of = (id: string) => sub.events.filter((e) => e.swarmId === id);
    expect(of('old')).toEqual([]);
    expect(of('new')).toEqual(await collect(rt.forSwarm('ticks', 'new').events()));
    expect(of('waiting')).toEqual((await collect(rt.forSwarm('hitl', 'waiting').events())).slice(waitingBefore));
    expect(seqs(of('waiting'))[0]).toBe(waitingBefore + 1);
  });

  it('narrows to one definition with `definitionId`', async () => {
    const { url, ws } = await start();
    const sub = await open(`${ws}/events?definitionId=hitl`);
    await sub.waitFor((f) => f.length === 1);
    await request(url, 'POST', '/swarms/ticks', { input: 'a', swarmId: 'a' });
    await request(url, 'POST', '/swarms/hitl', { input: 'b', swarmId: 'b' });
    await until(
      'a to be completed',
      () => status(url, 'ticks', 'a'),
      (r) => r.status === 'completed',
    );
    await sub.waitFor((f) => f.some((x) => isEvent(x) && factOf(x, 'paused') !== undefined));
    expect(new Set(sub.events.map((e) => e.swarmId))).toEqual(new Set(['b']));
    await expect(Subscriber.open(`${ws}/events?definitionId=nope`)).rejects.toMatchObject({ status: 404 });
  });
});

describe('slow subscribers', () => {
  it('a subscriber that stops reading overflows and is closed with 1013; the swarm completes unaffected', async () => {
    const { url, ws, rt } = await start();
    await startPaused(url, 'big', 'big1');
    const slow = await open(`${ws}/events?swarmId=big1`);
    await slow.waitFor((f) => f.length > 0 && (f.at(-1) as SwarmEvent).kind === 'internal:checkpoint');
    // The client stops reading from its socket: the server's writes back up.
    (slow.ws as unknown as { _socket: { pause(): void; resume(): void } })._socket.pause();

    const started = Date.now();
    await request(url, 'POST', '/swarms/big/big1/resume', { message: 'go' });
    expect(await rt.forSwarm('big', 'big1').wait()).toEqual({ status: 'completed', result: 'big done' });
    // Megabytes of events were committed without the subscriber reading any.
    expect(Date.now() - started).toBeLessThan(5_000);
    const all = await collect(rt.forSwarm('big', 'big1').events());
    expect(all.length).toBeGreaterThan(BIG_TURNS * 3);

    // Let the server notice, then read what was queued for us: events, the overflow frame, 1013.
    await sleep(50);
    (slow.ws as unknown as { _socket: { resume(): void } })._socket.resume();
    const closed = await slow.closed;
    expect(closed.code).toBe(1013);
    const overflow = slow.frames.at(-1) as { type: string; swarmId: string; lastSeq: number };
    expect(overflow).toMatchObject({ type: 'overflow', swarmId: 'big1' });
    const got = slow.events;
    expect(seqs(got)).toEqual(range(1, overflow.lastSeq));
    expect(overflow.lastSeq).toBeLessThan(all.length);

    // Reconnecting with since = lastSeq continues exactly.
    const again = await open(`${ws}/events?swarmId=big1&since=${overflow.lastSeq}`);
    expect((await again.closed).code).toBe(1000);
    expect([...got, ...again.events]).toEqual(all);
  });
});

describe('slow subscribers of every swarm', () => {
  it('one stalled subscriber overflows with its last seqs; another one and the swarm are unaffected', async () => {
    const { url, ws, rt } = await start();
    await startPaused(url, 'big', 'big2');
    const stalled = await open(`${ws}/events`);
    const healthy = await open(`${ws}/events`);
    await stalled.waitFor((f) => f.length === 1);
    await healthy.waitFor((f) => f.length === 1);
    (stalled.ws as unknown as { _socket: { pause(): void } })._socket.pause();

    await request(url, 'POST', '/swarms/big/big2/resume', { message: 'go' });
    expect(await rt.forSwarm('big', 'big2').wait()).toMatchObject({ status: 'completed' });
    await healthy.waitFor(hasFinal);
    const all = await collect(rt.forSwarm('big', 'big2').events());
    const paused = (await rt.store.readEvents('big2', 0)).findIndex((e) => factOf(e, 'resumed'));
    // The healthy subscriber got everything from the resume on, in order.
    expect(healthy.events).toEqual(all.slice(paused));

    await sleep(50);
    (stalled.ws as unknown as { _socket: { resume(): void } })._socket.resume();
    expect((await stalled.closed).code).toBe(1013);
    const overflow = stalled.frames.at(-1) as { type: string; lastSeqs: Record<string, number> };
    expect(overflow.type).toBe('overflow');
    expect(seqs(stalled.events)).toEqual(range(paused + 1, overflow.lastSeqs.big2!));
  });

  it('closing the server closes subscribers with 1001 (going away)', async () => {
    const { ws } = await start();
    const sub = await open(`${ws}/events`);
    await sub.waitFor((f) => f.length === 1);
    await closeServer();
    expect((await sub.closed).code).toBe(1001);
  });
});

describe('upgrades that are refused', () => {
  it('401 without the token, 404 for an unknown swarm, 400 for a bad since, 426 for plain HTTP', async () => {
    const { url, ws } = await start({ token: 't' });
    const auth = { authorization: 'Bearer t' };
    await request(url, 'POST', '/swarms/hitl', { input: 'x', swarmId: 'h' }, auth);
    await expect(Subscriber.open(`${ws}/events?swarmId=h`)).rejects.toMatchObject({ status: 401 });
    await expect(Subscriber.open(`${ws}/events`, { authorization: 'Bearer wrong' })).rejects.toMatchObject({ status: 401 });
    await expect(Subscriber.open(`${ws}/events?swarmId=missing`, auth)).rejects.toMatchObject({ status: 404 });
    await expect(Subscriber.open(`${ws}/events?swarmId=h&since=x`, auth)).rejects.toMatchObject({ status: 400 });
    await expect(Subscriber.open(`${ws}/nowhere`, auth)).rejects.toMatchObject({ status: 404 });
    expect((await request(url, 'GET', '/events', undefined, auth)).status).toBe(426);

    // With the token it works, and the server still serves everything else.
    const sub = await open(`${ws}/events?swarmId=h`, auth);
    await sub.waitFor((f) => f.some((x) => isEvent(x) && factOf(x, 'paused') !== undefined));
    expect((await request(url, 'POST', '/swarms/hitl/h/resume', { message: 'ok' }, auth)).status).toBe(200);
    expect((await sub.closed).code).toBe(1000);
    expect(hasFinal(sub.frames)).toBe(true);
  });
});
