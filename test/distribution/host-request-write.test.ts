/**
 * A hosted call's heartbeat subscription and its host request leave in one socket write: NATS
 * writes what was queued before its next microtask runs, so once the transport is open the call
 * queues both in the same turn, with no await between them. The transport double records the
 * order in which its subscription, request and that "flush" happen.
 */
import { describe, expect, it } from 'vitest';
import { OtherRuntimes } from '../../src/distribution/calls.js';
import { type HostRequest, subjectOf } from '../../src/distribution/protocol.js';
import type { Transport } from '../../src/transport/types.js';

/** A transport that logs its subscriptions and requests, and (as NATS) a flush one microtask after the first. */
function loggingTransport() {
  const log: string[] = [];
  let flushQueued = false;
  const queue = (what: string) => {
    log.push(what);
    if (flushQueued) return;
    flushQueued = true;
    queueMicrotask(() => {
      flushQueued = false;
      log.push('flush');
    });
  };
  const transport: Transport = {
    async request(subject) {
      queue(`request ${subject}`);
      return { subject, data: JSON.stringify({ ok: true }), respond: () => false };
    },
    publish(subject) {
      queue(`publish ${subject}`);
    },
    subscribe(subject) {
      queue(`subscribe ${subject}`);
      return { unsubscribe: () => log.push(`unsubscribe ${subject}`) };
    },
    flush: async () => {},
    status: () => 'connected',
    close: async () => {},
  };
  return { transport, log };
}

const macrotask = () => new Promise((resolve) => setImmediate(resolve));

describe('a hosted call on an open transport', () => {
  it('queues its heartbeat subscription and its host request in the same turn (one socket write)', async () => {
    const { transport, log } = loggingTransport();
    const others = new OtherRuntimes({
      transport: Promise.resolve(transport),
      prefix: 'xswarm',
      owner: 'caller',
      timings: { deadlineMs: 1_000, heartbeatMs: 50, heartbeatTimeoutMs: 500, leaseMs: 1_000, serve: true },
      store: {},
    });
    // The transport opened before the call (as a runtime's does, long before its first handoff).
    await macrotask();
    for (const swarmId of ['parent:t1:0', 'parent:t2:0']) {
      log.length = 0;
      const call: HostRequest = { swarmId, definitionId: 'agent:echo', input: 'ping', attach: true };
      await others.host(call);
      expect(log.slice(0, 3)).toEqual([`subscribe ${subjectOf('xswarm', 'beat', swarmId)}`, `request ${subjectOf('xswarm', 'host', 'agent:echo')}`, 'flush']);
    }
  });
});
