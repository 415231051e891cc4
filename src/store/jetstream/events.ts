/**
 * Reading a subject of a JetStream stream in order (the JetStream store's events, in commit
 * messages or, in streams written before format 3, a message per event; message rows): an
 * ephemeral consumer filtered on the subject, starting at a known stream position,
 * pulled in batches of what it says is pending, so a read never waits for messages that are
 * not there. Events are checked as the SQLite store checks its rows, and a reader remembers
 * where in the stream each swarm's events continue, so paging through a long stream does not
 * read it again from the start. Short reads (the last stored event, a few events) are direct
 * gets instead: a consumer costs the server several times more.
 *
 * @module
 */
import { AckPolicy, DeliverPolicy, type JetStreamClient, type JetStreamManager, type JsMsg } from '@nats-io/jetstream';
import { nanos } from '@nats-io/transport-node';
import { EVENT_FORMAT, type SwarmEvent } from '../../../machines/events.js';
import { eventProblem, isFormat1 } from '../stored-event.js';
import { COMMIT_HEADER, type CommitHeader, readCommitBody, readCommitHeader } from './batch.js';
import { CorruptEventError } from '../types.js';

/** How many messages one pull asks for. */
const BATCH = 512;

/** What a scan needs: the JetStream handles and the per-call timeout. */
export interface StreamContext {
  js: JetStreamClient;
  jsm: JetStreamManager;
  timeoutMs: number;
}

/**
 * Calls `visit` with each message of `stream` on `filter` from stream position `start` on, in
 * order, until it returns false or no message is pending. Returns the position after the last
 * message visited (or `start`).
 */
export async function scanSubject(ctx: StreamContext, stream: string, filter: string, start: number, visit: (m: JsMsg) => boolean): Promise<number> {
  const info = await ctx.jsm.consumers.add(stream, {
    filter_subject: filter,
    ack_policy: AckPolicy.None,
    ...(start > 1 ? { deliver_policy: DeliverPolicy.StartSequence, opt_start_seq: start } : { deliver_policy: DeliverPolicy.All }),
    mem_storage: true,
    num_replicas: 1,
    // Dropped by the server should this process die before deleting it.
    inactive_threshold: nanos(60_000),
  });
  let next = start;
  let pending = info.num_pending;
  try {
    if (pending === 0) return next;
    // From the answer to the create: `consumers.get` would ask the server for its info again.
    const consumer = ctx.js.consumers.getConsumerFromInfo(info);
    while (pending > 0) {
      const messages = await consumer.fetch({ max_messages: Math.min(pending, BATCH), expires: Math.max(1000, ctx.timeoutMs) });
      let got = 0;
      let stop = false;
      for await (const m of messages) {
        got++;
        pending = m.info.pending;
        next = m.seq + 1;
        if (!visit(m)) {
          stop = true;
          break;
        }
      }
      // Nothing came although some was pending: it was deleted meanwhile (a purge).
      if (stop || got === 0) break;
    }
    return next;
  } finally {
    ctx.jsm.consumers.delete(stream, info.name).catch(() => undefined);
  }
}

/** How many events early {@link EventReader} starts a read it had to seek. */
const SEEK_MARGIN = 256;

/** The event sequence number a stored event's message id names (`${swarmId}:${seq}`). */
function storedSeq(id: string | undefined): number | undefined {
  const n = id ? Number(id.slice(id.lastIndexOf(':') + 1)) : NaN;
  return Number.isInteger(n) ? n : undefined;
}

/**
 * The events a message of a swarm's subject holds, from its headers alone: a commit message's
 * (format 3, see `./batch.ts`; none when `first > last`; `commit` is its header), or the one
 * event of a message of the older layout (its seq in its message id; undefined when the id does
 * not name it).
 */
export function heldBy(header: (name: string) => string | undefined): { first: number; last: number; commit?: CommitHeader } | undefined {
  const commit = readCommitHeader(header(COMMIT_HEADER));
  if (commit) return { first: commit.first, last: commit.last, commit };
  const seq = storedSeq(header('Nats-Msg-Id'));
  return seq === undefined ? undefined : { first: seq, last: seq };
}

/** A stored event read (its seq, and the stream position of its message): the event, or why it cannot be read. */
type Read = { seq: number; pos: number } & ({ event: SwarmEvent } | { problem: string; code: 'corrupt' | 'incompatible-version' });

/**
 * Reads swarms' events from the events stream. Each swarm's subject is read from the position
 * where the events after the cursor start, when a previous read found it (the next page of a
 * long stream), else from the beginning.
 */
