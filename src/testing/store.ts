/**
 * The store a path runs on, wrapped: it knows the last durable event of each swarm (so the
 * harness can check that no event reaches a subscriber before it is durable), counts commits,
 * and can "crash" after the N-th — every later write never completes, as if the process died
 * right after that commit; a new runtime then continues on the same underlying store.
 *
 * @module
 */
import type { SwarmStore } from '../store/types.js';

/** A wrapped store and what it knows (see the module comment). */
export interface CheckedStore {
  store: SwarmStore;
  /** Commits made durable through this wrapper. */
  commits(): number;
  /** The seq of the last durable event of `swarmId` (0 when none). */
  durableSeq(swarmId: string): number;
  /** Resolves once the wrapper froze (after its `crashAfter`-th commit). */
  frozen: Promise<void>;
}

const never = () => new Promise<never>(() => undefined);

/** `target` whose methods never complete once `frozen()` (reads included: a dead process reads nothing either). */
function frozenWith<T extends object>(target: T, frozen: () => boolean): T {
  return new Proxy(target, {
    get(t, prop, receiver) {
      const value = Reflect.get(t, prop, receiver);
      if (typeof value !== 'function') return value;
      return (...args: unknown[]) => (frozen() ? never() : value.apply(t, args));
    },
  });
}

/**
 * `base` wrapped (see the module comment). `crashAfter`: freeze after that many commits. The
 * wrapper reports `volatile: false`, so the runtime writes a snapshot with every step, as on
 * a store that outlives the process (an in-memory store does not, so a restart would find none).
 */
export function checkedStore(base: SwarmStore, crashAfter?: number): CheckedStore {
  let commits = 0;
  let isFrozen = false;
  let froze: () => void = () => undefined;
  const frozen = new Promise<void>((resolve) => (froze = resolve));
  const durable = new Map<string, number>();
  const written = (swarmId: string, lastSeq: number | undefined) => {
    if (lastSeq !== undefined) durable.set(swarmId, Math.max(durable.get(swarmId) ?? 0, lastSeq));
    commits++;
    if (crashAfter !== undefined && commits >= crashAfter) {
      isFrozen = true;
      froze();
    }
  };
  const overrides: Partial<SwarmStore> = {
    volatile: false,
    commit(c) {
      if (isFrozen) return never();
      const done = base.commit(c);
      const last = c.events.at(-1)?.seq;
      if (done === undefined) return written(c.swarmId, last);
      return done.then(() => (isFrozen ? never() : written(c.swarmId, last)));
    },
    // A dead process spends nothing more: its budget writes hang with its commits.
    ...(base.budgets ? { budgets: frozenWith(base.budgets, () => isFrozen) } : {}),
    claim: (...args) => (isFrozen ? never() : base.claim(...args)),
    renew: (...args) => (isFrozen ? never() : base.renew(...args)),
    release: (...args) => (isFrozen ? never() : base.release(...args)),
    // The underlying store outlives the runtimes of a path: the harness closes it.
    close: async () => undefined,
  };
  const store = new Proxy(base, {
    get(target, prop, receiver) {
      if (Object.hasOwn(overrides, prop)) return overrides[prop as keyof SwarmStore];
      const value = Reflect.get(target, prop, receiver);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
  return { store, commits: () => commits, durableSeq: (id) => durable.get(id) ?? 0, frozen };
}
