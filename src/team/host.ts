/**
 * `TeamHost`: one team at work in a runtime. It composes the team's board and inbox, the leader
 * actor (whose effects it provides: claims, releases, completions and failures on the board,
 * messages into the inbox, pause and resume) and one worker actor per worker, whose tasks run
 * as swarms of the runtime. It turns every fact into a team event, beats for its workers while
 * they make progress and reports silent ones to the leader (release and respawn).
 *
 * @module
 */
import { createActor, type Actor } from 'xstate';
import type { BoardSummary, TeamLeaderEvent, WorkerFact, WorkerFacts } from '../../machines/team/events.js';
import {
  DEFAULT_MAX_RESPAWNS,
  silentWorkers,
  TEAM_LEADER_MACHINE_VERSION,
  teamLeaderMachine,
  teamMetrics,
  type Escalation,
  type TeamLeaderEffects,
  type TeamWorkerSpec,
} from '../../machines/team/leader.js';
import { teamWorkerMachine, type TeamWorkerInput } from '../../machines/team/worker.js';
import { errorText } from '../../machines/error-text.js';
import { attemptKey, CREATE_SLICE, createBoard, restoreBoardInSteps, type BoardFact, type Task, type TaskBoard, type TaskSpec } from './board.js';
import { workerSwarmId, type TaskMetadata, type TeamDefinition, type TeamWorkerDefinition } from '../define/team.js';
import { TeamError } from '../errors.js';
import { TeamEventLog, type TeamFact } from './events.js';
import { PendingStops } from './host-stops.js';
import { isOutage, taskRunner } from './host-task.js';
import type { TeamRunMetrics, TeamRunSummary, TeamRuntimePort, TeamStatus } from './host-types.js';
import type { UsageTotals } from '../usage/report.js';
import { createInbox, restoreInbox, type Inbox, type InboxMessageType, type InboxPayloads } from './inbox.js';
import { readAllEvents, readTeamSnapshotInSteps, rowsRef, TeamJournal, type TeamRecordSnapshot, type TeamSnapshot } from './host-journal.js';
import { TEAM_ROWS_LIST, TeamRows, type RowsBatch, type RowsPlace } from './host-rows.js';
import { TEAM_RECORD_PREFIX } from '../define/ids.js';
import type { RecordStorePort } from '../store/records.js';
import { isFinal } from '../store/result.js';
import { heldByOther } from '../leases/holder.js';
import type { TeamEvent } from './events.js';
import { TeamDesk } from './host-desk.js';
import { specialtyMatcher } from './specialty.js';
import { registerTeamToolTarget, type TeamToolTarget } from './team-tools.js';

/** The leader's id in the team's inbox. */
const LEADER_ID = 'leader';

/** How many of the blocked tasks the leader's summary names (`BoardSummary.blocked`). */
const SUMMARY_BLOCKED = 100;

type LeaderActor = Actor<typeof teamLeaderMachine>;
type WorkerActor = Actor<typeof teamWorkerMachine>;

/**
 * What `teamClient.updateTask` changes (each optional; applied in this order). A task in
 * progress can be reassigned or canceled (its attempt is stopped, see `TeamHost.updateTask`),
 * not blocked; a finished task (completed or failed) cannot be changed.
 */
export interface TaskUpdate {
  /** Tasks the (pending) task now waits on as well: it is claimed once they completed. Refused for a task in progress. */
  readonly addBlockers?: readonly string[];
  /**
   * The worker (id, e.g. `api-1`) that takes the (pending or running) task: it waits for that
   * worker while the worker is live. A running attempt is stopped first; the task's next
   * attempt (a new number, not counted as a failure) is that worker's.
   */
  readonly assignTo?: string;
  /**
   * `true`: the task (pending, running or escalated) is given up: failed for good, its
   * dependents blocked. A running attempt is stopped (not counted as a failure).
   */
  readonly cancel?: boolean;
}

/** How a host is created. */
export interface TeamHostOptions {
  definition: TeamDefinition;
  teamId: string;
  port: TeamRuntimePort;
  clock?: () => number;
  /** Asked before a run starts: throws when the runtime may not run another team (`maxTeams`). */
  admit?: (host: TeamHost) => void;
  /** Where the team's state is persisted (absent: in memory only). */
  journal?: RecordStorePort;
  /** How often `wait()` reads the store for a team another runtime drives (default 250 ms). */
  pollMs?: number;
}

/** One team in a runtime. Use it through a `TeamClient`. */
export class TeamHost implements TeamToolTarget {
  readonly teamId: string;
  readonly definition: TeamDefinition;
  // Replaced once when the team is restored from the store (`load`), before any use.
  board: TaskBoard;
  inbox: Inbox;
  log: TeamEventLog;
  /** The last read of the team from the store (see `reload`): settles once it is restored. */
  ready: Promise<void> = Promise.resolve();
  readonly #storePort: RecordStorePort | undefined;
  #journal: TeamJournal | undefined;
  /** The board's and the inbox's changes the journal writes next (see host-rows.ts). */
  #rows: TeamRows | undefined;
  /** Another live runtime drives this team: this one only reads it. */
  #heldBy: string | undefined;
  /** Whether `load` found the team in the store. */
  #stored = false;
  /** The load under way, if any (see `reload`). */
  #loading: Promise<void> | undefined;
  readonly #pollMs: number;
  /** The leader's snapshot as the store held it, written back as it was while no leader runs here. */
  #storedLeader: unknown = null;
  /** A stored leader is being restored: an error now is its snapshot's, not the run's. */
  #restoringLeader = false;
  /** The leader's context of the last run, for metrics when no leader actor runs. */
  #lastLeader: ReturnType<LeaderActor['getSnapshot']>['context'] | undefined;
  readonly #port: TeamRuntimePort;
  readonly #clock: () => number;
  readonly #admit: ((host: TeamHost) => void) | undefined;
  readonly #specs: TeamWorkerSpec[];
  readonly #workers = new Map<string, { actor: WorkerActor; off: () => void }>();
  /** Task swarms in flight → the worker running each. */
  readonly #running = new Map<string, string>();
  /** When each worker last made progress (its task swarm active or emitting events, a heartbeat of a hosted attempt, or going idle). */
  readonly #progress = new Map<string, number>();
  readonly #lastBeat = new Map<string, number>();
  /** The events each running task swarm (with its local children) had numbered at the last look (see `#observe`). */
  readonly #activity = new Map<string, number>();
  /** The running task swarms whose attempt waits on the runtime (its look-up, its start, an outage). */
  readonly #waiting = new Set<string>();
  /** Silent workers are being looked at again before they are reported (see `#tick`). */
  #rechecking = false;
  #leader: LeaderActor | undefined;
  #status: TeamStatus = 'idle';
  #reason: string | undefined;
  #escalation: Escalation | undefined;
  #settled: (() => void)[] = [];
  #timer: ReturnType<typeof setInterval> | undefined;
  #boardChangePending = false;
  #closing = false;
  #offs: (() => void)[] = [];
  #portOff: () => void = () => {};
  /** Stops owed to the attempts this team gave up, until their swarms have ended. */
  readonly #stops: PendingStops;
  /** How many workers the team has of each type (what the leader's summary is sized by). */
  readonly #workerTypes = new Map<string, number>();
  /** The ids of the board's blocked tasks, for the list they were taken from (the board keeps it until it changes). */
  #blockedIds: { from: readonly unknown[]; ids: string[] } | undefined;
  /** A creation dropped on restore, not told in the events yet (see #noteDropped). */
  #dropped: TeamFact | undefined;
  /** The runs of {@link runInSlices}, one after the other. */
  #runs: Promise<unknown> = Promise.resolve();
  /** Messages, read cursors and help requests of the inbox tools and the client (`host-desk.ts`). */
  readonly desk: TeamDesk;
  /** The help request the leader is being told of (its `relayHelp` effect answers it). */
  #relaying: string | undefined;
  /** The worker type a task's metadata asks for (`specialty.ts`). */
  readonly #workerTypeOf: (metadata: TaskMetadata) => string | undefined;
  /** Undoes this host's registration as the team tools' target (see `team-tools.ts`). */
  #unregister: (() => void) | undefined;