export class EventReader {
  /** Per swarm: event seq → the stream position from which every later event follows. */
  private anchors = new Map<string, Map<number, number>>();

  constructor(
    private readonly ctx: StreamContext,
    private readonly stream: string,
  ) {}

  /**
   * The stored events of `swarmId` after `since`, contiguous and in order (a republished
   * duplicate is skipped, events that landed out of order are put back in order), the first
   * `limit` of them when given. Throws {@link CorruptEventError} at an event that cannot be read.
   */
  async read(swarmId: string, subject: string, since: number, limit?: number): Promise<SwarmEvent[]> {
    const out: SwarmEvent[] = [];
    const found = new Map<number, Read>();
    let next = since + 1;
    const start = this.anchor(swarmId, since) ?? (await this.seek(subject, since));
    const end = await scanSubject(this.ctx, this.stream, subject, start, (m) => {
      const held = heldBy((name) => m.headers?.get(name)) ?? { first: next, last: next };
      // Events read already (a copy published again), or a commit without events: not parsed.
      if (held.last < next || held.first > held.last) return true;
      if (held.commit) {
        for (const r of parseCommit(m, swarmId, held.first, held.last)) if (r.seq >= next && !found.has(r.seq)) found.set(r.seq, r);
      } else if (!found.has(held.first)) found.set(held.first, parse(m, swarmId, held.first));
      for (let r = found.get(next); r; r = found.get(next)) {
        if (!('event' in r)) throw new CorruptEventError(swarmId, next, r.problem, out, r.code);
        out.push(r.event);
        found.delete(next);
        next++;
        if (limit !== undefined && out.length >= limit) return false;
      }
      return true;
    });
    // Every event after the last one returned is at or after the earliest one seen but not
    // returned, or after what was read.
    let resume = end;
    for (const r of found.values()) resume = Math.min(resume, r.pos);
    this.remember(swarmId, next - 1, resume);
    return out;
  }

  /**
   * The seq of the event stored last on `subject` (0 when none): one direct get. Undefined when
   * that message does not name its event.
   *
   * `swarmId` given, and the message a commit message (see `./batch.ts`), where it is is
   * remembered: every event after the ones it holds is published after it, since one swarm's
   * commit messages land in order (each waits for the one before), so a later read of them
   * starts there. The caller vouches that the message is the swarm's latest commit, not a copy
   * republished after later ones (it knows the swarm's latest value, written within the
   * stream's duplicate window). `commit` is given that message's commit header and the message.
   */
  async lastStored(subject: string, swarmId?: string, commit?: (header: CommitHeader, message: { string(): string }) => void): Promise<number | undefined> {
    const m = await this.ctx.jsm.direct.getMessage(this.stream, { last_by_subj: subject });
    if (!m) return 0;
    const held = heldBy((name) => m.header.get(name));
    if (held?.commit && swarmId !== undefined) this.remember(swarmId, held.last, m.seq + 1);
    if (held?.commit) commit?.(held.commit, m);
    return held?.last;
  }

  /**
   * The events `since + 1` to `upTo` of `swarmId` when at most `maxGets` direct gets find them
   * all (each gives the next message on the subject: a commit's, whatever number of events it
   * holds), in order; undefined when they do not (more messages in the way, one unreadable): a
   * stream read then answers. A read starts where an earlier one found the events after
   * `since` to be, else at the subject's first message. For a short read whose events are
   * known to be stored, this is cheaper than the consumer a stream read makes; where the
   * events after `upTo` follow is remembered, as a stream read does.
   */
  async readFew(swarmId: string, subject: string, since: number, upTo: number, maxGets: number): Promise<SwarmEvent[] | undefined> {
    let pos = this.anchor(swarmId, since) ?? 1;
    const found = new Map<number, SwarmEvent>();
    // Whether every message read is a commit message: they land in order (see `lastStored`),
    // so the position after the one holding `upTo` is where the later events follow.
    let commits = true;
    for (let gets = 0; gets < maxGets; gets++) {
      const m = await this.ctx.jsm.direct.getMessage(this.stream, { next_by_subj: subject, seq: pos });
      if (!m) return undefined;
      pos = m.seq + 1;
      const held = heldBy((name) => m.header.get(name));
      if (held === undefined) return undefined;
      commits &&= held.commit !== undefined;
      if (held.last <= since || held.first > upTo || held.first > held.last) continue;
      const reads = held.commit ? parseCommit(m, swarmId, held.first, held.last) : [parse(m, swarmId, held.first)];
      for (const read of reads) {
        if (read.seq <= since || read.seq > upTo || found.has(read.seq)) continue;
        if (!('event' in read)) return undefined;
        found.set(read.seq, read.event);
      }
      if (found.size === upTo - since) {
        const out: SwarmEvent[] = [];
        for (let s = since + 1; s <= upTo; s++) out.push(found.get(s)!);
        // The message holding `upTo` holds later events too: they are read again from it.
        if (commits) this.remember(swarmId, upTo, held.last > upTo ? m.seq : m.seq + 1);
        return out;
      }
    }
    return undefined;
  }

