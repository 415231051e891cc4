/**
 * Abstract models (oracles) of the team machines for the model-based tests: plain reducers over
 * a small world (one worker and two tasks; two workers and a board of two dependent tasks),
 * wrapped in `fromTransition` so `xstate/graph`'s `TestModel` can walk them. Each model state
 * holds what the real machine must show after the same steps: its state value, the counters it
 * keeps, and signatures of the facts it emits or the effects it asks for, in order.
 */
import { fromTransition } from 'xstate';
import type { BoardSummary, TeamTask, WorkerFact } from '../../machines/team/events.js';
import type { TeamLeaderEffects } from '../../machines/team/leader.js';

// ---------------------------------------------------------------------------------------------
// Worker model.

export const WORKER = { workerId: 'w1', teamId: 'team', type: 'fe', specialty: 'frontend pages' };
export const WORKER_STOP = 'operator stop';
export const taskOf = (n: number): TeamTask => ({ taskId: `t${n}`, subject: `task ${n}`, description: `build part ${n}` });
export const attemptKeyOf = (n: number) => `team:t${n}:1`;
export const resultOf = (n: number) => ({ built: `t${n}` });
export const durationOf = (n: number) => 10 * n;
/** A failed attempt: its error says how long it ran (what the runtime's runTask attaches). */
export const errorOf = (n: number) => Object.assign(new Error(`t${n} broke`), { durationMs: 3 });
const MAX_ASSIGNS = 2;

/** A compact signature of one worker fact. */
export function workerFactSig(f: WorkerFact): string {
  switch (f.type) {
    case 'idle_notification':
      return 'idle';
    case 'task_completed':
      return `done:${f.taskId}:${f.attemptKey}:${JSON.stringify(f.result)}:${f.durationMs}`;
    case 'task_failed':
      return `failed:${f.taskId}:${f.attemptKey}:${f.error}:${f.durationMs}`;
    case 'task_released':
      return `released:${f.taskId}:${f.attemptKey}:${f.reason}`;
    case 'shutdown_ready':
      return 'ready';
    case 'worker_shutdown':
      return 'shutdown';
    case 'worker_stopped':
      return `stopped:${f.reason}`;
  }
}

const sig = {
  done: (n: number) => `done:t${n}:${attemptKeyOf(n)}:${JSON.stringify(resultOf(n))}:${durationOf(n)}`,
  failed: (n: number) => `failed:t${n}:${attemptKeyOf(n)}:t${n} broke:3`,
  released: (n: number, reason: string) => `released:t${n}:${attemptKeyOf(n)}:${reason}`,
};

export type WorkerModelEvent = {
  type: 'READY' | 'ASSIGN' | 'TASK_DONE' | 'TASK_ERROR' | 'HEARTBEAT' | 'SHUTDOWN_REQUEST' | 'SHUTDOWN_RELEASE' | 'SHUTDOWN_APPROVED' | 'STOP';
};
export const WORKER_MODEL_EVENTS = [
  'READY',
  'ASSIGN',
  'TASK_DONE',
  'TASK_ERROR',
  'HEARTBEAT',
  'SHUTDOWN_REQUEST',
  'SHUTDOWN_RELEASE',
  'SHUTDOWN_APPROVED',
  'STOP',
] as const satisfies readonly WorkerModelEvent['type'][];

export type WorkerValue = 'init' | 'idle' | 'working.active' | 'working.finishing' | 'shuttingDown' | 'shutdown' | 'stopped';

export interface WorkerModel {
  value: WorkerValue;
  /** Tasks assigned so far (taken or bounced): task n is the n-th. */
  assigned: number;
  held: number | null;
  completed: number;
  failed: number;
  totalMs: number;
  beats: number;
  /** One entry per emitted batch: its fact signatures joined by '+'. */
  batches: string[];
  stopReason: string | null;
}

export const workerFinal = (v: WorkerValue) => v === 'shutdown' || v === 'stopped';

