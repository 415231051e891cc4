/**
 * What one handoff between two runtimes costs in broker round trips, on a real nats-server: a
 * core subscriber of the store's bucket and streams, the hosting subjects and the JetStream
 * API sees every write and request any process makes (as the bench's write log does). A new
 * child is started and followed with no read of its key before its first write (its create is
 * the check; its parent's call knows it begins the child), and none after: its parent takes
 * its events from what its subscriptions deliver.
 */
import { type NatsConnection, connect } from '@nats-io/transport-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRuntime, defineAgent, defineSwarm, handoff, type Runtime, scriptedModel } from '../../src/index.js';
import { subjectToken } from '../../src/transport/types.js';
import { type NatsServer, natsServerMissing, startNatsServer } from '../support/nats-server.js';

let server: NatsServer;
const runtimes: Runtime[] = [];
let log: NatsConnection | undefined;

beforeAll(async () => {
  if (!natsServerMissing) server = await startNatsServer();
});
afterAll(async () => {
  for (const r of runtimes.splice(0)) await r.close();
  await log?.close();
  await server?.stop();
});

const echo = defineAgent({ id: 'echo', description: 'Echoes the request', instructions: 'Echo.' });
const hop = defineSwarm({ id: 'hop', instructions: 'Ask the echo agent.', handoffs: [handoff.toAgent('echo')] });
const model = scriptedModel((req) => {
  const answer = req.messages.find((m) => m.role === 'tool')?.content;
  if (req.agentId === 'echo') return { text: 'echoed' };
  return answer === undefined ? { toolCalls: [{ id: 'h1', name: 'handoff_to_echo', arguments: '{"request":"hello"}' }] } : { text: answer };
});

describe.skipIf(natsServerMissing)('a handoff’s broker round trips', () => {
  it('starts and follows a new child without reading its key first, within a bound of round trips per handoff', async () => {
    const on = (options: Parameters<typeof createRuntime>[0]) => {
      const r = createRuntime({ ...options, nats: { servers: server.url } });
      runtimes.push(r);
      return r;
    };
    const worker = on({ agents: [echo], model });
    const home = on({ swarms: [hop], model });
    await Promise.all([worker.start(), home.start()]);
    const run = async (id: string) => {
      const client = home.forSwarm(hop, id);
      await client.run('Ask.');
      expect(await client.wait()).toEqual({ status: 'completed', result: 'echoed' });
    };
    // Warm-up: the agent's card, the store's setup, the watches.
    await run('warm');

    log = await connect({ servers: server.url });
    // Subjects, in arrival order.
    const seen: string[] = [];
    for (const subject of ['$JS.API.>', '$KV.xswarm_swarms.>', 'xswarm.ev.>', 'xswarm.host.>']) {
      log.subscribe(subject, { callback: (_e, m) => void seen.push(m.subject) });
    }
    await log.flush();
    const RUNS = 5;
    for (let i = 0; i < RUNS; i++) await run(`counted-${i}`);
    await log.flush();

    const parentKeys = new Set(Array.from({ length: RUNS }, (_, i) => `$KV.xswarm_swarms.${subjectToken(`counted-${i}`)}`));
    const childKeys = [...new Set(seen.filter((s) => s.startsWith('$KV.') && !parentKeys.has(s)))];
    expect(childKeys).toHaveLength(RUNS);
    // Nobody reads a child's key before it is first written: the worker starts the child
    // without checking that it exists, the parent's call knows it begins it.
    for (const key of childKeys) {
      const created = seen.indexOf(key);
      const readsBefore = seen.slice(0, created).filter((s) => s === `$JS.API.DIRECT.GET.KV_xswarm_swarms.${key}`);
      expect(readsBefore, key).toEqual([]);
    }
    // Every broker round trip of the runs (the parents' steps and the handoff), by kind: one
    // host request each, and no read of the child at all. The parent follows the child from
    // before it asks for it, and the worker publishes the child's first commit before it answers
    // (on one connection, so the parent is delivered that commit first): the parent's reader is
    // given the child's events, and told that every later commit will reach it. Before, each
    // handoff read the child's key twice before creating it (the worker's and the parent's
    // existence checks), and later the parent read its key and its last event once a handoff
    // (a reader's first look at the store, made whatever it was given).
    const per = (match: (s: string) => boolean) => seen.filter(match).length / RUNS;
    const kinds = {
      all: seen.length / RUNS,
      host: per((s) => s.startsWith('xswarm.host.')),
      kvWrites: per((s) => s.startsWith('$KV.')),
      publishes: per((s) => s.startsWith('xswarm.ev.')),
      kvGets: per((s) => s.startsWith('$JS.API.DIRECT.GET.KV_')),
      eventGets: per((s) => s.startsWith('$JS.API.DIRECT.GET.xswarm_events')),
      other: per((s) => s.startsWith('$JS.API.') && !s.startsWith('$JS.API.DIRECT.GET.')),
    };
    expect(kinds.host, JSON.stringify(kinds)).toBe(1);
    expect(kinds.kvGets, JSON.stringify(kinds)).toBe(0);
    expect(kinds.eventGets, JSON.stringify(kinds)).toBe(0);
  }, 30_000);

  it('refuses to start a swarm whose id is in use, with no read first: its first commit is refused, nothing of it runs or is written', async () => {
    const calls: string[] = [];
    const counting = scriptedModel((req) => {
      calls.push(req.agentId ?? 'hop');
      return { text: 'done' };
    });
    const first = createRuntime({ swarms: [hop], model: counting, nats: { servers: server.url } });
    const second = createRuntime({ swarms: [hop], model: counting, nats: { servers: server.url } });
    runtimes.push(first, second);
    await Promise.all([first.start(), second.start()]);
    await first.forSwarm(hop, 'taken').run('Ask.');
    expect(await first.forSwarm(hop, 'taken').wait()).toEqual({ status: 'completed', result: 'done' });
    // Another runtime, and the same one, starting the id again.
    await expect(second.forSwarm(hop, 'taken').run('Again.')).rejects.toMatchObject({ code: 'id-in-use' });
    await expect(first.forSwarm(hop, 'taken').run('Again.')).rejects.toMatchObject({ code: 'id-in-use' });
    expect(calls).toEqual(['hop']);
    expect(await second.forSwarm(hop, 'taken').getResult()).toEqual({ status: 'completed', result: 'done' });
    expect((await second.list()).filter((s) => s.swarmId === 'taken')).toMatchObject([{ status: 'completed', revision: 2 }]);
  }, 30_000);
});
