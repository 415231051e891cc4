/**
 * One task attempt of a worker: a swarm of the worker's definition, fresh per attempt, whose id
 * is the attempt's idempotency key (`${teamId}:${taskId}:${attempt}`). When that swarm exists
 * already (the attempt was started before a restart) the attempt re-attaches to it instead of
 * starting it again, so no attempt's work is done twice.
 *
 * @module
 */
import { fromPromise } from 'xstate';
import type { TaskRunInput, TaskRunOutput } from '../../machines/team/worker.js';
import { attemptKey, type TaskBoard } from './board.js';
import type { TeamWorkerDefinition } from '../define/team.js';
import { workerSwarmId } from '../define/team.js';
import type { PendingStop } from './host-stops.js';
import type { TeamRuntimePort } from './host-types.js';

/** What a task attempt needs from its host. */
export interface TaskRunDeps {
  port: TeamRuntimePort;
  board: TaskBoard;
  worker: (type: string) => TeamWorkerDefinition;
  clock: () => number;
  /** The attempt's swarm is running for `workerId` (its events are the worker's heartbeat), or no longer. */
  running: (swarmId: string, workerId: string | undefined) => void;
  /** The attempt of `workerId` made progress (a heartbeat of a swarm hosted in another process). */
  progressed: (workerId: string) => void;
  /** Whether the host is closing: an aborted attempt then leaves its swarm to the next process. */
  closing: () => boolean;
  /** The worker gave the attempt up: its swarm is owed a stop until it has ended (`host-stops.ts`). */
  released: (stop: PendingStop) => void;
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
    if (!task || task.status !== 'in_progress' || task.owner !== input.workerId) throw fail(`task ${input.task.taskId} is no longer held by ${input.workerId}`);
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
      // Given up meanwhile: nothing is started (its owed stop finds no swarm, or the one whose
      // start was in flight).
      if ((await deps.port.stored(swarmId)) === undefined && !signal.aborted) await deps.port.startSwarm(definitionId, swarmId, swarmInput);
      // Also after a restart (it existed): a holder that died meanwhile is replaced.
      if (!signal.aborted) deps.port.follow(definitionId, swarmId, swarmInput, () => deps.progressed(input.workerId), following.signal);
      const result = await deps.port.wait(swarmId, following.signal);
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
