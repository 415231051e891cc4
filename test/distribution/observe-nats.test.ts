/**
 * Logs and metrics of a runtime on a real `nats-server -js` (127.0.0.1): the server is killed
 * and started again on the same port; the runtime logs the drop at warn and the reconnection at
 * info, and counts one disconnect and one reconnect. A W1 run after the outage is counted too.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRuntime, defineAgent, defineSwarm, handoff, type Logger, type Runtime, scriptedModel } from '../../src/index.js';
import { newCounts, runW1, W1_AGENTS, W1_MODEL_CALLS, W1_SWARM_ID, w1Respond } from '../../bench/w1.js';
import { type NatsServer, natsServerMissing, startNatsServer } from '../support/nats-server.js';
import { parsePromText, sampleValue } from '../support/prom-text.js';
import { until } from '../support/wait.js';

let nats: NatsServer | undefined;
let runtime: Runtime | undefined;
beforeAll(async () => {
  if (!natsServerMissing) nats = await startNatsServer();
});
afterAll(async () => {
  await runtime?.close();
  await nats?.stop();
});

describe.skipIf(natsServerMissing)('logs and metrics over NATS', () => {
  it('log and count a server restart: one disconnect, one reconnect', async () => {
    const lines: { level: string; msg: string }[] = [];
    const at = (level: string) => (_fields: Record<string, unknown>, msg: string) => void lines.push({ level, msg });
    const logger: Logger = { debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error') };
    const counts = newCounts();
    const agents = W1_AGENTS.map((id) => defineAgent({ id, instructions: 'Answer.' }));
    const swarm = defineSwarm({ id: W1_SWARM_ID, instructions: 'Plan.', handoffs: agents.map((a) => handoff.toAgent(a)) });
    runtime = createRuntime({ swarms: [swarm], agents, model: scriptedModel((req) => w1Respond(req, counts)), nats: { servers: nats!.url }, logger, metrics: true });
    await runtime.start();
    const scrape = async () => parsePromText(await runtime!.metrics!.metrics());

    await nats!.restart();
    await until(
      'the runtime counts the reconnection',
      async () => sampleValue(await scrape(), 'xswarm_nats_reconnects_total'),
      (n) => n === 1,
      { timeout: 15_000 },
    );
    const m = await scrape();
    expect(sampleValue(m, 'xswarm_nats_disconnects_total')).toBe(1);
    expect(lines.filter((l) => l.msg.startsWith('NATS'))).toEqual([
      { level: 'warn', msg: 'NATS disconnected: calls to other runtimes fail until it reconnects' },
      { level: 'info', msg: 'NATS reconnected' },
    ]);

    await runW1(runtime);
    expect(sampleValue(await scrape(), 'xswarm_model_calls_total', { definition: W1_SWARM_ID, model: 'scripted' })).toBe(W1_MODEL_CALLS);
  });
});
