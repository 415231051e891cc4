/**
 * The events of a team: every fact of its board, workers, inbox and leader, in the same A2A
 * form as swarm events (a `status-update` whose `metadata` is the fact, `metadata.type`
 * starting with `team-`), numbered 1, 2, 3 … per team without gaps, so a reader can replay
 * them from any `seq` and follow live ones ({@link TeamEventLog}).
 *
 * @module
 */
import type { TaskState } from '../../machines/events.js';
import type { TaskMetadata } from '../define/team.js';
import type { InboxMessageType } from './inbox.js';

/** A fact of a team, carried in the `metadata` of a {@link TeamEvent}. */
export type TeamFact =
  | { type: 'team-task-created'; taskId: string; subject: string; metadata: TaskMetadata; dependencies: readonly string[] }
  | { type: 'team-task-claimed'; taskId: string; workerId: string; attempt: number; attemptKey: string }
  | { type: 'team-task-completed'; taskId: string; workerId: string; attempt: number }
  | { type: 'team-task-failed'; taskId: string; workerId: string; attempt: number; error: string; failures: number }
  | { type: 'team-task-released'; taskId: string; workerId: string; attempt: number; reason: string }
  | { type: 'team-task-escalated'; taskId: string; failures: number; lastError: string }
  | { type: 'team-task-retried'; taskId: string }
  | { type: 'team-task-abandoned'; taskId: string; reason: string }
  /** An attempt the team had released completed all the same (its stop came too late): work done twice, not the task's result. */
  | { type: 'team-released-attempt-completed'; taskId: string; attempt: number; swarmId: string }
  | { type: 'team-worker-spawned'; workerId: string; workerType: string }
  | { type: 'team-worker-respawned'; workerId: string; workerType: string; respawns: number }
  | { type: 'team-worker-idle'; workerId: string }
  | { type: 'team-worker-shutdown'; workerId: string }
  | { type: 'team-worker-stopped'; workerId: string; reason: string }
  | { type: 'team-message-sent'; messageSeq: number; from: string; to: string; messageType: InboxMessageType }
  | { type: 'team-escalation'; taskId: string; workerId: string; error: string; failures: number }
  | { type: 'team-started'; tasks: number }
  /** A worker asked the leader (`team_help_request`); see docs/team-inbox.md. */
  | { type: 'team-help-requested'; requestId: string; workerId: string; taskId: string; question: string }
  /** The leader could not answer: the user must (`teamClient.answer`). */
  | { type: 'team-help-escalated'; requestId: string; workerId: string; question: string; reason: string }
  | { type: 'team-help-answered'; requestId: string; workerId: string; by: 'leader' | 'user' }
  /** A task changed by `teamClient.updateTask`: blockers added, reassigned, or canceled. */
  | { type: 'team-task-updated'; taskId: string; addBlockers?: readonly string[]; assignTo?: string; canceled?: boolean; stoppedAttempt?: number }
  /**
   * A creation written in slices that a crash cut short was dropped on restore: the tasks of
   * the `team-task-created` events since `fromTask` (the creation index of its first task) are
   * not on the board; a run of them can be made again.
   */
  | { type: 'team-creation-dropped'; fromTask: number; tasks: number; reason: string }
  | { type: 'team-paused'; reason: string }
  | { type: 'team-resumed'; message?: string }
  | { type: 'team-ended'; status: 'completed' | 'stalled' | 'failed' | 'stopped'; reason?: string; blocked?: readonly string[] };

/** One event of a team's stream: an A2A `TaskStatusUpdateEvent` whose task and context are the team. */
export interface TeamEvent {
  kind: 'status-update';
  /** The team id. */
  taskId: string;
  contextId: string;
  status: { state: TaskState; timestamp: string; message?: { kind: 'message'; role: 'agent'; parts: { kind: 'text'; text: string }[]; messageId: string } };
  /** True on `team-ended`: the run is over (a later `run` continues the stream). */
  final: boolean;
  metadata: TeamFact;
  seq: number;
  /** The team id, where swarm events carry their swarm's. */
  swarmId: string;
}

