/**
 * The claimable tasks of one type, in creation order: a binary min-heap of creation indexes, so
 * the first claimable task is found in O(log n) on a board of any size. Entries are not removed
 * when their task stops being claimable (claimed, or found blocked): the reader passes the test
 * of what is still claimable, and stale entries at the top are dropped as they are met. A task
 * that becomes claimable again is pushed again.
 *
 * @module
 */

/** A min-heap of (creation index, task id), with lazy removal. */
export class ReadyHeap {
  readonly #order: number[] = [];
  readonly #ids: string[] = [];

  /** Entries held, stale ones included. */
  get size(): number {
    return this.#order.length;
  }

  push(order: number, id: string): void {
    const o = this.#order;
    const ids = this.#ids;
    let i = o.length;
    o.push(order);
    ids.push(id);
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (o[parent]! <= order) break;
      o[i] = o[parent]!;
      ids[i] = ids[parent]!;
      i = parent;
    }
    o[i] = order;
    ids[i] = id;
  }

  /**
   * Appends entries whose creation indexes (ascending) are above every entry held: each one's
   * parent in the heap is lower already, so nothing sifts. O(entries), no comparison.
   */
  append(order: readonly number[], ids: readonly string[]): void {
    for (let i = 0; i < ids.length; i++) {
      this.#order.push(order[i]!);
      this.#ids.push(ids[i]!);
    }
  }

  /**
   * The first `limit` distinct ids that pass `valid`, lowest creation index first; stale
   * entries met on the way are dropped. O(limit · log n) plus the stale entries dropped.
   */
  first(limit: number, valid: (id: string) => boolean): { order: number; id: string }[] {
    const taken: { order: number; id: string }[] = [];
    const seen = new Set<string>();
    while (taken.length < limit && this.#order.length > 0) {
      const order = this.#order[0]!;
      const id = this.#ids[0]!;
      this.#pop();
      // A task pushed twice (claimable again before its stale entry was dropped) is one entry.
      if (seen.has(id) || !valid(id)) continue;
      seen.add(id);
      taken.push({ order, id });
    }
    for (const { order, id } of taken) this.push(order, id);
    return taken;
  }

  #pop(): void {
    const o = this.#order;
    const ids = this.#ids;
    const lastOrder = o.pop()!;
    const lastId = ids.pop()!;
    const n = o.length;
    if (n === 0) return;
    let i = 0;
    for (;;) {
      const left = 2 * i + 1;
      if (left >= n) break;
      const right = left + 1;
      const child = right < n && o[right]! < o[left]! ? right : left;
      if (o[child]! >= lastOrder) break;
      o[i] = o[child]!;
      ids[i] = ids[child]!;
      i = child;
    }
    o[i] = lastOrder;
    ids[i] = lastId;
  }
}
