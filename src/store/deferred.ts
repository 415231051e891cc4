/**
 * A store that is still being opened (a network store whose module and connection load on
 * first use): every call waits for it, so `createRuntime` stays synchronous.
 *
 * @module
 */
import { summaryOf } from './summary.js';
import type { SwarmStore } from './types.js';
import { type BudgetLedger, memoryLedger } from './budgets.js';

/**
 * The ledger of the store `ready` opens: its own, or one in this process's memory when it keeps
 * none (as the runtime does for any store without one).
 */
function deferredLedger(ready: Promise<SwarmStore>): BudgetLedger {
  let fallback: BudgetLedger | undefined;
  const ledger = async () => (await ready).budgets ?? (fallback ??= memoryLedger());
  return {
    reserve: async (r) => (await ledger()).reserve(r),
    settle: async (key, used) => (await ledger()).settle(key, used),
    charge: async (r) => (await ledger()).charge(r),
    raise: async (id, caps, now, opening) => (await ledger()).raise(id, caps, now, opening),
    account: async (id) => (await ledger()).account(id),
  };
}

/** A store answering through `opening` once it resolves; a failed opening fails every call with its error. */
export function deferredStore(opening: Promise<SwarmStore>): SwarmStore {
  let store: SwarmStore | undefined;
  const ready = opening.then((s) => (store = s));
  // Reported by the first call that needs the store, not as an unhandled rejection.
  ready.catch(() => undefined);
  return {
    // Known once the store is open: until then a start reads first, as with any store.
    get refusesExisting() {
      return store?.refusesExisting === true;
    },
    load: async (id) => (await ready).load(id),
    commit: async (c) => (await ready).commit(c),
    readEvents: async (id, since, limit) => (await ready).readEvents(id, since, limit),
    // None known before the store is open: the reader reads.
    knownEvents: (id, since) => store?.knownEvents?.(id, since) ?? [],
    announcesAfter: (id, lastSeq) => store?.announcesAfter?.(id, lastSeq) === true,
    list: async (filter) => (await ready).list(filter),
    summary: async (id) => summaryOf(await ready, id),
    claim: async (id, lease, now, takeover) => (await ready).claim(id, lease, now, takeover),
    renew: async (owner, ids, until) => (await ready).renew(owner, ids, until),
    release: async (owner, ids) => (await ready).release(owner, ids),
    prune: async (olderThan) => (await ready).prune(olderThan),
    remove: async (ids) => {
      const inner = await ready;
      if (!inner.remove) throw new Error('this store cannot delete swarms');
      return inner.remove(ids);
    },
    stats: () => store?.stats?.() ?? { commits: 0, transactions: 0 },
    budgets: deferredLedger(ready),
    connected: () => store?.connected?.() ?? true,
    watch(id, onChange) {
      let stop: (() => void) | undefined;
      let stopped = false;
      void ready.then(
        (s) => {
          if (!stopped) stop = s.watch?.(id, onChange);
        },
        () => undefined,
      );
      return () => {
        stopped = true;
        stop?.();
      };
    },
    async close() {
      await (await ready.catch(() => undefined))?.close();
    },
  };
}
