/**
 * The durability of a team: its state (leader and worker snapshots, board, inbox, status) is one
 * record of the runtime's store, `swarmId` = the team id and `definitionId`
 * `xswarm.team.<definition>`, whose events are the team's events. Every change schedules one
 * commit (changes of one tick are written together); commits go one at a time, each with the
 * events appended since the previous one and the record of that same moment, under this
 * runtime's lease, like a swarm's steps. The writing itself ({@link RecordJournal}) also keeps
 * the agent registry's record (`src/registry/persistence.ts`).
 *
 * The record's snapshot (format 2) holds what is small: the status, the leader's and workers'
 * snapshots, the board's and the inbox's heads (ids, limits, counters, members). The tasks and
 * messages are rows of a stored list that each commit appends what changed to (`host-rows.ts`),
 * so a commit writes O(change), not O(board). Format 1 (the board and the inbox inside the
 * snapshot, written whole at every change) still reads: its first commit here writes the rows.
 *
 * @module
 */
import { TEAM_LEADER_MACHINE_VERSION } from '../../machines/team/leader.js';
import { TEAM_RECORD_PREFIX } from '../define/ids.js';
import { RecordJournal, type RecordShape, type RecordStorePort } from '../store/records.js';
import type { SwarmResult, SwarmStatus } from '../store/result.js';
import type { BoardSnapshot } from './board-types.js';
import { TeamError } from '../errors.js';
import type { MessagesRef } from '../store/messages.js';
import type { SwarmStore } from '../store/types.js';
import type { SwarmEvent } from '../../machines/events.js';
import type { RecordState } from '../store/records.js';
import type { TeamEvent } from './events.js';
import type { TeamStatus } from './host-types.js';
import type { InboxSnapshot } from './inbox.js';
import { type replayRows, replaySteps, type RowsBatch, type RowsPlace } from './host-rows.js';
import { runAtOnce, runInSteps, type Steps } from '../util/steps.js';
import type { PendingStop } from './host-stops.js';
import type { Escalation } from '../../machines/team/leader.js';

/** What a team record's snapshot held in format 1, and what a team's state is once read. */
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
  /** The desk's messages, read cursors and help requests (`host-desk.ts`); absent before it was used. */
  desk?: unknown;
}

/**
 * A creation written in slices, not written whole yet (see `TaskBoard.createInSlices`): the
 * creation index of its first task and the board's id counter before it. A record that holds
 * one was written mid-creation: on restore its tasks (rows from `from` on) are dropped.
 */
export interface CreationMark {
  from: number;
  nextId: number;
}

/** The board of a format 2 snapshot: its snapshot without the tasks, and how many it has. */
export type BoardHead = Omit<BoardSnapshot, 'tasks'> & { tasks: number };

/** The inbox of a format 2 snapshot: its snapshot without the messages; those from seq `keptFrom` on are kept. */
export type InboxHead = Omit<InboxSnapshot, 'messages'> & { messages: number; keptFrom: number };

/**
 * What a team record's snapshot holds (format 2): {@link TeamSnapshot} with heads in place of
 * the board and the inbox, whose tasks and messages are the rows of the list `context.messages`
 * names, after those of the list `children.previous.snapshot.context.messages` names while a
 * compaction is under way (the store puts the rows of both there on load, as for a swarm's
 * conversations; see host-rows.ts). `rows` names the lists, which a loaded snapshot no longer does.
 */
export type TeamRecordSnapshot = Omit<TeamSnapshot, 'format' | 'board' | 'inbox'> & {
  format: 2;
  board: BoardHead;
  inbox: InboxHead;
  rows: { list: string; previous?: string };
  /** A creation under way when the record was written (absent: none). */
  creating?: CreationMark;
  context: { messages: MessagesRef };
  children?: { previous: { snapshot: { context: { messages: MessagesRef } } } };
};

/**
 * A team's state as a stored snapshot (format 1 or 2) holds it, with `place`: where the store
 * holds its rows (format 2), which the next commit appends to. Throws a {@link TeamError}
 * `invalid-snapshot` when it holds no team state.
 */
export function readTeamSnapshot(teamId: string, stored: unknown): TeamSnapshotRead {
  return runAtOnce(readSteps(teamId, stored));
}

/**
 * {@link readTeamSnapshot} with the event loop running between steps of a few ms (its rows
 * replayed 1,024 at a time): what restoring a team does, so a large board does not block it.
 */
export function readTeamSnapshotInSteps(teamId: string, stored: unknown): Promise<TeamSnapshotRead> {
  return runInSteps(readSteps(teamId, stored));
}

/** What {@link readTeamSnapshot} returns. */
export interface TeamSnapshotRead {
  state: TeamSnapshot;
  place?: RowsPlace;
  dropped?: CreationMark & { tasks: number };
}

