/**
 * The teams of one runtime: their definitions (`createRuntime({ teams })`) and their team hosts,
 * one per team id, kept for the teams that run here or that the store holds (a client of a team
 * that never ran keeps nothing); `maxTeams` is checked when a run starts. A host that may be
 * behind the store (it reads a team another runtime drives, or its run is over) reads it again
 * when used. From `runtime.start()` on, the unfinished teams nobody live drives are adopted, and
 * the teams read while another runtime drove them read again, every half lease.
 *
 * @module
 */
import { abortable } from '../util/abort.js';
import { heldByOther } from '../leases/holder.js';
import { assertSwarmId } from '../define/swarm-id.js';
import { TeamClient, type TeamSlot } from './client.js';
import { workerSwarmId, type TeamDefinition } from '../define/team.js';
import { TeamError } from '../errors.js';
import { TeamHost } from './host.js';
import { attemptKey } from './board.js';
import type { TeamRuntimePort } from './host-types.js';
import { TEAM_RECORD_PREFIX } from '../define/ids.js';
import type { RecordStorePort } from '../store/records.js';
import { checkLimit } from '../define/team-limits.js';
import { Renewal } from '../leases/renewal.js';
import type { SwarmStatus } from '../store/result.js';

/**
 * A team the store holds, as {@link Teams.list} reports it: which team of which definition, the
 * store's status of its record (`running` or `paused` while a run is under way, else how the
 * last run ended: `completed` covers `stalled`) and when it was last written.
 */
export interface TeamListing {
  teamId: string;
  definitionId: string;
  status: SwarmStatus;
  updatedAt: number;
  /**
   * `'help'` when a run under way waits on the user's answer to help requests (their ids in
   * `openHelp`; see `TeamRunSummary.waitingFor`). Known for the teams this runtime drives or
   * has read (a listing reads no team's state): read the others' with `forTeam(…).summary()`.
   */
  waitingFor?: 'help';
  /** With `waitingFor`: the ids of the help requests to answer (`teamClient.answer`). */
  openHelp?: string[];
}

/** The longest team id (task swarm ids add `:<task>:<attempt>` to it). */
const MAX_TEAM_ID_LENGTH = 64;

/** The teams of a runtime. */
export class Teams {
  readonly #definitions = new Map<string, TeamDefinition>();
  readonly #hosts = new Map<string, TeamHost>();
  #closed = false;
  #renewal: Renewal | undefined;
  #adoptTimer: ReturnType<typeof setInterval> | undefined;
  /** The adoption pass under way, if any (the periodic scan never runs two at once). */
  #adopting: Promise<void> | undefined;

  constructor(
    definitions: readonly TeamDefinition[],
    private readonly port: TeamRuntimePort,
    /**
     * Whether a worker's swarm can run: the runtime knows the definition, or (a distributed
     * runtime) other runtimes may host it, as worker processes do.
     */
    private readonly hasSwarm: (id: string) => boolean,
    /** The runtime's store and lease: teams persist there as records of their own. */
    private readonly storePort?: RecordStorePort & { owner: string; leaseMs: number },
  ) {
    for (const def of definitions) this.#register(def);
  }

  /**
   * Adopts what can be adopted now, then keeps watching, every half lease as for swarms, for
   * teams whose runtime stopped (crashed, or lost its lease) while this one runs. Called by
   * `runtime.start()`; the watch ends with {@link close}.
   */
  async watch(): Promise<void> {
    await this.#adopt();
    const port = this.storePort;
    if (!port || this.#adoptTimer || this.#closed) return;
    this.#adoptTimer = setInterval(() => void this.#adopt().catch(() => undefined), Math.max(50, port.leaseMs / 2));
    this.#adoptTimer.unref?.();
  }

  /**
   * Restores every unfinished team of a registered definition that no live runtime holds (what
   * a crashed or closed predecessor left): its run continues here. A team this runtime only read
   * while another drove it is loaded again, and so taken over.
   */
  #adopt(): Promise<void> {
    this.#adopting ??= this.#adoptAll().finally(() => (this.#adopting = undefined));
    return this.#adopting;
  }