/** Events the model takes in a state (everything else is not generated). */
export function workerEvents(s: WorkerModel): WorkerModelEvent[] {
  if (workerFinal(s.value)) return [];
  const all = WORKER_MODEL_EVENTS.filter((type) => {
    switch (type) {
      case 'ASSIGN':
        return s.assigned < MAX_ASSIGNS;
      case 'TASK_DONE':
      case 'TASK_ERROR':
        return s.value.startsWith('working');
      // Ignored where it means nothing; still generated once in `idle` to show it is ignored.
      case 'SHUTDOWN_APPROVED':
        return s.value === 'shuttingDown' || s.value === 'idle';
      case 'READY':
        return s.value === 'init' || s.value === 'idle';
      default:
        return true;
    }
  });
  return all.map((type) => ({ type }));
}

/** One worker model step (the executors keep a lockstep copy with it). */
export function workerStep(s: WorkerModel, e: WorkerModelEvent): WorkerModel {
  const emit = (...facts: string[]): string[] => [...s.batches, facts.join('+')];
  const bounce = (): WorkerModel => ({ ...s, assigned: s.assigned + 1, batches: emit(sig.released(s.assigned + 1, 'worker cannot take a task now')) });
  switch (e.type) {
    case 'HEARTBEAT':
      return { ...s, beats: s.beats + 1 };
    case 'STOP':
      return {
        ...s,
        value: 'stopped',
        held: null,
        stopReason: WORKER_STOP,
        batches: emit(...(s.held ? [sig.released(s.held, `worker stopped: ${WORKER_STOP}`)] : []), `stopped:${WORKER_STOP}`),
      };
    case 'READY':
      return s.value === 'init' ? { ...s, value: 'idle', batches: emit('idle') } : s;
    case 'ASSIGN':
      return s.value === 'idle' ? { ...s, value: 'working.active', assigned: s.assigned + 1, held: s.assigned + 1 } : bounce();
    case 'TASK_DONE':
    case 'TASK_ERROR': {
      const n = s.held!;
      const ok = e.type === 'TASK_DONE';
      const finishing = s.value === 'working.finishing';
      return {
        ...s,
        value: finishing ? 'shuttingDown' : 'idle',
        held: null,
        completed: s.completed + (ok ? 1 : 0),
        failed: s.failed + (ok ? 0 : 1),
        totalMs: s.totalMs + (ok ? durationOf(n) : 3),
        batches: emit(ok ? sig.done(n) : sig.failed(n), finishing ? 'ready' : 'idle'),
      };
    }
    case 'SHUTDOWN_REQUEST':
      if (s.value === 'shuttingDown') return s;
      if (s.value.startsWith('working')) return { ...s, value: 'working.finishing' };
      return { ...s, value: 'shuttingDown', batches: emit('ready') };
    case 'SHUTDOWN_RELEASE':
      if (s.value === 'shuttingDown') return s;
      return {
        ...s,
        value: 'shuttingDown',
        held: null,
        batches: emit(...(s.held ? [sig.released(s.held, 'worker shutting down')] : []), 'ready'),
      };
    case 'SHUTDOWN_APPROVED':
      return s.value === 'shuttingDown' ? { ...s, value: 'shutdown', batches: emit('shutdown') } : s;
  }
}

/** The worker model as actor logic for `TestModel`. */
export const workerModel = fromTransition<WorkerModel, WorkerModelEvent, never, undefined>((s, e) => workerStep(s, e), initialWorkerModel());

/** The worker model's first state. */
export function initialWorkerModel(): WorkerModel {
  return {
    value: 'init',
    assigned: 0,
    held: null,
    completed: 0,
    failed: 0,
    totalMs: 0,
    beats: 0,
    batches: [],
    stopReason: null,
  };
}

/** The part of a worker model state that identifies a graph vertex. */
export const workerProject = (s: WorkerModel) => JSON.stringify([s.value, s.assigned, s.held, s.completed, s.failed, s.beats > 0]);

