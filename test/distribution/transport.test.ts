/**
 * The transport seam: one contract, run against the in-process bus (`localTransport`) and
 * against NATS (`natsTransport` on a real `nats-server`, three connections as three processes
 * would have), so runtimes behave the same on either. Then what only NATS has: outages (the
 * server killed and restarted on the same port), closing, and connecting (`connectNats`: bad
 * URLs, credentials, nkey seeds, a server that starts later).
 */
import { nkeys } from '@nats-io/transport-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectNats } from '../../src/nats/connection.js';
import { natsTransport } from '../../src/transport/nats.js';
import { LocalBus, localTransport } from '../../src/transport/local.js';
import { fromSubjectToken, subjectToken, type Transport, type TransportError, type TransportMessage } from '../../src/transport/types.js';
import { type NatsServer, natsServerMissing, startNatsServer } from '../support/nats-server.js';
import { until } from '../support/wait.js';
import { sleep } from '../support/sleep.js';

/** The error a promise rejects with (fails the test when it resolves), and how long that took. */
async function rejection(p: Promise<unknown>): Promise<{ error: TransportError; ms: number }> {
  const start = Date.now();
  try {
    await p;
  } catch (e) {
    return { error: e as TransportError, ms: Date.now() - start };
  }
  throw new Error('expected a rejection');
}

/** Three peers on one bus or server, as three processes would be. */
interface Peers {
  a: Transport;
  b: Transport;
  c: Transport;
}

let subjects = 0;
/** A subject of its own per test, so no test sees another's messages. */
const fresh = (name: string) => `t${++subjects}.${name}`;

