/**
 * Passivation: a swarm that only waits — paused for a human, or awaiting child swarms — is
 * evicted from memory once it has waited `passivateAfterMs` (its state is durable after every
 * step), leaving only its id behind; the next command, or a lifecycle step of a child it awaits,
 * restores it from the store by the path restarts and adoption take. A swarm with a model, tool,
 * agent or remote call at work is never passivated; one paused because a remote agent asked its
 * human a question is (the remote call re-attaches to its task once the swarm is restored).
 *
 * @module
 */
import type { SwarmEvent } from '../../machines/events.js';
import { runningCalls } from '../../machines/round.js';
import { lifecycleOf, runningChildSwarms } from '../runners/child-swarm.js';
import type { HumanQuestions } from '../runners/questions.js';
import type { SwarmHost } from './host.js';
import type { Leases } from './leases.js';
import type { HostObserver, LiveSwarms } from './live.js';

/**
 * What commands and child swarms need of passivation: a swarm owned here brought back into
 * memory, and one kept there while a command is applied to it.
 */
export interface Rehydration {
  /**
   * The host of a swarm owned here: the live one, or a passivated swarm restored from the store
   * (once, however many ask at the same time). Undefined when it is neither, or when restoring
   * found that another runtime took it meanwhile (or that it cannot be restored).
   */
  rehydrate(swarmId: string): Promise<SwarmHost | undefined>;
  /** Keeps a swarm from being passivated while a command is applied to it; returns the release. */
  hold(swarmId: string): () => void;
}

/** The {@link Rehydration} of a runtime that never passivates: only live hosts, nothing to hold. */
export function withoutPassivation(live: Pick<LiveSwarms, 'hosts'>): Rehydration {
  return { rehydrate: async (swarmId) => live.hosts.get(swarmId), hold: () => noop };
}