// ---------------------------------------------------------------------------------------------
// Leader model: workers w1 (type fe) and w2 (type api); tasks t1 (fe) and t2 (api, needs t1).

export const TEAM = 'team';
export const LEADER_WORKERS = [
  { workerId: 'w1', type: 'fe', specialty: 'pages' },
  { workerId: 'w2', type: 'api', specialty: 'endpoints' },
];
export const LEADER_LIMITS = { maxRespawns: 1 };
/** The model board's `maxAttempts`: the board counts failures and says when a task escalates. */
export const BOARD_MAX_ATTEMPTS = 2;

/** What the board says when the current attempt of `taskId` fails (see `TaskBoard.failureOutcome`). */
function failureOutcome(s: LeaderModel, taskId: string): { failures: number; escalates: boolean } {
  const failures = (s.failures[taskId] ?? 0) + 1;
  return { failures, escalates: failures >= BOARD_MAX_ATTEMPTS };
}
export const TASKS = [
  { taskId: 't1', type: 'fe', needs: null },
  { taskId: 't2', type: 'api', needs: 't1' },
] as const;
export const LEADER_STOP = 'operator stop';
export const HELP = 'which colour?';
export const PAUSE_MESSAGE = 'hold on';
export const RESUME_MESSAGE = 'go ahead';
export const failError = (taskId: string, attempt: number) => `${taskId} attempt ${attempt} broke`;
export const taskResult = (taskId: string) => ({ shipped: taskId });
export const taskMs = (taskId: string) => (taskId === 't1' ? 30 : 50);
const FAIL_MS = 7;

type TaskState = 'pending' | 'claimed' | 'done' | 'escalated' | 'skipped';
type WStatus = 'starting' | 'idle' | 'working' | 'shuttingDown' | 'shutdown';

export interface ModelLeaderWorker {
  workerId: string;
  type: string;
  status: WStatus;
  taskId: string | null;
  attemptKey: string | null;
  completed: number;
  failed: number;
  totalMs: number;
  respawns: number;
  lastBeat: number | null;
}

export type LeaderValue = 'init' | 'active.running' | 'active.paused' | 'draining' | 'completed' | 'stalled' | 'stopped' | 'failed';

export interface LeaderModel {
  value: LeaderValue;
  /** The clock: every event is stamped with the next tick. */
  now: number;
  /** The real board (what the runtime's board holds). */
  tasks: Record<string, TaskState>;
  /** What the leader was last told of the board (adjusted by its own assignments). */
  view: BoardSummary;
  /** The leader changed the board since it was last told it. */
  stale: boolean;
  workers: ModelLeaderWorker[];
  attempts: Record<string, number>;
  failures: Record<string, number>;
  escalations: string[];
  pause: 'human' | 'escalation' | null;
  /** An attempt released from a silent worker whose process may still report. */
  late: { workerId: string; taskId: string; attemptKey: string } | null;
  batches: { startedAt: number; taskIds: string[] }[];
  counters: { batches: number; closed: number; batchMs: number; spawns: number; respawns: number; messages: number; startedAt: number | null; endedAt: number | null };
  outcome: string | null;
  effects: string[];
  /** Bounds that keep the graph finite. */
  used: { fails: number; releases: number; helps: number; beats: number; pauses: number; ghosts: number };
}

export type LeaderModelEvent = {
  type:
    | 'START'
    | 'IDLE_W1'
    | 'IDLE_W2'
    | 'IDLE_GHOST'
    | 'DONE'
    | 'FAIL'
    | 'RELEASE'
    | 'LATE'
    | 'LATE_FAIL'
    | 'LATE_RELEASE'
    | 'HELP'
    | 'BEAT'
    | 'SILENT_W1'
    | 'BOARD'
    | 'PAUSE'
    | 'RESUME_RETRY'
    | 'RESUME_SKIP'
    | 'READY_W1'
    | 'READY_W2'
    | 'STOP';
};
export const LEADER_MODEL_EVENTS = [
  'START',
  'IDLE_W1',
  'IDLE_W2',
  'IDLE_GHOST',
  'DONE',
  'FAIL',
  'RELEASE',
  'LATE',
  'LATE_FAIL',
  'LATE_RELEASE',
  'HELP',
  'BEAT',
  'SILENT_W1',
  'BOARD',
  'PAUSE',
  'RESUME_RETRY',
  'RESUME_SKIP',
  'READY_W1',
  'READY_W2',
  'STOP',
] as const satisfies readonly LeaderModelEvent['type'][];