  constructor(options: TeamHostOptions) {
    const { definition, teamId } = options;
    this.teamId = teamId;
    this.definition = definition;
    this.#port = options.port;
    this.#clock = options.clock ?? Date.now;
    this.#admit = options.admit;
    this.#specs = definition.workers.flatMap((w) =>
      Array.from({ length: w.count }, (_, i) => ({ workerId: `${w.type}-${i + 1}`, type: w.type, specialty: w.specialty })),
    );
    for (const spec of this.#specs) this.#workerTypes.set(spec.type, (this.#workerTypes.get(spec.type) ?? 0) + 1);
    this.board = createBoard({ id: teamId, limits: definition.limits, clock: this.#clock });
    this.inbox = createInbox({ teamId, limits: definition.limits, members: [LEADER_ID, ...this.#specs.map((s) => s.workerId)], clock: this.#clock });
    this.log = new TeamEventLog(teamId, [], this.#clock);
    this.#workerTypeOf = specialtyMatcher(definition);
    this.desk = new TeamDesk({
      teamId,
      inbox: () => this.inbox,
      task: (taskId) => this.board.task(taskId),
      clock: this.#clock,
      fact: (fact) => this.#fact(fact),
      durable: () => {
        this.#changed();
        return this.#durable();
      },
      tellLeader: (request) => {
        const leader = this.#leader;
        if (leader?.getSnapshot().status !== 'active') return false;
        this.#relaying = request.id;
        try {
          this.#send({ type: 'HELP_REQUEST', at: this.#clock(), workerId: request.workerId, message: request.question, taskId: request.taskId });
        } finally {
          this.#relaying = undefined;
        }
        return true;
      },
      handler: () => this.definition.onHelpRequest,
    });
    this.#storePort = options.journal;
    this.#pollMs = options.pollMs ?? 250;
    this.#stops = new PendingStops({
      port: this.#port,
      retryMs: Math.max(50, Math.min(2_000, Math.floor(definition.limits.workerTimeoutMs / 4))),
      changed: () => this.#changed(),
      completedAnyway: (stop) => this.#fact({ type: 'team-released-attempt-completed', taskId: stop.taskId, attempt: stop.attempt, swarmId: stop.swarmId }),
    });
    this.#wire({ revision: 0, seq: 0 }, { list: TEAM_ROWS_LIST, stored: 0 });
    this.#portOff = this.#port.subscribe((event) => {
      // A task swarm's own events, or those of the child swarms it hands off to (`<id>:t<n>:<i>`).
      for (const [swarmId, workerId] of this.#running) {
        if (event.swarmId === swarmId || event.swarmId.startsWith(`${swarmId}:`)) this.#progress.set(workerId, this.#clock());
      }
    });
  }

  /**
   * Listens to the board and the inbox, and journals every change from `from` on. `rows`: where
   * the store holds the rows of the board and the inbox (see host-rows.ts); absent when it holds
   * none that can be appended to (a record written whole).
   */
  #wire(from: { revision: number; seq: number }, rows: RowsPlace | undefined): void {
    for (const off of this.#offs) off();
    this.#offs = [
      this.board.onFact((fact) => this.#fact(boardFact(fact))),
      this.board.onChange(() => {
        this.#boardChanged();
        this.#changed();
      }),
      this.inbox.onMessage((m) => this.#fact({ type: 'team-message-sent', messageSeq: m.seq, from: m.from, to: m.to, messageType: m.type })),
      this.inbox.onChange(() => this.#changed()),
    ];
    this.#rows?.close();
    this.#rows = undefined;
    if (this.#storePort) {
      const teamRows = new TeamRows(this.board, this.inbox, rows);
      this.#rows = teamRows;
      this.#offs.push(() => teamRows.close());
      this.#journal = new TeamJournal(
        this.#storePort,
        this.teamId,
        this.definition.id,
        () => {
          const batch = teamRows.take();
          return { snapshot: this.#persisted(batch.ref), events: this.log.all(), messages: batch.writes, failed: batch.failed };
        },
        (reason) => this.#lose(reason),
        from,
        () => teamRows.resync(),
      );
    }
  }

  /** Resolves once every change so far is written to the store. */
  flush(): Promise<void> {
    return this.#journal?.flush() ?? Promise.resolve();
  }

  /**
   * Restores the team from the store when it has a record (a restart): board, inbox, events
   * and, for a run under way, the leader and the workers, which continue where they were (a
   * task attempt re-attaches to its swarm). A run another live runtime drives is only read.
   */
  async load(): Promise<void> {
    const port = this.#storePort;
    // A host closed meanwhile (its runtime closing) claims nothing and starts nothing.
    if (!port || this.#closing) return;
    const record = await port.store.load(this.teamId);
    if (!record || this.#closing) return;
    if (record.definitionId !== `${TEAM_RECORD_PREFIX}${this.definition.id}`) {
      throw new TeamError(`team "${this.teamId}" is stored as ${record.definitionId}, not team ${this.definition.id}`, 'team-in-use');
    }
    // Format 2 (the board and the inbox as rows) or 1 (written whole, by an earlier version).
    // Its rows replayed in steps (see readTeamSnapshotInSteps), as the store read them.
    const { state: snapshot, place, dropped } = await readTeamSnapshotInSteps(this.teamId, record.snapshot);
    if (this.#closing) return;
    // An unfinished team's leader snapshot is restored into this runtime's machine: another
    // version's context may not fit it (as for swarms, refused rather than misread). A finished
    // team stays readable: its board, inbox and events do not depend on the machine.
    if (!isFinal(record.status) && record.machineVersion !== TEAM_LEADER_MACHINE_VERSION) {
      throw new TeamError(
        `team "${this.teamId}" was stored by team leader machine version ${record.machineVersion}; this runtime runs version ${TEAM_LEADER_MACHINE_VERSION}`,
        'invalid-snapshot',
      );
    }
    let drive = !isFinal(record.status);
    const lease = port.lease();
    const held = heldByOther(record.lease, lease.owner, Date.now());
    if (drive) {
      if (!(await port.store.claim(this.teamId, lease, Date.now(), held?.takeover))) {
        this.#heldBy = record.lease?.owner ?? 'another runtime';
        drive = false;
      } else this.#heldBy = undefined;
    } else {
      // A run that just ended elsewhere stays its runtime's until it gives the lease up (the
      // store takes no write of another owner before): read until then.
      this.#heldBy = held && !held.takeover ? held.lease.owner : undefined;
    }
    const stored = await readAllEvents(port.store, this.teamId);
    // A large board is rebuilt in steps (see restoreBoardInSteps), its events read in pages.
    const board = await restoreBoardInSteps(snapshot.board, { limits: this.definition.limits, clock: this.#clock });
    // Closed meanwhile: a lease claimed above is given up by the runtime's close.
    if (this.#closing) return;
    this.#stored = true;
    const events = (stored as unknown as TeamEvent[]).filter((e) => e.seq <= record.lastSeq);
    // A creation a crash cut short is dropped (see readTeamSnapshot); its event goes with the next write of a driver.
    this.#dropped = dropped && {
      type: 'team-creation-dropped',
      fromTask: dropped.from,
      tasks: dropped.tasks,
      reason: `the creation of ${dropped.tasks} task(s) was not written whole before the process stopped: run them again`,
    };
    this.#restore(snapshot, board, events, record.revision, drive, place);
    if (drive) this.#noteDropped();
  }

  /** Tells the events of a creation dropped on restore (once, by the runtime that writes the team next). */
  #noteDropped(): void {
    const fact = this.#dropped;
    if (!fact || this.#heldBy !== undefined || this.#closing) return;
    this.#dropped = undefined;
    this.#fact(fact);
    this.#changed();
  }

  #restore(snapshot: TeamSnapshot, board: TaskBoard, events: readonly TeamEvent[], revision: number, drive: boolean, rows: RowsPlace | undefined): void {
    if (this.#closing) return;
    // A leader of an earlier run here is over; the stored one (if driven) replaces it.
    this.#leader = undefined;
    this.board = board;
    this.inbox = restoreInbox(snapshot.inbox, { clock: this.#clock });
    this.log = new TeamEventLog(this.teamId, events, this.#clock);
    this.desk.restore(snapshot.desk);
    this.#status = snapshot.status;
    this.#reason = snapshot.reason;
    this.#escalation = snapshot.escalation;
    // The stops a previous driver owed go on from here (a reader leaves them to the driver).
    if (drive) this.#stops.restore(snapshot.pendingStops ?? []);
    this.#wire({ revision, seq: this.log.lastSeq }, rows);
    // Kept as stored while no leader of this runtime replaces it (see #persisted).
    this.#storedLeader = snapshot.leader ?? null;
    const leaderSnapshot = snapshot.leader as ReturnType<LeaderActor['getSnapshot']> | null;
    if (leaderSnapshot) this.#lastLeader = leaderSnapshot.context;
    if (!drive || (this.#status !== 'running' && this.#status !== 'paused')) return;
    this.#register();
    const leader = this.#startStoredLeader(snapshot.leader);
    if (!leader) return;
    for (const w of leader.getSnapshot().context.workers) {
      if (w.status === 'shutdown') continue;
      const persisted = snapshot.workers[w.workerId];
      if (persisted) this.#startWorker(w, w.respawns, persisted);
      else queueMicrotask(() => this.#spawn(w, w.respawns));
    }
    // What was under way at the crash: the leader hears the board as it is, and every worker
    // counts as alive from now (the restart is not their silence).
    const now = this.#clock();
    for (const [workerId, worker] of this.#workers) {
      this.#progress.set(workerId, now);
      worker.actor.send({ type: 'HEARTBEAT', at: now });
      this.#send({ type: 'HEARTBEAT', at: now, workerId });
      const state = worker.actor.getSnapshot();
      if (state.matches('init')) worker.actor.send({ type: 'READY' });
      // An idle worker the leader believes busy lost its task's fact: the leader releases it.
      else if (state.matches('idle')) this.#send({ type: 'WORKER_IDLE', at: now, workerId });
    }
    this.#send({ type: 'BOARD_CHANGED', at: now, board: this.#summary() });
    this.#startTimer();
    this.#changed();
  }

  /**
   * Starts the stored leader of a run under way, or refuses the run when it cannot go on (no
   * leader snapshot, one that is not active, one the machine cannot restore): the team is then
   * failed with the reason, never left `running` with nothing to drive it.
   */
  #startStoredLeader(stored: unknown): LeaderActor | undefined {
    const problem = storedLeaderProblem(stored);
    if (problem) {
      this.#cannotContinue(problem);
      return undefined;
    }
    this.log.running = true;
    // The machine reports a snapshot it cannot restore as an error of the starting actor (the
    // leader's error handler ends the run then, see #createLeader), or throws.
    this.#restoringLeader = true;
    try {
      this.#createLeader(stored as ReturnType<LeaderActor['getSnapshot']>).start();
    } catch (error) {
      this.#cannotContinue(`its stored leader cannot be restored (${errorText(error)})`);
    } finally {
      this.#restoringLeader = false;
    }
    const leader = this.#leader;
    if (this.#status !== 'running' && this.#status !== 'paused') return undefined;
    if (leader?.getSnapshot().status !== 'active') {
      this.#cannotContinue(`its stored leader is ${leader?.getSnapshot().status ?? 'missing'} once restored, not active`);
      return undefined;
    }
    return leader;
  }

  /**
   * A restored run that cannot go on ends `failed`, with a reason naming `problem`, written to
   * the team's record so every reader sees it. As when a leader fails its team, the tasks the
   * run held go back to the board (a later run takes them) and their attempts are owed a stop,
   * so nobody finishes them for a run that is over.
   */
  #cannotContinue(problem: string): void {
    const reason = `team ${this.teamId} cannot continue its run: ${problem}`;
    const leader = this.#leader;
    this.#leader = undefined;
    leader?.stop();
    // Its metrics stay readable only from a context they can be read from.
    try {
      if (this.#lastLeader) teamMetrics(this.#lastLeader);
    } catch {
      this.#lastLeader = undefined;
    }
    for (const task of this.board.inProgress()) {
      if (task.owner === undefined) continue;
      const type = this.#specs.find((s) => s.workerId === task.owner)?.type;
      const worker = this.definition.workers.find((w) => w.type === type);
      if (worker) {
        const swarmId = attemptKey(this.board.id, task.id, task.attempts);
        this.#stops.add({ swarmId, definitionId: workerSwarmId(worker), taskId: task.id, attempt: task.attempts, reason });
      }
      this.board.release(task.id, task.owner, { reason });
    }
    this.#end('failed', reason);
  }

  /** The team's record snapshot, whose board and inbox rows are those `rows` names (see host-journal.ts). */
  #persisted(rows: RowsBatch['ref']): TeamRecordSnapshot {
    const leader = this.#leader;
    const stops = this.#stops.list();
    const live = leader && leader.getSnapshot().status === 'active';
    const board = this.board.head();
    const inbox = this.inbox.head();
    return {
      format: 2,
      teamId: this.teamId,
      definitionId: this.definition.id,
      status: this.#status,
      ...(this.#reason !== undefined ? { reason: this.#reason } : {}),
      ...(this.#escalation ? { escalation: this.#escalation } : {}),
      leader: leader ? leader.getPersistedSnapshot() : this.#storedLeader,
      workers: live ? Object.fromEntries([...this.#workers].map(([id, w]) => [id, w.actor.getPersistedSnapshot()])) : {},
      board: { ...board, tasks: this.board.size },
      inbox: { format: 1, ...inbox, messages: this.inbox.stats().retained, keptFrom: this.inbox.keptFrom },
      ...(stops.length > 0 ? { pendingStops: stops } : {}),
      ...(deskUsed(this.desk) ? { desk: this.desk.state() } : {}),
      ...(this.board.creating ? { creating: { ...this.board.creating } } : {}),
      ...rowsRef(rows),
    };
  }

  #changed(): void {
    if (!this.#closing) this.#journal?.changed();
  }

  /** The store refused a write: another runtime has the team now (or the store is gone). */
  #lose(reason: string): void {
    this.#heldBy = reason;
    this.close();
  }

  /** Where the team is. */
  get status(): TeamStatus {
    return this.#status;
  }

  /** The worker ids of the team, in definition order. */
  get workerIds(): string[] {
    return this.#specs.map((s) => s.workerId);
  }

  /**
   * Adds tasks to the board and runs them: a new run when none is under way (the leader and
   * the workers start), else the running one takes them too. Throws a {@link TeamError} for
   * no task (`invalid-task`), invalid tasks, a cycle, `maxTasksPerBoard` or `maxTeams`, having
   * changed nothing.
   */
  run(tasks: readonly TaskSpec[]): Task[] {
    // A run with nothing to do would never end (and hold a `maxTeams` slot meanwhile); adding
    // nothing to a run under way is the same mistake.
    if (tasks.length === 0) throw new TeamError(`team ${this.teamId}: a run needs at least one task`, 'invalid-task');
    if (this.#closing) throw new TeamError(`team ${this.teamId} is closed${this.#heldBy ? ` (${this.#heldBy})` : ''}`, 'wrong-team-state');
    if (this.#heldBy) throw new TeamError(`team ${this.teamId} is driven by another runtime (${this.#heldBy})`, 'team-in-use');
    const active = this.#status === 'running' || this.#status === 'paused';
    if (active) {
      if (this.#leader?.getSnapshot().matches('draining')) throw new TeamError(`team ${this.teamId} is finishing its run; run again once it ended`, 'wrong-team-state');
      return this.board.create(tasks);
    }
    this.#admit?.(this);
    this.#noteDropped();
    const created = this.board.create(tasks);
    this.#startLeader();
    return created;
  }

  /**
   * {@link run} for a batch of any size without blocking the event loop, resolving once the
   * whole batch is durable (written to the store, when the team has one). The batch is checked
   * in slices (the same errors, nothing changed), then added and written in slices of at most
   * `CREATE_SLICE` tasks, one commit each (see `TaskBoard.createInSlices`): a batch of more
   * than one slice is held (nobody claims its tasks) and each commit's record marks the
   * creation as under way, so a crash between two slices restores the team without any of
   * it. A new run's leader starts once the batch is written. Runs are taken one at a time.
   */
  runInSlices(tasks: readonly TaskSpec[]): Promise<Task[]> {
    const run = this.#runs.then(() => this.#runInSlices(tasks));
    this.#runs = run.catch(() => undefined);
    return run;
  }

  async #runInSlices(tasks: readonly TaskSpec[]): Promise<Task[]> {
    this.#port.accepting?.(`a run of team "${this.teamId}"`);
    if (tasks.length === 0) throw new TeamError(`team ${this.teamId}: a run needs at least one task`, 'invalid-task');
    if (tasks.length <= CREATE_SLICE) {
      // One slice: the run as it always was, then its commit.
      const created = this.run(tasks);
      await this.#durable();
      return created;
    }
    const check = () => {
      if (this.#closing) throw new TeamError(`team ${this.teamId} is closed${this.#heldBy ? ` (${this.#heldBy})` : ''}`, 'wrong-team-state');
      if (this.#heldBy) throw new TeamError(`team ${this.teamId} is driven by another runtime (${this.#heldBy})`, 'team-in-use');
    };
    check();
    const active = this.#status === 'running' || this.#status === 'paused';
    if (active && this.#leader?.getSnapshot().matches('draining'))
      throw new TeamError(`team ${this.teamId} is finishing its run; run again once it ended`, 'wrong-team-state');
    if (!active) this.#admit?.(this);
    this.#noteDropped();
    const created = await this.board.createInSlices(tasks, {
      between: async () => {
        await this.#durable();
        check();
        await new Promise((resolve) => setImmediate(resolve));
      },
    });
    // A run that ended meanwhile (stopped) or none under way: this batch starts one.
    if (this.#status !== 'running' && this.#status !== 'paused') this.#startLeader();
    await this.#durable();
    return created;
  }

  /** Resolves once every change so far is written; throws when the store refused it (the team was lost). */
  async #durable(): Promise<void> {
    await this.flush();
    const failure = this.#journal?.failure;
    if (failure) throw new TeamError(`team ${this.teamId} could not be written: ${failure}`, 'team-in-use');
  }

  /** Resolves when the run is paused for a human or has ended (at once when it is not running). */
  wait(): Promise<TeamRunSummary> {
    if (this.reading && this.#status !== 'paused') return this.#followStored();
    if (this.#status !== 'running' || this.#closing) return Promise.resolve(this.summary());
    return new Promise((resolve) => this.#settled.push(() => resolve(this.summary())));
  }

  /** Where the team is, with its board counts and metrics. */
  summary(): TeamRunSummary {
    const status = this.#status === 'running' ? 'idle' : this.#status;
    return {
      status: status as TeamRunSummary['status'],
      teamId: this.teamId,
      counts: this.board.counts(),
      blocked: this.board.blocked(),
      ...(this.#status === 'paused' && this.#escalation ? { escalation: this.#escalation } : {}),
      ...(this.#reason !== undefined && (this.#status === 'paused' || this.#status === 'failed' || this.#status === 'stopped' || this.#status === 'stalled')
        ? { reason: this.#reason }
        : {}),
      ...this.waitingFor(),
      metrics: this.metrics(),
    };
  }

  /**
   * What a run under way waits on the user for, besides a pause: its help requests escalated to
   * the user and not answered yet (see `TeamRunSummary.waitingFor`); empty when none.
   */
  waitingFor(): Pick<TeamRunSummary, 'waitingFor' | 'openHelp'> {
    if (this.#status !== 'running' && this.#status !== 'paused') return {};
    // Only a request of an attempt under way: one left by a stopped or released attempt waits for nobody.
    const open = this.desk.helpRequests().filter((h) => {
      if (h.status !== 'escalated') return false;
      const task = this.board.task(h.taskId);
      return task?.status === 'in_progress' && task.owner === h.workerId && h.key.startsWith(`${attemptKey(this.board.id, task.id, task.attempts)}:`);
    });
    if (open.length === 0) return {};
    return { waitingFor: 'help', openHelp: open.map(({ id, workerId, taskId, question, at }) => ({ id, workerId, taskId, question, at })) };
  }

  /** Seed 004's metrics of the current (or last) run. */
  metrics(): TeamRunMetrics {
    const context = this.#leader?.getSnapshot().context ?? this.#lastLeader;
    const base = context ? teamMetrics(context) : { startedAt: null, endedAt: null, batches: 0, averageBatchMs: 0, spawns: 0, respawns: 0, messages: 0, workers: [] };
    const end = base.endedAt ?? this.#clock();
    return { ...base, durationMs: base.startedAt === null ? 0 : Math.max(0, end - base.startedAt), messagesByType: this.inbox.stats().byType };
  }

  /**
   * The usage of every attempt of every task on the board (each attempt is a swarm, its id the
   * attempt's key), rolled up over the children of each and summed: failed and released
   * attempts spent tokens too, so they count.
   */
  usage(): Promise<UsageTotals> {
    const attempts: string[] = [];
    for (const task of this.board.tasks()) for (let n = 1; n <= task.attempts; n++) attempts.push(attemptKey(this.board.id, task.id, n));
    return this.#port.usage(attempts);
  }

  /** A human pauses the run: no new assignments; running tasks finish. */
  pause(message?: string): void {
    this.#requireActive('pause');
    this.#send({ type: 'PAUSE', at: this.#clock(), ...(message !== undefined ? { message } : {}) });
  }

  /** A human answers: the run continues; an escalated task is retried (default) or skipped. */
  resume(options: { message?: string; decision?: 'retry' | 'skip' } = {}): void {
    if (this.#status !== 'paused') throw new TeamError(`team ${this.teamId} is ${this.#where()}, not paused`, 'wrong-team-state');
    this.#status = 'running';
    this.#send({ type: 'RESUME', at: this.#clock(), ...options });
  }

  /** Stops the run: every worker is stopped and its task released. */
  stop(reason = 'stopped by client'): void {
    this.#requireActive('stop');
    this.#send({ type: 'STOP', at: this.#clock(), reason });
  }

  /**
   * Whether this host only reads its team: another live runtime drove it when it was loaded
   * (loading again, once that one is gone, takes it over).
   */
  get reading(): boolean {
    return this.#heldBy !== undefined && !this.#closing;
  }

  /**
   * Whether the store may hold a newer state of the team than this host: it only reads the
   * team, or it drives no run (it found nothing stored, or its run is over), so another runtime
   * may have run the team since.
   */
  get stale(): boolean {
    return !this.#closing && this.#storePort !== undefined && (this.#heldBy !== undefined || (this.#status !== 'running' && this.#status !== 'paused'));
  }

  /**
   * Reads the team again when it may be stale and the store moved on (new events, or the lease
   * it was read under is gone: then it is taken over here): `ready` is that read. One at a
   * time; a host driving its run is left as it is.
   */
  reload(): Promise<void> {
    if (this.#loading) return this.#loading;
    if (!this.stale) return this.ready;
    const loading = this.#refresh().finally(() => (this.#loading = undefined));
    this.#loading = loading;
    this.ready = loading;
    return loading;
  }

  async #refresh(): Promise<void> {
    const port = this.#storePort!;
    // What this host wrote itself first, so the store's figures compare with its own.
    await this.flush();
    if (this.#stored || this.log.lastSeq > 0) {
      const store = port.store;
      const summary = await (store.summary ? store.summary(this.teamId) : store.load(this.teamId));
      if (this.#closing) return;
      const held = summary && heldByOther(summary.lease, port.lease().owner, Date.now());
      const holder = held && !held.takeover ? held.lease.owner : undefined;
      if (!summary || (summary.lastSeq === this.log.lastSeq && holder === this.#heldBy)) return;
    }
    await this.load();
  }

  /**
   * `wait()` of a team another runtime drives: follows the store (its `watch`, else a poll)
   * until the team pauses, or ends there and is given up, or is taken over here.
   */
  async #followStored(): Promise<TeamRunSummary> {
    const store = this.#storePort!.store;
    while (this.reading && this.#status !== 'paused') {
      await new Promise<void>((resolve) => {
        let timer: ReturnType<typeof setTimeout> | undefined;
        let unwatch: (() => void) | undefined;
        const done = () => {
          clearTimeout(timer);
          unwatch?.();
          this.#settled = this.#settled.filter((f) => f !== done);
          resolve();
        };
        // close() wakes it too.
        this.#settled.push(done);
        timer = setTimeout(done, this.#pollMs);
        unwatch = store.watch?.(this.teamId, done);
      });
      await this.reload().catch(() => undefined);
    }
    return this.wait();
  }

  /**
   * A run that ended is nobody's: once its end is written the lease is given up, so a runtime
   * reading the team may run it again (the store takes no write of another owner before).
   */
  #giveUp(): void {
    const port = this.#storePort;
    if (!port) return;
    void (async () => {
      // Until nothing more is being written (a commit after the release would own it again).
      for (let writing = this.flush(); ; ) {
        await writing;
        if (writing === (writing = this.flush())) break;
      }
      if (this.#closing || this.#status === 'running' || this.#status === 'paused') return;
      await port.store.release(port.lease().owner, [this.teamId]);
    })().catch(() => undefined);
  }

  /** Whether this host stopped driving its team (closed, or its lease was taken). */
  get closed(): boolean {
    return this.#closing;
  }

  /**
   * Stops driving the team (its task swarms are left to the runtime's store). The write still to
   * come (of changes the journal has not committed yet) keeps the team as it is now, before its
   * leader and workers are stopped: the next runtime continues from there (`flush()` resolves
   * once it is written).
   */
  close(): void {
    // Sealed before the teardown below: a commit reads the team when it begins (one commit for
    // all the changes of a tick, see RecordJournal), so one scheduled but not begun would
    // otherwise store the leader stopped and no workers, a team no runtime could continue.
    // Sealing keeps that batching, where snapshotting at every change would read the whole team
    // once per change; and close stays synchronous, where waiting for the writes first would
    // leave the team running (assigning, starting attempts) while the runtime closes.
    this.#journal?.seal();
    this.#closing = true;
    this.#stops.close();
    if (this.#timer) clearInterval(this.#timer);
    for (const off of this.#offs) off();
    this.#portOff();
    this.#unregister?.();
    for (const id of [...this.#workers.keys()]) this.#kill(id);
    this.#leader?.stop();
    this.log.running = false;
    this.#wake();
  }

  /**
   * Changes a task of the board (`teamClient.updateTask`): adds blockers, assigns it to a worker,
   * or cancels it; resolves once durable. See {@link TaskUpdate}. A task in progress that is
   * reassigned or canceled has its attempt stopped ({@link #stopAttempt}); one finished, or a
   * running one given blockers, is refused (`wrong-state`) having changed nothing.
   */
  async updateTask(taskId: string, update: TaskUpdate): Promise<Task> {
    if (this.#heldBy) throw new TeamError(`team ${this.teamId} is driven by another runtime (${this.#heldBy})`, 'team-in-use');
    if (typeof update !== 'object' || update === null) throw new TeamError('a task update is { addBlockers?, assignTo?, cancel? }', 'invalid-task');
    const { addBlockers, assignTo, cancel } = update;
    if (addBlockers !== undefined && (!Array.isArray(addBlockers) || addBlockers.some((id) => typeof id !== 'string')))
      throw new TeamError('addBlockers is a list of task ids', 'invalid-task');
    if (assignTo !== undefined && !this.workerIds.includes(assignTo))
      throw new TeamError(`cannot assign to ${String(assignTo)}: not a worker of team ${this.teamId} (${this.workerIds.join(', ')})`, 'not-a-member');
    const task = this.board.task(taskId);
    if (!task) throw new TeamError(`no task ${String(taskId)} on board ${this.teamId}`, 'unknown-task');
    if (task.status === 'completed' || task.status === 'failed')
      throw new TeamError(`task ${taskId} is ${task.status}: a finished task cannot be changed (run a new task instead)`, 'wrong-state');
    const running = task.status === 'in_progress';
    if (running && addBlockers?.length)
      throw new TeamError(
        `task ${taskId} is in progress (attempt ${task.attempts}, ${task.owner}): a started task cannot wait on blockers; cancel it, or reassign it once they completed`,
        'wrong-state',
      );
    if (assignTo !== undefined && task.status !== 'pending' && !running)
      throw new TeamError(`task ${taskId} is ${task.status}; only a pending or running task can be assigned`, 'wrong-state');
    if (addBlockers?.length) this.board.addBlockers(taskId, addBlockers);
    const stopped =
      running && (cancel === true || assignTo !== undefined)
        ? this.#stopAttempt(task, cancel === true ? 'canceled by the user' : `reassigned to ${assignTo} by the user`)
        : undefined;
    if (assignTo !== undefined) this.desk.pin(taskId, assignTo);
    if (cancel === true) this.board.cancel(taskId, 'canceled by the user');
    this.#fact({
      type: 'team-task-updated',
      taskId,
      ...(addBlockers?.length ? { addBlockers } : {}),
      ...(assignTo !== undefined ? { assignTo } : {}),
      ...(cancel === true ? { canceled: true } : {}),
      ...(stopped !== undefined ? { stoppedAttempt: stopped } : {}),
    });
    this.#boardChanged();
    await this.#durable();
    return this.board.task(taskId)!;
  }

  /**
   * Stops the running attempt of `task` for the user (`updateTask` with `cancel` or `assignTo`):
   * the task goes back to the board (released, so the attempt is not counted as a failure and
   * the next claim is a new attempt), its swarm is owed a durable stop (`host-stops.ts`: kept
   * with the team and sent again until the swarm has ended, wherever it runs), and its worker's
   * actor is replaced by a fresh one, which aborts the attempt's wait and reports the worker idle
   * (the leader frees it; its own release of the task is refused, the board has it already).
   * Returns the stopped attempt's number.
   */
  #stopAttempt(task: Task, reason: string): number {
    const owner = task.owner!;
    const attempt = task.attempts;
    const spec = this.#specs.find((s) => s.workerId === owner);
    const definition = spec && this.definition.workers.find((w) => w.type === spec.type);
    this.board.release(task.id, owner, { reason });
    if (definition) this.#stops.add({ swarmId: attemptKey(this.board.id, task.id, attempt), definitionId: workerSwarmId(definition), taskId: task.id, attempt, reason });
    const worker = this.#workers.get(owner);
    if (worker && spec) {
      const { respawns, completed, failed, totalDurationMs } = worker.actor.getSnapshot().context;
      this.#kill(owner);
      this.#startWorker(spec, respawns, undefined, { completed, failed, totalDurationMs }).send({ type: 'READY' });
    }
    return attempt;
  }

  // ---- the inbox tools (team-tools.ts) -------------------------------------------------------

  /** Makes this host the one the team tools of its team reach (it drives the team). */
  #register(): void {
    this.#unregister ??= registerTeamToolTarget(this);
  }

  /** The worker and task of the attempt whose swarm is `swarmId` or a child swarm of it. */
  attemptOf(swarmId: string): { workerId: string; taskId: string } | undefined {
    for (const task of this.board.inProgress()) {
      const key = attemptKey(this.board.id, task.id, task.attempts);
      if ((swarmId === key || swarmId.startsWith(`${key}:`)) && task.owner !== undefined) return { workerId: task.owner, taskId: task.id };
    }
    return undefined;
  }

  /** A worker's model writes to `to`, or broadcasts (`to` absent); see `TeamDesk.memberWrite`. */
  memberWrite(workerId: string, to: string | undefined, text: string, key: string): Promise<number> {
    return this.desk.memberWrite(workerId, to, text, key);
  }

  /** A worker's model reads its new messages; see `TeamDesk.memberRead`. */
  memberRead(workerId: string, key: string): Promise<{ from: string; type: string; text: string; seq: number }[]> {
    return this.desk.memberRead(workerId, key);
  }

  /** A worker asks the leader and waits for the answer; see `TeamDesk.askForHelp`. */
  askForHelp(request: { workerId: string; taskId: string; question: string; key: string }, signal: AbortSignal): Promise<string> {
    return this.desk.askForHelp(request, signal);
  }

  // ---- the leader --------------------------------------------------------------------------

  #startLeader(): void {
    this.#register();
    const leader = this.#createLeader();
    this.#status = 'running';
    this.#reason = undefined;
    this.#escalation = undefined;
    this.log.running = true;
    this.#fact({ type: 'team-started', tasks: this.board.counts().total });
    leader.start();
    leader.send({ type: 'START', at: this.#clock(), board: this.#summary() });
    this.#startTimer();
  }

  /** A leader actor with the host's effects, new or from a persisted snapshot. */
  #createLeader(snapshot?: ReturnType<LeaderActor['getSnapshot']>): LeaderActor {
    const logic = teamLeaderMachine.provide({ actions: this.#effects() as never });
    const leader = createActor(logic, {
      input: { teamId: this.teamId, workers: this.#specs, limits: { maxRespawns: DEFAULT_MAX_RESPAWNS } },
      ...(snapshot ? { snapshot } : {}),
      // Inspected: named for the inspector's list (nothing changes without an observer).
      ...(this.#port.inspect ? { inspect: this.#port.inspect, id: `${this.teamId}/leader` } : {}),
    });
    this.#leader = leader;
    leader.subscribe({
      next: (s) => {
        this.#lastLeader = s.context;
        this.#leaderChanged(s);
        this.#changed();
      },
      error: (error) =>
        this.#restoringLeader ? this.#cannotContinue(`its stored leader cannot be restored (${errorText(error)})`) : this.#end('failed', errorText(error)),
    });
    return leader;
  }

  #startTimer(): void {
    const tickMs = Math.max(5, Math.min(1_000, Math.floor(this.definition.limits.workerTimeoutMs / 4)));
    this.#timer = setInterval(() => this.#tick(), tickMs);
    this.#timer.unref?.();
  }

  #leaderChanged(snapshot: ReturnType<LeaderActor['getSnapshot']>): void {
    if (snapshot.status === 'done') {
      const outcome = snapshot.output!.outcome;
      // A stall is reported with every blocked task: the board's list (the leader was told the first ones only).
      const blocked = outcome.status === 'stalled' ? this.board.blocked().map((b) => b.taskId) : undefined;
      this.#end(outcome.status, 'reason' in outcome ? outcome.reason : undefined, blocked);
    } else if (snapshot.matches({ active: 'paused' }) && this.#status === 'running') {
      this.#status = 'paused';
      this.#wake();
    }
  }

  #end(status: 'completed' | 'stalled' | 'failed' | 'stopped', reason?: string, blocked?: readonly string[]): void {
    if (this.#status !== 'running' && this.#status !== 'paused') return;
    if (this.#timer) clearInterval(this.#timer);
    this.#timer = undefined;
    this.#status = status;
    this.#reason = reason ?? (status === 'stalled' ? `${blocked?.length ?? 0} task(s) blocked by failed dependencies` : undefined);
    for (const id of [...this.#workers.keys()]) this.#kill(id);
    this.#fact({ type: 'team-ended', status, ...(this.#reason !== undefined ? { reason: this.#reason } : {}), ...(blocked ? { blocked } : {}) });
    this.log.running = false;
    this.#wake();
    this.#giveUp();
  }

  #effects(): { [K in keyof TeamLeaderEffects]: (args: unknown, params: TeamLeaderEffects[K]) => void } {
    const safely = (what: () => void) => {
      try {
        what();
      } catch (error) {
        // The leader acts on what it was told; a board that moved on already refuses the
        // change (a late release, a claim taken meanwhile), which is not the leader's failure.
        if (!(error instanceof TeamError)) throw error;
      }
    };
    return {
      // Workers are created after the leader's step (an actor created inside another's action
      // would run its setup there); the leader waits for their idle notification anyway.
      spawnWorker: (_, p) => queueMicrotask(() => this.#spawn(p, 0)),
      respawnWorker: (_, p) => {
        this.#kill(p.workerId);
        queueMicrotask(() => this.#spawn(p, p.respawns));
      },
      assignTask: (_, p) => this.#assign(p),
      releaseTask: (_, p) => safely(() => this.board.release(p.taskId, p.workerId, { reason: p.reason })),
      completeTask: (_, p) => safely(() => this.board.complete(p.taskId, p.workerId, { result: p.result })),
      failTask: (_, p) => safely(() => this.board.fail(p.taskId, p.workerId, { error: p.error })),
      pauseTeam: (_, p) => {
        if (p.reason === 'escalation') {
          this.#escalation = p.escalation;
          this.#reason = `task ${p.escalation.taskId} failed ${p.escalation.failures} times: ${p.escalation.error}`;
          const { taskId, workerId, error, failures } = p.escalation;
          this.#fact({ type: 'team-escalation', taskId, workerId, error, failures });
        } else {
          this.#escalation = undefined;
          this.#reason = p.message ?? 'paused by a human';
        }
        this.#fact({ type: 'team-paused', reason: this.#reason });
      },
      resumeTeam: (_, p) => {
        this.#escalation = undefined;
        this.#reason = undefined;
        this.#fact({ type: 'team-resumed', ...(p.message !== undefined ? { message: p.message } : {}) });
      },
      retryTask: (_, p) => safely(() => this.board.retry(p.taskId)),
      skipTask: (_, p) => safely(() => this.board.abandon(p.taskId, p.message ?? 'skipped by a human')),
      // The leader answers through the desk: the definition's onHelpRequest, else the user.
      relayHelp: () => {
        if (this.#relaying !== undefined) this.desk.relay(this.#relaying);
      },
      reportStall: () => {},
      requestShutdown: (_, p) => {
        safely(() => this.#write(LEADER_ID, p.workerId, 'shutdown_request', { reason: 'the run is over' }));
        this.#workers.get(p.workerId)?.actor.send({ type: 'SHUTDOWN_REQUEST' });
      },
      approveShutdown: (_, p) => {
        safely(() => this.#write(LEADER_ID, p.workerId, 'shutdown_approved', { workerId: p.workerId }));
        this.#workers.get(p.workerId)?.actor.send({ type: 'SHUTDOWN_APPROVED' });
      },
      stopWorkers: (_, p) => {
        for (const spec of this.#specs) {
          safely(() => this.board.releaseAll(spec.workerId, `team stopped: ${p.reason}`));
          this.#kill(spec.workerId);
        }
      },
    };
  }

  #assign(p: TeamLeaderEffects['assignTask']): void {
    const worker = this.#workers.get(p.workerId);
    let task: Task;
    try {
      task = this.board.claim(p.workerId, p.taskId).task;
    } catch (error) {
      // Not claimable after all: the leader hears the assignment came back.
      const reason = `claim refused: ${errorText(error)}`;
      queueMicrotask(() => this.#send({ type: 'TASK_RELEASED', at: this.#clock(), workerId: p.workerId, taskId: p.taskId, attemptKey: p.attemptKey, reason }));
      return;
    }
    if (!worker) {
      this.board.release(task.id, p.workerId, { reason: 'worker gone' });
      return;
    }
    worker.actor.send({
      type: 'ASSIGN',
      attemptKey: p.attemptKey,
      task: { taskId: task.id, subject: task.subject, description: task.description, metadata: { ...task.metadata } },
    });
  }

  // ---- workers -----------------------------------------------------------------------------

  #spawn(spec: TeamWorkerSpec, respawns: number): void {
    if (this.#closing || this.#leader?.getSnapshot().status !== 'active' || this.#workers.has(spec.workerId)) return;
    this.#fact(
      respawns === 0
        ? { type: 'team-worker-spawned', workerId: spec.workerId, workerType: spec.type }
        : { type: 'team-worker-respawned', workerId: spec.workerId, workerType: spec.type, respawns },
    );
    const actor = this.#startWorker(spec, respawns);
    actor.send({ type: 'READY' });
  }

  /** A worker actor started, new or from its persisted snapshot (a task under way then re-attaches). */
  #startWorker(spec: TeamWorkerSpec, respawns: number, snapshot?: unknown, carried?: TeamWorkerInput['carried']): WorkerActor {
    const runTask = taskRunner({
      port: this.#port,
      board: this.board,
      worker: (type) => this.#workerDefinition(type),
      budget: this.definition.budget,
      clock: this.#clock,
      running: (swarmId, workerId) => {
        if (workerId) {
          this.#running.set(swarmId, workerId);
          this.#progress.set(workerId, this.#clock());
        } else {
          this.#running.delete(swarmId);
          this.#activity.delete(swarmId);
        }
      },
      progressed: (workerId) => this.#progress.set(workerId, this.#clock()),
      waiting: (swarmId, waiting) => {
        if (waiting) this.#waiting.add(swarmId);
        else this.#waiting.delete(swarmId);
        // Its end counts too: the silence is measured from there.
        const workerId = this.#running.get(swarmId);
        if (workerId !== undefined) this.#progress.set(workerId, this.#clock());
      },
      closing: () => this.#closing,
      released: (stop) => this.#stops.add(stop),
    });
    const actor = createActor(teamWorkerMachine.provide({ actors: { runTask } }), {
      input: { workerId: spec.workerId, type: spec.type, specialty: spec.specialty, teamId: this.teamId, respawns, ...(carried ? { carried } : {}) },
      ...(snapshot ? { snapshot: snapshot as ReturnType<WorkerActor['getSnapshot']> } : {}),
      ...(this.#port.inspect ? { inspect: this.#port.inspect, id: `${this.teamId}/${spec.workerId}` } : {}),
    });
    const sub = actor.on('team.worker.facts', (event) => this.#workerFacts(event));
    const changes = actor.subscribe({ next: () => this.#changed(), error: () => undefined });
    this.#workers.set(spec.workerId, {
      actor,
      off: () => {
        sub.unsubscribe();
        changes.unsubscribe();
      },
    });
    this.#progress.set(spec.workerId, this.#clock());
    actor.start();
    return actor;
  }

  /** Stops a worker's actor without a word to the leader (it was replaced, or the run ended). */
  #kill(workerId: string): void {
    const worker = this.#workers.get(workerId);
    if (!worker) return;
    this.#workers.delete(workerId);
    worker.off();
    worker.actor.stop();
  }

  #workerDefinition(type: string): TeamWorkerDefinition {
    const worker = this.definition.workers.find((w) => w.type === type);
    if (!worker) throw new TeamError(`team ${this.definition.id} has no worker of type ${type}`, 'unknown-team');
    return worker;
  }

  #workerFacts(event: WorkerFacts): void {
    let outcome = false;
    for (const fact of event.facts) {
      this.#workerFact(event.workerId, fact, outcome);
      outcome ||= fact.type === 'task_completed' || fact.type === 'task_failed' || fact.type === 'task_released';
    }
  }

  /**
   * One worker fact: an inbox message to the leader and the leader's event. `afterOutcome`: the
   * same step reported a task's outcome, which already made the worker idle for the leader (and
   * may have given it its next task): its idle notification is then a message only, not an
   * event the leader would read as a lost task.
   */
  #workerFact(workerId: string, fact: WorkerFact, afterOutcome = false): void {
    const at = this.#clock();
    switch (fact.type) {
      case 'idle_notification': {
        this.#progress.set(workerId, at);
        const completed = this.#workers.get(workerId)?.actor.getSnapshot().context.completed ?? 0;
        this.#fact({ type: 'team-worker-idle', workerId });
        this.#write(workerId, LEADER_ID, 'idle_notification', { workerId, completedTasks: completed });
        if (!afterOutcome) this.#send({ type: 'WORKER_IDLE', at, workerId });
        return;
      }
      case 'task_completed':
        this.#write(workerId, LEADER_ID, 'task_completed', { taskId: fact.taskId, result: fact.result, durationMs: fact.durationMs });
        return this.#send({ type: 'TASK_COMPLETED', at, workerId, taskId: fact.taskId, attemptKey: fact.attemptKey, result: fact.result, durationMs: fact.durationMs });
      case 'task_failed': {
        const attempt = this.board.task(fact.taskId)?.attempts ?? 1;
        this.#write(workerId, LEADER_ID, 'task_failed', { taskId: fact.taskId, error: fact.error, attempt: Math.max(1, attempt) });
        // The board counts failures; the leader escalates on its figures (a task no longer on the board is not escalated).
        const outcome = this.board.task(fact.taskId) ? this.board.failureOutcome(fact.taskId) : { failures: attempt, escalates: false };
        return this.#send({
          type: 'TASK_FAILED',
          at,
          workerId,
          taskId: fact.taskId,
          attemptKey: fact.attemptKey,
          error: fact.error,
          durationMs: fact.durationMs,
          ...outcome,
        });
      }
      case 'task_released':
        return this.#send({ type: 'TASK_RELEASED', at, workerId, taskId: fact.taskId, attemptKey: fact.attemptKey, reason: fact.reason });
      case 'shutdown_ready':
        return this.#send({ type: 'WORKER_SHUTDOWN_READY', at, workerId });
      case 'worker_shutdown':
        this.#fact({ type: 'team-worker-shutdown', workerId });
        return;
      case 'worker_stopped':
        this.#fact({ type: 'team-worker-stopped', workerId, reason: fact.reason });
        return;
    }
  }

  #write<T extends InboxMessageType>(from: string, to: string, type: T, payload: InboxPayloads[T]): void {
    this.inbox.write({ teamId: this.teamId, id: from }, to, type, payload);
  }

  // ---- heartbeats and the board ------------------------------------------------------------

  /**
   * A worker beats while it makes progress: idle (waiting for work), or its task attempt active
   * (see {@link #observe}). One silent past `workerTimeoutMs` is reported to the leader, which
   * releases its task and respawns it: a whole attempt redone, so a false positive must cost no
   * more than a second look ({@link #recheck}).
   */
  #tick(): void {
    if (!this.#beat()) return;
    const suspects = this.#silent();
    if (suspects.length === 0 || this.#rechecking) return;
    this.#rechecking = true;
    void this.#recheck(suspects)
      .catch(() => undefined)
      .finally(() => (this.#rechecking = false));
  }

  /**
   * The second look at workers found silent, before any is reported: once the I/O already due has
   * been handled (a commit's acknowledgement or a heartbeat queued behind a busy event loop, which
   * the timer ran before), their progress is taken in again; then the attempt of each one still
   * silent is looked up by its key. One whose swarm has paused or ended is not silent: its outcome
   * is on its way (its wait may be held by a read that an outage left to run out its timeout),
   * and releasing it would have its work done again. One that cannot be looked up because the
   * store is unreachable cannot be told from the outage: not reported either. The others are.
   */
  async #recheck(suspects: readonly string[]): Promise<void> {
    await new Promise<void>((resolve) => setImmediate(resolve));
    if (!this.#beat()) return;
    for (const workerId of suspects) {
      if (!this.#silent().includes(workerId)) continue;
      const swarmId = [...this.#running].find(([, w]) => w === workerId)?.[0];
      if (swarmId !== undefined && !(await this.#stillRunning(swarmId))) {
        this.#progress.set(workerId, this.#clock());
        continue;
      }
      // Looked again after the look-up: the worker may have beaten, or its attempt ended, meanwhile.
      if (!this.#beat() || !this.#silent().includes(workerId) || (swarmId !== undefined && this.#running.get(swarmId) !== workerId)) continue;
      this.#send({ type: 'WORKER_SILENT', at: this.#clock(), workerId });
    }
  }

  /** Whether the attempt's swarm is stored as still running (or not there at all); false when it cannot be read now for an outage. */
  async #stillRunning(swarmId: string): Promise<boolean> {
    try {
      const result = await this.#port.stored(swarmId);
      return result === undefined || result.status === 'running';
    } catch (error) {
      return !isOutage(error);
    }
  }

  /** Takes the workers' progress in and beats for those that made some; false when no leader runs. */
  #beat(): boolean {
    const leader = this.#leader;
    if (this.#closing || leader?.getSnapshot().status !== 'active') return false;
    const now = this.#clock();
    this.#observe(now);
    for (const w of leader.getSnapshot().context.workers) {
      if (w.status === 'shutdown') continue;
      const progress = this.#progress.get(w.workerId) ?? 0;
      const busy = w.status === 'working';
      if (busy && progress <= (this.#lastBeat.get(w.workerId) ?? -1)) continue;
      this.#lastBeat.set(w.workerId, busy ? progress : now);
      const at = busy ? progress : now;
      this.#workers.get(w.workerId)?.actor.send({ type: 'HEARTBEAT', at });
      this.#send({ type: 'HEARTBEAT', at, workerId: w.workerId });
    }
    return true;
  }

  /** The workers the leader would find silent now. */
  #silent(): string[] {
    const context = this.#leader!.getSnapshot().context;
    return silentWorkers(context, this.#clock(), this.definition.limits.workerTimeoutMs);
  }

  /**
   * The progress of the running attempts that no event tells: a task swarm driven here is active
   * when its host numbered events since the last look or has a commit in flight — its activity,
   * not its durability, since a slow store (a full fsync on a loaded machine, a group commit)
   * delivers the durable events late, and a worker waiting on its commit is working. While the
   * store cannot be reached (NATS down), no heartbeat or stored change of any attempt can arrive:
   * every running attempt counts as active, its silence cannot be told from the outage. An
   * attempt waiting on the runtime (its swarm's look-up or start, a retry through an outage) is
   * active too: its swarm cannot show anything before.
   */
  #observe(now: number): void {
    const reachable = this.#port.reachable();
    for (const [swarmId, workerId] of this.#running) {
      const activity = this.#port.activity(swarmId);
      const active = !reachable || this.#waiting.has(swarmId) || (activity && (activity.committing || activity.events !== this.#activity.get(swarmId)));
      if (active) this.#progress.set(workerId, now);
      if (activity) this.#activity.set(swarmId, activity.events);
    }
    // A worker waiting on the answer to its question is not silent: its swarm waits in a tool call.
    for (const workerId of this.desk.waitingWorkers()) this.#progress.set(workerId, now);
  }

  /** Tells the leader the board once per burst of changes (after the change that caused it). */
  #boardChanged(): void {
    if (this.#boardChangePending) return;
    this.#boardChangePending = true;
    queueMicrotask(() => {
      this.#boardChangePending = false;
      this.#send({ type: 'BOARD_CHANGED', at: this.#clock(), board: this.#summary() });
    });
  }

  /**
   * What the leader is told of the board: the claimable tasks its workers could start now (not
   * all of them, see `BoardSummary`), with the attempt a claim starts, and counts. O(workers ·
   * log n) while no task failed: the board keeps its counts and claimable tasks indexed.
   */
  #summary(): BoardSummary {
    const counts = this.board.counts();
    const blocked = this.board.blocked();
    // The first ones only: the leader keeps them in its context, written with every change.
    if (this.#blockedIds?.from !== blocked) this.#blockedIds = { from: blocked, ids: blocked.slice(0, SUMMARY_BLOCKED).map((b) => b.taskId) };
    return {
      claimable: this.board.claimableFor(this.#workerTypes).map((t) => ({
        taskId: t.id,
        ...withType(this.#workerTypeOf(t.metadata)),
        ...withWorker(this.desk.pinOf(t.id)),
        attempt: t.attempts + 1,
      })),
      // A creation being written counts as work under way: its tasks are remaining but nobody
      // can claim them yet, which the leader would otherwise take for a stall.
      inProgress: counts.in_progress + (this.board.creating ? 1 : 0),
      blocked: this.#blockedIds.ids,
      remaining: counts.pending + counts.in_progress + counts.escalated,
    };
  }

  #send(event: TeamLeaderEvent): void {
    const leader = this.#leader;
    if (leader && leader.getSnapshot().status === 'active') leader.send(event);
  }

  #requireActive(what: string): void {
    if (this.#status !== 'running' && this.#status !== 'paused') throw new TeamError(`cannot ${what} team ${this.teamId}: it is ${this.#where()}`, 'wrong-team-state');
  }

  /** The status, with the reason of a failure or a stop (what a refused command tells). */
  #where(): string {
    return (this.#status === 'failed' || this.#status === 'stopped') && this.#reason !== undefined ? `${this.#status} (${this.#reason})` : this.#status;
  }

  #fact(fact: TeamFact): void {
    this.log.append(fact);
    this.#changed();
  }

  #wake(): void {
    const settled = this.#settled;
    this.#settled = [];
    for (const resolve of settled) resolve();
  }
}

/**
 * Why a stored leader snapshot cannot drive a run under way, if it cannot: there is none, or it
 * is not an active actor's (a leader stored stopped is what a runtime closed right after a
 * change wrote before its close sealed the team's record).
 */
function storedLeaderProblem(stored: unknown): string | undefined {
  if (stored === null || stored === undefined) return 'it has no stored leader snapshot';
  if (typeof stored !== 'object') return `its stored leader snapshot is not an object (${typeof stored})`;
  const status = (stored as { status?: unknown }).status;
  if (status !== 'active') return `its stored leader is ${typeof status === 'string' ? status : 'of no status'}, not active`;
  return undefined;
}

/** The `type` field of a claimable task, when it has one. */
function withType(type: string | undefined): { type?: string } {
  return type !== undefined ? { type } : {};
}

/** The `workerId` field of a claimable task assigned to a worker. */
function withWorker(workerId: string | undefined): { workerId?: string } {
  return workerId !== undefined ? { workerId } : {};
}

/** Whether the desk holds anything (a record of a team that never used it stays as it was). */
function deskUsed(desk: TeamDesk): boolean {
  const state = desk.state();
  return state.help.length > 0 || state.sent.length > 0 || state.pins !== undefined || Object.keys(state.reads).length > 0 || state.nextHelp > 1;
}

/** A board fact as a team fact. */
function boardFact(fact: BoardFact): TeamFact {
  switch (fact.type) {
    case 'task-created':
      return { type: 'team-task-created', taskId: fact.taskId, subject: fact.subject, metadata: fact.metadata, dependencies: fact.dependencies };
    case 'task-claimed':
      return { type: 'team-task-claimed', taskId: fact.taskId, workerId: fact.owner, attempt: fact.attempt, attemptKey: fact.key };
    case 'task-completed':
      return { type: 'team-task-completed', taskId: fact.taskId, workerId: fact.owner, attempt: fact.attempt };
    case 'task-failed':
      return { type: 'team-task-failed', taskId: fact.taskId, workerId: fact.owner, attempt: fact.attempt, error: fact.error, failures: fact.failures };
    case 'task-released':
      return { type: 'team-task-released', taskId: fact.taskId, workerId: fact.owner, attempt: fact.attempt, reason: fact.reason };
    case 'task-escalated':
      return { type: 'team-task-escalated', taskId: fact.taskId, failures: fact.failures, lastError: fact.lastError };
    case 'task-retried':
      return { type: 'team-task-retried', taskId: fact.taskId };
    case 'task-abandoned':
      return { type: 'team-task-abandoned', taskId: fact.taskId, reason: fact.reason };
  }
}