  /** Forgets a swarm's positions (its events were purged). */
  forget(swarmId: string): void {
    this.anchors.delete(swarmId);
  }

  /** Where to start reading the events after `since`, from what earlier reads found; undefined when nothing is known. */
  private anchor(swarmId: string, since: number): number | undefined {
    if (since <= 0) return 1;
    let best: number | undefined;
    let bestSeq = -1;
    for (const [seq, pos] of this.anchors.get(swarmId) ?? []) {
      if (seq <= since && seq > bestSeq) {
        best = pos;
        bestSeq = seq;
      }
    }
    return best;
  }

  /**
   * Where to start reading the events after `since` when no earlier read says: a binary search
   * over stream positions with direct gets (a few round trips instead of reading a long stream
   * from its start). It aims {@link SEEK_MARGIN} events early, since events of one commit may
   * have landed out of order when a publish was retried; the reader skips what it does not need.
   */
  private async seek(subject: string, since: number): Promise<number> {
    const target = since - SEEK_MARGIN;
    if (target <= 0) return 1;
    const { jsm } = this.ctx;
    const last = await jsm.direct.getMessage(this.stream, { last_by_subj: subject }).catch(() => null);
    if (!last) return 1;
    // The last position known to hold an event of seq <= target; what follows it is read.
    let found = 0;
    let lo = 1;
    let hi = last.seq;
    while (lo <= hi) {
      const mid = Math.floor((lo + hi) / 2);
      const m = await jsm.direct.getMessage(this.stream, { next_by_subj: subject, seq: mid }).catch(() => null);
      // A commit message by its last event: every event it holds is then at most the target.
      const seq = m ? heldBy((name) => m.header.get(name))?.last : undefined;
      if (!m || seq === undefined) break;
      if (seq <= target) {
        found = m.seq;
        lo = m.seq + 1;
      } else hi = mid - 1;
    }
    return found + 1;
  }

  private remember(swarmId: string, seq: number, pos: number): void {
    if (seq <= 0) return;
    let known = this.anchors.get(swarmId);
    if (!known) {
      // Bounded: the swarms read most recently.
      if (this.anchors.size >= 1000) this.anchors.delete(this.anchors.keys().next().value!);
      this.anchors.set(swarmId, (known = new Map()));
    }
    known.set(seq, pos);
    if (known.size > 16) known.delete(known.keys().next().value!);
  }
}

/** A stored event message of the older layout, checked as the SQLite store checks an event row. */
function parse(m: Pick<JsMsg, 'seq' | 'string'>, swarmId: string, seq: number): Read {
  let event: unknown;
  try {
    event = JSON.parse(m.string());
  } catch (e) {
    return { seq, problem: (e as Error).message, code: 'corrupt', pos: m.seq };
  }
  return check(event, swarmId, seq, m.seq);
}

/** The events `first` to `last` of a commit message, each checked as {@link parse} checks one. */
function parseCommit(m: Pick<JsMsg, 'seq' | 'string'>, swarmId: string, first: number, last: number): Read[] {
  const body = readCommitBody(m.string());
  const out: Read[] = [];
  for (let seq = first; seq <= last; seq++) {
    if (typeof body === 'string') out.push({ seq, problem: `its commit message is corrupt (${body})`, code: 'corrupt', pos: m.seq });
    else {
      const event = body.events?.[seq - first];
      out.push(event === undefined ? { seq, problem: 'missing from its commit message', code: 'corrupt', pos: m.seq } : check(event, swarmId, seq, m.seq));
    }
  }
  return out;
}

/** An event as stored, checked as the SQLite store checks an event row. */
function check(event: unknown, swarmId: string, seq: number, pos: number): Read {
  if (isFormat1(event)) {
    return { seq, problem: `stored in event format 1; this runtime reads format ${EVENT_FORMAT}`, code: 'incompatible-version', pos };
  }
  const problem = eventProblem(event, swarmId, seq);
  return problem ? { seq, problem, code: 'corrupt', pos } : { seq, event: event as SwarmEvent, pos };
}