/** Compact signatures of the effects, as the real machine's provided actions record them. */
export const effectSig: { [K in keyof TeamLeaderEffects]: (p: TeamLeaderEffects[K]) => string } = {
  spawnWorker: (p) => `spawn:${p.workerId}:${p.type}:${p.specialty}`,
  respawnWorker: (p) => `respawn:${p.workerId}:${p.respawns}`,
  assignTask: (p) => `assign:${p.workerId}:${p.taskId}:${p.attemptKey}`,
  releaseTask: (p) => `release:${p.workerId}:${p.taskId}:${p.attemptKey}:${p.reason}`,
  completeTask: (p) => `complete:${p.workerId}:${p.taskId}:${p.attemptKey}:${JSON.stringify(p.result)}`,
  failTask: (p) => `fail:${p.workerId}:${p.taskId}:${p.attemptKey}:${p.error}:${p.failures}:${p.escalated}`,
  pauseTeam: (p) => (p.reason === 'human' ? `pause:human:${p.message ?? ''}` : `pause:escalation:${p.escalation.taskId}:${p.escalation.failures}:${p.escalation.error}`),
  resumeTeam: (p) => `resume:${p.message ?? ''}`,
  retryTask: (p) => `retry:${p.taskId}:${p.message ?? ''}`,
  skipTask: (p) => `skip:${p.taskId}:${p.message ?? ''}`,
  relayHelp: (p) => `help:${p.workerId}:${p.taskId ?? ''}:${p.message}`,
  reportStall: (p) => `stall:${p.blocked.join(',')}:${p.remaining}`,
  requestShutdown: (p) => `request:${p.workerId}`,
  approveShutdown: (p) => `approve:${p.workerId}`,
  stopWorkers: (p) => `stop:${p.reason}`,
};

/** The board summary of the model's real board. */
export function boardOf(tasks: Record<string, TaskState>): BoardSummary {
  const unblocked = (t: (typeof TASKS)[number]) => t.needs === null || tasks[t.needs] === 'done';
  return {
    claimable: TASKS.filter((t) => tasks[t.taskId] === 'pending' && unblocked(t)).map((t) => ({ taskId: t.taskId, type: t.type })),
    inProgress: TASKS.filter((t) => tasks[t.taskId] === 'claimed').length,
    blocked: TASKS.filter((t) => tasks[t.taskId] === 'pending' && !unblocked(t)).map((t) => t.taskId),
    remaining: TASKS.filter((t) => tasks[t.taskId] !== 'done' && tasks[t.taskId] !== 'skipped').length,
  };
}

const leaderFinal = (v: LeaderValue) => v === 'completed' || v === 'stalled' || v === 'stopped' || v === 'failed';
const workingWorker = (s: LeaderModel) => s.workers.find((w) => w.status === 'working');
const worker = (s: LeaderModel, id: string) => s.workers.find((w) => w.workerId === id)!;
const live = (w: ModelLeaderWorker) => w.status !== 'shutdown';
const sameBoard = (a: BoardSummary, b: BoardSummary) => JSON.stringify(a) === JSON.stringify(b);

