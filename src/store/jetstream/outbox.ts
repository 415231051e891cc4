/**
 * Publishing a commit's outbox to the streams: its events (each with its message id, so the
 * events stream drops a copy published again within its duplicate window) and its message
 * list rows (by index). Publishing is idempotent, which is what lets a writer that finds an
 * outbox not known to be published (its writer died after the KV update) publish it again
 * before replacing the value.
 *
 * @module
 */
import type { SwarmEvent } from '../../../machines/events.js';
import type { StreamContext } from './events.js';
import type { MessageLists } from './lists.js';
import type { Names } from './names.js';
import type { Outbox } from './records.js';

/** Publishes outboxes and events. */
export class OutboxPublisher {
  constructor(
    private readonly names: Names,
    private readonly lists: MessageLists,
    private readonly timeoutMs: number,
  ) {}

  /** Publishes an outbox (idempotent: events by message id, message rows by index); resolves once every publish is acknowledged. */
  async publish(ctx: StreamContext, swarmId: string, outbox: Outbox | undefined): Promise<void> {
    if (!outbox) return;
    const acks: Promise<unknown>[] = this.events(ctx, swarmId, outbox.events);
    const fresh = new Set(outbox.fresh);
    for (const w of outbox.messages) acks.push(this.lists.publish(ctx, swarmId, w, fresh.has(w.list)));
    await Promise.all(acks);
  }

  /** Publishes events, all at once: the acknowledgement of each. */
  events(ctx: StreamContext, swarmId: string, events: readonly SwarmEvent[]): Promise<unknown>[] {
    const subject = this.names.eventSubject(swarmId);
    return events.map((e) => ctx.js.publish(subject, JSON.stringify(e), { msgID: this.names.eventId(swarmId, e.seq), timeout: this.timeoutMs }));
  }
}
