/**
 * Forking a recorded swarm (`runtime.fork`, `runtime.forkPlan`): the source's journal is
 * replayed up to the fork point by the replay's own engine (`replayJournal`, zero model and tool
 * calls) under the new swarm's id, the machine's snapshot there is committed as the new swarm's
 * first record with the source's events up to the point and a `forked` fact, and the new swarm
 * is restored from it as a restart would: from there on it runs live, under its own lease.
 * What the fork point means and what is refused is in `fork-plan.ts`.
 *
 * @module
 */
import { randomUUID } from 'node:crypto';
import { statusUpdate } from '../../machines/event-builders.js';
import type { SwarmEvent, TaskState } from '../../machines/events.js';
import { SWARM_MACHINE_VERSION, type SwarmContext } from '../../machines/swarm.js';
import type { Catalog } from '../catalog/catalog.js';
import type { ToolSpecs } from '../catalog/tool-specs.js';
import { assertSwarmId } from '../define/swarm-id.js';
import { SwarmError } from '../errors.js';
import { stampEvent } from '../events/stamp.js';
import type { Owner } from '../leases/owner.js';
import { MessageLists } from '../store/messages.js';
import { isFinal, resultOf, topState } from '../store/result.js';
import { summaryOf } from '../store/summary.js';
import type { SwarmRecord } from '../store/types.js';
import { checkAwaited, checkStartsTurn, ForkError, type ForkOptions, type ForkPlan, forkSeq, renamed, sideEffectsAfter, turnsBefore } from './fork-plan.js';
import { ownerLost } from './host.js';
import type { Leases } from './leases.js';
import type { LiveSwarms } from './live.js';
import type { PersistedMachineSnapshot } from './persisted.js';
import { judgingPorts, ReplayDivergenceError, type ReplayedJournal, replayInput, replayJournal } from './replay.js';

/** What forking needs of the runtime. */
export interface ForkingDeps {
  live: LiveSwarms;
  catalog: Catalog;
  specs: ToolSpecs;
  leases: Leases;
  owner: Owner;
}

/** A fork worked out up to its commit. */
interface Prepared {
  plan: ForkPlan;
  source: SwarmRecord;
  replayed: ReplayedJournal;
}

/** The id a plan without `newId` shows in its keys: the fork's own id is made when it starts. */
const PLANNED_ID = '<new-id>';

/** Forks of this runtime's store's swarms. */
export class Forking {
  constructor(private readonly deps: ForkingDeps) {}

  /** The fork `options` would make, without making it (throws the {@link ForkError} the fork would). */
  async plan(sourceId: string, options: ForkOptions): Promise<ForkPlan> {
    if (options.newId !== undefined) assertSwarmId(options.newId);
    return (await this.prepare(sourceId, options, options.newId ?? PLANNED_ID)).plan;
  }

  /** Makes the fork and starts driving it; resolves once it is durable, with its plan. */
  async fork(sourceId: string, options: ForkOptions): Promise<ForkPlan> {
    const { live, catalog, leases, owner } = this.deps;
    live.assertOpen();
    const newId = options.newId ?? randomUUID();
    assertSwarmId(newId);
    const { plan, source, replayed } = await this.prepare(sourceId, options, newId);
    // On the version the source ran on while it is registered (docs/deploys.md), else the current one.
    const def = catalog.swarm(source.definitionId, source.definitionVersion) ?? catalog.swarm(source.definitionId);
    if (!def) throw new SwarmError(`Cannot fork swarm "${sourceId}": its definition "${source.definitionId}" is not registered with this runtime`, 'unknown-definition');
    if (live.hosts.has(newId) || live.starting.has(newId) || live.passivated.has(newId)) throw inUse(newId);

    const snapshot = replayed.snapshot;
    if (options.instructions !== undefined) withInstructions(snapshot, options.instructions);
    const context = snapshot.context as SwarmContext;
    const now = Date.now();
    const fact = statusUpdate(stateAt(replayed.events), {
      type: 'forked',
      forkedFrom: { swarmId: sourceId, seq: plan.seq },
      turn: plan.turn,
      ...(options.instructions !== undefined ? { instructions: options.instructions } : {}),
      sideEffects: plan.sideEffects,
    });
    const forked = stampEvent(fact, plan.seq + 1, { swarmId: newId, contextId: context.contextId }, now);
    const { snapshot: stored, writes } = new MessageLists().split(snapshot);
    const record: SwarmRecord = {
      swarmId: newId,
      definitionId: def.id,
      definitionVersion: def.version,
      machineVersion: SWARM_MACHINE_VERSION,
      status: topState(snapshot.value),
      revision: 1,
      snapshot: stored,
      result: resultOf(snapshot.value, context),
      lastSeq: forked.seq,
      updatedAt: now,
    };
    // Reserved at once: a second fork or start under this id is refused meanwhile.
    live.starting.add(newId);
    try {
      if (await summaryOf(live.store, newId)) throw inUse(newId);
      // One commit: the fork exists whole (its prefix, its origin, its state) or not at all. A
      // store that refuses it as a revision or lease conflict holds the id already.
      try {
        await live.store.commit({
          swarmId: newId,
          events: [...replayed.events, forked],
          record,
          ...(writes.length > 0 ? { messages: writes } : {}),
          lease: owner.lease(),
        });
      } catch (e) {
        throw ownerLost(e) ? inUse(newId) : e;
      }
    } finally {
      live.starting.delete(newId);
    }
    // Restored as a restart restores a swarm: the calls it was waiting on run again, live.
    const host = await leases.restore(newId);
    if (!host) throw new SwarmError(live.unrestorable.get(newId) ?? `Swarm "${newId}" was forked but could not be restored`, 'store');
    return { ...plan, swarmId: newId };
  }