/** Events the leader model takes in a state. */
export function leaderEvents(s: LeaderModel): LeaderModelEvent[] {
  if (leaderFinal(s.value)) return [];
  const active = s.value.startsWith('active');
  // The graph stays small: t1 is the task that fails, is released or loses its worker (w1);
  // t2 only shows the dependency. Facts that change nothing are sent before any assignment.
  const t1Working = worker(s, 'w1').taskId === 't1';
  const early = active && Object.keys(s.attempts).length === 0;
  const types = LEADER_MODEL_EVENTS.filter((type) => {
    switch (type) {
      case 'START':
        return s.value === 'init';
      case 'IDLE_W1':
      case 'IDLE_W2':
        return active && worker(s, type === 'IDLE_W1' ? 'w1' : 'w2').status === 'starting';
      case 'IDLE_GHOST':
        return early && s.used.ghosts < 1;
      case 'DONE':
        return active && workingWorker(s) !== undefined;
      case 'FAIL':
        return active && t1Working && s.used.fails < 3;
      case 'RELEASE':
        return active && t1Working && s.used.releases < 1;
      case 'LATE':
      case 'LATE_FAIL':
      case 'LATE_RELEASE':
        return active && s.late !== null;
      case 'HELP':
        return early && s.used.helps < 1;
      case 'BEAT':
        return early && s.used.beats < 1;
      case 'SILENT_W1':
        return (active && t1Working) || (s.value === 'draining' && live(worker(s, 'w1')));
      case 'BOARD':
        return active && (s.stale || !sameBoard(s.view, boardOf(s.tasks)));
      case 'PAUSE':
        // A human pause while t1 already failed once: its second failure queues an escalation.
        return s.value === 'active.running' && t1Working && s.failures.t1 === 1 && s.used.pauses < 1;
      case 'RESUME_RETRY':
        return s.value === 'active.paused';
      case 'RESUME_SKIP':
        return s.value === 'active.paused' && s.pause === 'escalation';
      case 'READY_W1':
      case 'READY_W2':
        return s.value === 'draining' && worker(s, type === 'READY_W1' ? 'w1' : 'w2').status === 'shuttingDown';
      case 'STOP':
        return true;
    }
  });
  return types.map((type) => ({ type }));
}

/** The concrete leader event of a model event in a model state (the executor sends it). */
export function leaderEventFor(s: LeaderModel, e: LeaderModelEvent): import('../../machines/team/events.js').TeamLeaderEvent {
  const at = s.now + 10;
  const w = workingWorker(s);
  switch (e.type) {
    case 'START':
      return { type: 'START', at, board: boardOf(s.tasks) };
    case 'IDLE_W1':
      return { type: 'WORKER_IDLE', at, workerId: 'w1' };
    case 'IDLE_W2':
      return { type: 'WORKER_IDLE', at, workerId: 'w2' };
    case 'IDLE_GHOST':
      return { type: 'WORKER_IDLE', at, workerId: 'ghost' };
    case 'DONE':
      return {
        type: 'TASK_COMPLETED',
        at,
        workerId: w!.workerId,
        taskId: w!.taskId!,
        attemptKey: w!.attemptKey!,
        result: taskResult(w!.taskId!),
        durationMs: taskMs(w!.taskId!),
      };
    case 'FAIL':
      return {
        type: 'TASK_FAILED',
        at,
        workerId: w!.workerId,
        taskId: w!.taskId!,
        attemptKey: w!.attemptKey!,
        error: failError(w!.taskId!, s.attempts[w!.taskId!]!),
        durationMs: FAIL_MS,
        ...failureOutcome(s, w!.taskId!),
      };
    case 'RELEASE':
      return { type: 'TASK_RELEASED', at, workerId: w!.workerId, taskId: w!.taskId!, attemptKey: w!.attemptKey!, reason: 'worker cannot take a task now' };
    // What the silent worker's process still says about the attempt taken from it.
    case 'LATE':
      return { type: 'TASK_COMPLETED', at, ...s.late!, result: 'late', durationMs: 1 };
    case 'LATE_FAIL':
      return { type: 'TASK_FAILED', at, ...s.late!, error: 'late failure', durationMs: 1, ...failureOutcome(s, s.late!.taskId) };
    case 'LATE_RELEASE':
      return { type: 'TASK_RELEASED', at, ...s.late!, reason: 'late release' };
    case 'HELP':
      return { type: 'HELP_REQUEST', at, workerId: 'w1', message: HELP, taskId: 't1' };
    case 'BEAT':
      return { type: 'HEARTBEAT', at, workerId: 'w2' };
    case 'SILENT_W1':
      return { type: 'WORKER_SILENT', at, workerId: 'w1' };
    case 'BOARD':
      return { type: 'BOARD_CHANGED', at, board: boardOf(s.tasks) };
    case 'PAUSE':
      return { type: 'PAUSE', at, message: PAUSE_MESSAGE };
    case 'RESUME_RETRY':
      return { type: 'RESUME', at, message: RESUME_MESSAGE, decision: 'retry' };
    case 'RESUME_SKIP':
      return { type: 'RESUME', at, decision: 'skip' };
    case 'READY_W1':
      return { type: 'WORKER_SHUTDOWN_READY', at, workerId: 'w1' };
    case 'READY_W2':
      return { type: 'WORKER_SHUTDOWN_READY', at, workerId: 'w2' };
    case 'STOP':
      return { type: 'STOP', at, reason: LEADER_STOP };
  }
}

