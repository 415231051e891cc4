/**
 * The inspector API of a runtime distributed over a real `nats-server -js`: a swarm's handoff
 * runs in another runtime (the worker, which hosts the agent), and the server of the first one
 * lists that child with its parent and answers for it by id, with its turns and tokens read
 * from the shared store.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRuntime, defineAgent, defineSwarm, handoff, type Runtime, scriptedModel } from '../../src/index.js';
import { serve, type SwarmServer } from '../../src/server/index.js';
import type { InspectorOverview, SwarmRow } from '../../src/server/inspector/api.js';
import { type NatsServer, natsServerMissing, startNatsServer } from '../support/nats-server.js';
import { request } from '../support/server-clients.js';

let nats: NatsServer | undefined;
const runtimes: Runtime[] = [];
let server: SwarmServer | undefined;
beforeAll(async () => {
  if (!natsServerMissing) nats = await startNatsServer();
});
afterAll(async () => {
  await server?.close();
  for (const r of runtimes.splice(0)) await r.close();
  await nats?.stop();
});

const echo = defineAgent({ id: 'echo', description: 'Echoes the request', instructions: 'Echo.' });
const hop = defineSwarm({ id: 'hop', instructions: 'Ask the echo agent.', handoffs: [handoff.toAgent('echo')] });
const model = scriptedModel((req) => {
  const usage = { inputTokens: req.agentId === 'echo' ? 4 : 10, outputTokens: 1 };
  if (req.agentId === 'echo') return { text: 'echoed', usage };
  const answer = req.messages.find((m) => m.role === 'tool')?.content;
  return answer === undefined ? { toolCalls: [{ id: 'h1', name: 'handoff_to_echo', arguments: '{"request":"hello"}' }], usage } : { text: answer, usage };
});

describe.skipIf(natsServerMissing)('the inspector API over NATS', () => {
  it('lists a child run by another runtime, with its parent, and answers for it by id', async () => {
    const on = (options: Parameters<typeof createRuntime>[0]) => {
      const r = createRuntime({ ...options, nats: { servers: nats!.url } });
      runtimes.push(r);
      return r;
    };
    const worker = on({ agents: [echo], model });
    const home = on({ swarms: [hop], model });
    await Promise.all([worker.start(), home.start()]);
    const client = home.forSwarm(hop, 'trip');
    await client.run('Ask.');
    expect(await client.wait()).toEqual({ status: 'completed', result: 'echoed' });

    server = await serve(home);
    const res = await request(server.url, 'GET', '/inspector/api/overview');
    expect(res.status).toBe(200);
    const swarms = (res.body as InspectorOverview).swarms;
    const parent = swarms.find((s) => s.swarmId === 'trip');
    const children = swarms.filter((s) => s.parentSwarmId === 'trip');
    expect(parent).toMatchObject({ definitionId: 'hop', status: 'completed', turns: 2, tokens: { input: 20, output: 2, total: 22 } });
    expect(children, JSON.stringify(swarms)).toHaveLength(1);
    const child = children[0]!;
    // The agent's run, hosted by the worker as a swarm of its own, with its own call's tokens.
    expect(child).toMatchObject({ swarmId: 'trip:t1:0', definitionId: 'xswarm.agent.echo', status: 'completed', turns: 1, tokens: { input: 4, output: 1, total: 5 } });
    expect(child.startedAt).toBeTypeOf('number');
    const one = await request(server.url, 'GET', `/inspector/api/swarms/${encodeURIComponent(child.swarmId)}`);
    expect(one.status).toBe(200);
    expect(one.body as SwarmRow).toEqual(child);
  }, 30_000);
});
