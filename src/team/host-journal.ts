/**
 * The durability of a team: its whole state (leader and worker snapshots, board, inbox, status)
 * is one record of the runtime's store, `swarmId` = the team id and `definitionId`
 * `xswarm.team.<definition>`, whose events are the team's events. Every change schedules one
 * commit (changes of one tick are written together); commits go one at a time, each with the
 * events appended since the previous one and the record of that same moment, under this
 * runtime's lease, like a swarm's steps. The writing itself ({@link RecordJournal}) also keeps
 * the agent registry's record (`src/registry/persistence.ts`).
 *
 * @module
 */
import { errorText } from '../../machines/error-text.js';
import type { SwarmEvent } from '../../machines/events.js';
import { TEAM_LEADER_MACHINE_VERSION } from '../../machines/team/leader.js';
import type { SwarmResult, SwarmStatus } from '../store/result.js';
import type { Lease, SwarmRecord, SwarmStore } from '../store/types.js';
import type { BoardSnapshot } from './board-types.js';
import type { TeamEvent } from './events.js';
import type { TeamStatus } from './host-types.js';
import type { InboxSnapshot } from './inbox.js';
import type { PendingStop } from './host-stops.js';
import type { Escalation } from '../../machines/team/leader.js';

/** The prefix of a team record's definition id, so no swarm definition is mistaken for it. */
export const TEAM_RECORD_PREFIX = 'xswarm.team.';

/** What a team record's snapshot holds. */
export interface TeamSnapshot {
  format: 1;
  teamId: string;
  definitionId: string;
  status: TeamStatus;
  reason?: string;
  escalation?: Escalation;
  /** The leader's persisted snapshot (null before the first run). */
  leader: unknown;
  /** Each live worker's persisted snapshot, by worker id. */
  workers: Record<string, unknown>;
  board: BoardSnapshot;
  inbox: InboxSnapshot;
  /** Stops owed to attempts the team gave up that had not ended yet (`host-stops.ts`). */
  pendingStops?: PendingStop[];
}

/** What the journal needs from the runtime. */
export interface TeamStorePort {
  store: SwarmStore;
  /** The lease a commit made now holds (this runtime's owner). */
  lease(): Lease;
}

/** The store's status for a team status: unfinished while a run is under way. */
function recordStatus(status: TeamStatus): SwarmStatus {
  if (status === 'running' || status === 'paused') return status;
  return status === 'failed' ? 'failed' : status === 'stopped' ? 'stopped' : 'completed';
}

function recordResult(snapshot: TeamSnapshot): SwarmResult {
  const { status, reason } = snapshot;
  if (status === 'running') return { status: 'running', currentTurn: 0, maxTurns: 0 };
  if (status === 'paused') return { status: 'paused', reason: { type: 'HITL', message: reason ?? 'paused' }, currentTurn: 0, maxTurns: 0 };
  if (status === 'failed' || status === 'stopped') return { status, reason: reason ?? status };
  return { status: 'completed', result: { team: status, ...(reason ? { reason } : {}) } };
}

/**
 * How a {@link RecordJournal} stores its state: the record's definition id (one no swarm
 * definition has, so the runtime never adopts the record as a swarm), the version of the
 * snapshot's shape, and the status and result a listing shows.
 */
export interface RecordShape<S> {
  definitionId: string;
  machineVersion: number;
  status(snapshot: S): SwarmStatus;
  result(snapshot: S): SwarmResult;
}

/**
 * Writes a state kept as one record of the runtime's store (a team's, the agent registry's)
 * after its changes, one commit at a time, with the events appended since the previous commit.
 */
export class RecordJournal<S> {
  #revision: number;
  #seq: number;
  #scheduled = false;
  #writing: Promise<void> = Promise.resolve();
  #failure: string | undefined;

  constructor(
    private readonly port: TeamStorePort,
    private readonly recordId: string,
    private readonly shape: RecordShape<S>,
    private readonly state: () => { snapshot: S; events: readonly { seq: number }[] },
    /** Called once when a write fails for good (another runtime took the record, or the store refuses). */
    private readonly lost: (reason: string) => void,
    from: { revision: number; seq: number } = { revision: 0, seq: 0 },
  ) {
    this.#revision = from.revision;
    this.#seq = from.seq;
  }

  /** Why writing stopped, if it did. */
  get failure(): string | undefined {
    return this.#failure;
  }

  /** Schedules a commit of the state as it will be once the current step is over. */
  changed(): void {
    if (this.#scheduled || this.#failure) return;
    this.#scheduled = true;
    this.#writing = this.#writing.then(() => {
      this.#scheduled = false;
      return this.#commit();
    });
  }

  /** Resolves once everything scheduled so far is written (or failed). */
  flush(): Promise<void> {
    return this.#writing;
  }

  async #commit(): Promise<void> {
    if (this.#failure) return;
    const { snapshot, events } = this.state();
    const fresh = events.filter((e) => e.seq > this.#seq);
    const lastSeq = events.at(-1)?.seq ?? this.#seq;
    const record: SwarmRecord = {
      swarmId: this.recordId,
      definitionId: this.shape.definitionId,
      definitionVersion: 1,
      machineVersion: this.shape.machineVersion,
      status: this.shape.status(snapshot),
      revision: this.#revision + 1,
      snapshot,
      result: this.shape.result(snapshot),
      lastSeq,
      updatedAt: Date.now(),
    };
    try {
      await this.port.store.commit({ swarmId: this.recordId, events: fresh as unknown as SwarmEvent[], record, lease: this.port.lease() });
      this.#revision = record.revision;
      this.#seq = lastSeq;
    } catch (error) {
      this.#failure = errorText(error);
      this.lost(this.#failure);
    }
  }
}

/** Writes a team's state after its changes, one commit at a time. */
export class TeamJournal extends RecordJournal<TeamSnapshot> {
  constructor(
    port: TeamStorePort,
    teamId: string,
    definitionId: string,
    state: () => { snapshot: TeamSnapshot; events: readonly TeamEvent[] },
    lost: (reason: string) => void,
    from: { revision: number; seq: number } = { revision: 0, seq: 0 },
  ) {
    const shape: RecordShape<TeamSnapshot> = {
      definitionId: `${TEAM_RECORD_PREFIX}${definitionId}`,
      machineVersion: TEAM_LEADER_MACHINE_VERSION,
      status: (snapshot) => recordStatus(snapshot.status),
      result: recordResult,
    };
    super(port, teamId, shape, state, lost, from);
  }
}
