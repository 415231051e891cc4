/**
 * How a team's board and inbox are written: as rows of a stored list, not inside the team's
 * record. A commit appends what changed since the previous one (each task changed, in its new
 * state, once however often it changed; each message delivered), so writing costs the same on a
 * board of 100,000 tasks as on one of 10. The record names the list and its length (a
 * `MessagesRef` at `context.messages`, where the store puts the rows back on load, see
 * src/store/messages.ts). Restoring replays the rows: the last row of a task is its state, and
 * its `n` its place in creation order; messages before the inbox's first kept seq were dropped.
 *
 * Compaction: once the list holds more than twice the rows the state needs, the rows go on in
 * the other list of the pair ({@link TEAM_ROWS_LISTS}), and each commit also copies the next
 * {@link COPY_CHUNK} tasks (and messages kept) there, so no commit writes the whole board (which
 * would block the event loop for as long as it takes to serialize it). Until the copy is done,
 * the record names both lists (the previous one at `children.previous.snapshot.context.messages`,
 * where the store puts its rows back too): restoring replays the previous list, then the
 * current. The commit that copies the last chunk deletes the previous list. The copy is O(state)
 * once per O(state) changes: amortized O(1) per change.
 *
 * @module
 */
import type { MessagesRef, MessageWrite } from '../store/messages.js';
import type { Task } from '../define/team.js';
import type { TaskBoard } from './board.js';
import type { Inbox, InboxMessage } from './inbox.js';
import { runAtOnce, type Steps } from '../util/steps.js';

/** The pair of lists a team's rows alternate between (see the module doc). */
export const TEAM_ROWS_LISTS = ['/team', '/team.b'] as const;

/** The list a new team writes its rows to. */
export const TEAM_ROWS_LIST = TEAM_ROWS_LISTS[0];

/** One row of a team's list: a task in its new state and its place in creation order, or a message delivered. */
export type TeamRow = { task: Task; n: number } | { message: InboxMessage };

/** Rows the list may hold beyond twice what the state needs before it is compacted. */
const SLACK = 1_024;

/** Rows of the state a commit copies to the new list while compacting. */
export const COPY_CHUNK = 2_000;

/** Where a team's rows are stored: the list written to, its length, and the previous list while compacting. */
export interface RowsPlace {
  list: string;
  stored: number;
  previous?: { list: string; stored: number };
}

/** What one commit writes of the rows, and what its record says of them. */
export interface RowsBatch {
  writes: MessageWrite[];
  /** The rows' lists as the record names them (see the module doc). */
  ref: { list: string; current: MessagesRef; previous?: MessagesRef };
  /** Tells the rows the attempt that carried `writes` failed: the next batch rewrites the list whole. */
  failed: () => void;
}

/** Collects a team's changed tasks and new messages between commits (see the module doc). */
export class TeamRows {
  #list: string;
  /** Rows the store holds of `#list`, once the batches handed out are written (commits go in order). */
  #stored: number;
  #previous: { list: string; stored: number } | undefined;
  /** The state still to copy to `#list` while compacting. */
  #copy: { tasks: readonly Task[]; messages: readonly InboxMessage[]; at: number } | undefined;
  /** The next batch rewrites the list whole (a record written whole by an earlier version, a failed write). */
  #full: boolean;
  /** Tasks changed since the last batch, by id, in their latest state. */
  readonly #tasks = new Map<string, Task>();
  #messages: InboxMessage[] = [];
  readonly #offs: (() => void)[];

