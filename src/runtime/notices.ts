/**
 * What the runtimes sharing a store tell each other without being asked: a runtime that released
 * leases (it drained or closed) says so — over the transport when there is one, in the store's
 * notices (`SwarmStore.notices`, a SQLite file) otherwise — and the others adopt at once instead
 * of at their next scan; and a stop for a swarm held by another process of the same SQLite file
 * is left in the store, where its holder finds it within {@link NOTICE_POLL_MS}.
 *
 * @module
 */
import type { SwarmError } from '../errors.js';
import type { SwarmStore } from '../store/types.js';
import type { Transport, TransportSubscription } from '../transport/types.js';
import type { Commands } from './commands.js';
import type { Leases } from './leases.js';
import type { LiveSwarms } from './live.js';

/** How often a runtime on a store with notices reads them (two indexed reads of a tiny table). */
export const NOTICE_POLL_MS = 200;

/**
 * When a runtime told of a release scans for swarms to adopt, in ms after the notice: at once,
 * and again a little later, since a store whose listing follows the writes of other processes
 * (JetStream's index is fed by a watch) may not show every released lease yet when the notice
 * arrives. Each scan lists only the swarms nobody holds: cheap when there are none.
 */
const ADOPT_AFTER_NOTICE_MS = [0, 250, 1_000, 3_000];

/** What the notices need. */
export interface NoticeDeps {
  store: SwarmStore;
  live: Pick<LiveSwarms, 'hosts' | 'passivated' | 'closed'>;
  leases: Pick<Leases, 'adopt'>;
  commands: Pick<Commands, 'stop'>;
  /** The transport to the other runtimes and their subject prefix, when there is one. */
  reach?: { transport: Promise<Transport>; prefix: string } | undefined;
}

/** The notices of one runtime: heard while it runs, told when it releases its leases. */
export class Notices {
  private timer: NodeJS.Timeout | undefined;
  private subscription: TransportSubscription | undefined;
  private lastReleases: number | undefined;
  private polling = false;
  /** Whether releases are heard (after `start`): only a started runtime adopts. */
  private adopting = false;
  /** The adoption scans a notice scheduled. */
  private readonly followUps = new Set<NodeJS.Timeout>();
  private stopped = false;

  constructor(private readonly deps: NoticeDeps) {}

  /**
   * Applies the stop requests left in the store for swarms held here, from the runtime's
   * creation on: a runtime that only runs its own swarms (`xswarm run`, a service that never
   * calls `start`) is reached by a stop from another process too.
   */
  watchStops(): void {
    if (this.stopped || this.timer || !this.deps.store.notices) return;
    this.timer = setInterval(() => void this.poll(), NOTICE_POLL_MS);
    this.timer.unref();
  }

  /** Starts listening for releases told by others (`runtime.start`: this runtime adopts from then on). */
  async start(): Promise<void> {
    if (this.stopped || this.adopting) return;
    this.adopting = true;
    const { reach, store } = this.deps;
    if (store.notices) {
      this.lastReleases = store.notices.releases();
      this.watchStops();
    }
    if (reach) {
      const transport = await reach.transport;
      if (this.stopped) return;
      this.subscription = transport.subscribe(releasedSubject(reach.prefix), () => this.adoptNow());
      await transport.flush();
    }
  }

  /** Stops listening (the runtime drains or closes). */
  stop(): void {
    this.stopped = true;
    clearInterval(this.timer);
    for (const t of this.followUps) clearTimeout(t);
    this.followUps.clear();
    this.subscription?.unsubscribe();
    this.subscription = undefined;
  }

  /** Tells the other runtimes that this one released its leases: they adopt at once. Never throws. */
  async released(): Promise<void> {
    const { reach, store } = this.deps;
    try {
      store.notices?.released();
    } catch {
      // A store that cannot take it: the others adopt at their next scan.
    }
    if (!reach) return;
    try {
      const transport = await reach.transport;
      if (transport.status() === 'closed') return;
      transport.publish(releasedSubject(reach.prefix), '{}');
      await transport.flush();
    } catch {
      // NATS down: the others adopt at their next scan.
    }
  }

  /** Adopts what was released: now, and in the follow-up scans of {@link ADOPT_AFTER_NOTICE_MS}. */
  private adoptNow(): void {
    for (const ms of ADOPT_AFTER_NOTICE_MS) {
      const timer = setTimeout(() => {
        this.followUps.delete(timer);
        if (this.stopped || this.deps.live.closed) return;
        void this.deps.leases.adopt('others').catch(() => undefined);
      }, ms);
      timer.unref();
      this.followUps.add(timer);
    }
  }

  /** One read of the notices: a new release means something to adopt; stops for swarms held here are applied. */
  private async poll(): Promise<void> {
    const notices = this.deps.store.notices;
    if (!notices || this.polling || this.stopped) return;
    this.polling = true;
    try {
      const releases = this.adopting ? notices.releases() : this.lastReleases;
      if (releases !== this.lastReleases) {
        this.lastReleases = releases;
        this.adoptNow();
      }
      const { live, commands } = this.deps;
      for (const request of notices.stopRequests()) {
        if (this.stopped) return;
        if (!live.hosts.has(request.swarmId) && !live.passivated.has(request.swarmId)) continue;
        try {
          await commands.stop(request.swarmId, request.reason);
          notices.clearStop(request.swarmId);
        } catch (e) {
          // Ended meanwhile: nothing left to stop. Anything else is tried again at the next poll.
          if ((e as SwarmError).code === 'wrong-state') notices.clearStop(request.swarmId);
        }
      }
    } catch {
      // A busy file: the next poll reads again.
    } finally {
      this.polling = false;
    }
  }
}

/** The subject on which runtimes say they released leases. */
function releasedSubject(prefix: string): string {
  return `${prefix}.released`;
}
