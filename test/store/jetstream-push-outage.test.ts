/**
 * The JetStream push outbox while NATS is down (a real nats-server killed and started again):
 * configs added and cursors advanced meanwhile wait and land once it is back (not dropped), the
 * advances of one webhook coalesced (only the latest is written); and a server closing with a
 * write still pending waits briefly, then says so through the runtime's logger.
 */
import { Kvm } from '@nats-io/kv';
import { jetstream } from '@nats-io/jetstream';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { describe, expect, it } from 'vitest';
import { createRuntime, defineSwarm } from '../../src/index.js';
import { serve } from '../../src/server/index.js';
import { jetstreamStore } from '../../src/store/jetstream/store.js';
import type { PushSubscription } from '../../src/store/push-outbox.js';
import { natsFaultFixtures } from '../support/nats-faults.js';
import { natsServerMissing } from '../support/nats-server.js';
import { queueModel } from '../support/script.js';
import { sleep } from '../support/sleep.js';

const fx = natsFaultFixtures('xswarm-push-outage-');

function sub(taskId: string, configId: string): PushSubscription {
  return { taskId, configId, definitionId: 'echo', url: `https://hooks.example/${configId}`, wireVersion: '1.0', cursor: 1, done: false };
}

async function connection(): Promise<NatsConnection> {
  return connect({ servers: fx.server.url, maxReconnectAttempts: -1, reconnectTimeWait: 50, waitOnFirstConnect: true });
}

/** The push bucket's stream: how many writes it took so far (its last sequence). */
async function writesSoFar(nc: NatsConnection): Promise<number> {
  const kv = await new Kvm(jetstream(nc)).open('po_push');
  return (await kv.status()).streamInfo.state.last_seq;
}

describe.skipIf(natsServerMissing)('JetStream push outbox during an outage', () => {
  it('writes made while NATS is down land once it is back, a webhook’s advances coalesced', async () => {
    const nc = await connection();
    const store = jetstreamStore({ connection: nc, prefix: 'po', timeoutMs: 500 });
    try {
      const outbox = store.pushOutbox!;
      await outbox.ready!();
      outbox.save(sub('t', 'a'));
      outbox.save(sub('t', 'b'));
      expect(await outbox.flush!(5000)).toBe(0);
      const before = await writesSoFar(nc);

      await fx.server.kill();
      outbox.save(sub('t', 'c'));
      for (let cursor = 2; cursor <= 60; cursor++) outbox.advance('t', 'a', cursor, false);
      outbox.advance('t', 'b', 3, true);
      // Longer than a few tries: the writes are still waiting, not given up.
      await sleep(1500);
      expect(await outbox.flush!(10)).toBe(3);
      await fx.server.start();
      expect(await outbox.flush!(20_000)).toBe(0);

      // What a fresh reader of the bucket sees: everything, the latest cursor.
      const other = await connection();
      try {
        const fresh = jetstreamStore({ connection: other, prefix: 'po', timeoutMs: 2000 });
        await fresh.pushOutbox!.ready!();
        expect(fresh.pushOutbox!.get('t', 'a')).toMatchObject({ cursor: 60, done: false });
        expect(fresh.pushOutbox!.get('t', 'b')).toMatchObject({ cursor: 3, done: true });
        expect(fresh.pushOutbox!.get('t', 'c')).toMatchObject({ url: 'https://hooks.example/c', cursor: 1 });
        // 61 changes, a handful of writes: the one under way when NATS went, the latest advance, the config, b's end.
        expect((await writesSoFar(other)) - before).toBeLessThanOrEqual(5);
        await fresh.close();
      } finally {
        await other.close();
      }
    } finally {
      await store.close();
      await nc.close();
    }
  });

  it('a server closing with a write pending waits briefly, then logs it', async () => {
    const nc = await connection();
    const store = jetstreamStore({ connection: nc, prefix: 'po', timeoutMs: 500 });
    const warnings: { fields: Record<string, unknown>; message: string }[] = [];
    const nothing = () => undefined;
    const logger = { debug: nothing, info: nothing, error: nothing, warn: (fields: Record<string, unknown>, message: string) => void warnings.push({ fields, message }) };
    const echo = defineSwarm({ id: 'echo', description: 'Echoes', instructions: 'Repeat.' });
    const rt = createRuntime({ swarms: [echo], model: queueModel({}), store, logger });
    fx.runtimes.push(rt);
    try {
      const server = await serve(rt, { pushRetry: { initialDelayMs: 20, maxDelayMs: 60, timeoutMs: 500 } });
      await store.pushOutbox!.ready!();
      await fx.server.kill();
      store.pushOutbox!.save({ ...sub('t', 'late'), done: true });
      const closing = Date.now();
      await server.close();
      expect(Date.now() - closing).toBeGreaterThanOrEqual(1500);
      expect(warnings).toContainEqual({ fields: expect.objectContaining({ webhooks: 1 }), message: expect.stringMatching(/push outbox writes still pending/) });
      // NATS back before the store closes: the write lands after all.
      await fx.server.start();
      expect(await store.pushOutbox!.flush!(20_000)).toBe(0);
    } finally {
      await rt.close();
      await store.close();
      await nc.close();
    }
  });
});
