/**
 * How a team's board and inbox are written: as rows of one stored list, not inside the team's
 * record. A commit appends what changed since the previous one (each task changed, in its new
 * state, once however often it changed; each message delivered), so writing costs the same on a
 * board of 100,000 tasks as on one of 10; the record names the list and its length (a
 * `MessagesRef` at `context.messages`, where the store puts the rows back on load, see
 * src/store/messages.ts). Restoring replays the rows: the last row of a task is its state, in
 * the order of their first rows (creation order); messages before the inbox's first kept seq
 * were dropped. Once the list holds more than twice the rows the state needs, a commit rewrites
 * it whole (the board's tasks and the messages kept), so it stays O(state), amortized O(1) per
 * change.
 *
 * @module
 */
import type { MessagesRef, MessageWrite } from '../store/messages.js';
import type { Task } from '../define/team.js';
import type { TaskBoard } from './board.js';
import type { Inbox, InboxMessage } from './inbox.js';

/** The stored list of a team's rows. */
export const TEAM_ROWS_LIST = '/team';

/** One row of a team's list: a task in its new state, or a message delivered. */
export type TeamRow = { task: Task } | { message: InboxMessage };

/** Rows the list may hold beyond twice what the state needs before it is rewritten. */
const SLACK = 1_024;

/** What one commit writes of the rows, and the reference its record holds. */
export interface RowsBatch {
  writes: MessageWrite[];
  ref: MessagesRef;
  /** Tells the rows the attempt that carried `writes` failed: the next batch rewrites the list. */
  failed: () => void;
}

/** Collects a team's changed tasks and new messages between commits (see the module doc). */
export class TeamRows {
  /** Rows the store holds, once the batches handed out are written (commits go in order). */
  #stored: number;
  /** The next batch rewrites the list whole (nothing stored yet, a failed write, a long list). */
  #full: boolean;
  /** Tasks changed since the last batch, in their latest state (insertion order: first change). */
  readonly #tasks = new Map<string, Task>();
  #messages: InboxMessage[] = [];
  readonly #offs: (() => void)[];

  /**
   * Follows `board` and `inbox` from now on. `stored`: the rows the store holds of the list
   * (from a loaded record); absent when it holds none that can be appended to (a new team, a
   * record written whole by an earlier version): the first batch then writes the list whole.
   */
  constructor(
    private readonly board: TaskBoard,
    private readonly inbox: Inbox,
    stored?: number,
  ) {
    this.#stored = stored ?? 0;
    this.#full = stored === undefined;
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

  /** The writes of the next commit: what changed since the last batch, or the whole list. */
  take(): RowsBatch {
    const needed = this.board.size + this.inbox.stats().retained;
    const pending = this.#tasks.size + this.#messages.length;
    let writes: MessageWrite[];
    if (this.#full || this.#stored + pending > 2 * needed + SLACK) {
      const items: TeamRow[] = [];
      for (const task of this.board.tasks()) items.push({ task });
      for (const message of this.inbox.messages()) items.push({ message });
      writes = [{ list: TEAM_ROWS_LIST, from: 0, items }];
      this.#stored = items.length;
      this.#full = false;
    } else if (pending > 0) {
      const items: TeamRow[] = [];
      for (const task of this.#tasks.values()) items.push({ task });
      for (const message of this.#messages) items.push({ message });
      writes = [{ list: TEAM_ROWS_LIST, from: this.#stored, items }];
      this.#stored += items.length;
    } else writes = [];
    this.#tasks.clear();
    this.#messages = [];
    return { writes, ref: { xswarm$messages: TEAM_ROWS_LIST, length: this.#stored }, failed: () => this.resync() };
  }
}

/**
 * The tasks and messages a team's stored rows hold: each task in its last state, in the order of
 * their first rows; the messages from seq `keptFrom` on, in seq order. Throws on a row that is
 * neither.
 */
export function replayRows(rows: readonly unknown[], keptFrom: number): { tasks: Task[]; messages: InboxMessage[] } {
  const tasks = new Map<string, Task>();
  const messages = new Map<number, InboxMessage>();
  for (const [i, row] of rows.entries()) {
    const value = row as Partial<{ task: Task; message: InboxMessage }> | null;
    if (value && typeof value === 'object' && value.task && typeof value.task.id === 'string') tasks.set(value.task.id, value.task);
    else if (value && typeof value === 'object' && value.message && typeof value.message.seq === 'number') {
      if (value.message.seq >= keptFrom) messages.set(value.message.seq, value.message);
    } else throw new Error(`row ${i} of the team's list is neither a task nor a message`);
  }
  return { tasks: [...tasks.values()], messages: [...messages.values()].sort((a, b) => a.seq - b.seq) };
}
