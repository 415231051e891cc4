/**
 * Conversations stored as rows. The message lists of a swarm (the orchestrator's, each running
 * agent's) only grow, and they are most of its snapshot: writing them whole at every step made
 * a run cost O(turns²) bytes and time. Instead, a commit carries the messages added since the
 * last one ({@link MessageWrite}), and the stored snapshot names each list by a
 * {@link MessagesRef} (its id and length) where the array was. On load, a store puts the lists
 * back ({@link assembleSnapshot}), so what XState restores is exactly the snapshot it persisted.
 *
 * Where the lists are, in a persisted swarm snapshot: `context.messages` of the swarm machine
 * and of each agent machine among its children (recursively), and `input.messages` of an
 * in-flight model call (a promise actor), which is the same list as its machine's (then it is
 * stored as a reference to that list) or, failing that, a list of its own.
 *
 * @module
 */

/** What a stored snapshot holds in place of a message list: which list, and its first `length` rows. */
export interface MessagesRef {
  xswarm$messages: string;
  length: number;
}

/**
 * A write to one stored message list, applied with the commit's record: the list's rows from
 * index `from` on are replaced by `items` (a rewrite from 0; a deletion when `items` is empty
 * and `from` is 0). A write with `from` above 0 is always an append at the stored length (the
 * writer knows what it stored), so a store need not delete anything for it.
 */
export interface MessageWrite {
  list: string;
  from: number;
  items: unknown[];
}

/** What a writer knows it stored of one list: the array, its length and its ends. */
interface Stored {
  array: readonly unknown[];
  length: number;
  first: unknown;
  last: unknown;
}

type Obj = Record<string, unknown>;

/**
 * Arrays {@link assembleSnapshot} made, with the list they came from and how many rows it had:
 * what {@link MessageLists.prime} trusts as stored.
 */
const assembled = new WeakMap<readonly unknown[], { list: string; rows: number }>();

/**
 * The host's side: turns each persisted snapshot into a snapshot with its lists referenced and
 * the writes that bring the stored rows up to date. It remembers what it wrote, so a step
 * writes only the messages added since the previous one. Appending is recognized by identity
 * (the array, or its first and last stored elements are the same objects): the machines build
 * a longer list by copying the references of the shorter one (`[...messages, next]`) and never
 * mutate a message; a list that changed otherwise is rewritten whole.
 */
export class MessageLists {
  private stored = new Map<string, Stored>();

  /**
   * `snapshot` (an `actor.getPersistedSnapshot()`, not mutated) with its message lists
   * replaced by references, and the writes to store with it. Call once per commit, in commit
   * order: it assumes the writes it returns are applied.
   */
  split(snapshot: unknown): { snapshot: unknown; writes: MessageWrite[] } {
    const writes: MessageWrite[] = [];
    const seen = new Set<string>();
    const stripped = mapLists(snapshot, '', (value, list, machine) => {
      if (!Array.isArray(value)) return value;
      // An in-flight call's input that is its machine's list (so far) is stored as a reference to it.
      if (machine && Array.isArray(machine.value) && isPrefix(value, machine.value)) return { xswarm$messages: machine.list, length: value.length };
      return this.track(list, value, writes, seen);
    });
    // A list gone from the snapshot (an agent that finished) is deleted with it.
    for (const [list, s] of this.stored) {
      if (seen.has(list)) continue;
      if (s.length > 0) writes.push({ list, from: 0, items: [] });
      this.stored.delete(list);
    }
    return { snapshot: stripped, writes };
  }

  /**
   * Starts from a snapshot as a store loaded it: its lists that {@link assembleSnapshot} made
   * from all the rows of the same list are stored, and the next commit appends to them; any
   * other list (a snapshot stored whole, before lists were rows) is written whole once.
   */
  prime(snapshot: unknown): void {
    this.stored.clear();
    this.split(snapshot);
    for (const [list, s] of this.stored) {
      const origin = assembled.get(s.array);
      if (origin?.list !== list || origin.rows !== s.length) this.stored.delete(list);
    }
  }

  /** The reference to list `list`, now `array`; pushes the write that stores it. */
  private track(list: string, array: unknown[], writes: MessageWrite[], seen: Set<string>): MessagesRef {
    seen.add(list);
    const before = this.stored.get(list);
    const n = array.length;
    if (before && appendsTo(array, before)) {
      if (n > before.length) writes.push({ list, from: before.length, items: array.slice(before.length) });
    } else if (n > 0 || (before && before.length > 0)) {
      writes.push({ list, from: 0, items: array.slice() });
    }
    this.stored.set(list, { array, length: n, first: array[0], last: array[n - 1] });
    return { xswarm$messages: list, length: n };
  }
}

