/**
 * The served runtime of the `/events` WebSocket tests (test/server/server-ws*.test.ts): three
 * scripted swarms — `ticks` (six short tool steps), `hitl` (asks a human, then answers) and
 * `big` (pauses, then 60 large tool results) — behind `serve()` with small subscriber bounds, so
 * a stalled subscriber overflows after little data; and `ws` subscribers closed after each test.
 */
import { afterEach } from 'vitest';
import { z } from 'zod';
import { createRuntime, defineSwarm, type Runtime, type SwarmStore, tool } from '../../src/index.js';
import { serve, type SwarmServer } from '../../src/server/index.js';
import { call, queueModel } from './script.js';
import { range } from './seqs.js';
import { request, Subscriber } from './server-clients.js';
import { sleep } from './sleep.js';
import { until } from './wait.js';

/** Turns of `big` after its pause. */
export const BIG_TURNS = 60;

/** Small bounds so a stalled subscriber overflows after little data. */
const SUBSCRIBERS = { maxBytes: 1024 * 1024, pollMs: 20 };

/** How a test serves the swarms: `blobBytes` is the size of each of `big`'s tool results. */
export interface WsServeOptions {
  token?: string;
  store?: SwarmStore;
  blobBytes?: number;
}

/** A started server: its http and ws base URLs, and the runtime behind it. */
export interface WsServed {
  url: string;
  ws: string;
  rt: Runtime;
}

/** Registers the after-each cleanup of the calling test file; `start` and `open` are its tests' doors. */
export function wsFixture() {
  let runtime: Runtime | undefined;
  let server: SwarmServer | undefined;
  const sockets: Subscriber[] = [];
  afterEach(async () => {
    for (const s of sockets.splice(0)) s.ws.terminate();
    await server?.close();
    await runtime?.close();
    server = undefined;
    runtime = undefined;
  });

  async function start(options: WsServeOptions = {}): Promise<WsServed> {
    const blobText = 'x'.repeat(options.blobBytes ?? 256 * 1024);
    // A little pause per call: server and clients share this process's event loop, and a swarm
    // spinning without one would starve every socket, the healthy subscriber's too.
    const blob = tool({ name: 'blob', description: 'a large result', parameters: z.object({}), execute: async () => (await sleep(4), blobText) });
    const tick = tool({
      name: 'tick',
      description: 'a short step',
      parameters: z.object({ n: z.number() }),
      execute: async ({ n }) => {
        await sleep(15);
        return `tick ${n}`;
      },
    });
    const tickScript = [...range(1, 6).map((n) => call('tick', { n })), { text: 'ticked' }];
    const model = queueModel({
      ticks: [...tickScript, ...tickScript],
      hitl: [call('pause', { reason: 'Which day?' }), { text: 'Sunday it is' }],
      big: [call('pause', { reason: 'ready?' }), ...Array.from({ length: BIG_TURNS }, () => call('blob', {})), { text: 'big done' }],
    });
    const swarms = [
      defineSwarm({ id: 'ticks', instructions: 'Tick.', tools: [tick] }),
      defineSwarm({ id: 'hitl', instructions: 'Ask.' }),
      defineSwarm({ id: 'big', instructions: 'Produce a lot.', tools: [blob], maxTurns: 100 }),
    ];
    runtime = createRuntime({ swarms, model, ...(options.store ? { store: options.store } : {}) });
    server = await serve(runtime, { ...(options.token ? { token: options.token } : {}), subscribers: SUBSCRIBERS });
    return { url: server.url, ws: server.url.replace(/^http/, 'ws'), rt: runtime };
  }

  async function open(url: string, headers?: Record<string, string>): Promise<Subscriber> {
    const s = await Subscriber.open(url, headers);
    sockets.push(s);
    return s;
  }

  /** Closes the server now (its subscribers see 1001); the after-each cleanup then skips it. */
  async function closeServer(): Promise<void> {
    await server?.close();
    server = undefined;
  }

  return { start, open, closeServer };
}

/** A swarm's result over REST. */
export const status = (url: string, def: string, id: string) => request(url, 'GET', `/swarms/${def}/${id}`).then((r) => r.body);

/** Starts swarm `swarmId` of `definitionId` (`hitl` or `big`) over REST and waits until it is paused at its first question. */
export async function startPaused(url: string, definitionId: string, swarmId: string, input = 'x'): Promise<void> {
  await request(url, 'POST', `/swarms/${definitionId}`, { input, swarmId });
  await until(
    `${swarmId} to be paused`,
    () => status(url, definitionId, swarmId),
    (r) => r.status === 'paused',
  );
}
