/**
 * The runtime as team hosts use it (`TeamRuntimePort`, declared by `team/`): a task attempt's
 * swarm starts here, or in a worker process over NATS when this runtime lacks its definition;
 * its result is waited on, read, followed and stopped through the runtime's own parts.
 *
 * @module
 */
import type { Catalog } from '../catalog/catalog.js';
import type { OtherRuntimes } from '../distribution/calls.js';
import type { HostRequest } from '../distribution/protocol.js';
import { isFinal } from '../store/result.js';
import { summaryOf } from '../store/summary.js';
import type { SwarmStore } from '../store/types.js';
import type { SwarmActivity, TeamRuntimePort } from '../team/host-types.js';
import type { Commands } from './commands.js';
import type { CallGate } from './drain.js';
import type { Launcher } from './launch.js';
import type { Leases } from './leases.js';
import type { LiveSwarms } from './live.js';
import type { Reading } from './reading.js';
import type { InspectObserver } from './types.js';

/** The parts a team port is made of. */
export interface TeamPortParts {
  store: SwarmStore;
  catalog: Catalog;
  live: LiveSwarms;
  leases: Leases;
  reading: Reading;
  commands: Commands;
  launcher: Launcher;
  others: OtherRuntimes | undefined;
  /** The runtime's inspection observer, for the teams' leaders and workers. */
  inspect?: InspectObserver | undefined;
  /** The gate a drain closes: no new team run, and no attempt's swarm started, once it drains. */
  gate: CallGate;
  /**
   * Runs the start of a task attempt's swarm (`swarmId`) in a `team_task` span of a traced
   * runtime (the swarm's spans under it, a worker process's too); absent: started as it is.
   */
  traceTask?: ((swarmId: string, definitionId: string, start: () => Promise<void>) => Promise<void>) | undefined;
  /**
   * The team's wait on an attempt's swarm ended: with its result (`outcome`: its status, `error`
   * a failure's reason), or `released` (the team gave the attempt up). Ends its `team_task`
   * span, which no final event ends when the swarm ran in a worker process.
   */
  taskEnded?: ((swarmId: string, outcome: string, error?: string) => void) | undefined;
}

/** The team port of a runtime made of `parts`. */
export function teamPort(parts: TeamPortParts): TeamRuntimePort {
  const { store, catalog, live, leases, reading, commands, launcher, others } = parts;
  // A task swarm whose definition this runtime lacks runs in a worker process (over NATS).
  const remoteTask = (definitionId: string) => (others && !catalog.has(definitionId) ? others : undefined);
  return {
    ...(parts.inspect ? { inspect: parts.inspect } : {}),
    // The attempt's swarm id is the hosted call's idempotency key: sent again (a leader
    // restarted), it attaches to the attempt instead of reading "id in use".
    accepting: (what) => parts.gate.assertAccepting(what),
    // Draining: the attempt waits (held, never failed) until the runtime closes; the runtime
    // that adopts the team starts it then, under the same swarm id.
    startSwarm: (definitionId, swarmId, input, options) => {
      if (parts.gate.draining) return parts.gate.held();
      const start = () =>
        remoteTask(definitionId)?.host({ swarmId, definitionId, input, attach: true, ...(options?.budgetOuter ? { budgetOuter: options.budgetOuter } : {}) }) ??
        launcher.start(definitionId, swarmId, input, options?.budgetOuter ? { budgetOuter: options.budgetOuter } : {});
      return parts.traceTask ? parts.traceTask(swarmId, definitionId, start) : start();
    },
    // A task swarm left by a previous process is adopted first (a team restored on first use):
    // that one swarm, looked up by id (a listing of every unfinished swarm per attempt is O(n)).
    wait: async (swarmId, signal) => {
      if (!live.hosts.has(swarmId)) await leases.adoptOne(swarmId).catch(() => undefined);
      let result: Awaited<ReturnType<typeof reading.wait>>;
      try {
        result = await reading.wait(swarmId, signal);
      } catch (error) {
        // Aborted: the attempt is over for the team (given up, or ended). Another error is retried.
        if (signal.aborted) parts.taskEnded?.(swarmId, 'released');
        throw error;
      }
      parts.taskEnded?.(swarmId, result.status, result.status === 'failed' ? result.reason : undefined);
      return result;
    },
    stop: (swarmId, reason) => commands.stop(swarmId, reason),
    stored: async (swarmId) => ((await summaryOf(store, swarmId)) ? reading.result(swarmId) : undefined),
    subscribe: (listener) => live.subscribe(listener),
    follow: (definitionId, swarmId, input, onProgress, signal) => {
      const hosting = remoteTask(definitionId);
      if (!hosting || signal.aborted) return;
      const request: HostRequest = { swarmId, definitionId, input, attach: true };
      hosting.keepAlive(request, async () => isFinal((await reading.result(swarmId)).status), signal, onProgress);
      const unwatch = store.watch?.(swarmId, onProgress);
      if (unwatch) signal.addEventListener('abort', unwatch, { once: true });
    },
    // Read a few times a second per busy worker: a walk of the hosts in memory, no store call.
    activity: (swarmId) => {
      const children = `${swarmId}:`;
      let activity: SwarmActivity | undefined;
      for (const [id, host] of live.hosts) {
        if (id !== swarmId && !id.startsWith(children)) continue;
        activity ??= { events: 0, committing: false };
        activity.events += host.numbered;
        activity.committing ||= host.committing;
      }
      return activity;
    },
    reachable: () => store.connected?.() !== false,
    usage: (swarmIds) => reading.usageOf(swarmIds),
  };
}