  async #adoptAll(): Promise<void> {
    const port = this.storePort;
    if (!port) return;
    // A team read while another runtime drove it (taken over once that one is gone, readable
    // again once it ended there), and one found unstored (stored since?): read again.
    for (const host of [...this.#hosts.values()]) {
      if (this.#closed) return;
      if (host.reading || host.status === 'idle') await this.#load(host).catch(() => undefined);
    }
    for (const def of this.#definitions.values()) {
      for (const listed of await port.store.list({ definitionId: `${TEAM_RECORD_PREFIX}${def.id}`, status: ['running', 'awaitingHandoff', 'paused'] })) {
        if (this.#closed) return;
        const host = this.#hosts.get(listed.swarmId);
        if (host && !host.closed) continue;
        // Held by a live runtime: its team, not this one's (no reader host is made for it).
        const held = heldByOther(listed.lease, port.owner, Date.now());
        if (held && !held.takeover) continue;
        await this.#host(def, listed.swarmId).ready.catch(() => undefined);
      }
    }
  }

  /**
   * The teams of the registered definitions (or of `definitionId` alone) that the store holds,
   * most recently written first, at most `limit` of them: one listing of the store per
   * definition, records only (no team's state is read).
   */
  async list(options: { definitionId?: string; limit?: number } = {}): Promise<TeamListing[]> {
    const store = this.storePort?.store;
    if (!store) return [];
    const ids = options.definitionId !== undefined ? [options.definitionId].filter((id) => this.#definitions.has(id)) : [...this.#definitions.keys()];
    const listings = await Promise.all(
      ids.map(async (id) =>
        (await store.list({ definitionId: `${TEAM_RECORD_PREFIX}${id}`, ...(options.limit !== undefined ? { limit: options.limit } : {}) })).map(
          (s): TeamListing => ({ teamId: s.swarmId, definitionId: id, status: s.status, updatedAt: s.updatedAt, ...this.#waiting(id, s.swarmId) }),
        ),
      ),
    );
    const all = listings.flat().sort((a, b) => b.updatedAt - a.updatedAt);
    return options.limit !== undefined ? all.slice(0, options.limit) : all;
  }

  /** What a kept host of team `teamId` (of definition `definitionId`) says its run waits on the user for. */
  #waiting(definitionId: string, teamId: string): Pick<TeamListing, 'waitingFor' | 'openHelp'> {
    const host = this.#hosts.get(teamId);
    if (!host || host.closed || host.definition.id !== definitionId) return {};
    const { waitingFor, openHelp } = host.waitingFor();
    return waitingFor ? { waitingFor, openHelp: (openHelp ?? []).map((h) => h.id) } : {};
  }

  /**
   * Deletes the finished team `teamId` of whichever registered definition it belongs to (what
   * `runtime.deleteTeam` does): as `forTeam(definition, teamId).delete()`, with its refusals.
   */
  async delete(teamId: string): Promise<number> {
    if (typeof teamId !== 'string' || teamId.length === 0) throw new TeamError('a team id is a non-empty string', 'unknown-team');
    let def = this.#hosts.get(teamId)?.definition;
    const store = this.storePort?.store;
    if (!def && store) {
      const stored = await (store.summary ? store.summary(teamId) : store.load(teamId));
      const definitionId = stored?.definitionId.startsWith(TEAM_RECORD_PREFIX) ? stored.definitionId.slice(TEAM_RECORD_PREFIX.length) : undefined;
      def = definitionId !== undefined ? this.#definitions.get(definitionId) : undefined;
      if (stored && !def) throw new TeamError(`${teamId} is not a team of a definition this runtime knows`, 'unknown-team');
    }
    if (!def) throw new TeamError(`team ${teamId} has not run`, 'unknown-team');
    return this.forTeam(def, teamId).delete();
  }

  /** Every registered team definition, in registration order. */
  definitions(): TeamDefinition[] {
    return [...this.#definitions.values()];
  }

  /** The client of team `teamId` (default: the definition's id) of a definition or its id. */
  forTeam(definition: TeamDefinition | string, teamId?: string): TeamClient {
    const def = typeof definition === 'string' ? this.#definitions.get(definition) : definition;
    if (!def) throw new TeamError(`unknown team definition "${String(definition)}"`, 'unknown-team');
    if (typeof definition !== 'string' && !this.#definitions.has(def.id)) this.#register(def);
    if (this.#definitions.get(def.id) !== def) throw new TeamError(`another team definition is registered as "${def.id}"`, 'team-in-use');
    const id = teamId ?? def.id;
    assertSwarmId(id, MAX_TEAM_ID_LENGTH);
    this.#kept(def, id);
    return new TeamClient(this.#slot(def, id));
  }

  /** How many team hosts this runtime keeps (teams it runs, ran or read from the store). */
  get size(): number {
    return this.#hosts.size;
  }

  /**
   * Where the client of team `id` finds its host. Only a team that runs, or that the store
   * holds, gets a host kept for it: reads of a team that never ran leave nothing behind.
   */
  #slot(def: TeamDefinition, id: string): TeamSlot {
    const find = async () => {
      const kept = this.#kept(def, id);
      if (kept) {
        await this.#load(kept);
        return kept;
      }
      const store = this.storePort?.store;
      if (!store || this.#closed) return undefined;
      if (!(await (store.summary ? store.summary(id) : store.load(id)))) return undefined;
      const host = this.#host(def, id);
      await this.#load(host);
      return host;
    };
    return {
      teamId: id,
      definitionId: def.id,
      remove: async () => this.#remove(id, await find()),
      view: () => this.#kept(def, id) ?? this.#blank(def, id),
      find,
      use: async (act) => {
        // A host dropped meanwhile (another caller's run on it failed) is made again.
        for (;;) {
          const host = this.#host(def, id);
          await this.#load(host);
          if (host.closed && !this.#closed) continue;
          try {
            // Awaited: a run refused after a turn (a batch checked in slices) drops its host too.
            return await act(host);
          } catch (error) {
            if (host.status === 'idle') this.#drop(host);
            throw error;
          }
        }
      },
    };
  }

  /** Deletes the finished team `id` (see `TeamClient.delete`). */
  async #remove(id: string, host: TeamHost | undefined): Promise<number> {
    if (!host) throw new TeamError(`team ${id} has not run`, 'unknown-team');
    if (host.status === 'running' || host.status === 'paused') throw new TeamError(`cannot delete team ${id}: it is ${host.status} (stop it first)`, 'wrong-team-state');
    if (host.status === 'idle') throw new TeamError(`team ${id} has not run`, 'unknown-team');
    await host.flush();
    const store = this.storePort?.store;
    let removed = 1;
    if (store) {
      if (!store.remove) throw new TeamError(`the store cannot delete team ${id}`, 'wrong-team-state');
      // Its task attempts and the child swarms they handed off to (`<attempt>:…`).
      const attempts = host.board.tasks().flatMap((t) => Array.from({ length: t.attempts }, (_, i) => attemptKey(host.board.id, t.id, i + 1)));
      const children = attempts.length === 0 ? [] : (await store.list()).map((s) => s.swarmId).filter((sid) => attempts.some((key) => sid.startsWith(`${key}:`)));
      removed = await store.remove([...attempts, ...children, id]);
    }
    if (this.#hosts.get(id) === host) this.#hosts.delete(id);
    host.close();
    return removed;
  }

  /** The kept host of team `id`, if any (one that lost its lease is dropped: the next use reads the team again). */
  #kept(def: TeamDefinition, id: string): TeamHost | undefined {
    const host = this.#hosts.get(id);
    if (!host) return undefined;
    if (host.closed) {
      this.#hosts.delete(id);
      return undefined;
    }
    if (host.definition !== def) throw new TeamError(`team "${id}" belongs to definition ${host.definition.id}, not ${def.id}`, 'team-in-use');
    return host;
  }

  /** A team that never ran, as its client reads it: a host kept nowhere, closed at once. */
  #blank(def: TeamDefinition, id: string): TeamHost {
    const host = new TeamHost({ definition: def, teamId: id, port: this.port });
    host.close();
    return host;
  }

  /** The host of team `id`, made and kept (its stored state read, see `ready`) if there is none. */
  #host(def: TeamDefinition, id: string): TeamHost {
    if (this.#closed) throw new TeamError('this runtime is closed', 'wrong-team-state');
    let host = this.#kept(def, id);
    if (!host) {
      host = new TeamHost({
        definition: def,
        teamId: id,
        port: this.port,
        admit: (h) => this.#admit(h),
        ...(this.storePort ? { journal: this.storePort, pollMs: Math.max(20, Math.min(1_000, this.storePort.leaseMs / 4)) } : {}),
      });
      this.#hosts.set(id, host);
      this.#load(host).catch(() => undefined);
      this.#keepRenewing();
    }
    return host;
  }

  /** Reads the host's team again if it may be behind the store; a host that fails to load is dropped. */
  #load(host: TeamHost): Promise<void> {
    const loading = host.reload();
    loading.catch(() => this.#drop(host));
    return loading;
  }

  /** Forgets a host that drives nothing (its load failed, or its first run was refused). */
  #drop(host: TeamHost): void {
    if (this.#hosts.get(host.teamId) !== host || host.status === 'running' || host.status === 'paused') return;
    this.#hosts.delete(host.teamId);
    host.close();
  }

  /** Stops driving every team: its last state is written and its lease given up. */
  async close(): Promise<void> {
    this.#closed = true;
    this.#renewal?.stop();
    if (this.#adoptTimer) clearInterval(this.#adoptTimer);
    const hosts = [...this.#hosts.values()];
    for (const host of hosts) host.close();
    // An adoption pass or a load under way starts nothing on a closed host, but may have
    // claimed a lease before it noticed: wait for them (bounded), so the release below has it.
    const waited = Promise.allSettled([this.#adopting, ...hosts.map((h) => h.ready)]);
    await abortable(waited, AbortSignal.timeout(Math.min(5_000, this.storePort?.leaseMs ?? 5_000))).catch(() => undefined);
    await Promise.all(hosts.map((h) => h.flush()));
    if (this.storePort && hosts.length > 0)
      await this.storePort.store
        .release(
          this.storePort.owner,
          hosts.map((h) => h.teamId),
        )
        .catch(() => undefined);
  }

  /** Renews this runtime's leases on its teams every third of a lease, as for swarms. */
  #keepRenewing(): void {
    const port = this.storePort;
    if (!port) return;
    this.#renewal ??= new Renewal({
      store: port.store,
      owner: port.owner,
      leaseMs: port.leaseMs,
      ids: () => [...this.#hosts.values()].filter((h) => h.status === 'running' || h.status === 'paused').map((h) => h.teamId),
    });
    this.#renewal.start();
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
