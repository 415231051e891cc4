/**
 * Hosted calls through NATS outages: a distributed W1 batch (the planner in one runtime, its
 * three agents hosted by a worker runtime, each on a connection of its own to a real
 * `nats-server -js` on 127.0.0.1) while the server is killed and restarted ~3 s later at one
 * point of the calls: a host request received by the worker but not answered yet, a child
 * running its tool in the worker, a child answering (its last commit made while NATS is down),
 * the planner's own step. The other runs of the batch are wherever they are at that moment.
 *
 * Every run must complete with the answer an uninterrupted run gives (each agent's answer, not a
 * tool error), every tool's side effect must happen once per idempotency key, and every model
 * call (a step of a swarm) must be made once: no child started or run twice.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { createRuntime, defineSwarm, handoff, type ModelRequest, type ModelResponse, scriptedModel } from '../../src/index.js';
import { closeConnection } from '../../src/nats/connection.js';
import { connectNats, jetstreamStore, natsTransport } from '../../src/entries/nats.js';
import type { Transport } from '../../src/transport/types.js';
import { memoryEffects, stepLabel, W1_AGENTS, w1Definitions, w1Respond } from '../support/crash-w1.js';
import { faultPoints } from '../support/fault-points.js';
import { natsFaultFixtures } from '../support/nats-faults.js';
import { natsServerMissing } from '../support/nats-server.js';
import { toolMessages } from '../support/script.js';
import { sleep } from '../support/sleep.js';

const nats = natsFaultFixtures('xswarm-hosted-outage-');
const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c().catch(() => undefined);
});

/** How long the server stays down. */
const DOWN_MS = 3_000;
/** Runs in the batch. */
const RUNS = 4;
/**
 * Short enough that an outage outlasts a call's deadline (the deadline is for "nobody hosts
 * this", which NATS being down is not), generous enough for a loaded machine.
 */
const HOSTING = { deadlineMs: 2_000, heartbeatMs: 250, heartbeatTimeoutMs: 2_000 };
/** What every run answers: the planner joins its three agents' answers. */
const ANSWER = W1_AGENTS.map((a) => `${a}: Saturday looks fine.`).join(' | ');

/** Where in the calls the server goes down. */
type Point = 'request received' | 'child running' | 'child answering' | 'parent step' | 'random';

/**
 * Kills the server once, the first time `trigger` is called after `arm()`, and starts it again
 * on the same port and store `DOWN_MS` later; `done` settles once it is back.
 */
function outage() {
  let armed = false;
  let done: Promise<void> | undefined;
  return {
    arm: () => {
      armed = true;
    },
    trigger(): void {
      if (!armed || done) return;
      done = (async () => {
        await nats.server.kill();
        await sleep(DOWN_MS);
        await nats.server.start();
      })();
    },
    get done(): Promise<void> | undefined {
      return done;
    },
    get armed(): boolean {
      return armed;
    },
  };
}

/** A transport whose subscribers hear `onDelivery(subject)` before each message is handled. */
function watchedTransport(inner: Transport, onDelivery: (subject: string) => void): Transport {
  return {
    ...inner,
    subscribe: (subject, handler, options) =>
      inner.subscribe(
        subject,
        (message) => {
          onDelivery(message.subject);
          return handler(message);
        },
        options,
      ),
  };
}

describe.skipIf(natsServerMissing)('hosted calls through a NATS outage (distributed W1)', () => {
  const points: Point[] = ['request received', 'child running', 'child answering', 'parent step', 'random'];
  for (const point of points) {
    it(`server down ~3 s at "${point}": every run completes with its agents' answers, every side effect and step once`, async () => {
      const down = outage();
      // At a random point: the batch's moments are its model calls (40), its side effects (12) and
      // the host requests reaching the worker (12), counted once the batch is under way; the
      // fault is drawn among the first 40, which every batch reaches.
      const random = point === 'random' ? faultPoints('distributed W1 batch', 40, 1) : undefined;
      const moment = () => {
        if (down.armed && random?.moment(true)) down.trigger();
      };
      const effects = memoryEffects();
      /** Model calls by swarm and step (`<swarm id> <speaker>#<tool results seen>`). */
      const steps = new Map<string, number>();
      const { agents } = w1Definitions({
        execute(agent, key) {
          effects.execute(agent, key);
          moment();
          if (point === 'child running' && agent === 'calendar') down.trigger();
        },
      });
      // The planner names its agents by id only: its runtime does not have them.
      const planner = defineSwarm({ id: 'planner', instructions: 'Plan the weekend.', handoffs: W1_AGENTS.map((a) => handoff.toAgent(`${a}-agent`)) });
      const model = scriptedModel(async (req: ModelRequest): Promise<ModelResponse> => {
        const step = `${req.swarmId} ${stepLabel(req)}`;
        steps.set(step, (steps.get(step) ?? 0) + 1);
        moment();
        if (point === 'child answering' && stepLabel(req) === 'weather-agent#1') down.trigger();
        if (point === 'parent step' && stepLabel(req) === 'planner#2') down.trigger();
        // Model latency: the runs of the batch overlap.
        await sleep(30);
        const response = w1Respond(req);
        // The planner's answer quotes its agents', so a handoff's tool error would show in it.
        if (req.agentId === 'planner' && response.text !== undefined)
          return {
            text: toolMessages(req)
              .map((m) => m.content)
              .join(' | '),
          };
        return response;
      });

      // The worker, on parts of its own so that a host request reaching it can set off the outage
      // before it is answered.
      const connection = await connectNats({ servers: nats.server.url });
      const store = jetstreamStore({ connection });
      const transport = watchedTransport(natsTransport(connection), (subject) => {
        if (subject.includes('.host.')) moment();
        if (point === 'request received' && subject.includes('.host.')) down.trigger();
      });
      const worker = createRuntime({ agents, model, transport, store, hosting: HOSTING });
      const home = createRuntime({ swarms: [planner], model, nats: { servers: nats.server.url }, hosting: HOSTING });
      cleanups.push(
        () => closeConnection(connection),
        () => store.close(),
        () => transport.close(),
        () => worker.close(),
        () => home.close(),
      );
      await Promise.all([worker.start(), home.start()]);

      const runs = Array.from({ length: RUNS }, (_, i) => home.forSwarm(planner, `w1-${i}`));
      await Promise.all(runs.map((r) => r.run('Plan my Saturday')));
      down.arm();
      const results: unknown[] = [];
      for (const r of runs) results.push(await r.wait());

      // The outage happened, during the batch.
      expect(down.done, random?.label).toBeDefined();
      await down.done;
      expect(results).toEqual(runs.map(() => ({ status: 'completed', result: ANSWER })));
      // Each run's three tools ran once each, under their idempotency keys.
      expect(effects.runs.size).toBe(RUNS * W1_AGENTS.length);
      expect([...effects.runs.entries()].filter(([, n]) => n !== 1)).toEqual([]);
      // Every step of every swarm (planners and the children in the worker) was made once: 4
      // planner steps and 2 steps of each of its 3 children per run.
      expect([...steps.entries()].filter(([, n]) => n !== 1)).toEqual([]);
      expect(steps.size).toBe(RUNS * (4 + 2 * W1_AGENTS.length));
      // Each planner has its three children, all completed: no call was started a second time.
      const children = (await home.list()).filter((s) => s.swarmId.startsWith('w1-') && s.swarmId.includes(':t'));
      expect(children).toHaveLength(RUNS * W1_AGENTS.length);
      expect(children.every((c) => c.status === 'completed')).toBe(true);
    }, 90_000);
  }
});
