/**
 * The paused-swarm rows: {@link SWARMS} swarms waiting on a human in one process, on SQLite
 * (`synchronous: 'NORMAL'`), without and with passivation (`createRuntime({ passivateAfterMs })`
 * evicts a waiting swarm from memory; its state is already durable). Each row reports the RSS
 * (and heap) each waiting swarm holds, and how long a resume takes to be acknowledged.
 *
 * @module
 */
import { join } from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { createRuntime, defineSwarm, type RuntimeOptions, scriptedModel, sqliteStore, type SwarmStore } from '../src/index.js';
import { scratchDir } from './disk.js';
import { msSince, percentile, settledMemory, sleep } from './measure.js';
import type { Figures } from './table.js';

/** Swarms left waiting. */
export const SWARMS = 10_000;
/** Swarms started together while filling the process. */
const BATCH = 100;
/** Swarms resumed one at a time for the latency figure, spread over all of them. */
const RESUMES = 200;
/**
 * Warm-up swarms paused and resumed to completion (in the same batches) before the baseline is
 * taken: as many as the row then leaves waiting. Running that many swarms raises the process's
 * native high-water marks (malloc arenas, SQLite's page caches) once; measured from
 * a baseline after 200 swarms, the control row grew 5–6 KB of RSS per swarm that holds nothing.
 * From a process that has already done the same work, the growth is what waiting swarms hold.
 */
const WARMUP = SWARMS;
/** The passivation delay of the passivated row, and how long a row waits for things to settle. */
export const PASSIVATE_AFTER_MS = 100;
const SETTLE_MS = 1500;
/**
 * The rows' lease: renewed every third of it, so a renewal of every waiting swarm's lease falls
 * in each {@link RENEWAL_WINDOW_MS} the row watches (the default lease, 15 s, would make the row
 * wait 5 s for one).
 */
const LEASE_MS = 3000;
/** How long the row watches the event loop and the store's renewals: two renewal periods. */
const RENEWAL_WINDOW_MS = (2 * LEASE_MS) / 3;
const ANSWER = 'Saturday works.';

/** The swarm: asks a human at once (the built-in `pause` tool), then answers with the reply. */
const swarm = defineSwarm({ id: 'asker', instructions: 'Ask the human which day, then confirm it.' });
const model = scriptedModel((req) => {
  const answered = req.messages.some((m) => m.role === 'tool' || (m.role === 'user' && m.content === ANSWER));
  if (answered) return { text: 'Booked.' };
  return { toolCalls: [{ id: 'ask', name: 'pause', arguments: JSON.stringify({ reason: 'Which day suits you?' }) }] };
});

/**
 * Runs the row; `passivateAfterMs` undefined keeps every waiting swarm live. `'control'` runs
 * the same swarms in the same batches but answers each at once, so none is left waiting: what
 * the process's RSS grows by then is what having run that many swarms leaves (allocator and
 * heap high-water), not what waiting swarms hold.
 */
