/**
 * Reading a swarm's stored message lists from its `steps` rows (the chain of rows holding
 * message writes, back from `swarms.messages_key`), as work in steps (`src/util/steps.ts`): one
 * row read or applied per step. A team's board is such a list, and a 100,000-task board's rows
 * read and parsed in one go blocked the event loop for ~190 ms; `load` (and `summary` and
 * `list`, which read the lists only to name a problem) run this in steps of a few ms. The rows
 * behind the chain's head are never written again (a commit appends to the swarm's last row
 * only, and rows are deleted only with a finished swarm), so a read spread over several
 * macrotasks reads one state: `load` reads the record and the head row in its first step,
 * together, as a read at once does.
 *
 * @module
 */
import type { Statement } from 'better-sqlite3';
import type { Steps } from '../../util/steps.js';
import type { MessageWrite } from '../messages.js';
import { SEQ_SPAN } from './writes.js';

/** The statement reading one `steps` row's message writes and the key of the previous such row. */
export type SelectMessages = Statement<[number], { prev_messages: number | null; messages: string | null }>;

/** The statement telling whether one `steps` row's message writes are JSON (SQLite's `json_valid`). */
export type SelectValid = Statement<[number], { prev_messages: number | null; valid: number | null }>;

/** The SQL of {@link SelectMessages}. */
export const SELECT_MESSAGES = `SELECT prev_messages, messages FROM steps WHERE key = ?`;

/** The SQL of {@link SelectValid}. */
export const SELECT_VALID = `SELECT prev_messages, json_valid(messages) AS valid FROM steps WHERE key = ?`;

/**
 * A swarm's stored message lists, by list id: the message writes of its steps that hold some
 * (the chain back from `messages_key`), applied in order; throws naming what cannot be read.
 * One step per row read, and per row parsed and applied.
 */
export function* readListSteps(select: SelectMessages, row: { no: number; messages_key: number | null }): Steps<Map<string, unknown[]>> {
  const base = row.no * SEQ_SPAN;
  const chain: { key: number; messages: string }[] = [];
  for (let key = row.messages_key; key !== null; ) {
    const step = select.get(key);
    if (!step?.messages) throw new Error(`the messages stored with event ${key - base} are missing`);
    chain.push({ key, messages: step.messages });
    key = step.prev_messages;
    yield;
  }
  const lists = new Map<string, unknown[]>();
  for (let i = chain.length - 1; i >= 0; i--) {
    const { key, messages } = chain[i]!;
    // Dropped once applied: a large board's text is not held twice (as text and as rows).
    chain.pop();
    let writes: unknown;
    try {
      writes = JSON.parse(messages);
    } catch (e) {
      throw new Error(`the messages stored with event ${key - base} are not JSON (${(e as Error).message})`);
    }
    if (!Array.isArray(writes)) throw new Error(`the messages stored with event ${key - base} are not a list of writes`);
    for (const w of writes as MessageWrite[]) {
      if (typeof w?.list !== 'string' || typeof w.from !== 'number' || !Array.isArray(w.items)) {
        throw new Error(`the messages stored with event ${key - base} are not a list of writes`);
      }
      const rows = w.from === 0 ? [] : (lists.get(w.list) ?? []);
      if (rows.length !== w.from) throw new Error(`message ${rows.length} of list "${w.list}" is missing`);
      for (const item of w.items) rows.push(item);
      lists.set(w.list, rows);
    }
    yield;
  }
  return lists;
}

/**
 * Whether {@link readListSteps} would find a row of the chain missing or not JSON (SQLite's
 * `json_valid`, without parsing: cheaper than reading the lists), one step per row. Not `strict`:
 * what a listing asks (`BAD_MESSAGES` in store.ts): only a row that is not JSON counts, a missing
 * row ends the chain and a row without writes is passed.
 */
export function* badMessageSteps(select: SelectValid, row: { messages_key: number | null }, strict = true): Steps<boolean> {
  for (let key = row.messages_key; key !== null; ) {
    const step = select.get(key);
    if (!step) return strict;
    if (step.valid === 0 || (strict && step.valid === null)) return true;
    key = step.prev_messages;
    yield;
  }
  return false;
}
