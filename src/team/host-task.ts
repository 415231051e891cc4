/**
 * One task attempt of a worker: a swarm of the worker's definition, fresh per attempt, whose id
 * is the attempt's idempotency key (`${teamId}:${taskId}:${attempt}`). When that swarm exists
 * already (the attempt was started before a restart) the attempt re-attaches to it instead of
 * starting it again, so no attempt's work is done twice.
 *
 * An attempt's outcome is its swarm's: it completes when the swarm completes, and fails when the
 * swarm fails, is stopped or pauses. Nothing else fails it while its swarm may still be working:
 * - the store or the transport unreachable right now (NATS restarting) is waited out, with
 *   capped backoff, for as long as it takes: a swarm's steps wait through an outage too, so an
 *   attempt failed then would be run again under a new key while the first one completes;
 * - any other error is checked against the attempt's key first: a swarm that completed is the
 *   attempt's success, one still running is waited for, and only an attempt whose swarm does
 *   not exist fails with the error.
 * The attempt ends otherwise only when it is aborted: released (its worker silent), the team
 * stopped, or the host closing.
 *
 * @module
 */
import { fromPromise } from 'xstate';
import type { TaskRunInput, TaskRunOutput } from '../../machines/team/worker.js';
import { attemptKey, type TaskBoard } from './board.js';
import type { TeamWorkerDefinition } from '../define/team.js';
import { workerSwarmId } from '../define/team.js';
import { SwarmError } from '../errors.js';
import { isUnavailable } from '../store/reachable.js';
import type { SwarmResult } from '../store/result.js';
import { TransportError } from '../transport/types.js';
import { delay } from '../util/abort.js';
import type { PendingStop } from './host-stops.js';
import type { TeamRuntimePort } from './host-types.js';
import type { BudgetAccountRef } from '../../machines/budget.js';
import type { Budget } from '../define/budget.js';

/** What a task attempt needs from its host. */
export interface TaskRunDeps {
  port: TeamRuntimePort;
  board: TaskBoard;
  worker: (type: string) => TeamWorkerDefinition;
  /** The team's budget, which every task swarm of this team (`team:<teamId>`) draws from; absent without one. */
  budget?: Budget | undefined;
  clock: () => number;
  /** The attempt's swarm is running for `workerId` (its events are the worker's heartbeat), or no longer. */
  running: (swarmId: string, workerId: string | undefined) => void;
  /** The attempt of `workerId` made progress (a heartbeat of a swarm hosted in another process). */
  progressed: (workerId: string) => void;
  /** Whether the host is closing: an aborted attempt then leaves its swarm to the next process. */
  closing: () => boolean;
  /**
   * The attempt whose swarm id is `swarmId` waits on the runtime rather than on its swarm
   * (`true`), or no longer (`false`): its swarm's look-up or start, or a retry through an outage. Its worker is
   * not silent meanwhile: the swarm cannot show progress before it is found or started, and
   * each such call ends within the store's or the transport's timeouts (a request lost in an
   * outage fails only then, although NATS may have been back for a while).
   */
  waiting: (swarmId: string, waiting: boolean) => void;
  /** The worker gave the attempt up: its swarm is owed a stop until it has ended (`host-stops.ts`). */
  released: (stop: PendingStop) => void;
  /** The first wait before an operation of the attempt is tried again (doubling up to {@link MAX_RETRY_MS}); default 100 ms. */
  retryMs?: number;
}

/** The longest wait between two tries of an attempt's operation while it cannot be done. */
const MAX_RETRY_MS = 2_000;

/**
 * Whether `error` means the store or the transport cannot be reached right now, so the same
 * operation may succeed once NATS is back: a `SwarmError` `unavailable` (what the JetStream
 * store's reads, the runtime's commands and the calls to other runtimes raise while NATS is
 * down), a {@link TransportError} other than "nobody listens", or one of the NATS client's own
 * connection, timeout and "JetStream not ready" errors should one pass unwrapped (told apart by
 * name, as the NATS transport does, so no NATS code is loaded here; a closed connection is not
 * among them: it does not come back).
 */
export function isOutage(error: unknown): boolean {
  if (isUnavailable(error)) return true;
  if (error instanceof TransportError) return error.code !== 'no-responders';
  if (!(error instanceof Error)) return false;
  // JetStream not answering yet after a server restart.
  if (error.name === 'JetStreamApiError') return (error as { status?: unknown }).status === 503;
  return /^(TimeoutError|ConnectionError|RequestError|NoRespondersError)$/.test(error.name);
}

/** The default input of a task swarm: what to do, for a swarm whose input is text. */
function taskText(task: { subject: string; description: string }, specialty: string): string {
  return `You are the team's ${specialty} worker. Task: ${task.subject}${task.description ? `\n\n${task.description}` : ''}`;
}

