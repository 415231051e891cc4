/**
 * The commands a client sends a live swarm (pause, resume, stop): each is acknowledged only
 * once recorded, and passed on to whatever waits on the swarm (its child swarms, the remote
 * agents that asked its human a question). A passivated swarm is restored first, and stays in
 * memory while a command is applied to it; a swarm not live here is refused with the precise
 * reason.
 *
 * @module
 */
import type { PauseReason } from '../../machines/events.js';
import type { SwarmCommand } from '../../machines/swarm.js';
import { SwarmError } from '../errors.js';
import type { ChildSwarms } from '../runners/child-swarm.js';
import type { RemoteAgents } from '../runners/remote-agent.js';
import type { OwnerCommand } from '../distribution/protocol.js';
import { ownerLost, type SwarmHost } from './host.js';
import { isFinal } from '../store/result.js';
import { summaryOf } from '../store/summary.js';
import type { LiveSwarms } from './live.js';

/**
 * How commands reach swarms held by other runtimes (a transport is configured): `send` delivers
 * one to the runtime holding the swarm's lease; `stopHeld` stops a swarm even when its holder is
 * gone (see `Hosting.stopHeld`).
 */
export interface CommandRelay {
  send(owner: string, command: OwnerCommand): Promise<void>;
  /** Stops a swarm of `definitionId` held elsewhere (`owner`: its live lease's owner, if any). */
  stopHeld(owner: string | undefined, definitionId: string, command: Extract<OwnerCommand, { op: 'stop' }>): Promise<void>;
  /** Throws a SwarmError `unavailable` while the transport is down. */
  assertAvailable(): Promise<void>;
}

/** The commands of one runtime. */
export class Commands {
  constructor(
    private readonly live: LiveSwarms,
    private readonly children: ChildSwarms,
    private readonly remote: RemoteAgents,
    private readonly relay?: CommandRelay,
  ) {}

  /** Pauses a live swarm, and the child swarms it waits on. */
  async pause(swarmId: string, reason: PauseReason): Promise<void> {
    const release = this.live.hold(swarmId);
    try {
      const host = await this.liveHost(swarmId, 'pause', { op: 'pause', swarmId, reason });
      if (!host) return;
      if (host.status() === 'paused') throw new SwarmError(`Swarm "${swarmId}" is already paused`, 'wrong-state');
      await this.command(host, { type: 'PAUSE', reason });
      await this.children.pauseWith(swarmId, host, reason);
    } finally {
      release();
    }
  }

  /** Resumes a paused swarm: the answer reaches its model and the remote agents that asked. */
  async resume(swarmId: string, message: string | undefined): Promise<void> {
    const release = this.live.hold(swarmId);
    try {
      const host = await this.liveHost(swarmId, 'resume', { op: 'resume', swarmId, ...(message === undefined ? {} : { message }) });
      if (!host) return;
      if (host.status() !== 'paused') throw new SwarmError(`Swarm "${swarmId}" is ${host.status()}, not paused`, 'wrong-state');
      await this.command(host, message === undefined ? { type: 'RESUME' } : { type: 'RESUME', message });
      this.remote.answer(swarmId, message);
      await this.children.resumeWith(swarmId, host);
    } finally {
      release();
    }
  }

  /**
   * Stops a live swarm (its running children stop with it). With a transport, a swarm held by
   * a runtime that does not answer (or by nobody) is stopped all the same: the stop is accepted
   * and applied by the runtime hosting its definition that takes it over.
   */
  async stop(swarmId: string, reason: string): Promise<void> {
    const release = this.live.hold(swarmId);
    try {
      const host = await this.liveHost(swarmId, 'stop', { op: 'stop', swarmId, reason });
      if (!host) return;
      await this.command(host, { type: 'STOP', reason });
      this.remote.forget(swarmId);
    } finally {
      release();
    }
  }

  /** Sends a command and waits until it is recorded: nothing is acknowledged that was not. */
  private async command(host: SwarmHost, command: SwarmCommand): Promise<void> {
    // With the store's connection down the command could not be recorded: say so now rather
    // than hold the caller until it is back.
    await this.relay?.assertAvailable();
    host.send(command);
    await host.gate().catch(() => undefined);
    const error = host.error;
    if (ownerLost(error)) {
      throw new SwarmError(`Swarm "${host.swarmId}" is now driven by another runtime: ${error.message}`, 'not-live');
    }
    if (error) throw new SwarmError(`Swarm "${host.swarmId}" could not record the ${command.type} command: ${error.message}`, 'store');
  }

  /**
   * The host driving a swarm here (a passivated one restored); undefined when the command went
   * to the runtime holding it elsewhere (`relayed`, with a relay); else a SwarmError saying
   * precisely why there is none.
   */
  private async liveHost(swarmId: string, verb: string, relayed: OwnerCommand): Promise<SwarmHost | undefined> {
    const host = this.live.hosts.get(swarmId) ?? (await this.live.rehydrate(swarmId));
    // A host that failed stays here only while its failure is being recorded.
    if (host?.error) throw new SwarmError(`Cannot ${verb} swarm "${swarmId}": it has ended (failed)`, 'wrong-state');
    if (host) return host;
    const problem = this.live.unrestorable.get(swarmId);
    if (problem) throw new SwarmError(`Cannot ${verb}: ${problem}`, 'wrong-state');
    // Refused at once while the store cannot be read (NATS down), not after a read's timeout.
    await this.relay?.assertAvailable();
    const record = await summaryOf(this.live.store, swarmId);
    if (!record) throw new SwarmError(`Cannot ${verb} swarm "${swarmId}": unknown swarm`, 'unknown-swarm');
    if (record.problem && record.result.status === 'failed') throw new SwarmError(`Cannot ${verb}: ${record.result.reason}`, 'wrong-state');
    if (isFinal(record.status)) throw new SwarmError(`Cannot ${verb} swarm "${swarmId}": it has ended (${record.status})`, 'wrong-state');
    const owner = record.lease && record.lease.until > Date.now() ? record.lease.owner : undefined;
    if (this.relay && relayed.op === 'stop') {
      await this.relay.stopHeld(owner, record.definitionId, relayed);
      return undefined;
    }
    if (this.relay && owner !== undefined) {
      await this.relay.send(owner, relayed);
      return undefined;
    }
    throw new SwarmError(`Cannot ${verb} swarm "${swarmId}": it is not running in this runtime (another runtime owns it)`, 'not-live');
  }
}
