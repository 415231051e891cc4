/**
 * `SwarmClient`: the handle on one swarm instance.
 *
 * @module
 */
import type { PauseReason, SwarmEvent } from '../machines/events.js';
import type { SwarmResult } from './result.js';

/** What a client needs from its runtime (implemented by the runtime core). */
export interface SwarmControl {
  startSwarm(definitionId: string, swarmId: string, input: unknown): Promise<void>;
  result(swarmId: string): Promise<SwarmResult>;
  wait(swarmId: string): Promise<SwarmResult>;
  events(swarmId: string, since: number): AsyncIterable<SwarmEvent>;
  pause(swarmId: string, reason: PauseReason): Promise<void>;
  resume(swarmId: string, message: string | undefined): Promise<void>;
  stop(swarmId: string, reason: string): Promise<void>;
}

/**
 * The handle on one swarm: start it, read its result and events, pause, resume, stop.
 * `I` is the input type, `R` the result type of its definition.
 *
 * @example
 * const client = runtime.forSwarm(planner);
 * await client.run('Suggest outdoor activities for this weekend');
 * for await (const e of client.events()) console.log(e.seq, e.kind);
 * const r = await client.getResult();
 */
export class SwarmClient<I = unknown, R = unknown> {
  constructor(
    private readonly control: SwarmControl,
    /** The swarm definition this client runs. */
    readonly definitionId: string,
    /** The swarm instance id, also its session id. */
    readonly swarmId: string,
  ) {}

  /**
   * Starts the swarm. Resolves once it has started and its first step is recorded; throws a
   * `SwarmError` when it cannot start (unknown definition, invalid input, id in use).
   */
  run(input: I): Promise<void> {
    return this.control.startSwarm(this.definitionId, this.swarmId, input);
  }

  /** The swarm's current {@link SwarmResult}. */
  async getResult(): Promise<SwarmResult<R>> {
    return (await this.control.result(this.swarmId)) as SwarmResult<R>;
  }

  /** Resolves with the result once the swarm is paused or has ended. */
  async wait(): Promise<SwarmResult<R>> {
    return (await this.control.wait(this.swarmId)) as SwarmResult<R>;
  }

  /**
   * The swarm's events in order, starting after sequence number `since` (default 0: from the
   * beginning). Stored events first, then live ones; ends after the final event.
   */
  events(options: { since?: number } = {}): AsyncIterable<SwarmEvent> {
    return this.control.events(this.swarmId, options.since ?? 0);
  }

  /** Pauses a running swarm; an in-flight model call is aborted and re-issued on resume. */
  pause(reason: string | PauseReason = 'paused'): Promise<void> {
    return this.control.pause(this.swarmId, typeof reason === 'string' ? { type: 'HITL', message: reason } : reason);
  }

  /** Resumes a paused swarm; `message` reaches the orchestrator as the human's answer. */
  resume(message?: string): Promise<void> {
    return this.control.resume(this.swarmId, message);
  }

  /** Stops the swarm (and everything it runs) from any non-final state. */
  stop(reason = 'stopped by client'): Promise<void> {
    return this.control.stop(this.swarmId, reason);
  }
}
