/**
 * WebSocket subscribers at `/events` (the `ws` package, sharing the HTTP server's port).
 *
 * **One swarm:** `/events?swarmId=…&since=n` sends that swarm's events after sequence number
 * `n` (default 0) as JSON text frames, each one {@link SwarmEvent} exactly as the runtime
 * recorded it: stored events first, then live ones, in `seq` order without gaps; after the
 * final event the server closes with 1000. An unknown swarm is refused before the upgrade
 * (HTTP 404), a malformed swarm id, a bad `since` or one beyond the last event of a swarm that
 * has ended too (400); beyond the end of an unfinished swarm, `since` waits for the events
 * after it. `definitionId=…` may be added as a check (404 when the swarm belongs to another
 * definition). A stored event that cannot be read ends the stream: the events before it are
 * sent, then the server closes with 1011 naming it.
 *
 * **Every swarm:** `/events` without `swarmId` (optionally `?definitionId=…` to narrow it to one
 * definition; unknown → 404) sends the events of every swarm committed after the subscription
 * started; `since` is ignored because there is no single sequence to resume from. The server
 * first sends the control frame `{ "type": "subscribed" }`: every event committed after it
 * arrives is delivered, each swarm's in `seq` order. The connection stays open until either
 * side closes it. To catch up with one swarm after a gap, subscribe to it with `since`.
 *
 * **One team:** `/events?teamId=…&definitionId=…&since=n` (`definitionId` is then the team's
 * definition, required) sends the team's events after `n` exactly as `TeamClient.events({ since })`
 * yields them (A2A `status-update`s, `seq` numbered) and closes with 1000 when they end, after
 * the run's `team-ended` (at once for a finished team replayed to its end; a paused team's
 * stream waits). Refused before the upgrade like a swarm's: 404 an unknown team definition or a
 * team that never ran, 400 a malformed team id or `since`, or `swarmId` given too. A team's
 * events are kept by the team, so they are all read at the subscriber's pace: one that takes
 * nothing for `stallMs` gets `{ "type": "overflow", "teamId", "lastSeq" }` and 1013.
 *
 * **Slow subscribers** never slow a swarm down. Each connection has a bounded buffer: frames
 * handed to the socket but not yet flushed to the network (at most `maxFrames`, default 1000,
 * and `maxBytes`, default 4 MiB). Live events are handed over as they are committed, without
 * waiting for the subscriber; past a bound the server sends the control frame
 * `{ "type": "overflow", "swarmId", "lastSeq" }` (every-swarm mode: `{ "type": "overflow",
 * "lastSeqs": { [swarmId]: seq } }`), closes with 1013 (try again later), and stops reading
 * events for it. Everything up to `lastSeq` was sent before that frame, so reconnecting with
 * `since=lastSeq` continues without a gap or a duplicate. Stored events (the replay) are read
 * from the store only as fast as the subscriber takes them; one that takes nothing for
 * `stallMs` (default 30 s) is closed the same way.
 *
 * Control frames carry `type`; events carry `kind` and never `type` at the top level.
 *
 * **Commands (one-swarm mode).** A subscriber of one swarm may command it on the same socket:
 * the text frame `{ "type": "command", "command": "pause" | "resume" | "stop" | "extend" |
 * "approve" | "reject", "id"?: …, …body }` takes the body REST's `POST …/<command>` takes (a
 * typed `answer` and its `pauseId`, `{ approvalId, always? }`, `{ maxTurns?, budget? }`…), checked
 * the same way (`swarm-commands.ts`), and is answered by the control frame `{ "type":
 * "command-result", "id", "ok": true, "result" }` or `{ …, "ok": false, "status", "error" }` (the
 * status REST would answer). So a page that watches a swarm answers its pauses where it sees them.
 *
 * **Batched frames (`batch=1`, one-swarm mode only; 400 elsewhere).** Each event frame is then a
 * JSON array of events instead of one event: a stored page per frame on replay, the events one
 * commit made visible per frame live, in the same `seq` order, split so a frame holds at most
 * 500 events and about 256 KiB (one larger event is a frame alone; see `event-frames.ts`).
 * Control frames stay objects with `type`, so a client tells them apart by `Array.isArray`.
 * Gaps, overflow (`lastSeq` is the last event of the last whole frame sent), `since` and the
 * closes are as without it. `maxFrames` then bounds the *events* in unflushed frames (a frame of
 * n events counts n), so a batched subscriber overflows no later than an unbatched one with
 * the same backlog; `maxBytes` counts bytes either way. Why a query parameter rather than a
 * subprotocol: a browser's subprotocol list already carries the token, the server answers only
 * one of them (`xswarm`), and a query is visible in logs and trivially testable with any client.
 * Without `batch` (or `batch=0`) frames are exactly as before.
 *
 * **Subprotocol.** A client may offer subprotocols; the server then answers `xswarm` when it is
 * among them. A browser page, which cannot set an `Authorization` header on a WebSocket, passes
 * the token as the subprotocol `xswarm.bearer.<base64url(token)>` next to `xswarm` (checked by
 * `serve()` before the upgrade, see `upgradeAuthorized`).
 *
 * @module
 */