/** One leader model step: the event, then (while running) the leader's eventless decisions. */
export function leaderStep(prev: LeaderModel, e: LeaderModelEvent): LeaderModel {
  const at = prev.now + 10;
  const s: LeaderModel = structuredClone(prev);
  s.now = at;
  const fx = (line: string) => s.effects.push(line);
  const msg = (n = 1) => (s.counters.messages += n);
  const settle = (taskId: string) => {
    const b = s.batches.find((x) => x.taskIds.includes(taskId));
    if (!b) return;
    b.taskIds = b.taskIds.filter((t) => t !== taskId);
    if (b.taskIds.length === 0) {
      s.batches = s.batches.filter((x) => x !== b);
      s.counters.closed++;
      s.counters.batchMs += at - b.startedAt;
    }
  };
  const clear = (w: ModelLeaderWorker) => {
    w.taskId = null;
    w.attemptKey = null;
  };
  const end = (value: LeaderValue) => {
    s.value = value;
    s.counters.endedAt = s.now;
  };
  const release = (w: ModelLeaderWorker, reason: string) => {
    if (!w.taskId) return;
    fx(`release:${w.workerId}:${w.taskId}:${w.attemptKey}:${reason}`);
    s.stale = true;
    s.tasks[w.taskId] = 'pending';
    settle(w.taskId);
    clear(w);
  };
  const w = workingWorker(s);
  switch (e.type) {
    case 'START':
      s.value = 'active.running';
      s.view = boardOf(s.tasks);
      for (const x of s.workers) fx(`spawn:${x.workerId}:${x.type}:${LEADER_WORKERS.find((y) => y.workerId === x.workerId)!.specialty}`);
      s.counters.spawns += 2;
      s.counters.startedAt = at;
      break;
    case 'IDLE_W1':
    case 'IDLE_W2':
      worker(s, e.type === 'IDLE_W1' ? 'w1' : 'w2').status = 'idle';
      msg();
      break;
    case 'IDLE_GHOST':
      s.used.ghosts++;
      msg();
      break;
    case 'DONE': {
      const taskId = w!.taskId!;
      fx(`complete:${w!.workerId}:${taskId}:${w!.attemptKey}:${JSON.stringify(taskResult(taskId))}`);
      s.tasks[taskId] = 'done';
      s.stale = true;
      settle(taskId);
      msg();
      w!.status = 'idle';
      w!.completed++;
      w!.totalMs += taskMs(taskId);
      clear(w!);
      break;
    }
    case 'FAIL': {
      s.used.fails++;
      const taskId = w!.taskId!;
      const { failures, escalates: escalated } = failureOutcome(s, taskId);
      const error = failError(taskId, s.attempts[taskId]!);
      fx(`fail:${w!.workerId}:${taskId}:${w!.attemptKey}:${error}:${failures}:${escalated}`);
      s.failures[taskId] = failures;
      s.tasks[taskId] = escalated ? 'escalated' : 'pending';
      s.stale = true;
      settle(taskId);
      msg();
      w!.status = 'idle';
      w!.failed++;
      w!.totalMs += FAIL_MS;
      clear(w!);
      if (escalated) {
        s.escalations.push(taskId);
        if (s.value === 'active.running') {
          s.value = 'active.paused';
          s.pause = 'escalation';
          fx(`pause:escalation:${taskId}:${failures}:${error}`);
        }
      }
      break;
    }
    case 'RELEASE':
      s.used.releases++;
      msg();
      fx(`release:${w!.workerId}:${w!.taskId}:${w!.attemptKey}:worker cannot take a task now`);
      s.tasks[w!.taskId!] = 'pending';
      s.stale = true;
      settle(w!.taskId!);
      w!.status = 'idle';
      clear(w!);
      break;
    case 'LATE':
    case 'LATE_FAIL':
    case 'LATE_RELEASE':
      s.late = null;
      msg();
      break;
    case 'HELP':
      s.used.helps++;
      msg();
      fx(`help:w1:t1:${HELP}`);
      break;
    case 'BEAT':
      s.used.beats++;
      worker(s, 'w2').lastBeat = at;
      break;
    case 'SILENT_W1': {
      const x = worker(s, 'w1');
      if (s.value === 'draining') {
        release(x, 'worker silent');
        x.status = 'shutdown';
      } else if (x.respawns >= LEADER_LIMITS.maxRespawns) {
        release(x, 'worker silent');
        x.status = 'shutdown';
        const reason = `worker ${x.workerId} went silent again after ${x.respawns} respawns`;
        fx(`stop:${reason}`);
        s.outcome = `failed:${reason}`;
        end('failed');
      } else {
        if (x.taskId) s.late = { workerId: x.workerId, taskId: x.taskId, attemptKey: x.attemptKey! };
        release(x, 'worker silent');
        x.respawns++;
        x.status = 'starting';
        x.lastBeat = null;
        fx(`respawn:${x.workerId}:${x.respawns}`);
        s.counters.spawns++;
        s.counters.respawns++;
      }
      break;
    }
    case 'BOARD':
      s.view = boardOf(s.tasks);
      s.stale = false;
      break;
    case 'PAUSE':
      s.used.pauses++;
      s.value = 'active.paused';
      s.pause = 'human';
      fx(`pause:human:${PAUSE_MESSAGE}`);
      break;
    case 'RESUME_RETRY':
    case 'RESUME_SKIP': {
      const retry = e.type === 'RESUME_RETRY';
      const message = retry ? RESUME_MESSAGE : '';
      if (s.pause === 'escalation') {
        const taskId = s.escalations.shift()!;
        s.stale = true;
        if (retry) {
          s.failures[taskId] = 0;
          s.tasks[taskId] = 'pending';
          fx(`retry:${taskId}:${message}`);
        } else {
          s.tasks[taskId] = 'skipped';
          fx(`skip:${taskId}:${message}`);
        }
      }
      fx(`resume:${message}`);
      s.pause = null;
      if (s.escalations.length > 0) {
        const taskId = s.escalations[0]!;
        s.pause = 'escalation';
        fx(`pause:escalation:${taskId}:${s.failures[taskId]}:${failError(taskId, s.attempts[taskId]!)}`);
      } else {
        s.value = 'active.running';
      }
      break;
    }
    case 'READY_W1':
    case 'READY_W2': {
      const x = worker(s, e.type === 'READY_W1' ? 'w1' : 'w2');
      fx(`approve:${x.workerId}`);
      msg(2);
      x.status = 'shutdown';
      break;
    }
    case 'STOP':
      fx(`stop:${LEADER_STOP}`);
      s.outcome = `stopped:${LEADER_STOP}`;
      end('stopped');
      break;
  }
  if (s.value === 'active.running') decide(s);
  if (s.value === 'draining' && !s.workers.some(live)) end(s.outcome === 'completed' ? 'completed' : 'stalled');
  return s;

  function decide(t: LeaderModel): void {
    const working = t.workers.some((x) => x.status === 'working');
    const enterDraining = () => {
      t.value = 'draining';
      for (const x of t.workers.filter(live)) {
        fx(`request:${x.workerId}`);
        x.status = 'shuttingDown';
        msg();
      }
    };
    if (!t.stale && t.view.remaining === 0 && !working) {
      t.outcome = 'completed';
      enterDraining();
      return;
    }
    if (!t.stale && t.view.remaining > 0 && t.view.inProgress === 0 && !working && t.view.claimable.length === 0) {
      fx(`stall:${t.view.blocked.join(',')}:${t.view.remaining}`);
      t.outcome = `stalled:${t.view.blocked.join(',')}:${t.view.remaining}`;
      enterDraining();
      return;
    }
    // Each task has exactly one worker of its type: it waits for that one.
    const held = new Set(t.workers.flatMap((x) => (x.taskId ? [x.taskId] : [])));
    const plan = t.view.claimable.flatMap((c) => {
      const x = t.workers.find((y) => y.type === c.type && y.status === 'idle');
      return !held.has(c.taskId) && x ? [{ c, x }] : [];
    });
    if (plan.length === 0) return;
    for (const { c, x } of plan) {
      const attempt = (t.attempts[c.taskId] ?? 0) + 1;
      t.attempts[c.taskId] = attempt;
      x.status = 'working';
      x.taskId = c.taskId;
      x.attemptKey = `${TEAM}:${c.taskId}:${attempt}`;
      t.tasks[c.taskId] = 'claimed';
      fx(`assign:${x.workerId}:${c.taskId}:${x.attemptKey}`);
    }
    const ids = plan.map((p) => p.c.taskId);
    t.view = { ...t.view, claimable: t.view.claimable.filter((c) => !ids.includes(c.taskId)), inProgress: t.view.inProgress + plan.length };
    t.batches.push({ startedAt: prev.now + 10, taskIds: ids });
    t.counters.batches++;
  }
}