function contract(name: string, setup: () => Promise<Peers>, teardown: () => Promise<void>) {
  describe(`the transport contract: ${name}`, () => {
    let a: Transport;
    let b: Transport;
    let c: Transport;
    beforeAll(async () => {
      ({ a, b, c } = await setup());
    });
    afterAll(teardown);

    it('answers a request through a subscriber that responds', async () => {
      const subject = fresh('echo');
      b.subscribe(subject, (m) => void m.respond(`echo:${m.data}`));
      await b.flush();
      const reply = await a.request(subject, 'héllo', { timeoutMs: 2_000 });
      expect(reply.data).toBe('echo:héllo');
      expect(a.status()).toBe('connected');
    });

    it('rejects a request nobody listens to with no-responders at once, not after the timeout', async () => {
      const { error, ms } = await rejection(a.request(fresh('nobody'), '{}', { timeoutMs: 5_000 }));
      expect(error.name).toBe('TransportError');
      expect(error.code).toBe('no-responders');
      expect(ms).toBeLessThan(1_000);
    });

    it('rejects with timeout when a subscriber never answers', async () => {
      const subject = fresh('silent');
      let heard = 0;
      b.subscribe(subject, () => void heard++);
      await b.flush();
      const { error, ms } = await rejection(a.request(subject, 'x', { timeoutMs: 150 }));
      expect(error.code).toBe('timeout');
      expect(ms).toBeGreaterThanOrEqual(140);
      expect(ms).toBeLessThan(2_000);
      expect(heard).toBe(1);
    });

    it('shares a queue group: each message goes to exactly one member, both members get some', async () => {
      const subject = fresh('work');
      const got: Record<'b' | 'c', string[]> = { b: [], c: [] };
      b.subscribe(subject, (m) => void got.b.push(m.data), { queue: 'workers' });
      c.subscribe(subject, (m) => void got.c.push(m.data), { queue: 'workers' });
      await Promise.all([b.flush(), c.flush()]);
      const sent = Array.from({ length: 60 }, (_, i) => String(i));
      for (const data of sent) a.publish(subject, data);
      await a.flush();
      await until('every message', () => got.b.length + got.c.length >= sent.length, { timeout: 3_000 });
      await sleep(50); // a duplicate would show up now
      expect([...got.b, ...got.c].sort((x, y) => Number(x) - Number(y))).toEqual(sent);
      expect(got.b.length).toBeGreaterThan(0);
      expect(got.c.length).toBeGreaterThan(0);
    });

    it('answers each request of a queue group once', async () => {
      const subject = fresh('host');
      let answers = 0;
      for (const peer of [b, c]) {
        peer.subscribe(
          subject,
          (m) => {
            answers++;
            m.respond(m.data);
          },
          { queue: 'hosts' },
        );
      }
      await Promise.all([b.flush(), c.flush()]);
      const replies = await Promise.all(Array.from({ length: 10 }, (_, i) => a.request(subject, `r${i}`, { timeoutMs: 2_000 })));
      expect(replies.map((r) => r.data)).toEqual(Array.from({ length: 10 }, (_, i) => `r${i}`));
      await sleep(50);
      expect(answers).toBe(10);
    });

    it('delivers to every plain subscriber', async () => {
      const subject = fresh('news');
      const got: string[] = [];
      b.subscribe(subject, (m) => void got.push(`b:${m.data}`));
      c.subscribe(subject, (m) => void got.push(`c:${m.data}`));
      a.subscribe(subject, (m) => void got.push(`a:${m.data}`));
      await Promise.all([a.flush(), b.flush(), c.flush()]);
      a.publish(subject, 'x');
      await until('three deliveries', () => got.length === 3, { timeout: 3_000 });
      expect(got.sort()).toEqual(['a:x', 'b:x', 'c:x']);
    });

    it('matches wildcards: * is one token, > one or more, and the message carries its own subject', async () => {
      const root = fresh('ev');
      const star: string[] = [];
      const tail: string[] = [];
      b.subscribe(`${root}.*`, (m) => void star.push(m.subject));
      c.subscribe(`${root}.>`, (m) => void tail.push(m.subject));
      await Promise.all([b.flush(), c.flush()]);
      for (const s of [root, `${root}.one`, `${root}.one.two`, `${root}x.one`]) a.publish(s, '1');
      await a.flush();
      await until('wildcard deliveries', () => star.length >= 1 && tail.length >= 2, { timeout: 3_000 });
      await sleep(50);
      expect(star).toEqual([`${root}.one`]);
      expect(tail.sort()).toEqual([`${root}.one`, `${root}.one.two`]);
    });

    it('stops delivery at unsubscribe', async () => {
      const subject = fresh('stop');
      const got: string[] = [];
      const sub = b.subscribe(subject, (m) => void got.push(m.data));
      await b.flush();
      a.publish(subject, 'before');
      await until('the first message', () => got.length === 1, { timeout: 3_000 });
      sub.unsubscribe();
      await b.flush();
      a.publish(subject, 'after');
      await a.flush();
      await sleep(100);
      expect(got).toEqual(['before']);
      await expect(a.request(subject, 'x', { timeoutMs: 2_000 })).rejects.toMatchObject({ code: 'no-responders' });
    });

    it("keeps delivering when a handler throws or rejects (the handler's failure is its own)", async () => {
      const subject = fresh('faulty');
      let calls = 0;
      b.subscribe(subject, async (m) => {
        calls++;
        if (m.data === 'throw') throw new Error('handler failed');
        m.respond('fine');
      });
      c.subscribe(`${subject}.sync`, () => {
        calls++;
        throw new Error('sync handler failed');
      });
      await Promise.all([b.flush(), c.flush()]);
      a.publish(subject, 'throw');
      a.publish(`${subject}.sync`, 'x');
      expect((await a.request(subject, 'ok', { timeoutMs: 2_000 })).data).toBe('fine');
      expect(calls).toBe(3);
    });

    it('carries any id in a subject through subjectToken: dots, spaces, wildcards, unicode', async () => {
      const root = fresh('tok');
      b.subscribe(`${root}.*`, (m) => void m.respond(fromSubjectToken(m.subject.split('.').at(-1)!)));
      await b.flush();
      for (const id of ['plain', 'a.b.c', 'with space', '*', '>', 'ünïcødé · 日本 🚀', 'x.>.*. y']) {
        const token = subjectToken(id);
        expect(token).toMatch(/^[A-Za-z0-9_-]+$/);
        expect(fromSubjectToken(token)).toBe(id);
        const reply: TransportMessage = await a.request(`${root}.${token}`, '', { timeoutMs: 2_000 });
        expect(reply.data).toBe(id);
      }
    });
  });
}

