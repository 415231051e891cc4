/**
 * The worker process of the NATS rows: a runtime with agents only, on the row's nats-server,
 * hosting them for the orchestrator in the bench process. It runs from the bench bundle
 * (`--fixture nats-worker '<spec JSON>'`, see `run.ts`), so it is a real child process of the
 * row, as a deployed worker would be. It also answers raw requests on {@link ECHO_SUBJECT} on a
 * connection of its own: the floor's request/reply round trip crosses the same two processes.
 *
 * It prints one JSON line once it serves; when its stdin ends (the row is done, or the row's
 * process died) or on SIGTERM it closes its runtime, prints `{ "counts": … }` (model calls per
 * agent) and exits, so no worker outlives its row.
 *
 * @module
 */
import { connectNats } from '../src/entries/nats.js';
import { createRuntime, defineAgent, scriptedModel } from '../src/index.js';
import { newCounts, w1Agents, w1Call, w1Respond } from './w1.js';

/** Where the worker answers raw requests (the floor's round trip). */
export const ECHO_SUBJECT = 'bench.echo';
/** The agent of the handoff row. */
export const ECHO_AGENT = 'echo-agent';
/** What the echo agent answers to `request`. */
export const echoAnswer = (request: string) => `echo: ${request}`;

/** What a worker hosts: the handoff row's echo agent, or W1's three agents (with model latency). */
export interface WorkerSpec {
  url: string;
  kind: 'echo' | 'w1';
  latencyMs?: number;
}

/** Starts the worker described by `specJson` (a {@link WorkerSpec}); resolves with its ready line. */
export async function natsWorker(specJson: string): Promise<string> {
  const spec = JSON.parse(specJson) as WorkerSpec;
  const counts = newCounts();
  const latencyMs = spec.latencyMs ?? 0;
  const agents = spec.kind === 'echo' ? [defineAgent({ id: ECHO_AGENT, instructions: 'Repeat the request.' })] : w1Agents();
  const model = scriptedModel((req) => {
    if (spec.kind === 'w1') return latencyMs > 0 ? w1Call(req, counts, latencyMs) : w1Respond(req, counts);
    counts[req.agentId] = (counts[req.agentId] ?? 0) + 1;
    return { text: echoAnswer(req.messages.findLast((m) => m.role === 'user')?.content ?? '') };
  });
  // Generous hosting timings: a loaded machine must not turn a slow answer into a resent call.
  const runtime = createRuntime({ agents, model, nats: { servers: spec.url, name: 'bench-worker' }, hosting: { deadlineMs: 120_000, heartbeatTimeoutMs: 60_000 } });
  await runtime.start();
  const echo = await connectNats({ servers: spec.url, name: 'bench-echo' });
  echo.subscribe(ECHO_SUBJECT, {
    callback: (_e, m) => {
      m.respond(m.data);
    },
  });
  await echo.flush();

  let closing = false;
  const close = async () => {
    if (closing) return;
    closing = true;
    await runtime.close();
    await echo.drain().catch(() => echo.close());
    process.stdout.write(`${JSON.stringify({ counts })}\n`);
    process.exit(0);
  };
  process.stdin.on('end', () => void close());
  process.stdin.resume();
  process.once('SIGTERM', () => void close());
  return JSON.stringify({ ready: process.pid });
}
