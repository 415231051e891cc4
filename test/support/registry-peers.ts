/**
 * Helpers for the agent-registry tests: real A2A peers (our own `serve()` on 127.0.0.1) whose
 * swarms answer from a scripted model that the test can hold back and make fail.
 */
import { z } from 'zod';
import { createRuntime, defineSwarm, scriptedModel, tool, type Runtime } from '../../src/index.js';
import { type ServeOptions, serve, type SwarmServer } from '../../src/server/index.js';
import { call } from './script.js';

/** A tool whose name becomes a card skill (`tool:translate`, name `translate`, tag `tool`). */
export const translateTool = tool({
  name: 'translate',
  description: 'Translates text',
  parameters: z.object({ text: z.string() }),
  execute: ({ text }) => text,
});
export const summarizeTool = tool({
  name: 'summarize',
  description: 'Summarizes text',
  parameters: z.object({ text: z.string() }),
  execute: ({ text }) => text,
});

/**
 * A model answering `<label> did: <request>`; a request starting with `FAIL` makes the swarm
 * fail; one starting with `ASK` asks its human `<label> asks: which city?` (A2A
 * `input-required`) and then answers `<label> did: <request> in <answer>`; a request the test
 * holds waits until released. `seen` lists requests in arrival order.
 */
export function peerModel(label: string) {
  const gates = new Map<string, { promise: Promise<void>; release: () => void }>();
  const seen: string[] = [];
  const model = scriptedModel(async (req) => {
    const request = [...req.messages].reverse().find((m) => m.role === 'user')?.content ?? '';
    seen.push(request);
    if (request.startsWith('FAIL')) return call('fail', { reason: `${label} cannot do "${request}"` });
    if (request.startsWith('ASK')) {
      const answer = [...req.messages].reverse().find((m) => m.role === 'tool')?.content;
      return answer === undefined ? call('pause', { reason: `${label} asks: which city?` }) : { text: `${label} did: ${request} in ${answer}` };
    }
    const gate = gates.get(request);
    if (gate) await gate.promise;
    return { text: `${label} did: ${request}` };
  });
  return Object.assign(model, {
    seen,
    /** Holds `request` until the returned function is called. */
    hold(request: string): () => void {
      let release!: () => void;
      const promise = new Promise<void>((resolve) => (release = resolve));
      gates.set(request, { promise, release });
      return release;
    },
    /** Releases every held request. */
    releaseAll(): void {
      for (const g of gates.values()) g.release();
    },
  });
}

/** One A2A peer: a runtime serving one swarm, which can be stopped and restarted on its port. */
export interface Peer {
  label: string;
  runtime: Runtime;
  model: ReturnType<typeof peerModel>;
  cardUrl: string;
  port: number;
  stop(): Promise<void>;
  restart(): Promise<void>;
  close(): Promise<void>;
}

/**
 * {@link startPeer} for a test file: each peer it starts is closed by `cleanups`, the file's
 * list of what to close after each test (`const peer = peersClosedBy(cleanups)`).
 */
export function peersClosedBy(cleanups: (() => Promise<unknown>)[]): (label: string, swarmId: string, tools?: Parameters<typeof startPeer>[2]) => Promise<Peer> {
  return async (label, swarmId, tools) => {
    const p = await startPeer(label, swarmId, tools);
    cleanups.push(() => p.close());
    return p;
  };
}

/** A peer serving swarm `swarmId` with `tools` (each becomes a skill of its card), `serve()` given `serveOptions` (e.g. `allowedPushHosts`). */
export async function startPeer(label: string, swarmId: string, tools = [translateTool], serveOptions: ServeOptions = {}): Promise<Peer> {
  const model = peerModel(label);
  const swarm = defineSwarm({ id: swarmId, description: `${label} agent`, instructions: 'Do the task.', tools });
  const runtime = createRuntime({ swarms: [swarm], model });
  let server: SwarmServer | undefined = await serve(runtime, serveOptions);
  const port = Number(new URL(server.url).port);
  const peer: Peer = {
    label,
    runtime,
    model,
    port,
    cardUrl: `${server.url}/a2a/${swarmId}/.well-known/agent-card.json`,
    async stop() {
      await server?.close();
      server = undefined;
    },
    async restart() {
      server = await serve(runtime, { ...serveOptions, port });
    },
    async close() {
      model.releaseAll();
      await server?.close();
      server = undefined;
      await runtime.close();
    },
  };
  return peer;
}

/** A clock that advances by one on every reading: timestamps order events strictly. */
export function tickingClock(start = 1_000) {
  let t = start;
  return () => ++t;
}
