/**
 * xswarm's own request/reply (src/nats/requests.ts, used by the JetStream store and the NATS
 * transport) against a real
 * nats-server: answers reach their request, and failures are the errors the JetStream client
 * and the store's outage handling expect (no responders, timeout, connection closed, a server
 * restarted mid-request), and a JetStream client over it works.
 */
import { jetstream, jetstreamManager } from '@nats-io/jetstream';
import { connect, headers, NoRespondersError, RequestError, TimeoutError } from '@nats-io/transport-node';
import { describe, expect, it } from 'vitest';
import { isTransient } from '../../src/store/jetstream/outage.js';
import { lightRequests } from '../../src/nats/requests.js';
import { jetstreamNamespace } from '../support/jetstream-namespace.js';
import { natsServerMissing, startNatsServer } from '../support/nats-server.js';

/** The file's nats-server (its JetStream namespaces are not used here). */
const ns = jetstreamNamespace('r');

describe.skipIf(natsServerMissing)('NATS requests', () => {
  /** A connection as a runtime makes it (reconnecting forever), closed after the test. */
  const open = () => ns.connection();

  it('resolves each request with its own answer, headers and all, many in flight', async () => {
    const nc = await open();
    nc.subscribe('echo', { callback: (_e, m) => void m.respond(`${m.string()}:${m.headers?.get('X-N') ?? ''}`) });
    await nc.flush();
    const view = lightRequests(nc);
    const answers = await Promise.all(
      Array.from({ length: 200 }, (_, i) => {
        const h = headers();
        h.set('X-N', String(i));
        return view.request('echo', `q${i}`, { timeout: 2000, headers: h });
      }),
    );
    expect(answers.map((m) => m.string())).toEqual(Array.from({ length: 200 }, (_, i) => `q${i}:${i}`));
    // One view (one inbox subscription) per connection; everything else is the connection's own.
    expect(lightRequests(nc)).toBe(view);
    expect(view.isClosed()).toBe(false);
    expect(view.getServer()).toBe(nc.getServer());
  });

  it('fails a request nobody answers as no responders, which JetStream reports as not enabled', async () => {
    const nc = await open();
    const e = await lightRequests(nc)
      .request('nobody.here', '', { timeout: 2000 })
      .catch((x: unknown) => x);
    expect(e).toBeInstanceOf(RequestError);
    expect((e as RequestError).isNoResponders()).toBe(true);
    expect((e as RequestError).cause).toBeInstanceOf(NoRespondersError);
    expect(isTransient(e)).toBe(true);
    // The JetStream client checks the same: an account without JetStream.
    const js = jetstream(lightRequests(nc), { timeout: 2000 });
    const notEnabled = await js.publish('no.stream.subject', 'x').catch((x: unknown) => x);
    expect((notEnabled as Error).name).toBe('JetStreamNotEnabled');
    expect(isTransient(notEnabled)).toBe(true);
  });

  it('times out a request whose answer does not come, and ignores the late answer', async () => {
    const nc = await open();
    const late: Array<() => void> = [];
    nc.subscribe('slow', { callback: (_e, m) => void late.push(() => m.respond('late')) });
    await nc.flush();
    const view = lightRequests(nc);
    const t0 = Date.now();
    const e = await view.request('slow', 'x', { timeout: 150 }).catch((x: unknown) => x);
    expect(e).toBeInstanceOf(TimeoutError);
    expect(Date.now() - t0).toBeGreaterThanOrEqual(140);
    expect(isTransient(e)).toBe(true);
    for (const answer of late) answer();
    // The next request gets its own answer, not the late one.
    nc.subscribe('quick', { callback: (_e, m) => void m.respond('mine') });
    await nc.flush();
    expect((await view.request('quick', 'x', { timeout: 2000 })).string()).toBe('mine');
  });

  it('fails at once a request the server refuses to carry (publish permission), as nats-core does', async () => {
    const guarded = await startNatsServer({
      config: 'authorization { users: [ { user: a, password: a, permissions: { publish: { deny: ["forbidden.>"] }, subscribe: { allow: [">"] } } } ] }',
    });
    try {
      const nc = await connect({ servers: guarded.url, user: 'a', pass: 'a' });
      ns.onCleanup(() => nc.close());
      const view = lightRequests(nc);
      const t0 = Date.now();
      const e = await view.request('forbidden.x', 'x', { timeout: 5000 }).catch((x: unknown) => x);
      expect(Date.now() - t0).toBeLessThan(2000);
      expect(e).toBeInstanceOf(RequestError);
      expect(((e as Error).cause as Error).name).toBe('PermissionViolationError');
      // Other requests on the connection go on.
      nc.subscribe('allowed', { callback: (_e, m) => void m.respond('yes') });
      await nc.flush();
      expect((await view.request('allowed', 'x', { timeout: 2000 })).string()).toBe('yes');
    } finally {
      await guarded.stop();
    }
  });

  it('fails what is pending when the connection closes, and later requests as closed', async () => {
    const nc = await open();
    nc.subscribe('never', { callback: () => undefined });
    await nc.flush();
    const view = lightRequests(nc);
    const pending = view.request('never', 'x', { timeout: 10_000 }).catch((x: unknown) => x);
    await nc.flush();
    await nc.close();
    const e = await pending;
    expect(e).toBeInstanceOf(RequestError);
    expect((e as Error).message).toBe('connection closed');
    const after = await view.request('never', 'x', { timeout: 1000 }).catch((x: unknown) => x);
    expect((after as Error).name).toBe('ClosedConnectionError');
    expect(isTransient(after)).toBe(false);
  });

  it('keeps working for a JetStream client across a server restart in the middle of a request', async () => {
    const nc = await open();
    const view = lightRequests(nc);
    const jsm = await jetstreamManager(view, { timeout: 2000 });
    await jsm.streams.add({ name: 'REQ', subjects: ['req.>'] });
    const js = jetstream(view, { timeout: 500 });
    expect((await js.publish('req.a', '1')).seq).toBe(1);
    nc.subscribe('held', { callback: () => undefined });
    await nc.flush();
    const inFlight = view.request('held', 'x', { timeout: 400 }).catch((x: unknown) => x);
    await ns.server.restart({ downMs: 100 });
    // Unanswered across the restart: a timeout, which the store retries.
    const e = await inFlight;
    expect(e).toBeInstanceOf(TimeoutError);
    // Once reconnected, requests answer again on the same inbox subscription.
    const deadline = Date.now() + 10_000;
    for (;;) {
      const r = await js.publish('req.a', '2').catch((x: unknown) => x);
      if (!(r instanceof Error)) {
        expect((r as { seq: number }).seq).toBe(2);
        break;
      }
      expect(isTransient(r)).toBe(true);
      if (Date.now() > deadline) throw r;
      await new Promise((ok) => setTimeout(ok, 50));
    }
  });
});
