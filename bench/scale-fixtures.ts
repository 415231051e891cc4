/**
 * The processes of the REST scale-out rows, each a child of the row (`--fixture`, see
 * `run.ts`), set up as `xswarm serve` and `xswarm worker` set them up for the distributed
 * example (`examples/distributed`): default hosting timings, the demo model (30–80 ms per call,
 * streamed text).
 *
 * - `rest-server`: a runtime with the day planner served over REST on 127.0.0.1 (a free port).
 *   With `nats`, its state in JetStream and its agents in the workers; with `dir`, one process
 *   with the agents too and its state in SQLite in that folder.
 * - `activity-worker`: a runtime with the weather, calendar and allergen agents only, on NATS.
 *
 * Each prints `{ "ready": { pid, url? } }` once it serves and `{ "counts": … }` (model calls
 * per speaker) once its stdin ended and it closed.
 *
 * @module
 */
import { join } from 'node:path';
import { activityAgents, demoModel } from '../examples/activity-planner/index.js';
import { dayPlanner } from '../examples/distributed/planner.js';
import { createRuntime, type Model } from '../src/index.js';
import { serve } from '../src/server/index.js';
import { sqliteStore } from '../src/store/sqlite/store.js';
import { untilStdinEnds } from './scale-children.js';

/** What a `rest-server` runs on: a nats-server's URL, or a folder for its SQLite file. */
export interface RestServerSpec {
  nats?: string;
  dir?: string;
}

/** The demo model, counting its calls per speaker (`agentId`). */
function countingModel(): { model: Model; counts: Record<string, number> } {
  const counts: Record<string, number> = {};
  const model: Model = {
    name: demoModel.name,
    call(req) {
      counts[req.agentId] = (counts[req.agentId] ?? 0) + 1;
      return demoModel.call(req);
    },
  };
  return { model, counts };
}

/** Starts the REST server of `specJson` (a {@link RestServerSpec}); resolves with its ready line. */
export async function restServer(specJson: string): Promise<string> {
  const spec = JSON.parse(specJson) as RestServerSpec;
  const { model, counts } = countingModel();
  const store = spec.dir === undefined ? undefined : sqliteStore(join(spec.dir, 'state.db'));
  const runtime =
    spec.nats !== undefined
      ? createRuntime({ swarms: [dayPlanner], model, nats: { servers: spec.nats, name: 'bench-rest' } })
      : createRuntime({ swarms: [dayPlanner], agents: [...activityAgents], model, ...(store ? { store } : {}) });
  await runtime.start();
  const server = await serve(runtime, { port: 0 });
  untilStdinEnds(
    async () => {
      await server.close();
      await runtime.close();
      await store?.close();
    },
    () => counts,
  );
  return JSON.stringify({ ready: { pid: process.pid, url: server.url } });
}

/** Starts a worker hosting the activity agents on the nats-server at `specJson`'s `nats`. */
export async function activityWorker(specJson: string): Promise<string> {
  const spec = JSON.parse(specJson) as { nats: string };
  const { model, counts } = countingModel();
  const runtime = createRuntime({ agents: [...activityAgents], model, nats: { servers: spec.nats, name: 'bench-activity-worker' } });
  await runtime.start();
  untilStdinEnds(
    () => runtime.close(),
    () => counts,
  );
  return JSON.stringify({ ready: { pid: process.pid } });
}
