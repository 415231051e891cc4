/**
 * One task attempt of a worker: a swarm of the worker's definition, fresh per attempt, whose id
 * is the attempt's idempotency key (`${teamId}:${taskId}:${attempt}`). When that swarm exists
 * already (the attempt was started before a restart) the attempt re-attaches to it instead of
 * starting it again, so no attempt's work is done twice.
 *
 * @module
 */
import { fromPromise } from 'xstate';
import type { TaskRunInput, TaskRunOutput } from '../../machines/team-worker.js';
import { attemptKey, type TaskBoard } from './board.js';
import type { TeamWorkerDefinition } from './define.js';
import { workerSwarmId } from './define.js';
import type { TeamRuntimePort } from './host-types.js';

/** What a task attempt needs from its host. */
export interface TaskRunDeps {
  port: TeamRuntimePort;
  board: TaskBoard;
  worker: (type: string) => TeamWorkerDefinition;
  clock: () => number;
  /** The attempt's swarm is running for `workerId` (its events are the worker's heartbeat), or no longer. */
  running: (swarmId: string, workerId: string | undefined) => void;
  /** Whether the host is closing: an aborted attempt then leaves its swarm to the next process. */
  closing: () => boolean;
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
    const onAbort = () => {
      if (!deps.closing()) void deps.port.stop(swarmId, 'the worker gave the task up').catch(() => undefined);
    };
    signal.addEventListener('abort', onAbort, { once: true });
    deps.running(swarmId, input.workerId);
    try {
      if (!(await deps.port.exists(swarmId))) {
        const worker = { workerId: input.workerId, type: input.type, specialty: input.specialty };
        await deps.port.startSwarm(workerSwarmId(definition), swarmId, definition.input ? definition.input(task, worker) : taskText(task, input.specialty));
      }
      const result = await deps.port.wait(swarmId);
      if (result.status === 'completed') return { result: result.result ?? null, durationMs: deps.clock() - started };
      if (result.status === 'paused') {
        // A task swarm has no human of its own: the attempt fails and the team decides.
        await deps.port.stop(swarmId, 'a team task cannot wait for a human').catch(() => undefined);
        throw fail(`task swarm ${swarmId} paused: ${result.reason.message}`);
      }
      if (result.status === 'running') throw fail(`task swarm ${swarmId} is no longer driven here`);
      throw fail(`task swarm ${swarmId} ${result.status}: ${result.reason}`);
    } finally {
      signal.removeEventListener('abort', onAbort);
      deps.running(swarmId, undefined);
    }
  });
}
