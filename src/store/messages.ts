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
    const stripped = this.machine(snapshot, '', writes, seen);
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

  /** A machine snapshot at `path` (list id of its own messages) with its lists referenced. */
  private machine(snapshot: unknown, path: string, writes: MessageWrite[], seen: Set<string>): unknown {
    if (!isObj(snapshot)) return snapshot;
    let out: Obj = snapshot;
    const context = snapshot.context;
    const own = isObj(context) && Array.isArray(context.messages) ? (context.messages as unknown[]) : undefined;
    if (own) out = { ...snapshot, context: { ...(context as Obj), messages: this.track(path, own, writes, seen) } };
    const children = snapshot.children;
    if (!isObj(children)) return out;
    let copy: Obj | undefined;
    for (const key of Object.keys(children)) {
      const child = children[key];
      if (!isObj(child) || !isObj(child.snapshot)) continue;
      const childSnapshot = child.snapshot;
      const childPath = `${path}/${encodeURIComponent(key)}`;
      let next: unknown = childSnapshot;
      if (isObj(childSnapshot.context)) {
        next = this.machine(childSnapshot, childPath, writes, seen);
      } else if (isObj(childSnapshot.input) && Array.isArray(childSnapshot.input.messages)) {
        const input = childSnapshot.input;
        const messages = input.messages as unknown[];
        const ref = own && isPrefix(messages, own) ? { xswarm$messages: path, length: messages.length } : this.track(`${childPath}:input`, messages, writes, seen);
        next = { ...childSnapshot, input: { ...input, messages: ref } };
      }
      if (next !== childSnapshot) (copy ??= { ...children })[key] = { ...child, snapshot: next };
    }
    return copy ? { ...out, children: copy } : out;
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
  const machine = (s: unknown): unknown => {
    if (!isObj(s)) return s;
    let out: Obj = s;
    if (isObj(s.context) && isRef(s.context.messages)) out = { ...s, context: { ...s.context, messages: resolve(s.context.messages) } };
    const children = s.children;
    if (!isObj(children)) return out;
    let copy: Obj | undefined;
    for (const key of Object.keys(children)) {
      const child = children[key];
      if (!isObj(child) || !isObj(child.snapshot)) continue;
      const cs = child.snapshot;
      let next: unknown = cs;
      if (isObj(cs.context)) next = machine(cs);
      else if (isObj(cs.input) && isRef(cs.input.messages)) next = { ...cs, input: { ...cs.input, messages: resolve(cs.input.messages) } };
      if (next !== cs) (copy ??= { ...children })[key] = { ...child, snapshot: next };
    }
    return copy ? { ...out, children: copy } : out;
  };
  return machine(snapshot);
}

function isRef(value: unknown): value is MessagesRef {
  return isObj(value) && typeof value.xswarm$messages === 'string' && typeof value.length === 'number';
}

function isObj(value: unknown): value is Obj {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
