/**
 * Stamping: how a machine's event body becomes the event readers see and the store keeps. The
 * machines emit bodies (`machines/event-builders.ts`) without what only the runtime knows — the
 * task and context ids, the time, the sequence number — and this is the one place that adds it.
 * The host numbers, buffers and commits (`src/runtime/host.ts`); replay stamps what it
 * re-produces with the recorded stamps to compare whole events (`src/runtime/replay.ts`).
 *
 * This runs for every event of every swarm: the code is written for the hot path (one object
 * literal per event, no wrapper, ISO times formatted once per commit and per minute).
 *
 * @module
 */
import type { SwarmEvent, SwarmEventBody } from '../../machines/events.js';

/**
 * Makes a machine's event body the event readers see: the one place where events are stamped.
 * Public events become the A2A objects (task id = swarm id, the swarm's context id, an ISO
 * timestamp on a status, ids on its message); every event gets its `seq` and `swarmId`;
 * internal ones keep a numeric `timestamp`. Replay stamps what it re-produces the same way,
 * with the recorded stamps, to compare whole events.
 *
 * `iso`, when given, is `isoTime(at)` computed once by the caller for a whole batch.
 */
export function stampEvent(body: SwarmEventBody, seq: number, ids: { swarmId: string; contextId: string }, at: number, iso?: string): SwarmEvent {
  const { swarmId, contextId } = ids;
  switch (body.kind) {
    case 'task': {
      const timestamp = iso ?? isoTime(at);
      const history = body.history?.map((m, i) => ({ ...m, messageId: `${swarmId}#${seq}${i > 0 ? `.${i}` : ''}`, taskId: swarmId, contextId }));
      return { kind: 'task', id: swarmId, contextId, status: { ...body.status, timestamp }, ...(history ? { history } : {}), metadata: body.metadata, seq, swarmId };
    }
    case 'status-update': {
      const { state, message } = body.status;
      const timestamp = iso ?? isoTime(at);
      const status = message ? { state, timestamp, message: { ...message, messageId: `${swarmId}#${seq}`, taskId: swarmId, contextId } } : { state, timestamp };
      return { kind: 'status-update', taskId: swarmId, contextId, status, final: body.final, metadata: body.metadata, seq, swarmId };
    }
    case 'artifact-update': {
      const { kind, ...rest } = body;
      return { kind, taskId: swarmId, contextId, ...rest, seq, swarmId };
    }
    default:
      // The stamps first, then the body. A spread into the literal: `Object.assign` onto a
      // literal costs the whole hot path about 2 % (measured).
      return { seq, swarmId, timestamp: at, ...body };
  }
}

/** The last time {@link isoTime} formatted, and its ISO text. */
let isoAt = Number.NaN;
let isoText = '';
/** "00." to "59.", and "000Z" to "999Z": the tails of ISO times. */
const ISO_SECONDS = Array.from({ length: 60 }, (_, s) => `${String(s).padStart(2, '0')}.`);
const ISO_MILLIS = Array.from({ length: 1000 }, (_, ms) => `${String(ms).padStart(3, '0')}Z`);
/** The start (ms) of the minute {@link isoTime} last formatted with `Date`, and its text up to the minutes. */
let isoMinuteAt = Number.NaN;
let isoMinute = '';

/**
 * The ISO 8601 text of a time in ms (`Date#toISOString`'s). Formatting a `Date` costs about a
 * microsecond and nearly every commit has its own millisecond: within the minute last
 * formatted, only the seconds and milliseconds are written; the commits of busy swarms that
 * share their millisecond share the text.
 */
export function isoTime(at: number): string {
  if (at === isoAt) return isoText;
  const inMinute = at - isoMinuteAt;
  if (inMinute >= 0 && inMinute < 60_000 && Number.isInteger(at)) {
    const ms = inMinute % 1000;
    // The short tail first: one small flat string, then one concatenation.
    isoText = isoMinute + (ISO_SECONDS[(inMinute - ms) / 1000]! + ISO_MILLIS[ms]!);
  } else {
    isoText = new Date(at).toISOString();
    // Cached only for a minute that lies wholly within the dates JavaScript can represent
    // (past 8.64e15 toISOString throws, and so must this).
    if (Number.isInteger(at) && at >= 0 && at - (at % 60_000) + 60_000 <= 8.64e15) {
      isoMinuteAt = at - (at % 60_000);
      // Up to the minutes ("2026-11-24T04:06:"): the text without "ss.mmmZ".
      isoMinute = isoText.slice(0, -7);
    }
  }
  isoAt = at;
  return isoText;
}
