/**
 * The teams of one runtime: their definitions (`createRuntime({ teams })`) and the team hosts
 * created by `forTeam`, one per team id; `maxTeams` is checked when a run starts.
 *
 * @module
 */
import { assertSwarmId } from '../swarm-id.js';
import { TeamClient } from './client.js';
import { workerSwarmId, type TeamDefinition } from './define.js';
import { TeamError } from './errors.js';
import { TeamHost } from './host.js';
import type { TeamRuntimePort } from './host-types.js';
import { TEAM_RECORD_PREFIX, type TeamStorePort } from './host-journal.js';
import { checkLimit } from './limits.js';

/** The longest team id (task swarm ids add `:<task>:<attempt>` to it). */
const MAX_TEAM_ID_LENGTH = 64;

/** The teams of a runtime. */
export class Teams {
  readonly #definitions = new Map<string, TeamDefinition>();
  readonly #hosts = new Map<string, TeamHost>();
  #closed = false;
  #renewTimer: ReturnType<typeof setInterval> | undefined;

  constructor(
    definitions: readonly TeamDefinition[],
    private readonly port: TeamRuntimePort,
    /** Whether the runtime knows a swarm definition (a worker's swarm must be one). */
    private readonly hasSwarm: (id: string) => boolean,
    /** The runtime's store and lease: teams persist there as records of their own. */
    private readonly storePort?: TeamStorePort & { owner: string; leaseMs: number },
  ) {
    for (const def of definitions) this.#register(def);
  }

  /**
   * Restores every unfinished team of a registered definition that no live runtime holds (what
   * a crashed or closed predecessor left): its run continues here. Called by `runtime.start()`.
   */
  async adopt(): Promise<void> {
    const store = this.storePort?.store;
    if (!store) return;
    for (const def of this.#definitions.values()) {
      for (const listed of await store.list({ definitionId: `${TEAM_RECORD_PREFIX}${def.id}`, status: ['running', 'awaitingHandoff', 'paused'] })) {
        if (this.#hosts.has(listed.swarmId)) continue;
        await this.#host(def, listed.swarmId).ready.catch(() => undefined);
      }
    }
  }

  /** The client of team `teamId` (default: the definition's id) of a definition or its id. */
  forTeam(definition: TeamDefinition | string, teamId?: string): TeamClient {
    const def = typeof definition === 'string' ? this.#definitions.get(definition) : definition;
    if (!def) throw new TeamError(`unknown team definition "${String(definition)}"`, 'unknown-team');
    if (typeof definition !== 'string' && !this.#definitions.has(def.id)) this.#register(def);
    if (this.#definitions.get(def.id) !== def) throw new TeamError(`another team definition is registered as "${def.id}"`, 'team-in-use');
    const id = teamId ?? def.id;
    assertSwarmId(id, MAX_TEAM_ID_LENGTH);
    return new TeamClient(this.#host(def, id));
  }

  /** The host of team `id`, created (and restored from the store, see `ready`) on first use. */
  #host(def: TeamDefinition, id: string): TeamHost {
    if (this.#closed) throw new TeamError('this runtime is closed', 'wrong-team-state');
    let host = this.#hosts.get(id);
    // A host that lost its lease to another runtime is dropped: the next use reads the team again.
    if (host?.closed) {
      this.#hosts.delete(id);
      host = undefined;
    }
    if (host && host.definition !== def) throw new TeamError(`team "${id}" belongs to definition ${host.definition.id}, not ${def.id}`, 'team-in-use');
    if (!host) {
      host = new TeamHost({
        definition: def,
        teamId: id,
        port: this.port,
        admit: (h) => this.#admit(h),
        ...(this.storePort ? { journal: this.storePort } : {}),
      });
      host.ready = host.load();
      host.ready.catch(() => undefined);
      this.#hosts.set(id, host);
      this.#keepRenewing();
    }
    return host;
  }

  /** Stops driving every team: its last state is written and its lease given up. */
  async close(): Promise<void> {
    this.#closed = true;
    if (this.#renewTimer) clearInterval(this.#renewTimer);
    const hosts = [...this.#hosts.values()];
    for (const host of hosts) host.close();
    await Promise.all(hosts.map((h) => h.flush()));
    if (this.storePort && hosts.length > 0) await this.storePort.store.release(this.storePort.owner, hosts.map((h) => h.teamId)).catch(() => undefined);
  }

  /** Renews this runtime's leases on its teams every third of a lease, as for swarms. */
  #keepRenewing(): void {
    const port = this.storePort;
    if (!port || this.#renewTimer) return;
    this.#renewTimer = setInterval(() => {
      const ids = [...this.#hosts.values()].filter((h) => h.status === 'running' || h.status === 'paused').map((h) => h.teamId);
      if (ids.length > 0) void port.store.renew(port.owner, ids, Date.now() + port.leaseMs).catch(() => undefined);
    }, Math.max(20, port.leaseMs / 3));
    this.#renewTimer.unref?.();
  }

  #register(def: TeamDefinition): void {
    if (def?.kind !== 'team') throw new TeamError('teams must be made with defineTeam()', 'unknown-team');
    if (this.#definitions.has(def.id)) throw new TeamError(`duplicate team id "${def.id}"`, 'team-in-use');
    for (const w of def.workers) {
      if (!this.hasSwarm(workerSwarmId(w))) throw new TeamError(`team ${def.id}: worker ${w.type} runs unknown swarm "${workerSwarmId(w)}"`, 'unknown-team');
    }
    this.#definitions.set(def.id, def);
  }

  #admit(host: TeamHost): void {
    const running = [...this.#hosts.values()].filter((h) => h !== host && (h.status === 'running' || h.status === 'paused')).length;
    checkLimit(host.definition.limits, 'maxTeams', running);
  }
}