/** The A2A state a fact puts the team in. */
function stateOf(fact: TeamFact): TaskState {
  switch (fact.type) {
    case 'team-escalation':
    case 'team-paused':
    case 'team-help-escalated':
      return 'input-required';
    case 'team-ended':
      return fact.status === 'completed' ? 'completed' : fact.status === 'stopped' ? 'canceled' : 'failed';
    default:
      return 'working';
  }
}

/** A line for people, on the facts that deserve one. */
function said(fact: TeamFact): string | undefined {
  switch (fact.type) {
    case 'team-escalation':
      return `Task ${fact.taskId} failed ${fact.failures} times (last: ${fact.error}); resume with retry or skip.`;
    case 'team-paused':
      return fact.reason;
    case 'team-help-escalated':
      return `${fact.workerId} asks (${fact.requestId}): ${fact.question}`;
    case 'team-released-attempt-completed':
      return `Attempt ${fact.attempt} of task ${fact.taskId} (swarm ${fact.swarmId}) completed after the team had released it: its work was done twice; its result is not the task's.`;
    case 'team-ended':
      return fact.reason ?? `Team ${fact.status}.`;
    case 'team-creation-dropped':
      return fact.reason;
    default:
      return undefined;
  }
}

/**
 * The ordered event log of one team: appends stamp the next `seq`; readers get the events
 * after a `seq` and then live ones until the run ends. Starts from earlier events when a team
 * is restored.
 */
export class TeamEventLog {
  readonly #events: TeamEvent[];
  readonly #waiters = new Set<() => void>();
  #running = false;

  constructor(
    readonly teamId: string,
    events: readonly TeamEvent[] = [],
    private readonly clock: () => number = Date.now,
  ) {
    this.#events = [...events];
  }

  /** Events so far, oldest first. */
  all(): readonly TeamEvent[] {
    return this.#events;
  }

  /** The seq of the last event (0 when none). */
  get lastSeq(): number {
    return this.#events.at(-1)?.seq ?? 0;
  }

  /** Whether a run is under way (readers then wait for more events). */
  set running(value: boolean) {
    this.#running = value;
    this.#wake();
  }

  /** Appends one fact as the next event and returns it. */
  append(fact: TeamFact): TeamEvent {
    const seq = this.lastSeq + 1;
    const text = said(fact);
    const event: TeamEvent = {
      kind: 'status-update',
      taskId: this.teamId,
      contextId: this.teamId,
      status: {
        state: stateOf(fact),
        timestamp: new Date(this.clock()).toISOString(),
        ...(text ? { message: { kind: 'message', role: 'agent', parts: [{ kind: 'text', text }], messageId: `${this.teamId}:${seq}` } } : {}),
      },
      final: fact.type === 'team-ended',
      metadata: fact,
      seq,
      swarmId: this.teamId,
    };
    this.#events.push(event);
    this.#wake();
    return event;
  }

  /**
   * The events after `since`, then live ones while a run is under way; ends when the run
   * ends (or at once, when none is) or when `signal` aborts.
   */
  async *read(since = 0, signal?: AbortSignal): AsyncGenerator<TeamEvent> {
    let next = since;
    for (;;) {
      if (signal?.aborted) return;
      // Seqs are contiguous from the first event's: the fresh ones start at a known index.
      const first = this.#events[0]?.seq ?? 1;
      const fresh = this.#events.slice(Math.max(0, next + 1 - first));
      for (const event of fresh) {
        next = event.seq;
        yield event;
      }
      if (this.lastSeq > next) continue;
      if (!this.#running) return;
      await new Promise<void>((resolve) => {
        const wake = () => {
          this.#waiters.delete(wake);
          signal?.removeEventListener('abort', wake);
          resolve();
        };
        this.#waiters.add(wake);
        signal?.addEventListener('abort', wake, { once: true });
      });
    }
  }

  #wake(): void {
    for (const wake of [...this.#waiters]) wake();
  }
}