/** Whether `array` is `stored` with messages appended (see {@link MessageLists}). */
function appendsTo(array: readonly unknown[], stored: Stored): boolean {
  if (array === stored.array && array.length >= stored.length) return true;
  if (array.length < stored.length) return false;
  return stored.length === 0 || (array[0] === stored.first && array[stored.length - 1] === stored.last);
}

/** Whether `part` is the beginning of `whole` (the same message objects). */
function isPrefix(part: readonly unknown[], whole: readonly unknown[]): boolean {
  if (part === whole) return true;
  const n = part.length;
  return n <= whole.length && (n === 0 || (part[0] === whole[0] && part[n - 1] === whole[n - 1]));
}

/**
 * `snapshot` as stored, with every {@link MessagesRef} replaced by the first `length` messages
 * of its list (`lists` maps list ids to the stored rows, in order). References to the same
 * list and length share one array, as they did when persisted. A snapshot without references
 * (written whole, before lists were rows) is returned as it is. Throws when a list has fewer
 * rows than a reference names: the stored data is incomplete.
 */
export function assembleSnapshot(snapshot: unknown, lists: ReadonlyMap<string, readonly unknown[]>): unknown {
  const made = new Map<string, unknown[]>();
  const resolve = (value: unknown): unknown => {
    if (!isRef(value)) return value;
    const key = `${value.length}:${value.xswarm$messages}`;
    let array = made.get(key);
    if (!array) {
      const rows = lists.get(value.xswarm$messages) ?? [];
      if (rows.length < value.length) {
        throw new Error(`message list "${value.xswarm$messages}" has ${rows.length} of its ${value.length} stored messages`);
      }
      array = rows.slice(0, value.length);
      made.set(key, array);
      assembled.set(array, { list: value.xswarm$messages, rows: rows.length });
    }
    return array;
  };
  return mapLists(snapshot, '', resolve);
}

/**
 * `snapshot` with each of its message lists (see the module comment) replaced by what `map`
 * returns for it, copied only where that differs. `map` gets the list's value and id (`path`
 * for a machine's `context.messages`); for an in-flight call's `input.messages`, also the id
 * and value of its machine's own `context.messages`.
 */
function mapLists(
  snapshot: unknown,
  path: string,
  map: (value: unknown, list: string, machine?: { list: string; value: unknown }) => unknown,
): unknown {
  if (!isObj(snapshot)) return snapshot;
  let out: Obj = snapshot;
  const context = snapshot.context;
  const own = isObj(context) ? context.messages : undefined;
  if (isObj(context)) {
    const next = map(own, path);
    if (next !== own) out = { ...snapshot, context: { ...context, messages: next } };
  }
  const children = snapshot.children;
  if (!isObj(children)) return out;
  let copy: Obj | undefined;
  for (const key of Object.keys(children)) {
    const child = children[key];
    if (!isObj(child) || !isObj(child.snapshot)) continue;
    const cs = child.snapshot;
    const childPath = `${path}/${encodeURIComponent(key)}`;
    let next: unknown = cs;
    if (isObj(cs.context)) next = mapLists(cs, childPath, map);
    else if (isObj(cs.input)) {
      const messages = cs.input.messages;
      const mapped = map(messages, `${childPath}:input`, { list: path, value: own });
      if (mapped !== messages) next = { ...cs, input: { ...cs.input, messages: mapped } };
    }
    if (next !== cs) (copy ??= { ...children })[key] = { ...child, snapshot: next };
  }
  return copy ? { ...out, children: copy } : out;
}

function isRef(value: unknown): value is MessagesRef {
  return isObj(value) && typeof value.xswarm$messages === 'string' && typeof value.length === 'number';
}

function isObj(value: unknown): value is Obj {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * The list lengths after `writes` are applied to lists of `lengths`, or why the writes do not fit
 * (an append that does not start at its list's stored length).
 */
export function nextListLengths(lengths: Readonly<Record<string, number>> | undefined, writes: readonly MessageWrite[]): { lengths: Record<string, number>; bad?: string } {
  const next = { ...lengths };
  let bad: string | undefined;
  for (const { list, from, items } of writes) {
    if (from > 0 && (next[list] ?? 0) !== from) bad ??= `message list "${list}" has ${next[list] ?? 0} stored messages, the commit appends at ${from}`;
    if (from === 0 && items.length === 0) delete next[list];
    else next[list] = from + items.length;
  }
  return bad ? { lengths: next, bad } : { lengths: next };
}
