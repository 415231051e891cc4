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
import { TEAM_LEADER_MACHINE_VERSION } from '../../machines/team/leader.js';
import { TEAM_RECORD_PREFIX } from '../define/ids.js';
import { RecordJournal, type RecordShape, type RecordStorePort } from '../store/records.js';
import type { SwarmResult, SwarmStatus } from '../store/result.js';
import type { BoardSnapshot } from './board-types.js';
import type { TeamEvent } from './events.js';
import type { TeamStatus } from './host-types.js';
import type { InboxSnapshot } from './inbox.js';
import type { PendingStop } from './host-stops.js';
import type { Escalation } from '../../machines/team/leader.js';

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

/** Writes a team's state after its changes, one commit at a time. */
export class TeamJournal extends RecordJournal<TeamSnapshot> {
  constructor(
    port: RecordStorePort,
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
