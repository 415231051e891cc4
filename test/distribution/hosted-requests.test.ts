/**
 * A hosted call's request (`OtherRuntimes.host`) over a transport whose connection drops: a call
 * (`attach`) waits out the outage and asks again, and a runtime working on it (its heartbeats
 * heard) that answers late does not count as nobody hosting the definition; `deadlineMs` counts
 * only time in which no runtime hosting it can be reached. A subscriber that never answers and
 * says nothing is no host. A client's start (no `attach`) is not sent again after a timeout. The
 * transport is a double whose state and answers the test drives.
 */
import { describe, expect, it } from 'vitest';
import { OtherRuntimes } from '../../src/distribution/calls.js';
import type { HostRequest } from '../../src/distribution/protocol.js';
import { type Transport, TransportError, type TransportMessage, type TransportStatus } from '../../src/transport/types.js';
import { sleep } from '../support/sleep.js';

/** What the double does with the next request: answer `ok`, or fail with a transport error. */
type Answer = 'ok' | 'no-responders' | 'timeout' | 'cut';

/**
 * A transport double: `link.status` is its state; each request takes the next of `answers` (then
 * `ok`); with `beating`, a timed-out request's swarm is heard beating meanwhile.
 */
function transportDouble(answers: Answer[], options: { beating?: boolean } = {}) {
  const link: { status: TransportStatus } = { status: 'connected' };
  const sent: number[] = [];
  const handlers = new Map<string, (m: TransportMessage) => void | Promise<void>>();
  const transport: Transport = {
    async request(subject, _data, { timeoutMs }): Promise<TransportMessage> {
      if (link.status !== 'connected') throw new TransportError('NATS is disconnected', 'unavailable');
      sent.push(Date.now());
      const answer = answers.shift() ?? 'ok';
      if (answer === 'ok') return { subject, data: JSON.stringify({ ok: true }), respond: () => false };
      if (answer === 'no-responders') throw new TransportError(`Nobody listens on "${subject}"`, 'no-responders');
      if (answer === 'timeout') {
        if (options.beating) for (const [beat, handler] of handlers) if (beat.startsWith('xswarm.beat.')) void handler({ subject: beat, data: '', respond: () => false });
        await sleep(Math.min(timeoutMs, 30));
        throw new TransportError(`No answer on "${subject}" within ${timeoutMs} ms`, 'timeout');
      }
      // The connection drops with the request in flight: its answer is lost.
      link.status = 'disconnected';
      throw new TransportError('NATS is disconnected: the request was in flight when the connection dropped', 'unavailable');
    },
    publish() {},
    subscribe(subject, handler) {
      handlers.set(subject, handler);
      return { unsubscribe: () => handlers.delete(subject) };
    },
    flush: async () => {},
    status: () => link.status,
    close: async () => {},
  };
  return { transport, link, sent };
}

const DEADLINE_MS = 200;

function others(transport: Transport) {
  return new OtherRuntimes({
    transport: Promise.resolve(transport),
    prefix: 'xswarm',
    owner: 'caller',
    timings: { deadlineMs: DEADLINE_MS, heartbeatMs: 50, heartbeatTimeoutMs: 500, leaseMs: 1_000, serve: true },
    store: {},
  });
}

const call: HostRequest = { swarmId: 'parent:t1:0', definitionId: 'xswarm.agent.weather', input: 'Saturday?', attach: true };

describe('a hosted call through an outage of its transport', () => {
  it('waits while the connection is down, however long past the deadline, and asks again once it is back', async () => {
    const { transport, link, sent } = transportDouble([]);
    link.status = 'disconnected';
    const asking = others(transport).host(call);
    await sleep(3 * DEADLINE_MS);
    expect(sent).toEqual([]);
    link.status = 'connected';
    await asking;
    expect(sent).toHaveLength(1);
  });

  it('a request cut in flight by the drop is sent again once the connection is back', async () => {
    const { transport, link, sent } = transportDouble(['cut']);
    const asking = others(transport).host(call);
    await sleep(3 * DEADLINE_MS);
    expect(sent).toHaveLength(1);
    link.status = 'connected';
    await asking;
    expect(sent).toHaveLength(2);
  });

  it('a runtime working on the call (its heartbeats heard) that answers late is asked again past the deadline', async () => {
    const { transport, sent } = transportDouble(
      Array.from({ length: 12 }, () => 'timeout' as const),
      { beating: true },
    );
    await others(transport).host(call);
    expect(sent).toHaveLength(13);
    expect(sent.at(-1)! - sent[0]!).toBeGreaterThan(DEADLINE_MS);
  });

  it('a subscriber that never answers and never beats is no host: an error after the deadline', async () => {
    const { transport } = transportDouble(Array.from({ length: 1_000 }, () => 'timeout' as const));
    const started = Date.now();
    await expect(others(transport).host(call)).rejects.toMatchObject({ code: 'unknown-definition' });
    expect(Date.now() - started).toBeGreaterThanOrEqual(DEADLINE_MS);
  });

  it('nobody hosting the definition is still an error after the deadline', async () => {
    const { transport } = transportDouble(Array.from({ length: 1_000 }, () => 'no-responders' as const));
    const started = Date.now();
    await expect(others(transport).host(call)).rejects.toMatchObject({ code: 'unknown-definition' });
    expect(Date.now() - started).toBeGreaterThanOrEqual(DEADLINE_MS);
  });

  it("a client's start (no attach) is not sent again after a timeout: it may have started", async () => {
    const { transport, sent } = transportDouble(['timeout']);
    await expect(others(transport).host({ ...call, attach: false })).rejects.toMatchObject({ code: 'unavailable' });
    expect(sent).toHaveLength(1);
  });
});