// The in-process bus.
{
  const bus = new LocalBus();
  const peers = { a: localTransport(bus), b: localTransport(bus), c: localTransport(bus) };
  contract(
    'localTransport',
    async () => peers,
    async () => void (await Promise.all(Object.values(peers).map((p) => p.close()))),
  );
}

// NATS: a real server, three connections.
describe.skipIf(natsServerMissing)('natsTransport', () => {
  let server: NatsServer | undefined;
  const peers: Transport[] = [];
  contract(
    'natsTransport on nats-server',
    async () => {
      server = await startNatsServer();
      for (let i = 0; i < 3; i++) peers.push(natsTransport(await connectNats({ servers: server.url, name: `peer-${i}` }), { owned: true }));
      return { a: peers[0]!, b: peers[1]!, c: peers[2]! };
    },
    async () => {
      await Promise.all(peers.map((p) => p.close()));
      await server?.stop();
    },
  );
});

describe.skipIf(natsServerMissing)('natsTransport through an outage', () => {
  let server: NatsServer;
  let requester: Transport;
  let responder: Transport;
  let subject: string;
  beforeAll(async () => {
    server = await startNatsServer();
    requester = natsTransport(await connectNats({ servers: server.url }), { owned: true });
    responder = natsTransport(await connectNats({ servers: server.url }), { owned: true });
    subject = fresh('svc');
    responder.subscribe(subject, (m) => {
      if (m.data !== 'never') m.respond(`ok:${m.data}`);
    });
    await responder.flush();
  });
  afterAll(async () => {
    await Promise.all([requester?.close(), responder?.close()]);
    await server?.stop();
  });

  it('server killed: status turns disconnected at once, requests (new and in flight) fail with unavailable, not at their timeout', async () => {
    expect((await requester.request(subject, '1', { timeoutMs: 2_000 })).data).toBe('ok:1');
    const inFlight = rejection(requester.request(subject, 'never', { timeoutMs: 10_000 }));
    await sleep(20);
    const killed = Date.now();
    await server.kill();
    await until('disconnected', () => requester.status() === 'disconnected' && responder.status() === 'disconnected', { timeout: 2_000 });
    expect(Date.now() - killed).toBeLessThan(2_000);

    const during = await rejection(requester.request(subject, '2', { timeoutMs: 10_000 }));
    expect(during.error.code).toBe('unavailable');
    expect(during.ms).toBeLessThan(100);
    const { error, ms } = await inFlight;
    expect(error.code).toBe('unavailable');
    expect(ms).toBeLessThan(3_000);
    await expect(requester.flush()).rejects.toMatchObject({ code: 'unavailable' });
    // A publish while down is dropped (at most once), never thrown.
    expect(() => requester.publish(subject, 'lost')).not.toThrow();
  });

  it('server restarted on the same port: status connected again, subscriptions back, requests work', async () => {
    await server.start();
    await until('reconnected', () => requester.status() === 'connected' && responder.status() === 'connected', { timeout: 5_000 });
    // The responder's subscription is re-sent on reconnect; its flush makes sure the server has it.
    await responder.flush();
    expect((await requester.request(subject, '3', { timeoutMs: 2_000 })).data).toBe('ok:3');
  });

  it('close(): status closed, every call unavailable, an owned connection closed', async () => {
    const connection = await connectNats({ servers: server.url });
    const transport = natsTransport(connection, { owned: true });
    expect(transport.status()).toBe('connected');
    await transport.close();
    expect(transport.status()).toBe('closed');
    expect(connection.isClosed()).toBe(true);
    await expect(transport.request(subject, 'x', { timeoutMs: 1_000 })).rejects.toMatchObject({ code: 'unavailable' });
    expect(() => transport.publish(subject, 'x')).toThrow(expect.objectContaining({ code: 'unavailable' }));
    expect(() => transport.subscribe(subject, () => undefined)).toThrow(expect.objectContaining({ code: 'unavailable' }));
  });

  it('close() of a transport that does not own its connection ends its subscriptions and leaves the connection open', async () => {
    const connection = await connectNats({ servers: server.url });
    const transport = natsTransport(connection);
    const own = fresh('own');
    transport.subscribe(own, (m) => void m.respond('here'));
    await transport.flush();
    expect((await requester.request(own, '', { timeoutMs: 2_000 })).data).toBe('here');
    await transport.close();
    expect(transport.status()).toBe('closed');
    expect(connection.isClosed()).toBe(false);
    await connection.flush();
    await expect(requester.request(own, '', { timeoutMs: 2_000 })).rejects.toMatchObject({ code: 'no-responders' });
    await connection.close();
  });
});

