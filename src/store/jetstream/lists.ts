/**
 * A swarm's message lists on JetStream: rows of the messages stream, a subject per list, one
 * message per row with its index in a header (see `MessageWrite`). Rows are published from a
 * commit's outbox (a rewrite purges the list's old rows first) and read back by `load`, which
 * puts the lists back into the snapshot that names them.
 *
 * @module
 */
import { headers } from '@nats-io/transport-node';
import type { MessageWrite } from '../messages.js';
import { scanSubject, type StreamContext } from './events.js';
import { INDEX_HEADER, type Names } from './names.js';
import { applyWrites } from './records.js';

/** Writes and reads the rows of swarms' message lists. */
export class MessageLists {
  constructor(
    private readonly names: Names,
    private readonly timeoutMs: number,
  ) {}

  /**
   * Publishes one write's rows, each with its index (idempotent: a row published again is the
   * same message at the same index). `fresh`: the list had no stored rows, so a write from 0
   * needs no purge.
   */
  async publish(ctx: StreamContext, swarmId: string, { list, from, items }: MessageWrite, fresh: boolean): Promise<void> {
    const subject = this.names.listSubject(swarmId, list);
    // A rewrite replaces the list: its old rows go first (a list that had none needs no purge).
    if (from === 0 && !fresh) await ctx.jsm.streams.purge(this.names.messageStream, { filter: subject });
    await Promise.all(
      items.map((m, i) => {
        const h = headers();
        h.set(INDEX_HEADER, String(from + i));
        return ctx.js.publish(subject, JSON.stringify(m), { headers: h, timeout: this.timeoutMs });
      }),
    );
  }

  /**
   * Reads a swarm's message lists as the stream holds them (rows by index, the last of an index
   * winning), then applies `pending` (the current value's outbox: rows perhaps not published
   * yet). Returns a function giving the lists, which throws naming a missing or unreadable row.
   */
  async read(ctx: StreamContext, swarmId: string, pending: readonly MessageWrite[]): Promise<() => Map<string, unknown[]>> {
    const lists = new Map<string, unknown[]>();
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
    applyWrites(lists, pending);
    return () => {
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
}

/** A stored message row that is not JSON (an error once the list is used). */
class Unreadable {
  constructor(readonly detail: string) {}
}