  /**
   * Follows `board` and `inbox` from now on. `place`: where the store holds the rows (a new
   * team: nothing yet); absent when it holds none that can be appended to (a record written
   * whole by an earlier version): the first batch then writes the list whole.
   */
  constructor(
    private readonly board: TaskBoard,
    private readonly inbox: Inbox,
    place?: RowsPlace,
  ) {
    this.#list = place?.list ?? TEAM_ROWS_LIST;
    this.#stored = place?.stored ?? 0;
    this.#full = place === undefined;
    this.#previous = place?.previous;
    // Restored while compacting: the copy starts again (a task copied twice is the same row).
    if (this.#previous) this.#startCopy();
    this.#offs = [board.onTask((task) => this.#tasks.set(task.id, task)), inbox.onMessage((message) => this.#messages.push(message))];
  }

  /** Stops following the board and the inbox. */
  close(): void {
    for (const off of this.#offs) off();
  }

  /** The list must be written whole next (the store may hold rows this writer does not know of). */
  resync(): void {
    this.#full = true;
  }

  /** The writes of the next commit: what changed since the last batch, and a chunk of a compaction under way. */
  take(): RowsBatch {
    const writes: MessageWrite[] = [];
    if (this.#full) {
      // Rare (an upgrade from format 1, a failed write): the only write of the whole state at once.
      const items: TeamRow[] = [];
      for (const task of this.board.tasks()) items.push(this.#row(task));
      for (const message of this.inbox.messages()) items.push({ message });
      writes.push({ list: this.#list, from: 0, items });
      this.#stored = items.length;
      this.#full = false;
      this.#endCopy(writes);
    } else {
      const needed = this.board.size + this.inbox.stats().retained;
      if (!this.#previous && this.#stored + this.#tasks.size + this.#messages.length > 2 * needed + SLACK) {
        this.#previous = { list: this.#list, stored: this.#stored };
        this.#list = this.#list === TEAM_ROWS_LISTS[0] ? TEAM_ROWS_LISTS[1] : TEAM_ROWS_LISTS[0];
        this.#stored = 0;
        this.#startCopy();
      }
      const items: TeamRow[] = [];
      for (const task of this.#tasks.values()) items.push(this.#row(task));
      for (const message of this.#messages) items.push({ message });
      const copy = this.#copy;
      if (copy) {
        const { tasks, messages } = copy;
        const end = Math.min(copy.at + COPY_CHUNK, tasks.length + messages.length);
        const kept = this.inbox.keptFrom;
        for (let i = copy.at; i < end; i++) {
          if (i < tasks.length) items.push(this.#row(this.board.task(tasks[i]!.id)!));
          else if (messages[i - tasks.length]!.seq >= kept) items.push({ message: messages[i - tasks.length]! });
        }
        copy.at = end;
      }
      if (items.length > 0) writes.push({ list: this.#list, from: this.#stored, items });
      this.#stored += items.length;
      if (copy && copy.at >= copy.tasks.length + copy.messages.length) this.#endCopy(writes);
    }
    this.#tasks.clear();
    this.#messages = [];
    const current = { xswarm$messages: this.#list, length: this.#stored };
    const previous = this.#previous && { xswarm$messages: this.#previous.list, length: this.#previous.stored };
    return { writes, ref: { list: this.#list, current, ...(previous ? { previous } : {}) }, failed: () => this.resync() };
  }

  #row(task: Task): TeamRow {
    return { task, n: this.board.position(task.id)! };
  }

  #startCopy(): void {
    this.#copy = { tasks: this.board.tasks(), messages: this.inbox.messages(), at: 0 };
  }

  /** The copy is done: the previous list goes with this commit. */
  #endCopy(writes: MessageWrite[]): void {
    if (this.#previous) writes.push({ list: this.#previous.list, from: 0, items: [] });
    this.#previous = undefined;
    this.#copy = undefined;
  }
}

/**
 * The tasks and messages a team's stored rows hold (the previous list's rows first, while a
 * compaction was under way): the board's first `count` tasks (by creation index `n`), each in
 * its last state, in creation order; the messages from seq `keptFrom` on, in seq order. Throws
 * on a row that is neither. A task's place is its own for good, except after a creation a crash
 * cut short (see `TaskBoard.createInSlices`): its rows stay in the list, and the tasks created
 * after it take their places again, with rows that come later; so the last row of each place
 * wins, and the places from `count` on (such a creation's that nothing took again) are dropped.
 */
export function replayRows(rows: readonly unknown[], keptFrom: number, count = Number.POSITIVE_INFINITY): { tasks: Task[]; messages: InboxMessage[] } {
  return runAtOnce(replaySteps([rows], keptFrom, count));
}

/** Rows replayed per step of {@link replaySteps}. */
const REPLAY_CHUNK = 1_024;

/**
 * {@link replayRows} as work in steps of {@link REPLAY_CHUNK} rows (`src/util/steps.ts`), over
 * the rows of `parts` in order (the previous list's and the current one's, not copied into one):
 * a 100,000-task board's rows replayed at once held the event loop for ~50 ms.
 */
export function* replaySteps(
  parts: readonly (readonly unknown[])[],
  keptFrom: number,
  count = Number.POSITIVE_INFINITY,
): Steps<{ tasks: Task[]; messages: InboxMessage[] }> {
  const tasks = new Map<number, Task>();
  const messages = new Map<number, InboxMessage>();
  let offset = 0;
  for (const rows of parts) {
    for (let i = 0; i < rows.length; i++) {
      const value = rows[i] as Partial<{ task: Task; n: number; message: InboxMessage }> | null;
      if (value && typeof value === 'object' && value.task && typeof value.task.id === 'string' && typeof value.n === 'number') {
        if (value.n < count) tasks.set(value.n, value.task);
      } else if (value && typeof value === 'object' && value.message && typeof value.message.seq === 'number') {
        if (value.message.seq >= keptFrom) messages.set(value.message.seq, value.message);
      } else throw new Error(`row ${offset + i} of the team's list is neither a task nor a message`);
      if ((i + 1) % REPLAY_CHUNK === 0) yield;
    }
    offset += rows.length;
  }
  return { tasks: yield* inOrder(tasks), messages: yield* inOrder(messages) };
}

/**
 * The values of `map` in the order of their keys. Rows are written in creation (and seq) order,
 * so the first row of each key mostly comes in that order: the values are then taken as they are,
 * in steps, and sorted only when a key is out of place.
 */
function* inOrder<T>(map: ReadonlyMap<number, T>): Steps<T[]> {
  const out: T[] = [];
  let last = Number.NEGATIVE_INFINITY;
  let sorted = true;
  for (const [key, value] of map) {
    if (key < last) sorted = false;
    last = key;
    out.push(value);
    if (out.length % REPLAY_CHUNK === 0) yield;
  }
  if (sorted) return out;
  return [...map].sort((a, b) => a[0] - b[0]).map(([, value]) => value);
}
