/**
 * One NATS account per team: the documented isolation (docs/distributed.md). Two teams on one
 * real nats-server, each account with its own JetStream: a team's runtimes cannot read, list,
 * drive or hand off to the other team's swarms and agents, and see none of its traffic; the
 * credentials a runtime connects with never land in what it stores.
 */
import { connect } from '@nats-io/transport-node';
import { jetstream } from '@nats-io/jetstream';
import { Kvm } from '@nats-io/kv';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createRuntime, defineAgent, defineSwarm, handoff, type Runtime, scriptedModel, tool } from '../../src/index.js';
import { type NatsServer, natsServerMissing, startNatsServer } from '../support/nats-server.js';

const PASS_A = 'team-a-very-secret-password';
const PASS_B = 'team-b-very-secret-password';

/** Two accounts, each with JetStream and one user (never a top-level `authorization` beside `accounts`). */
const ACCOUNTS = `
accounts {
  TEAM_A: { jetstream: { max_mem: 64MB, max_file: 256MB }, users: [ { user: team_a, password: "${PASS_A}" } ] }
  TEAM_B: { jetstream: { max_mem: 64MB, max_file: 256MB }, users: [ { user: team_b, password: "${PASS_B}" } ] }
}
`;

let server: NatsServer;
const runtimes: Runtime[] = [];

beforeEach(async () => {
  if (!natsServerMissing) server = await startNatsServer({ config: ACCOUNTS });
});

afterEach(async () => {
  for (const r of runtimes.splice(0)) await r.close();
  if (!natsServerMissing) await server.stop();
});

// The tool leaks the team's own password into its result: what is stored must not hold it.
const leaky = tool({
  name: 'get_config',
  description: 'Reads the configuration',
  parameters: z.object({}),
  execute: async () => ({ natsPassword: PASS_A }),
});
const weather = defineAgent({ id: 'weather', description: 'Weather', instructions: 'Forecast.', tools: [leaky] });
const planner = defineSwarm({ id: 'planner', instructions: 'Plan.', handoffs: [handoff.toAgent('weather')] });
const model = scriptedModel((req) => {
  const last = req.messages.filter((m) => m.role === 'tool').at(-1)?.content;
  if (req.agentId === 'weather') return last === undefined ? { toolCalls: [{ id: 'c1', name: 'get_config', arguments: '{}' }] } : { text: `config: ${last}` };
  return last === undefined ? { toolCalls: [{ id: 'h1', name: 'handoff_to_weather', arguments: '{"request":"config?"}' }] } : { text: last };
});

function team(user: string, pass: string, options: Omit<Parameters<typeof createRuntime>[0], 'nats' | 'model'>): Runtime {
  const r = createRuntime({ ...options, model, nats: { servers: server.url, user, pass }, hosting: { deadlineMs: 500 } });
  runtimes.push(r);
  return r;
}

describe.skipIf(natsServerMissing)('isolation: one NATS account per team', () => {
  it("keeps one team's swarms, agents and traffic out of the other team's reach", async () => {
    // Team B listens to everything its account can see while team A works.
    const spy = await connect({ servers: server.url, user: 'team_b', pass: PASS_B });
    const seen: string[] = [];
    spy.subscribe('>', {
      callback: (_err, m) => {
        seen.push(m.subject);
      },
    });
    await spy.flush();

    const aWorker = team('team_a', PASS_A, { agents: [weather] });
    const aHome = team('team_a', PASS_A, { swarms: [planner] });
    await Promise.all([aWorker.start(), aHome.start()]);
    const trip = aHome.forSwarm(planner, 'team-a-trip');
    await trip.run('What is the config?');
    expect((await trip.wait()).status).toBe('completed');
    // Nothing of team A's run crossed into team B's account.
    await spy.flush();
    expect(seen).toEqual([]);

    const b = team('team_b', PASS_B, { swarms: [planner] });
    await b.start();
    await expect(b.forSwarm('planner', 'team-a-trip').getResult()).rejects.toMatchObject({ code: 'unknown-swarm' });
    await expect(b.forSwarm('planner', 'team-a-trip').stop('hijack')).rejects.toMatchObject({ code: 'unknown-swarm' });
    expect(await b.list()).toEqual([]);
    // Team A's worker hosts `weather`, but not for team B: B's handoff finds nobody.
    const bTrip = b.forSwarm(planner, 'team-b-trip');
    await bTrip.run('What is the config?');
    const bResult = (await bTrip.wait()) as { status: string; result: string };
    expect(bResult.result).toMatch(/Agent "weather" could not start: No runtime hosts/);
    await spy.close();
  });

  it('never stores the credentials a runtime connects with (redacted in snapshots and events)', async () => {
    const a = team('team_a', PASS_A, { swarms: [planner], agents: [weather] });
    await a.start();
    const trip = a.forSwarm(planner, 'secret-trip');
    await trip.run('What is the config?');
    const result = (await trip.wait()) as { status: string; result: string };
    expect(result.result).toContain('[REDACTED]');
    expect(result.result).not.toContain(PASS_A);

    // Everything team A's JetStream holds, read raw.
    const nc = await connect({ servers: server.url, user: 'team_a', pass: PASS_A });
    const js = jetstream(nc);
    const kv = await new Kvm(js).open('xswarm_swarms');
    const stored: string[] = [];
    for await (const key of await kv.keys()) stored.push((await kv.get(key))?.string() ?? '');
    for (const stream of ['xswarm_events', 'xswarm_messages']) {
      const consumer = await js.consumers.get(stream);
      const info = await consumer.info();
      let left = info.num_pending;
      while (left > 0) {
        const batch = await consumer.fetch({ max_messages: left, expires: 2_000 });
        for await (const m of batch) {
          stored.push(m.string());
          left--;
          if (m.info.pending === 0) left = 0;
        }
      }
    }
    await nc.close();
    const all = stored.join('\n');
    expect(stored.length).toBeGreaterThan(3);
    expect(all).toContain('[REDACTED]');
    expect(all).not.toContain(PASS_A);
  });

  it('refuses to start with credentials the server does not accept, naming the problem', async () => {
    const r = team('team_a', 'wrong-password-here', { swarms: [planner] });
    await expect(r.start()).rejects.toThrow(/Authorization/i);
  });
});
