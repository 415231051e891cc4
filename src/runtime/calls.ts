/**
 * The runners of the calls a swarm's actors hand to the runtime: a child swarm
 * (`runners/child-swarm.ts`) and a remote agent (`runners/remote-agent.ts`). A swarm's calls
 * start swarms, so the machine logic and these runners need each other: the logic is built
 * first with this table, which the runtime's composition (`index.ts`) fills once its runners
 * exist, before any swarm can run.
 *
 * @module
 */
import type { RemoteAgentInput } from '../../machines/calls/remote.js';
import type { ChildSwarmInput } from '../../machines/calls/swarm.js';
import type { CallResult } from '../../machines/calls/kind.js';

/** A runner of one kind of call. */
export interface CallRunner<I> {
  run(input: I, signal: AbortSignal): Promise<CallResult>;
}

/** The runner of each kind of call that the runtime runs. */
export interface CallRunnerSet {
  childSwarm: CallRunner<ChildSwarmInput>;
  remoteAgent: CallRunner<RemoteAgentInput>;
}

/** The runners table, filled once (see the module doc). */
export class CallRunners {
  private runners: CallRunnerSet | undefined;

  /** Fills the table; a second call is a bug in the composition. */
  bind(runners: CallRunnerSet): void {
    if (this.runners) throw new Error('CallRunners: already bound');
    this.runners = runners;
  }

  runChild(input: ChildSwarmInput, signal: AbortSignal): Promise<CallResult> {
    return this.bound().childSwarm.run(input, signal);
  }

  runRemote(input: RemoteAgentInput, signal: AbortSignal): Promise<CallResult> {
    return this.bound().remoteAgent.run(input, signal);
  }

  private bound(): CallRunnerSet {
    if (!this.runners) throw new Error('CallRunners: a call ran before the runtime bound its runners');
    return this.runners;
  }
}