import { STATUS_CODES, type IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { type RawData, WebSocketServer, type WebSocket } from 'ws';
import { errorText } from '../../machines/error-text.js';
import type { SwarmEvent } from '../../machines/events.js';
import { assertCursor, lastStoredSeq } from '../events/cursor.js';
import { isFinalEvent } from '../events/helpers.js';
import { isFinal, UNFINISHED_STATUSES } from '../store/result.js';
import type { Runtime } from '../runtime/types.js';
import { storedPages } from '../store/pages.js';
import type { SwarmSummary } from '../store/types.js';
import { MAX_DERIVED_SWARM_ID_LENGTH, swarmIdProblem } from '../define/swarm-id.js';
import type { TeamClient } from '../team/client.js';
import { asHttpError, chooseProtocol, HttpError, type HttpHandler, type ServerContext } from '../http/http.js';
import { parseCursor, type StreamedEvent } from '../http/sse.js';
import { findTeam } from './teams.js';
import { applyCommand, isSwarmCommand, SWARM_COMMANDS } from './swarm-commands.js';
import type { SwarmClient } from '../client/client.js';
import { type BatchFrame, batchFrames, FrameCollector } from './event-frames.js';
import type { EventSocketOptions } from './options.js';

/** The path of the WebSocket endpoint. */
export const EVENTS_PATH = '/events';

type Limits = Required<EventSocketOptions>;

/** Creates the handler of `/events` WebSocket upgrades (plain HTTP requests there get 426). */
export function createEventSocketHandler(ctx: ServerContext, options: EventSocketOptions = {}): HttpHandler {
  const limits: Limits = {
    maxFrames: options.maxFrames ?? 1000,
    maxBytes: options.maxBytes ?? 4 * 1024 * 1024,
    stallMs: options.stallMs ?? 30_000,
    pollMs: options.pollMs ?? 250,
  };
  const { runtime } = ctx;
  // Subscribers send at most command frames; a small cap keeps a client from making us buffer much.
  // Answers `xswarm` when offered (a browser page offers it with its token's subprotocol).
  const wss = new WebSocketServer({ noServer: true, maxPayload: 64 * 1024, handleProtocols: chooseProtocol });
  const pumps = new Set<AbortController>();
  let feed: AllSwarmsFeed | undefined;
  let closed = false;

  /** The every-swarm feed, shared by all such subscribers; started on demand. */
  function sharedFeed(): AllSwarmsFeed {
    if (!feed) {
      const created = new AllSwarmsFeed(runtime, limits.pollMs, () => {
        if (feed === created) feed = undefined;
      });
      feed = created;
    }
    return feed;
  }

  async function accept(req: IncomingMessage, socket: Duplex, head: Buffer, url: URL): Promise<void> {
    // Until `ws` owns the socket, an error on it (client gone) must not become an uncaught one.
    const ignore = () => undefined;
    socket.on('error', ignore);
    try {
      if (closed) throw new HttpError(503, 'The server is shutting down');
      const swarmId = url.searchParams.get('swarmId') || undefined;
      const definitionId = url.searchParams.get('definitionId') || undefined;
      const sinceParam = url.searchParams.get('since');
      const since = sinceParam === null || sinceParam === '' ? 0 : parseCursor(sinceParam, 'since');
      const teamId = url.searchParams.get('teamId') || undefined;
      const batch = batchParam(url.searchParams.get('batch'));
      if (batch && swarmId === undefined) throw new HttpError(400, "batch=1 is offered for one swarm's stream (swarmId=…) only");
      let subscription: Subscription;
      if (teamId !== undefined) {
        if (swarmId !== undefined) throw new HttpError(400, 'Give swarmId or teamId, not both');
        if (definitionId === undefined) throw new HttpError(400, 'A team stream needs definitionId (the team definition) with teamId');
        subscription = { mode: 'team', client: await findTeam(runtime, definitionId, teamId), since };
      } else if (swarmId !== undefined) {
        const problem = swarmIdProblem(swarmId, MAX_DERIVED_SWARM_ID_LENGTH);
        if (problem) throw new HttpError(400, `Invalid swarm id: ${problem}`);
        const record = await runtime.store.load(swarmId);
        if (!record || (definitionId !== undefined && record.definitionId !== definitionId)) {
          throw new HttpError(404, `Unknown swarm "${swarmId}"${definitionId ? ` of swarm definition "${definitionId}"` : ''}`);
        }
        try {
          assertCursor(record, since);
        } catch (err) {
          throw asHttpError(err);
        }
        subscription = { mode: 'swarm', swarmId, definitionId: record.definitionId, since, batch };
      } else {
        if (definitionId !== undefined && !runtime.definition(definitionId)) {
          throw new HttpError(404, `Unknown swarm definition "${definitionId}"`);
        }
        subscription = { mode: 'all', ...(definitionId !== undefined ? { definitionId } : {}) };
      }
      if (socket.destroyed) return;
      wss.handleUpgrade(req, socket, head, (ws) => {
        socket.off('error', ignore);
        if (closed) return void ws.close(1001, 'server shutting down');
        const controller = new AbortController();
        pumps.add(controller);
        ws.on('close', () => controller.abort());
        // A protocol error from the client (oversized frame…) closes only that connection.
        ws.on('error', () => controller.abort());
        const outbox = new Outbox(ws, limits);
        // A swarm's subscriber may also command it (the same commands and bodies as REST).
        if (subscription.mode === 'swarm') {
          const client = runtime.forSwarm(subscription.definitionId, subscription.swarmId);
          ws.on('message', (data, isBinary) => void answerCommand(client, outbox, data, isBinary));
        }
        const run =
          subscription.mode === 'swarm'
            ? pumpSwarm(runtime, outbox, subscription, controller.signal)
            : subscription.mode === 'team'
              ? pumpTeam(outbox, subscription, controller.signal)
              : pumpAll(sharedFeed(), outbox, subscription, controller.signal);
        run.catch((err: unknown) => outbox.finish(1011, `Event stream failed: ${errorText(err)}`)).finally(() => pumps.delete(controller));
      });
    } catch (err) {
      const status = err instanceof HttpError ? err.status : 500;
      refuse(socket, status, errorText(err));
    }
  }

  return {
    async handle(req, res, url) {
      if (url.pathname !== EVENTS_PATH) return false;
      if (req.method !== 'GET') {
        res.setHeader('allow', 'GET');
        throw new HttpError(405, `${req.method} is not allowed on ${EVENTS_PATH}; open a WebSocket`);
      }
      res.setHeader('upgrade', 'websocket');
      throw new HttpError(426, `${EVENTS_PATH} is a WebSocket endpoint: send an Upgrade: websocket request`);
    },
    upgrade(req, socket, head, url) {
      if (url.pathname !== EVENTS_PATH) return false;
      void accept(req, socket, head, url);
      return true;
    },
    async close() {
      closed = true;
      for (const p of pumps) p.abort();
      feed?.stop();
      const clients = [...wss.clients];
      for (const ws of clients) ws.close(1001, 'server shutting down');
      // A subscriber that does not answer the close handshake (a stalled one) is cut off, so
      // the HTTP server's close() does not wait for it.
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([
        Promise.all(clients.map((ws) => (ws.readyState === ws.CLOSED ? undefined : new Promise((r) => ws.once('close', r))))),
        new Promise((r) => (timer = setTimeout(r, 500))),
      ]);
      clearTimeout(timer);
      for (const ws of wss.clients) ws.terminate();
      await new Promise<void>((resolve) => wss.close(() => resolve()));
    },
  };
}

/**
 * A frame a swarm's subscriber sent: a command to the swarm, `{ "type": "command", "command":
 * "resume" | "approve" | …, "id"?: string | number, …body }` with the body REST's `POST
 * …/<command>` takes. Answered with `{ "type": "command-result", "id", "ok": true, "result" }`
 * (the swarm's `SwarmResult` after it) or `{ …, "ok": false, "status", "error" }` with the status
 * REST would answer (400 a malformed frame or body, 409 a command that does not fit the state…).
 * Commands run in the order they arrive; their results and the events they cause share the
 * socket, so a result may come before or after the events of its command.
 */
async function answerCommand(client: SwarmClient, out: Outbox, data: RawData, isBinary: boolean): Promise<void> {
  let id: unknown;
  try {
    if (isBinary) throw new HttpError(400, 'Send commands as JSON text frames');
    let frame: unknown;
    try {
      frame = JSON.parse(rawText(data));
    } catch (e) {
      throw new HttpError(400, `A command frame is JSON: ${(e as Error).message}`);
    }
    if (!frame || typeof frame !== 'object' || Array.isArray(frame)) throw new HttpError(400, COMMAND_FRAME);
    const { type, command, id: given, ...body } = frame as Record<string, unknown>;
    if (typeof given === 'string' || typeof given === 'number') id = given;
    if (type !== 'command') throw new HttpError(400, COMMAND_FRAME);
    if (!isSwarmCommand(command)) throw new HttpError(400, `Unknown command ${JSON.stringify(command)}: one of ${SWARM_COMMANDS.join(', ')}`);
    try {
      await applyCommand(client, command, body, 'WebSocket');
    } catch (err) {
      throw asHttpError(err);
    }
    out.control({ type: 'command-result', ...(id !== undefined ? { id } : {}), ok: true, result: await client.getResult() });
  } catch (err) {
    const status = err instanceof HttpError ? err.status : 500;
    out.control({ type: 'command-result', ...(id !== undefined ? { id } : {}), ok: false, status, error: errorText(err) });
  }
}

const COMMAND_FRAME = 'A frame sent on a swarm\'s stream is a command: { "type": "command", "command": "resume", "id"?: …, …body }';

/** The text of a received frame (`ws` hands a Buffer, or fragments). */
function rawText(data: RawData): string {
  if (Array.isArray(data)) return Buffer.concat(data).toString('utf8');
  return Buffer.from(data as ArrayBuffer).toString('utf8');
}

type Subscription =
  | { mode: 'swarm'; swarmId: string; definitionId: string; since: number; batch: boolean }
  | { mode: 'team'; client: TeamClient; since: number }
  | { mode: 'all'; definitionId?: string };

/** `batch`: absent, empty or `0` → one event per frame; `1` → batched frames; else 400. */
function batchParam(value: string | null): boolean {
  if (value === null || value === '' || value === '0') return false;
  if (value === '1') return true;
  throw new HttpError(400, `Invalid batch "${value.slice(0, 20)}": give 1 (JSON arrays of events per frame) or 0`);
}

/** A close reason within the protocol's 123 bytes (`ws` throws on longer ones), cut on a character. */
function closeReason(reason: string): string {
  let text = reason;
  while (Buffer.byteLength(text) > 123) text = text.slice(0, -1);
  return text;
}

/** Answers an upgrade request with a plain HTTP error and closes the socket. */
function refuse(socket: Duplex, status: number, message: string): void {
  if (socket.destroyed) return;
  const body = JSON.stringify({ error: message });
  socket.end(
    `HTTP/1.1 ${status} ${STATUS_CODES[status] ?? 'Error'}\r\ncontent-type: application/json; charset=utf-8\r\n` +
      `content-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`,
  );
}

/** An event a subscriber is sent: a swarm's, or a team's (whose `swarmId` is the team id). */
type OutboxEvent = StreamedEvent & { readonly swarmId: string };

/**
 * One subscriber's bounded buffer. Counts the frames handed to `ws` whose write has not
 * completed (a frame's send callback fires once it is flushed to the OS) and reads the bytes
 * still queued from `ws.bufferedAmount`.
 */
class Outbox {
  /** Frames handed to `ws` and not yet flushed: the replay's window and `busy` count these. */
  private inFlight = 0;
  /** Events in those frames (one per frame unless batched): `maxFrames` bounds these. */
  private eventsInFlight = 0;
  private wakers: (() => void)[] = [];
  private done = false;
  /** Per swarm, the sequence number of the last event handed to the socket. */
  readonly lastSeq = new Map<string, number>();
  /** How many frames the replay keeps in flight: enough to fill the pipe, far below the bound. */
  private readonly window: number;

  constructor(
    private readonly ws: WebSocket,
    private readonly limits: Limits,
  ) {
    this.window = Math.max(1, Math.min(64, Math.floor(limits.maxFrames / 2)));
    ws.on('close', () => {
      this.done = true;
      this.wake();
    });
  }

  /** Whether the subscriber is gone or was closed by us. */
  get closed(): boolean {
    return this.done;
  }

  /**
   * Hands a live event to the socket without waiting, if the buffer has room: fewer than
   * `maxFrames` frames and at most `maxBytes` bytes unflushed. Otherwise the subscriber
   * overflows (told and closed) and the event is not sent. Returns whether it was sent.
   * Checking before sending lets a single frame larger than `maxBytes` through to a subscriber
   * that keeps up.
   */
  offer(event: OutboxEvent, overflowInfo: () => Record<string, unknown>): boolean {
    if (!this.fits(overflowInfo)) return false;
    this.send(event);
    return true;
  }

  /**
   * {@link offer} for a batched frame: the bound counts its events, so a batched subscriber
   * overflows no later than an unbatched one with the same backlog would.
   */
  offerFrame(frame: BatchFrame<OutboxEvent>, overflowInfo: () => Record<string, unknown>): boolean {
    if (!this.fits(overflowInfo)) return false;
    this.sendFrame(frame);
    return true;
  }

  /** Whether the buffer has room for a live frame; if not, the subscriber overflows. */
  private fits(overflowInfo: () => Record<string, unknown>): boolean {
    if (this.done) return false;
    if (this.eventsInFlight >= this.limits.maxFrames || this.ws.bufferedAmount > this.limits.maxBytes) {
      this.overflow(overflowInfo());
      return false;
    }
    return true;
  }

  /** Hands an event to the socket unconditionally (the replay, after {@link room}). */
  send(event: OutboxEvent): void {
    this.write(JSON.stringify(event), 1, event);
  }

  /** Hands a batched frame (a JSON array of events) to the socket unconditionally. */
  sendFrame(frame: BatchFrame<OutboxEvent>): void {
    this.write(frame.text, frame.count, frame.last);
  }

  private write(text: string, count: number, last: OutboxEvent): void {
    if (this.done) return;
    this.inFlight++;
    this.eventsInFlight += count;
    this.ws.send(text, () => {
      this.inFlight--;
      this.eventsInFlight -= count;
      this.wake();
    });
    this.lastSeq.set(last.swarmId, last.seq);
  }

  /** Whether the replay may hand over another frame now. */
  private hasRoom(): boolean {
    return this.inFlight < this.window && this.ws.bufferedAmount < this.limits.maxBytes / 2;
  }

  /**
   * Waits until the replay may hand over another frame. Resolves false when the subscriber
   * closed or took nothing for `stallMs`.
   */
  async room(): Promise<boolean> {
    const deadline = Date.now() + this.limits.stallMs;
    while (!this.done && !this.hasRoom()) {
      const left = deadline - Date.now();
      if (left <= 0) return false;
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, left);
        this.wakers.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
    return !this.done;
  }

  /** Whether live delivery should give the socket a turn to flush before going on. */
  get busy(): boolean {
    return this.inFlight >= this.window;
  }

  /** Tells the subscriber it overflowed and closes with 1013 (try again later). */
  overflow(info: Record<string, unknown>): void {
    if (this.done) return;
    // The control frame goes after every event already queued, so the client sees all of them first.
    this.ws.send(JSON.stringify({ type: 'overflow', ...info }), () => undefined);
    this.finish(1013, 'Subscriber too slow: reconnect with since=<lastSeq>');
  }

  /** Sends a control frame. */
  control(frame: Record<string, unknown>): void {
    if (!this.done) this.ws.send(JSON.stringify(frame), () => undefined);
  }

  /** Closes the connection (once). */
  finish(code: number, reason: string): void {
    if (this.done) return;
    this.done = true;
    this.ws.close(code, closeReason(reason));
    this.wake();
  }

  private wake(): void {
    const wakers = this.wakers;
    this.wakers = [];
    for (const w of wakers) w();
  }
}

/** One-swarm mode: paced replay from the store, then live events handed over as committed. */
async function pumpSwarm(runtime: Runtime, out: Outbox, sub: Extract<Subscription, { mode: 'swarm' }>, signal: AbortSignal): Promise<void> {
  const info = () => ({ swarmId: sub.swarmId, lastSeq: out.lastSeq.get(sub.swarmId) ?? sub.since });
  let cursor = sub.since;
  // Replay: stored events, read a page at a time (a long history is never held whole) and
  // handed over as fast as the subscriber takes them. Waiting here costs no swarm anything,
  // and a large history must not count as overflow. At a corrupt event the events before it
  // are sent, then the read throws and the connection closes naming it.
  for await (const page of storedPages(runtime.store, sub.swarmId, sub.since)) {
    if (sub.batch) {
      // Nothing after a final event is sent: the page is cut there.
      const end = page.findIndex(isFinalEvent);
      for (const frame of batchFrames(end < 0 ? page : page.slice(0, end + 1))) {
        if (!(await out.room())) {
          if (!out.closed) out.overflow(info());
          return;
        }
        out.sendFrame(frame);
        cursor = frame.last.seq;
        if (isFinalEvent(frame.last)) return out.finish(1000, 'final event sent');
      }
      continue;
    }
    for (const event of page) {
      if (!(await out.room())) {
        if (!out.closed) out.overflow(info());
        return;
      }
      out.send(event);
      cursor = event.seq;
      if (isFinalEvent(event)) return out.finish(1000, 'final event sent');
    }
  }
  if (sub.batch) return pumpLiveBatched(runtime, out, sub, cursor, info, signal);
  // Live: never wait for the subscriber; the bound decides. The signal releases the reader
  // at once when the subscriber leaves, however quiet the swarm is.
  for await (const event of runtime.forSwarm(sub.definitionId, sub.swarmId).events({ since: cursor, signal })) {
    if (!out.offer(event, info)) return;
    if (isFinalEvent(event)) return out.finish(1000, 'final event sent');
    // A burst arrives within one turn of the event loop; let the socket flush what it can
    // (write callbacks run between turns) so a healthy subscriber is not counted as slow.
    if (out.busy) await nextTurn();
  }
  if (signal.aborted || out.closed) return;
  // The events ended without a final one: the swarm cannot be restored here, was pruned, or
  // the runtime closed; nothing more will come on this connection.
  out.finish(1000, 'no more events for this swarm here');
}

/**
 * One-swarm mode's live part with `batch=1`: the events that arrive within one turn of the event
 * loop (what a commit made visible: the reader hands them out back to back) go in one frame,
 * flushed on the next turn, or sooner when the frame is full or the final event came.
 */
async function pumpLiveBatched(
  runtime: Runtime,
  out: Outbox,
  sub: Extract<Subscription, { mode: 'swarm' }>,
  since: number,
  info: () => Record<string, unknown>,
  signal: AbortSignal,
): Promise<void> {
  const collector = new FrameCollector<SwarmEvent>();
  // A flush on the next turn can overflow the subscriber; then the reader must let go at once.
  const stop = new AbortController();
  let flushing: NodeJS.Immediate | undefined;
  const flush = (): boolean => {
    clearImmediate(flushing);
    flushing = undefined;
    const frame = collector.take();
    const sent = !frame || out.offerFrame(frame, info);
    if (!sent) stop.abort();
    return sent;
  };
  try {
    for await (const event of runtime.forSwarm(sub.definitionId, sub.swarmId).events({ since, signal: AbortSignal.any([signal, stop.signal]) })) {
      if (out.closed) return;
      const full = collector.add(event);
      if (full && !out.offerFrame(full, info)) return;
      if (isFinalEvent(event)) {
        if (flush()) out.finish(1000, 'final event sent');
        return;
      }
      flushing ??= setImmediate(flush);
      if (out.busy) await nextTurn();
    }
    if (signal.aborted || out.closed || !flush()) return;
    out.finish(1000, 'no more events for this swarm here');
  } finally {
    clearImmediate(flushing);
  }
}

/**
 * One-team mode: the team's events at the subscriber's pace (the team keeps them, so waiting
 * costs it nothing), until they end with the run.
 */
async function pumpTeam(out: Outbox, sub: Extract<Subscription, { mode: 'team' }>, signal: AbortSignal): Promise<void> {
  const { teamId } = sub.client;
  for await (const event of sub.client.events({ since: sub.since, signal })) {
    if (!(await out.room())) {
      if (!out.closed) out.overflow({ teamId, lastSeq: out.lastSeq.get(teamId) ?? sub.since });
      return;
    }
    out.send(event);
  }
  if (!signal.aborted && !out.closed) out.finish(1000, 'the team run ended');
}

/** Every-swarm mode: relays the shared feed until the subscriber leaves or overflows. */
async function pumpAll(feed: AllSwarmsFeed, out: Outbox, sub: Extract<Subscription, { mode: 'all' }>, signal: AbortSignal): Promise<void> {
  const info = () => ({ lastSeqs: Object.fromEntries(out.lastSeq) });
  let left!: () => void;
  const gone = new Promise<void>((resolve) => (left = resolve));
  // Subscribed at once (the listener keeps the feed alive while it starts); events flow only
  // once the feed is ready.
  const unsubscribe = feed.subscribe((event) => {
    if (sub.definitionId !== undefined && feed.definitionOf(event.swarmId) !== sub.definitionId) return false;
    if (!out.offer(event, info)) left();
    return out.busy;
  });
  signal.addEventListener('abort', () => left(), { once: true });
  if (signal.aborted) left();
  try {
    await Promise.race([feed.ready, gone]);
    if (!signal.aborted && !out.closed) out.control({ type: 'subscribed' });
    await gone;
  } finally {
    unsubscribe();
  }
}

/** What the feed knows about one swarm. */
interface Followed {
  definitionId: string;
  /** Last sequence number delivered (or skipped as older than the feed). */
  cursor: number;
  following: boolean;
  /** Its final event was delivered (or it was final when first seen): nothing more will come. */
  done: boolean;
  updatedAt: number;
}

/**
 * Margin for records that become visible after their `updatedAt` (a store commit in flight
 * when a scan runs): scans look this far back.
 */
const SCAN_SLACK_MS = 2_000;

/**
 * The events of every swarm, as one stream: the stop-gap for a runtime-wide event bus.
 *
 * Why polling: the runtime offers per-swarm iterators only. The feed follows every unfinished
 * swarm with one iterator (woken by commits, so no latency) and finds swarms that started by
 * scanning the most recently updated records every `pollMs` (the only latency: a new swarm's
 * first events arrive up to `pollMs` late, in order, none missed). One feed serves all
 * every-swarm subscribers of a server and stops when the last one leaves. With a runtime hook
 * `subscribe(listener) → unsubscribe` called with each committed event, this class reduces to
 * forwarding.
 */
class AllSwarmsFeed {
  /** Listeners return true when their socket could use a turn of the event loop to flush. */
  private readonly listeners = new Set<(event: SwarmEvent) => boolean>();
  private readonly swarms = new Map<string, Followed>();
  private readonly controller = new AbortController();
  private timer: NodeJS.Timeout | undefined;
  private lastScan = 0;
  /** Resolves once the feed knows where every existing swarm stands. */
  readonly ready: Promise<void>;

  constructor(
    private readonly runtime: Runtime,
    private readonly pollMs: number,
    private readonly onStop: () => void,
  ) {
    this.ready = this.start().catch(() => undefined);
  }

  /** Adds a listener; the returned function removes it (the last one stops the feed). */
  subscribe(listener: (event: SwarmEvent) => boolean): () => void {
    this.listeners.add(listener);
    return () => {
      this.listeners.delete(listener);
      if (this.listeners.size === 0) this.stop();
    };
  }

  definitionOf(swarmId: string): string | undefined {
    return this.swarms.get(swarmId)?.definitionId;
  }

  stop(): void {
    if (this.controller.signal.aborted) return;
    this.controller.abort();
    clearTimeout(this.timer);
    this.onStop();
  }

  private async start(): Promise<void> {
    const started = Date.now();
    // Existing swarms start at their current end: only what they commit from now on is new.
    const unfinished = await this.runtime.list({ status: UNFINISHED_STATUSES });
    const recent = await this.scan(started - SCAN_SLACK_MS);
    for (const s of [...unfinished, ...recent]) {
      if (this.swarms.has(s.swarmId)) continue;
      const tail = await lastStoredSeq(this.runtime.store, s);
      this.swarms.set(s.swarmId, { definitionId: s.definitionId, cursor: tail, following: false, done: isFinal(s.status), updatedAt: s.updatedAt });
    }
    this.lastScan = started;
    for (const [id, f] of this.swarms) if (!f.done) this.follow(id, f);
    this.schedule();
  }

  private schedule(): void {
    if (this.controller.signal.aborted) return;
    this.timer = setTimeout(() => {
      this.poll()
        .catch(() => undefined)
        .finally(() => this.schedule());
    }, this.pollMs);
    this.timer.unref();
  }

  private async poll(): Promise<void> {
    const now = Date.now();
    const recent = await this.scan(this.lastScan - SCAN_SLACK_MS);
    this.lastScan = now;
    for (const s of recent) {
      const known = this.swarms.get(s.swarmId);
      if (!known) {
        // Not seen when the feed started, so everything it has is new.
        const f: Followed = { definitionId: s.definitionId, cursor: 0, following: false, done: false, updatedAt: s.updatedAt };
        this.swarms.set(s.swarmId, f);
        this.follow(s.swarmId, f);
      } else {
        // Its iterator had ended without a final event (the runtime could not follow it then)
        // and it moved since: follow it again from where we stopped.
        const moved = s.updatedAt > known.updatedAt;
        known.updatedAt = Math.max(known.updatedAt, s.updatedAt);
        if (moved && !known.following && !known.done) this.follow(s.swarmId, known);
      }
    }
    // Forget finished swarms that no scan can return any more, so the map stays small.
    for (const [id, f] of this.swarms) {
      if (f.done && !f.following && f.updatedAt < this.lastScan - 2 * SCAN_SLACK_MS) this.swarms.delete(id);
    }
  }

  /** The most recently updated swarms, back to `from` (ms), paging by doubling the limit. */
  private async scan(from: number): Promise<SwarmSummary[]> {
    for (let limit = 64; ; limit *= 2) {
      const page = await this.runtime.list({ limit });
      if (page.length < limit || page.at(-1)!.updatedAt < from) return page.filter((s) => s.updatedAt >= from);
    }
  }

  private follow(swarmId: string, f: Followed): void {
    if (this.controller.signal.aborted) return;
    f.following = true;
    void (async () => {
      try {
        const events = this.runtime.forSwarm(f.definitionId, swarmId).events({ since: f.cursor, signal: this.controller.signal });
        for await (const event of events) {
          if (event.seq <= f.cursor) continue;
          f.cursor = event.seq;
          if (event.kind === 'status-update' && event.final) {
            f.done = true;
            // The final record carries this same time: pruning must wait until no scan can return it.
            f.updatedAt = Math.max(f.updatedAt, Date.parse(event.status.timestamp));
          }
          let busy = false;
          for (const listener of [...this.listeners]) busy = listener(event) || busy;
          // As in one-swarm mode: a burst must not count as slowness. One turn, never a wait.
          if (busy) await nextTurn();
        }
      } catch {
        // The swarm was pruned or the runtime closed: there is nothing more to deliver.
      } finally {
        f.following = false;
      }
    })();
  }
}