export const initialLeaderModel: LeaderModel = {
  value: 'init',
  now: 1000,
  tasks: { t1: 'pending', t2: 'pending' },
  view: { claimable: [], inProgress: 0, blocked: [], remaining: 0 },
  stale: false,
  workers: LEADER_WORKERS.map((w) => ({
    workerId: w.workerId,
    type: w.type,
    status: 'starting',
    taskId: null,
    attemptKey: null,
    completed: 0,
    failed: 0,
    totalMs: 0,
    respawns: 0,
    lastBeat: null,
  })),
  attempts: {},
  failures: {},
  escalations: [],
  pause: null,
  late: null,
  batches: [],
  counters: { batches: 0, closed: 0, batchMs: 0, spawns: 0, respawns: 0, messages: 0, startedAt: null, endedAt: null },
  outcome: null,
  effects: [],
  used: { fails: 0, releases: 0, helps: 0, beats: 0, pauses: 0, ghosts: 0 },
};

/** The leader model as actor logic for `TestModel`. */
export const leaderModel = fromTransition<LeaderModel, LeaderModelEvent, never, undefined>((s, e) => leaderStep(s, e), initialLeaderModel);

/** The part of a leader model state that identifies a graph vertex (the clock and logs left out). */
export function leaderProject(s: LeaderModel): string {
  return JSON.stringify([
    s.value,
    s.tasks,
    s.view,
    s.stale,
    s.workers.map((w) => [w.status, w.taskId, w.respawns]),
    s.attempts,
    s.failures,
    s.escalations,
    s.pause,
    s.late !== null,
    s.used.fails,
    s.used.releases,
  ]);
}