/** The passivation policy of one runtime. */
export class Passivation implements HostObserver, Rehydration {
  /** Live swarms that wait, with when their last step was recorded. */
  private readonly idle = new Map<string, number>();
  /** The parent each passivated child-awaiting swarm waits for, by child id. */
  private readonly awaitedBy = new Map<string, string>();
  /** Swarms a command is being applied to, with how many: never passivated meanwhile. */
  private readonly busy = new Map<string, number>();
  /** Swarms just passivated whose last commit may still be settling. */
  private readonly settling = new Map<string, Promise<void>>();
  private readonly rehydrating = new Map<string, Promise<SwarmHost | undefined>>();
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly live: LiveSwarms,
    private readonly afterMs: number,
    private readonly questions: Pick<HumanQuestions, 'asking' | 'setAside'>,
    /** Passivated swarms come back the way adopted ones do. */
    private readonly leases: Pick<Leases, 'restore'>,
  ) {
    live.observe(this);
  }

  async rehydrate(swarmId: string): Promise<SwarmHost | undefined> {
    const { live } = this;
    const host = live.hosts.get(swarmId);
    if (host || !live.passivated.has(swarmId) || live.closed) return host;
    let restoring = this.rehydrating.get(swarmId);
    if (!restoring) {
      restoring = (async () => {
        try {
          await this.settled(swarmId);
          const restored = await this.leases.restore(swarmId);
          live.passivated.delete(swarmId);
          return restored;
        } finally {
          // A failing store leaves it passivated (still owned): the next ask tries again.
          this.rehydrating.delete(swarmId);
        }
      })();
      this.rehydrating.set(swarmId, restoring);
    }
    return restoring;
  }

  /** A host was launched (started, adopted, rehydrated): its wait counts from now. */
  launched(host: SwarmHost): void {
    this.note(host);
  }

  /**
   * A commit of `host` is durable: its wait starts over, and a lifecycle step of a child that a
   * passivated parent awaits brings that parent back to relay it (and, at the end, take the
   * child's result).
   */
  committed(host: SwarmHost, events: readonly SwarmEvent[]): void {
    const parent = this.awaitedBy.get(host.swarmId);
    if (parent !== undefined) {
      const lifecycle = events.map((e) => (e.kind === 'status-update' ? lifecycleOf(e.metadata)?.lifecycle : undefined));
      if (lifecycle.some((l) => l === 'completed' || l === 'failed' || l === 'stopped')) this.awaitedBy.delete(host.swarmId);
      if (lifecycle.some((l) => l !== undefined)) void this.rehydrate(parent).catch(() => undefined);
    }
    this.note(host);
  }

  /**
   * A host stopped driving its swarm. When that was not its passivation (it ended, or lost its
   * lease), a passivated parent awaiting it is brought back to read its outcome from the store.
   */
  ended(host: SwarmHost): void {
    const id = host.swarmId;
    this.idle.delete(id);
    if (this.live.passivated.has(id)) return;
    const parent = this.awaitedBy.get(id);
    if (parent === undefined) return;
    this.awaitedBy.delete(id);
    void this.rehydrate(parent).catch(() => undefined);
  }

  /** Keeps a swarm in memory while a command is applied to it; returns the release. */
  hold(swarmId: string): () => void {
    this.busy.set(swarmId, (this.busy.get(swarmId) ?? 0) + 1);
    return () => {
      const n = this.busy.get(swarmId)! - 1;
      if (n > 0) this.busy.set(swarmId, n);
      else this.busy.delete(swarmId);
    };
  }

  /** Resolves once the last commit of a just passivated swarm has settled. */
  settled(swarmId: string): Promise<void> | undefined {
    return this.settling.get(swarmId);
  }

  /** Stops the sweeps (runtime shutdown). */
  stop(): void {
    clearInterval(this.timer);
    this.timer = undefined;
    this.idle.clear();
  }

  /** Counts a waiting host's wait from now; forgets one that works. */
  private note(host: SwarmHost): void {
    // A commit of a host already passivated (or replaced) landing late says nothing of the new one.
    if (this.live.hosts.get(host.swarmId) !== host) return;
    if (!this.waits(host)) {
      this.idle.delete(host.swarmId);
      return;
    }
    this.idle.set(host.swarmId, Date.now());
    if (!this.timer && !this.live.closed) {
      // One timer for all waiting swarms, not one per swarm.
      this.timer = setInterval(() => this.sweep(), Math.max(5, this.afterMs / 2));
      this.timer.unref();
    }
  }

  /** Passivates every host that has waited long enough. */
  private sweep(): void {
    const now = Date.now();
    for (const [id, since] of this.idle) {
      if (now - since < this.afterMs) continue;
      this.idle.delete(id);
      const host = this.live.hosts.get(id);
      if (host) void this.passivate(host);
    }
    if (this.idle.size === 0) {
      clearInterval(this.timer);
      this.timer = undefined;
    }
  }

  /**
   * Evicts a waiting host once its commits are durable. The id is marked passivated before the
   * host goes, so no adoption pass ever sees the swarm unowned. A parent is only passivated when
   * every child it awaits is driven (or passivated) here: their steps are what bring it back.
   */
  private async passivate(host: SwarmHost): Promise<void> {
    await host.durable().catch(() => undefined);
    const { live } = this;
    const id = host.swarmId;
    if (live.closed || live.hosts.get(id) !== host || host.error || host.unrecordedEnd() || this.busy.has(id) || !this.waits(host)) return;
    const children = runningChildSwarms(host);
    if (!children.every((c) => live.hosts.has(c) || live.passivated.has(c))) return;
    live.passivated.add(id);
    for (const child of children) this.awaitedBy.set(child, id);
    this.questions.setAside(id);
    host.detach();
    // A commit still in flight (an asynchronous store) must land before the swarm is restored.
    const settled = host.durable().catch(() => undefined);
    this.settling.set(id, settled);
    void settled.then(() => {
      if (this.settling.get(id) === settled) this.settling.delete(id);
    });
  }

  /**
   * Whether a live swarm only waits: paused (for a human, or from outside), or awaiting
   * handoffs, with no call running but child swarms and, while it is paused for their question,
   * remote agents waiting on its human (a tool, an agent's model, a remote agent at work keep it
   * in memory).
   */
  private waits(host: SwarmHost): boolean {
    const status = host.status();
    if (status !== 'paused' && status !== 'awaitingHandoff') return false;
    let remote = 0;
    for (const c of runningCalls(host.context().round)) {
      if (c.kind === 'remote') remote++;
      else if (c.kind !== 'swarm') return false;
    }
    // Every remote call running must be one waiting on the human, not one still at work.
    return remote === 0 || (status === 'paused' && this.questions.asking(host.swarmId) >= remote);
  }
}

function noop(): void {}
