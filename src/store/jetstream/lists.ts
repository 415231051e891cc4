/**
 * A swarm's message lists on JetStream, read back by `load`, which puts them into the snapshot
 * that names them. Since record format 3 a commit's list writes are in its commit message on
 * the swarm's event subject (see `./batch.ts`), applied in order; before, each row was a
 * message of the messages stream, a subject per list, its index in a header (a rewrite purged
 * the list's old rows first). A swarm written in both layouts reads both, the older first.
 *
 * @module
 */
import { COMMIT_HEADER, readCommitBody, readCommitHeader } from './batch.js';
import { scanSubject, type StreamContext } from './events.js';
import { INDEX_HEADER, type Names } from './names.js';
import { applyWrites, RECORD_FORMAT, type StoredValue } from './records.js';

/** Reads the rows of swarms' message lists. */
export class MessageLists {
  constructor(private readonly names: Names) {}

  /**
   * Reads a swarm's message lists as stored for its value `value` at KV revision `rev`: the rows
   * of the messages stream (written before format 3: by index, the last of an index winning),
   * then the list writes of its commit messages in order (a copy of one landing late, and those
   * of later revisions, skipped), then the value's outbox (perhaps not published yet). Returns a
   * function giving the lists, which throws naming a missing or unreadable row.
   */
  async read(ctx: StreamContext, swarmId: string, value: StoredValue, rev: number): Promise<() => Map<string, unknown[]>> {
    const lists = new Map<string, unknown[]>();
    if (value.v < RECORD_FORMAT || value.legacyRows) await this.readRows(ctx, swarmId, lists);
    let broken: string | undefined;
    // A value naming no list with rows needs no read (its outbox holds whatever it writes).
    if (value.v === RECORD_FORMAT && Object.keys(value.lists ?? {}).length > 0) {
      let applied = 0;
      await scanSubject(ctx, this.names.eventStream, this.names.eventSubject(swarmId), 1, (m) => {
        const h = readCommitHeader(m.headers?.get(COMMIT_HEADER));
        if (!h || h.writes === 0 || h.rev <= applied || h.rev > rev) return true;
        const body = readCommitBody(m.string());
        if (typeof body === 'string') {
          broken = `the list writes of revision ${h.rev} cannot be read (${body})`;
          return false;
        }
        applyWrites(lists, body.messages ?? []);
        applied = h.rev;
        return true;
      });
    }
    applyWrites(lists, value.outbox?.messages ?? []);
    return () => {
      if (broken) throw new Error(broken);
      for (const [list, rows] of lists) {
        for (let i = 0; i < rows.length; i++) {
          if (!(i in rows)) throw new Error(`message ${i} of list "${list}" is missing`);
          const row = rows[i];
          if (row instanceof Unreadable) throw new Error(row.detail);
        }
      }
      return lists;
    };
  }

  /** The rows a swarm's lists have in the messages stream (a message per row, by index). */
  private async readRows(ctx: StreamContext, swarmId: string, lists: Map<string, unknown[]>): Promise<void> {
    await scanSubject(ctx, this.names.messageStream, this.names.allLists(swarmId), 1, (m) => {
      const list = this.names.listOf(m.subject);
      const idx = Number(m.headers?.get(INDEX_HEADER));
      if (!Number.isInteger(idx) || idx < 0) return true;
      let rows = lists.get(list);
      if (!rows) lists.set(list, (rows = []));
      try {
        rows[idx] = JSON.parse(m.string());
      } catch (e) {
        rows[idx] = new Unreadable(`message ${idx} of list "${list}" is not JSON (${(e as Error).message})`);
      }
      return true;
    });
  }
}

/** A stored message row that is not JSON (an error once the list is used). */
class Unreadable {
  constructor(readonly detail: string) {}
}
