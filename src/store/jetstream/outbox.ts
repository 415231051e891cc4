/**
 * Publishing a commit's outbox to the events stream: its events and its message-list writes as
 * one commit message on the swarm's event subject (see `./batch.ts`), acknowledged once. Its
 * message id names the swarm and the KV revision whose outbox it is, so the stream drops a copy
 * published again within its duplicate window, and readers skip one landing later. That is
 * what lets a writer that finds an outbox not known to be published (its writer died after the
 * KV update) publish it again before replacing the value.
 *
 * A commit resolves once its KV update (the commit point, holding the outbox) is acknowledged;
 * its publish goes on in the background, pipelined with the swarm's next step, and the swarm's
 * next write waits for its acknowledgement first. So one swarm's commits stay in order in the
 * stream, the commits of different swarms are in flight together, and a step waits for one
 * broker round trip, not two.
 *
 * @module
 */
import { headers } from '@nats-io/transport-node';
import type { SwarmEvent } from '../../../machines/events.js';
import { COMMIT_HEADER, commitHeader } from './batch.js';
import type { StreamContext } from './events.js';
import type { Names } from './names.js';
import type { Outbox } from './records.js';

/** Publishes outboxes and events. */
export class OutboxPublisher {
  /** Per swarm, the publish of its latest outbox while it is in flight (see {@link OutboxPublisher.inBackground}). */
  private readonly inFlight = new Map<string, Promise<void>>();
  /** The commit message bodies of outboxes written here, as bytes taken from their KV values' (see {@link OutboxPublisher.keepBody}). */
  private readonly bodies = new WeakMap<Outbox, Uint8Array>();

  constructor(
    private readonly names: Names,
    private readonly timeoutMs: number,
  ) {}

  /**
   * Keeps `publishing` (the publish of a swarm's latest outbox, made after its commit resolved)
   * until it settles, so that the swarm's next write waits for it ({@link OutboxPublisher.settled}):
   * a value is not replaced, and no later event is published, before its outbox is in the stream.
   * Returns it, settled without failing (the next writer publishes an outbox not known to be).
   */
  inBackground(swarmId: string, publishing: Promise<void>): Promise<void> {
    const p: Promise<void> = publishing
      .catch(() => undefined)
      .then(() => {
        if (this.inFlight.get(swarmId) === p) this.inFlight.delete(swarmId);
      });
    this.inFlight.set(swarmId, p);
    return p;
  }

  /** Settles once the swarm's outbox publish in flight, if any, has (acknowledged or failed). */
  async settled(swarmId: string): Promise<void> {
    await this.inFlight.get(swarmId);
  }

  /**
   * Publishes the outbox of the value at KV revision `rev` whose record's last event seq is
   * `lastSeq` as one message (idempotent: its id names the revision); resolves once acknowledged.
   */
  async publish(ctx: StreamContext, swarmId: string, outbox: Outbox | undefined, rev: number, lastSeq: number): Promise<void> {
    if (!outbox || (outbox.events.length === 0 && outbox.messages.length === 0)) return;
    await this.send(ctx, swarmId, outbox.events, outbox.messages, rev, lastSeq, this.bodies.get(outbox));
    // Published: a publish made again (the next writer's) is rare, and serializes it anew.
    this.bodies.delete(outbox);
  }

  /**
   * Keeps the body of `outbox`'s commit message as encoded with the KV value about to hold it
   * (`valueBytes` in `./records.ts`), so its publish sends those bytes instead of encoding it again.
   */
  keepBody(outbox: Outbox, body: Uint8Array): void {
    this.bodies.set(outbox, body);
  }

  /** Publishes the events of an events-only commit as one message; resolves once acknowledged. */
  async events(ctx: StreamContext, swarmId: string, events: readonly SwarmEvent[]): Promise<void> {
    if (events.length === 0) return;
    await this.send(ctx, swarmId, events, [], 0, events.at(-1)!.seq);
  }

  /** `body`: the commit message's body when encoded already (see {@link OutboxPublisher.keepBody}). */
  private async send(
    ctx: StreamContext,
    swarmId: string,
    events: readonly SwarmEvent[],
    messages: Outbox['messages'],
    rev: number,
    lastSeq: number,
    encoded?: Uint8Array,
  ): Promise<void> {
    const first = events[0]?.seq ?? lastSeq + 1;
    const last = events.at(-1)?.seq ?? lastSeq;
    const h = headers();
    h.set(COMMIT_HEADER, commitHeader({ first, last, rev, writes: messages.length }));
    const body = encoded ?? JSON.stringify(messages.length > 0 ? { events, messages } : { events });
    await ctx.js.publish(this.names.eventSubject(swarmId), body, {
      msgID: this.names.commitId(swarmId, rev, first, last),
      headers: h,
      timeout: this.timeoutMs,
    });
  }
}
