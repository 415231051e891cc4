/**
 * W1 over NATS, as the NATS rows (`rows-nats.ts`) and the scale-out rows (`rows-scale.ts`) run
 * it: the orchestrator in the row's process, its agents hosted by worker processes
 * (`nats-worker.ts`) or, with no workers, by the orchestrator's own runtime; and the checks that
 * every call was made as W1 makes it.
 *
 * @module
 */
import { createRuntime, type Runtime, scriptedModel } from '../src/index.js';
import { natsServerMissing } from '../test/support/nats-server.js';
import { type NatsSetup, startSetup } from './nats-bench.js';
import type { Figures } from './table.js';
import { type CallCounts, newCounts, W1_AGENTS, W1_MODEL_CALLS, W1_SWARM_ID, w1Agents, w1Call, w1Respond, w1Swarm } from './w1.js';

/** Hosting timings of the rows: a loaded machine must not turn a slow answer into a resent call. */
export const HOSTING = { deadlineMs: 120_000, heartbeatTimeoutMs: 60_000 };

/** Whether nats-server is missing here (said on stderr; the row's figures then read n/a). */
export function natsMissing(): boolean {
  if (natsServerMissing) process.stderr.write(`skipping the NATS row: ${natsServerMissing}\n`);
  return natsServerMissing !== undefined;
}

/**
 * W1's orchestrator on the nats-server at `url`, its agents hosted by the workers or, `withAgents`,
 * by its own runtime; `latencyMs` per model call (0: none).
 */
function w1Orchestrator(url: string, latencyMs: number, withAgents: boolean): { runtime: Runtime; counts: CallCounts } {
  const counts = newCounts();
  const swarm = w1Swarm(W1_AGENTS);
  const model = scriptedModel(latencyMs > 0 ? (req) => w1Call(req, counts, latencyMs) : (req) => w1Respond(req, counts));
  const agents = withAgents ? w1Agents() : [];
  const runtime = createRuntime({ swarms: [swarm], agents, model, nats: { servers: url, name: 'bench-orchestrator' }, hosting: HOSTING });
  return { runtime, counts };
}

/** Throws unless every agent (summed over the workers and the orchestrator's process) and the orchestrator answered as W1 does in `runs` runs. */
function checkW1Counts(orchestrator: CallCounts, workers: CallCounts, runs: number): void {
  for (const agent of W1_AGENTS) {
    const calls = (workers[agent] ?? 0) + (orchestrator[agent] ?? 0);
    if (calls !== runs) throw new Error(`${agent} was called ${calls} times in ${runs} runs, expected ${runs}`);
  }
  const expected = (W1_MODEL_CALLS - W1_AGENTS.length) * runs;
  if (orchestrator[W1_SWARM_ID] !== expected) throw new Error(`orchestrator was called ${orchestrator[W1_SWARM_ID]} times in ${runs} runs, expected ${expected}`);
}

/**
 * Runs `measure` on W1 over NATS: a nats-server, `workers` worker processes hosting the agents
 * (none: the orchestrator's runtime hosts them) and the orchestrator here, `latencyMs` per model call. `measure` answers with its figures and
 * how many runs it made; once everything is stopped, every call must have been made as W1
 * makes it in that many runs (not checked when `measure` threw).
 */
export async function w1OverNats(
  workers: number,
  latencyMs: number,
  measure: (setup: NatsSetup, runtime: Runtime) => Promise<{ figures: Figures; runs: number }>,
): Promise<Figures> {
  const setup = await startSetup(workers, { kind: 'w1', latencyMs });
  const { runtime, counts } = w1Orchestrator(setup.server.url, latencyMs, workers === 0);
  let runs: number | undefined;
  try {
    await runtime.start();
    const measured = await measure(setup, runtime);
    runs = measured.runs;
    return measured.figures;
  } finally {
    await runtime.close();
    const workerCounts = await setup.stop();
    if (runs !== undefined) checkW1Counts(counts, workerCounts, runs);
  }
}