function* readSteps(teamId: string, stored: unknown): Steps<TeamSnapshotRead> {
  const snapshot = stored as Partial<TeamRecordSnapshot> | Partial<TeamSnapshot> | undefined;
  if (snapshot?.format === 1) return { state: snapshot as TeamSnapshot };
  if (snapshot?.format !== 2) throw new TeamError(`team "${teamId}" has no readable snapshot in the store`, 'invalid-snapshot');
  const { context, children, board, inbox, rows: lists, creating, ...rest } = snapshot as TeamRecordSnapshot;
  const current: unknown = context?.messages;
  const previous: unknown = lists?.previous === undefined ? [] : children?.previous?.snapshot?.context?.messages;
  if (!Array.isArray(current) || !Array.isArray(previous) || typeof lists?.list !== 'string' || typeof board !== 'object' || typeof inbox !== 'object') {
    throw new TeamError(`team "${teamId}" has no readable snapshot in the store (its board's rows are missing)`, 'invalid-snapshot');
  }
  let replayed: ReturnType<typeof replayRows>;
  try {
    // Mid-creation (a crash between two slices of one), the creation is dropped whole: its tasks' places on.
    const count = creating && typeof creating.from === 'number' ? creating.from : typeof board.tasks === 'number' ? board.tasks : undefined;
    replayed = yield* replaySteps([previous, current], inbox.keptFrom, count);
  } catch (error) {
    throw new TeamError(`team "${teamId}": ${(error as Error).message}`, 'invalid-snapshot');
  }
  const { tasks: _t, ...boardHead } = board;
  const { messages: _m, keptFrom: _k, ...inboxHead } = inbox;
  const state: TeamSnapshot = { ...rest, format: 1, board: { ...boardHead, tasks: replayed.tasks }, inbox: { ...inboxHead, messages: replayed.messages } };
  const place: RowsPlace = {
    list: lists.list,
    stored: current.length,
    ...(lists.previous !== undefined ? { previous: { list: lists.previous, stored: previous.length } } : {}),
  };
  if (creating && typeof creating.from === 'number' && typeof creating.nextId === 'number') {
    // Written mid-creation: the id counter goes back too. The dropped tasks' rows stay in the
    // list, past the board's count, where the next tasks created take their places again.
    state.board = { ...state.board, nextId: creating.nextId };
    return { state, place, dropped: { ...creating, tasks: board.tasks - creating.from } };
  }
  return { state, place };
}

/**
 * Events read from the store per call while a team loads: a macrotask between two pages. A page
 * is parsed in one turn: 5,000 took 9–27 ms on the 2-core test machine, and with a garbage
 * collection in the same turn the restore of a 100,000-task board blocked the event loop for
 * 51–58 ms (the bound is 50).
 */
const EVENTS_PAGE = 1_000;

/**
 * Every stored event of `teamId`, read in pages of {@link EVENTS_PAGE}, the event loop running
 * between two: a 100,000-task board's events read at once blocked it for ~250 ms.
 */
export async function readAllEvents(store: Pick<SwarmStore, 'readEvents'>, teamId: string): Promise<SwarmEvent[]> {
  const all: SwarmEvent[] = [];
  for (;;) {
    const page = await store.readEvents(teamId, all.at(-1)?.seq ?? 0, EVENTS_PAGE);
    for (const event of page) all.push(event);
    if (page.length < EVENTS_PAGE) return all;
    await new Promise((resolve) => setImmediate(resolve));
  }
}

/** The part of a team record's snapshot that names its rows, for a batch of `rows` (see host-rows.ts). */
export function rowsRef(ref: RowsBatch['ref']): Pick<TeamRecordSnapshot, 'rows' | 'context' | 'children'> {
  return {
    rows: { list: ref.list, ...(ref.previous ? { previous: ref.previous.xswarm$messages } : {}) },
    context: { messages: ref.current },
    ...(ref.previous ? { children: { previous: { snapshot: { context: { messages: ref.previous } } } } } : {}),
  };
}

/** The store's status for a team status: unfinished while a run is under way. */
function recordStatus(status: TeamStatus): SwarmStatus {
  if (status === 'running' || status === 'paused') return status;
  return status === 'failed' ? 'failed' : status === 'stopped' ? 'stopped' : 'completed';
}

function recordResult(snapshot: Pick<TeamSnapshot, 'status' | 'reason'>): SwarmResult {
  const { status, reason } = snapshot;
  if (status === 'running') return { status: 'running', currentTurn: 0, maxTurns: 0 };
  if (status === 'paused') return { status: 'paused', reason: { type: 'HITL', message: reason ?? 'paused' }, currentTurn: 0, maxTurns: 0 };
  if (status === 'failed' || status === 'stopped') return { status, reason: reason ?? status };
  return { status: 'completed', result: { team: status, ...(reason ? { reason } : {}) } };
}

/** Writes a team's state after its changes, one commit at a time. */
export class TeamJournal extends RecordJournal<TeamRecordSnapshot> {
  constructor(
    port: RecordStorePort,
    teamId: string,
    definitionId: string,
    state: () => RecordState<TeamRecordSnapshot> & { events: readonly TeamEvent[] },
    lost: (reason: string) => void,
    from: { revision: number; seq: number } = { revision: 0, seq: 0 },
    /** Called when the rows must be written whole next (see `RecordJournalOptions.resync`). */
    resync?: () => void,
  ) {
    const shape: RecordShape<TeamRecordSnapshot> = {
      definitionId: `${TEAM_RECORD_PREFIX}${definitionId}`,
      machineVersion: TEAM_LEADER_MACHINE_VERSION,
      status: (snapshot) => recordStatus(snapshot.status),
      result: recordResult,
    };
    super(port, teamId, shape, state, lost, from, resync ? { resync } : {});
  }
}