export function pausedSwarms(passivateAfterMs: number | undefined | 'control'): () => Promise<Figures> {
  const control = passivateAfterMs === 'control';
  return async () => {
    const scratch = scratchDir();
    const sqlite = sqliteStore(join(scratch.dir, 'state.db'), { synchronous: 'NORMAL' });
    const renewals = timedRenewals(sqlite);
    const store = renewals.store;
    // Passed whether or not this runtime knows the option yet (it then has no effect).
    const options = { swarms: [swarm], model, store, leaseMs: LEASE_MS, ...(typeof passivateAfterMs === 'number' ? { passivateAfterMs } : {}) } as RuntimeOptions;
    const runtime = createRuntime(options);
    const client = (i: number) => runtime.forSwarm(swarm, `s${i}`);
    const pause = async (i: number) => {
      await client(i).run('Book a day.');
      const r = await client(i).wait();
      if (r.status !== 'paused') throw new Error(`swarm s${i} is ${r.status}, expected paused`);
    };
    const finish = async (i: number) => {
      await client(i).resume(ANSWER);
      const r = await client(i).wait();
      if (r.status !== 'completed') throw new Error(`swarm s${i} is ${r.status} after resume: ${JSON.stringify(r)}`);
    };
    try {
      for (let i = 0; i < WARMUP; i += BATCH) {
        await Promise.all(
          Array.from({ length: Math.min(BATCH, WARMUP - i) }, async (_, j) => {
            await pause(-1 - i - j);
            await finish(-1 - i - j);
          }),
        );
      }
      await sleep(SETTLE_MS);
      const base = await settledMemory();
      for (let i = 0; i < SWARMS; i += BATCH) {
        await Promise.all(
          Array.from({ length: Math.min(BATCH, SWARMS - i) }, async (_, j) => {
            await pause(i + j);
            if (control) await finish(i + j);
          }),
        );
      }
      // Long enough for passivation to act, when it is on.
      await sleep(SETTLE_MS);
      const held = await settledMemory();
      const renewing = await watchRenewals(renewals);
      // How many swarms were evicted, when the runtime says (it does once passivation exists).
      const stats = (runtime as { stats?: () => { passivated?: number } }).stats?.();
      const resumeMs: number[] = [];
      for (let k = 0; k < (control ? 0 : RESUMES); k++) {
        const i = Math.floor((k * SWARMS) / RESUMES);
        const start = process.hrtime.bigint();
        await client(i).resume(ANSWER);
        resumeMs.push(msSince(start));
        const r = await client(i).wait();
        if (r.status !== 'completed') throw new Error(`swarm s${i} is ${r.status} after resume`);
      }
      return {
        swarms: SWARMS,
        passivated: stats?.passivated ?? null,
        rssKbPerSwarm: (held.rss - base.rss) / 1024 / SWARMS,
        heapKbPerSwarm: (held.heapUsed - base.heapUsed) / 1024 / SWARMS,
        ...renewing,
        ...(control ? {} : { resumeP50Ms: percentile(resumeMs, 0.5), resumeP99Ms: percentile(resumeMs, 0.99) }),
      };
    } finally {
      await runtime.close();
      await sqlite.close();
      scratch.remove();
    }
  };
}

/** A store whose lease renewals are timed: each call's ids and milliseconds, while `on`. */
function timedRenewals(inner: SwarmStore) {
  const calls: { ids: number; ms: number }[] = [];
  let on = false;
  const store: SwarmStore = Object.assign(Object.create(null) as object, inner, {
    async renew(owner: string, swarmIds: readonly string[], until: number) {
      const start = process.hrtime.bigint();
      try {
        await inner.renew(owner, swarmIds, until);
      } finally {
        if (on) calls.push({ ids: swarmIds.length, ms: msSince(start) });
      }
    },
  });
  return { store, calls, watch: (watching: boolean) => void (on = watching) };
}

/**
 * Watches {@link RENEWAL_WINDOW_MS} of the waiting swarms' lease renewals: the store's time per
 * renewal of {@link SWARMS} leases (summed over its calls), the longest store call, and the
 * longest the event loop was held meanwhile (what a request arriving then waits).
 */
async function watchRenewals(renewals: ReturnType<typeof timedRenewals>) {
  const delay = monitorEventLoopDelay({ resolution: 1 });
  renewals.calls.length = 0;
  renewals.watch(true);
  delay.enable();
  await sleep(RENEWAL_WINDOW_MS);
  delay.disable();
  renewals.watch(false);
  const ids = renewals.calls.reduce((n, c) => n + c.ids, 0);
  const ms = renewals.calls.reduce((n, c) => n + c.ms, 0);
  return {
    leasesRenewed: ids,
    renewalMsPerAll: ids > 0 ? (ms * SWARMS) / ids : null,
    renewalCallMaxMs: renewals.calls.length > 0 ? Math.max(...renewals.calls.map((c) => c.ms)) : null,
    loopDelayMaxMs: delay.max / 1e6,
  };
}