/** The worker machine's `runTask` actor, bound to a host. */
export function taskRunner(deps: TaskRunDeps) {
  return fromPromise<TaskRunOutput, TaskRunInput>(async ({ input, signal }) => {
    const started = deps.clock();
    const fail = (message: string) => Object.assign(new Error(message), { durationMs: deps.clock() - started });
    const task = deps.board.task(input.task.taskId);
    if (task?.status !== 'in_progress' || task.owner !== input.workerId) throw fail(`task ${input.task.taskId} is no longer held by ${input.workerId}`);
    // The board's attempt count is durable: the same attempt gets the same swarm after a restart.
    const swarmId = attemptKey(deps.board.id, task.id, task.attempts);
    const definition = deps.worker(input.type);
    const definitionId = workerSwarmId(definition);
    // Ends with the attempt, or as soon as the worker gives it up: its following and its wait.
    const following = new AbortController();
    const onAbort = () => {
      following.abort();
      if (!deps.closing()) deps.released({ swarmId, definitionId, taskId: task.id, attempt: task.attempts, reason: 'the worker gave the task up' });
    };
    signal.addEventListener('abort', onAbort, { once: true });
    deps.running(swarmId, input.workerId);
    try {
      const worker = { workerId: input.workerId, type: input.type, specialty: input.specialty };
      const swarmInput = definition.input ? definition.input(task, worker) : taskText(task, input.specialty);
      const result = await attemptResult({
        port: deps.port,
        swarmId,
        definitionId,
        input: swarmInput,
        signal,
        following: following.signal,
        progressed: () => deps.progressed(input.workerId),
        waiting: (waiting) => deps.waiting(swarmId, waiting),
        retryMs: deps.retryMs ?? 100,
        ...(deps.budget ? { budgetOuter: [{ id: `team:${deps.board.id}`, caps: deps.budget }] } : {}),
      });
      if (result.status === 'completed') return { result: result.result ?? null, durationMs: deps.clock() - started };
      if (result.status === 'paused') {
        // A task swarm has no human of its own: the attempt fails and the team decides.
        await deps.port.stop(swarmId, 'a team task cannot wait for a human').catch(() => undefined);
        throw fail(`task swarm ${swarmId} paused: ${result.reason.message}`);
      }
      if (result.status === 'running') throw fail(`task swarm ${swarmId} is no longer driven here`);
      throw fail(`task swarm ${swarmId} ${result.status}: ${result.reason}`);
    } finally {
      following.abort();
      signal.removeEventListener('abort', onAbort);
      deps.running(swarmId, undefined);
    }
  });
}

/** One attempt's swarm, as {@link attemptResult} drives it. */
interface AttemptSwarm {
  port: TeamRuntimePort;
  swarmId: string;
  definitionId: string;
  input: unknown;
  /** The attempt's: aborted when it is given up (its wait and its retries end then). */
  signal: AbortSignal;
  /** Ends the following of a swarm hosted elsewhere (aborted with the attempt, or when it ends). */
  following: AbortSignal;
  /** Told about each heartbeat of a swarm hosted elsewhere (see `TeamRuntimePort.follow`). */
  progressed: () => void;
  /** See {@link TaskRunDeps.waiting}. */
  waiting: (waiting: boolean) => void;
  retryMs: number;
  /** The team's budget account, which the swarm draws from. */
  budgetOuter?: BudgetAccountRef[];
}

/**
 * Starts the attempt's swarm unless its key names one already, follows it and waits until it is
 * paused or has ended: that result is the attempt's outcome. Waits out the store or the
 * transport being unreachable; any other error is checked against the key before it is the
 * attempt's failure (see the module comment). Rejects only with such an error, or when the
 * attempt is aborted.
 */
async function attemptResult(a: AttemptSwarm): Promise<SwarmResult> {
  const { port, swarmId, signal } = a;
  /** Runs `call` as the attempt's wait on the runtime (see {@link TaskRunDeps.waiting}). */
  const waitingOn = async <T>(call: () => Promise<T>): Promise<T> => {
    a.waiting(true);
    try {
      return await call();
    } finally {
      a.waiting(false);
    }
  };
  // Whether the swarm is known to exist (found under its key, or started here).
  let exists = false;
  let followed = false;
  for (let tries = 0; ; tries++) {
    signal.throwIfAborted();
    try {
      if (!exists) {
        // Given up meanwhile: nothing is started (its owed stop finds no swarm, or the one whose
        // start was in flight).
        await waitingOn(async () => {
          if ((await port.stored(swarmId)) === undefined && !signal.aborted) await start(a);
        });
        exists = true;
      }
      // Also after a restart (it existed): a holder that died meanwhile is replaced.
      if (!followed && !signal.aborted) {
        port.follow(a.definitionId, swarmId, a.input, a.progressed, a.following);
        followed = true;
      }
      return await port.wait(swarmId, a.following);
    } catch (error) {
      if (signal.aborted) throw error;
      let outage = isOutage(error);
      if (!outage) {
        // Not an outage: what the key says decides. Its look-up may meet one, waited out too.
        const known = await waitingOn(() => port.stored(swarmId)).catch((e: unknown) => (isOutage(e) ? 'unreachable' : undefined));
        if (signal.aborted) throw error;
        if (known === undefined) throw error;
        if (known === 'unreachable') outage = true;
        else {
          exists = true;
          // Paused or ended: the swarm's own outcome. Running: waited for, at the backoff's pace
          // (a wait that keeps failing is no reason to fail an attempt whose swarm works on).
          if (known.status !== 'running') return known;
        }
      }
      const backoff = Math.min(MAX_RETRY_MS, a.retryMs * 2 ** Math.min(tries, 10));
      // Waiting on NATS is not the worker's silence.
      if (outage || !port.reachable()) await waitingOn(() => delay(backoff, signal));
      else await delay(backoff, signal);
    }
  }
}

/**
 * Starts the attempt's swarm. A local start refused with `id-in-use` found the swarm already
 * there (an earlier start of this very attempt, whose first commit is still waiting on the
 * store): the attempt has it.
 */
async function start(a: AttemptSwarm): Promise<void> {
  try {
    await a.port.startSwarm(a.definitionId, a.swarmId, a.input, a.budgetOuter ? { budgetOuter: a.budgetOuter } : undefined);
  } catch (error) {
    if (!(error instanceof SwarmError && error.code === 'id-in-use')) throw error;
  }
}