  /** Reads the source, finds the fork point, replays up to it and checks that it restores exactly. */
  private async prepare(sourceId: string, options: ForkOptions, newId: string): Promise<Prepared> {
    const { live, catalog, specs } = this.deps;
    const source = await live.store.load(sourceId);
    if (!source) throw new SwarmError(`Unknown swarm "${sourceId}"`, 'unknown-swarm');
    if (source.problem) throw new ForkError(sourceId, 'no-snapshot', source.problem);
    const recorded = await live.store.readEvents(sourceId, 0);
    const { seq, startsTurn } = forkSeq(sourceId, source.definitionId, recorded, options);
    if (seq === recorded.length && isFinal(source.status))
      throw new ForkError(sourceId, 'ended', `seq ${seq} is its final event: there is nothing to continue from there`);
    // A volatile store keeps no snapshot while a swarm runs: the live host has its context.
    const snapshot = source.snapshot ?? (live.hosts.has(sourceId) ? { context: live.hosts.get(sourceId)!.context() } : undefined);
    if (snapshot === undefined) throw new ForkError(sourceId, 'no-snapshot', 'its store holds no snapshot to read its input and configuration from');
    const from = replayInput(sourceId, snapshot, recorded);
    const input = { ...from, swarmId: newId, contextId: from.contextId === sourceId || from.contextId === undefined ? newId : from.contextId };
    let replayed: ReplayedJournal;
    try {
      replayed = await replayJournal({
        recorded: renamed(recorded, sourceId, newId),
        input,
        ports: judgingPorts({ catalog, specs }, input, catalog.swarm(source.definitionId, source.definitionVersion) ? source.definitionVersion : undefined),
        until: seq,
      });
    } catch (e) {
      if (e instanceof ReplayDivergenceError) throw new ForkError(sourceId, 'diverged', `its journal no longer replays up to seq ${seq}: ${e.message}`);
      throw e;
    }
    if (replayed.events.length > seq) {
      throw new ForkError(
        sourceId,
        'inside-step',
        `seq ${seq} is inside a step: the step that records it ends at seq ${replayed.events.length}; fork there or before the step`,
      );
    }
    if (replayed.ended) throw new ForkError(sourceId, 'ended', `it had ended by seq ${seq}: there is nothing to continue from there`);
    checkStartsTurn(sourceId, replayed.snapshot, startsTurn);
    checkAwaited(sourceId, recorded, seq, replayed.awaiting, replayed.snapshot);
    const plan: ForkPlan = {
      sourceId,
      swarmId: newId,
      seq,
      turn: turnsBefore(source.definitionId, recorded, seq),
      sideEffects: sideEffectsAfter(sourceId, newId, recorded, seq),
    };
    return { plan, source, replayed };
  }
}

function inUse(swarmId: string): SwarmError {
  return new SwarmError(`Swarm id "${swarmId}" is already in use`, 'id-in-use');
}

/** The A2A state the fork is in at its point: its last status update's (a paused swarm stays `input-required`). */
function stateAt(events: readonly SwarmEvent[]): TaskState {
  for (let i = events.length - 1; i >= 0; i--) {
    const e = events[i]!;
    if (e.kind === 'status-update') return e.status.state;
  }
  return 'working';
}

/**
 * The orchestrator's instructions replaced in a snapshot: its config and its system message,
 * and the system message of its model call in flight (which restores with its own input).
 */
function withInstructions(snapshot: PersistedMachineSnapshot, instructions: string): void {
  const context = snapshot.context as SwarmContext;
  context.config = { ...context.config, instructions };
  const system = (messages: unknown): void => {
    if (!Array.isArray(messages)) return;
    const first = messages[0] as { role?: string } | undefined;
    // In place: the call in flight shares the machine's list.
    if (first?.role === 'system') messages[0] = { ...first, content: instructions };
  };
  system(context.messages);
  for (const child of Object.values(snapshot.children)) {
    const input = (child.snapshot as { input?: { orchestrator?: boolean; messages?: unknown } } | undefined)?.input;
    if (input?.orchestrator) system(input.messages);
  }
}
