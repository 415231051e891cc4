/**
 * A final snapshot the in-memory store persists when it is read. Persisting a machine snapshot
 * walks its whole context (XState looks for actor references in every object) and splitting its
 * message lists copies them; a swarm that ended in a volatile store is read rarely (a restart
 * test, replay, a door asking for its record), so the host hands the memory store the final,
 * immutable machine snapshot and the store persists it on the first read.
 *
 * @module
 */

/**
 * A snapshot persisted on first use: {@link resolve} computes it once (then keeps only the
 * result), and `JSON.stringify` sees the persisted snapshot, as it would have been committed.
 */
export class PendingSnapshot {
  private persist: (() => unknown) | undefined;
  private value: unknown;

  /** `persist` returns the snapshot as it is stored (persisted, without known secrets). */
  constructor(persist: () => unknown) {
    this.persist = persist;
  }

  /** The persisted snapshot. */
  resolve(): unknown {
    if (this.persist) {
      this.value = this.persist();
      this.persist = undefined;
    }
    return this.value;
  }

  toJSON(): unknown {
    return this.resolve();
  }
}

/** A snapshot as a store holds it, persisted if it was still pending. */
export function resolvedSnapshot(snapshot: unknown): unknown {
  return snapshot instanceof PendingSnapshot ? snapshot.resolve() : snapshot;
}
