/**
 * One socket write per turn of the event loop (src/nats/writes.ts) against a real nats-server:
 * what is published from many microtasks of one turn leaves in one write, every message arrives
 * in order, and a reconnected connection (a new socket) still delivers.
 */
import type { NatsConnection } from '@nats-io/transport-node';
import { describe, expect, it } from 'vitest';
import { coalesceWrites } from '../../src/nats/writes.js';
import { jetstreamNamespace } from '../support/jetstream-namespace.js';
import { natsServerMissing } from '../support/nats-server.js';

/** The writes reaching the connection's current socket (`_write` or `_writev` calls: one each per system call). */
function countWrites(nc: NatsConnection): { readonly n: number } {
  const socket = (nc as unknown as { protocol: { transport: { socket: Record<string, (...a: unknown[]) => unknown> } } }).protocol.transport.socket;
  const count = { n: 0 };
  for (const name of ['_write', '_writev']) {
    const f = socket[name]!;
    socket[name] = function (this: unknown, ...a: unknown[]) {
      count.n++;
      return f.apply(this, a);
    };
  }
  return count;
}

/** Publishes `n` messages on `subject`, each in a microtask of its own (as commits resuming one after another). */
async function publishInMicrotasks(nc: NatsConnection, subject: string, n: number): Promise<void> {
  for (let i = 0; i < n; i++) {
    await Promise.resolve();
    nc.publish(subject, `m${i}`);
  }
}

/** The file's nats-server (its JetStream namespaces are not used here). */
const ns = jetstreamNamespace('w');

describe.skipIf(natsServerMissing)('coalesced NATS writes', () => {
  /** A connection as a runtime makes it (reconnecting forever), closed after the test. */
  const open = () => ns.connection();

  /** The messages `sub` receives on `subject` until `n` arrived. */
  async function receive(nc: NatsConnection, subject: string, n: number): Promise<{ got: string[]; done: Promise<void> }> {
    const got: string[] = [];
    let done!: () => void;
    const all = new Promise<void>((r) => (done = r));
    nc.subscribe(subject, { callback: (_e, m) => void (got.push(m.string()) === n && done()) });
    await nc.flush();
    return { got, done: all };
  }

  it('sends what one turn published from many microtasks in one write, in order', async () => {
    const reader = await open();
    const plain = await open();
    const coalesced = await open();
    coalesceWrites(coalesced);
    coalesceWrites(coalesced); // Once per connection, however often asked.
    const a = await receive(reader, 'plain', 20);
    const b = await receive(reader, 'coalesced', 20);
    const plainWrites = countWrites(plain);
    const coalescedWrites = countWrites(coalesced);
    await Promise.all([publishInMicrotasks(plain, 'plain', 20), publishInMicrotasks(coalesced, 'coalesced', 20)]);
    await Promise.all([a.done, b.done]);
    const expected = Array.from({ length: 20 }, (_, i) => `m${i}`);
    expect(a.got).toEqual(expected);
    expect(b.got).toEqual(expected);
    // Without it, a write per microtask that published; with it, one for the turn.
    expect(plainWrites.n).toBeGreaterThanOrEqual(10);
    expect(coalescedWrites.n).toBe(1);
  });

  it('keeps delivering across a reconnect (a new socket) and flushes before close', async () => {
    const reader = await open();
    const nc = await open();
    coalesceWrites(nc);
    const before = await receive(reader, 'before', 5);
    await publishInMicrotasks(nc, 'before', 5);
    await before.done;
    await ns.server.restart({ downMs: 100 });
    // Both connections come back on their own (reconnectTimeWait 50 ms).
    await expect.poll(async () => reader.flush().then(() => nc.flush().then(() => true)), { timeout: 5_000, interval: 100 }).toBe(true);
    const after = await receive(reader, 'after', 5);
    await publishInMicrotasks(nc, 'after', 5);
    await after.done;
    expect(after.got).toEqual(['m0', 'm1', 'm2', 'm3', 'm4']);
    // Published in the turn that closes: written before the connection ends.
    const last = await receive(reader, 'last', 3);
    await publishInMicrotasks(nc, 'last', 3);
    await nc.close();
    await last.done;
    expect(last.got).toEqual(['m0', 'm1', 'm2']);
  });
});
