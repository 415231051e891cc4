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
 * The swarm's config (`context.config`) is stored the same way, as a list of one row written
 * once (see {@link ConfigRef}): before, every step wrote it again with the snapshot.
 *
 * @module
 */

/** What a stored snapshot holds in place of a message list: which list, and its first `length` rows. */
export interface MessagesRef {
  xswarm$messages: string;
  length: number;
}

/**
 * What a stored snapshot holds in place of the swarm's config (its instructions, tools and
 * handoffs with their agents' configs: the largest part of a snapshot after the conversations,
 * and the same at every step). It is stored once, as the one row of list {@link CONFIG_LIST},
 * and written again only when the swarm's context holds another config object. `at` names a
 * field of it: an in-flight model call's `tools` and `handoffs` are the config's own arrays.
 */
export interface ConfigRef {
  xswarm$value: typeof CONFIG_LIST;
  at?: ConfigField;
}

/** The fields of the config an in-flight model call's input shares with it. */
type ConfigField = 'tools' | 'handoffs';

/** The list holding a swarm's config: a name no message list has (theirs are '' or start with '/'). */
export const CONFIG_LIST = '#config';

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
 * what {@link MessageLists.prime} trusts as stored. Configs it put back are here too (their
 * list is an array {@link MessageLists} makes, holding the config).
 */
const assembled = new WeakMap<object, { list: string; rows: number }>();

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
    let stripped = mapLists(snapshot, '', (value, list, machine) => {
      if (!Array.isArray(value)) return value;
      // An in-flight call's input that is its machine's list (so far) is stored as a reference to it.
      if (machine && Array.isArray(machine.value) && isPrefix(value, machine.value)) return { xswarm$messages: machine.list, length: value.length };
      return this.track(list, value, writes, seen);
    });
    const config = configOf(stripped);
    if (config) {
      // A list of one row, the config object: written when that object is new to this list.
      this.track(CONFIG_LIST, [config], writes, seen);
      stripped = mapConfig(stripped, (value, at) => {
        if (at === undefined) return value === config ? { xswarm$value: CONFIG_LIST } : value;
        // Empty arrays are shorter as they are.
        return value === config[at] && Array.isArray(value) && value.length > 0 ? { xswarm$value: CONFIG_LIST, at } : value;
      });
    }
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
      // The config's list is an array made here: the config object itself is what was assembled.
      const origin = assembled.get(list === CONFIG_LIST && isObj(s.first) ? s.first : s.array);
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
  let config: Obj | undefined;
  const resolveConfig = (value: unknown): unknown => {
    if (!isConfigRef(value)) return value;
    if (!config) {
      const rows = lists.get(CONFIG_LIST) ?? [];
      const stored = rows[0];
      if (!isObj(stored)) throw new Error(`the swarm's config (list "${CONFIG_LIST}") is ${rows.length === 0 ? 'missing' : 'not an object'}`);
      config = stored;
      assembled.set(config, { list: CONFIG_LIST, rows: rows.length });
    }
    return value.at === undefined ? config : config[value.at];
  };
  return mapConfig(mapLists(snapshot, '', resolve), resolveConfig);
}

/** The swarm's config in a persisted swarm snapshot (`context.config`), if it holds one. */
function configOf(snapshot: unknown): Obj | undefined {
  const context = isObj(snapshot) ? snapshot.context : undefined;
  return isObj(context) && isObj(context.config) ? context.config : undefined;
}

/**
 * `snapshot` with its config (`context.config`) and its in-flight model calls' `input.tools`
 * and `input.handoffs` replaced by what `map` returns for them, copied only where that differs.
 */
function mapConfig(snapshot: unknown, map: (value: unknown, at?: ConfigField) => unknown): unknown {
  if (!isObj(snapshot) || !isObj(snapshot.context) || !('config' in snapshot.context)) return snapshot;
  const own = snapshot.context.config;
  const next = map(own);
  let out: Obj = next === own ? snapshot : { ...snapshot, context: { ...snapshot.context, config: next } };
  const children = snapshot.children;
  if (!isObj(children)) return out;
  let copy: Obj | undefined;
  for (const key of Object.keys(children)) {
    const child = children[key];
    if (!isObj(child) || !isObj(child.snapshot) || !isObj(child.snapshot.input)) continue;
    const input = child.snapshot.input;
    let changed: Obj | undefined;
    for (const at of ['tools', 'handoffs'] as const) {
      if (!(at in input)) continue;
      const mapped = map(input[at], at);
      if (mapped !== input[at]) (changed ??= { ...input })[at] = mapped;
    }
    if (changed) (copy ??= { ...children })[key] = { ...child, snapshot: { ...child.snapshot, input: changed } };
  }
  if (copy) out = { ...out, children: copy };
  return out;
}

/**
 * `snapshot` with each of its message lists (see the module comment) replaced by what `map`
 * returns for it, copied only where that differs. `map` gets the list's value and id (`path`
 * for a machine's `context.messages`); for an in-flight call's `input.messages`, also the id
 * and value of its machine's own `context.messages`.
 */
function mapLists(snapshot: unknown, path: string, map: (value: unknown, list: string, machine?: { list: string; value: unknown }) => unknown): unknown {
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

function isConfigRef(value: unknown): value is ConfigRef {
  return isObj(value) && value.xswarm$value === CONFIG_LIST;
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
export function nextListLengths(
  lengths: Readonly<Record<string, number>> | undefined,
  writes: readonly MessageWrite[],
): { lengths: Record<string, number>; bad?: string } {
  const next = { ...lengths };
  let bad: string | undefined;
  for (const { list, from, items } of writes) {
    if (from > 0 && (next[list] ?? 0) !== from) bad ??= `message list "${list}" has ${next[list] ?? 0} stored messages, the commit appends at ${from}`;
    if (from === 0 && items.length === 0) delete next[list];
    else next[list] = from + items.length;
  }
  return bad ? { lengths: next, bad } : { lengths: next };
}