describe.skipIf(natsServerMissing)('connectNats', () => {
  const user = nkeys.createUser();
  const seed = new TextDecoder().decode(user.getSeed());
  let tokenServer: NatsServer;
  let nkeyServer: NatsServer;
  beforeAll(async () => {
    [tokenServer, nkeyServer] = await Promise.all([
      startNatsServer({ config: 'authorization { token: "s3cret" }\n' }),
      startNatsServer({ config: `authorization { users: [ { nkey: "${user.getPublicKey()}" } ] }\n` }),
    ]);
  });
  afterAll(async () => {
    await Promise.all([tokenServer?.stop(), nkeyServer?.stop()]);
  });

  it('passes a token through; a wrong one is a clear error naming the server, not a hang', async () => {
    const ok = await connectNats({ servers: tokenServer.url, token: 's3cret' });
    await ok.flush();
    await ok.close();
    const start = Date.now();
    await expect(connectNats({ servers: tokenServer.url, token: 'wrong' })).rejects.toThrow(`Could not connect to NATS at ${tokenServer.url}: Authorization Violation`);
    expect(Date.now() - start).toBeLessThan(5_000);
  });

  it('authenticates with an nkey seed; a malformed seed is an error, not a crash', async () => {
    const ok = await connectNats({ servers: nkeyServer.url, nkeySeed: seed });
    await ok.flush();
    await ok.close();
    await expect(connectNats({ servers: nkeyServer.url, nkeySeed: 'SUnot-a-seed' })).rejects.toThrow(/nats\.nkeySeed is not a valid nkey seed/);
    await expect(connectNats({ servers: nkeyServer.url })).rejects.toThrow(/Authorization Violation/);
  });

  it('rejects a URL it cannot dial at once instead of retrying it forever', async () => {
    await expect(connectNats({ servers: 'http://127.0.0.1:4222' })).rejects.toThrow(/"http:\/\/127\.0\.0\.1:4222" is not a NATS server URL/);
    await expect(connectNats({ servers: [] })).rejects.toThrow(/names no server/);
    await expect(connectNats({ servers: tokenServer.url, prefix: 'bad.prefix' })).rejects.toThrow(/nats\.prefix/);
  });

  it('waits for a server that is not up yet (waitOnFirstConnect)', async () => {
    const server = await startNatsServer();
    try {
      await server.kill();
      const pending = connectNats({ servers: server.url, name: 'late', reconnectTimeWait: 50 });
      await sleep(300);
      await server.start();
      const connection = await pending;
      expect(connection.isClosed()).toBe(false);
      await connection.flush();
      await connection.close();
    } finally {
      await server.stop();
    }
  });
});
