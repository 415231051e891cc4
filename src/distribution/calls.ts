/**
 * Calling other runtimes over a transport (NATS, or an in-process bus): starting (or
 * re-attaching to) a swarm of a definition hosted elsewhere, keeping that call alive by its
 * heartbeats, asking for a definition's card, sending a command to a swarm's holder. The
 * serving side, which answers these, is `runtime/hosting.ts`.
 *
 * The swarm id is the idempotency key of a hosted call: a call sent again, to whichever runtime,
 * attaches to the swarm's stored state instead of starting over.
 *
 * @module
 */
import { delay } from '../util/abort.js';
import type { HostedCard } from '../catalog/elsewhere.js';
import { SwarmError, type SwarmErrorCode } from '../errors.js';
import type { SwarmStore } from '../store/types.js';
import { type Transport, TransportError, type TransportMessage } from '../transport/types.js';
import { BeatListeners } from './beats.js';
import { type HostingTimings, type HostRequest, type OwnerCommand, parseReply, type Reply, type SubjectKind, subjectOf } from './protocol.js';

/** What calling other runtimes needs. */
export interface OtherRuntimesDeps {
  transport: Promise<Transport>;
  /** The namespace shared with the other runtimes. */
  prefix: string;
  /** This runtime's owner id (a command for a swarm it holds is never sent to itself). */
  owner: string;
  timings: HostingTimings;
  /** This runtime's store: while it cannot reach its server, nothing can be recorded. */
  store: Pick<SwarmStore, 'connected'>;
  /**
   * The headers of a request made now: the active trace context (`traceparent`, `tracestate`)
   * when the runtime traces, so the runtime that takes a call continues the caller's trace.
   */
  headers?: () => Record<string, string> | undefined;
}

/** How long one request waits for its answer (an answer comes once the work is accepted, not done). */
export const REQUEST_TIMEOUT_MS = 5_000;
/** Pause between attempts while nobody answers for a definition. */
const RETRY_MS = 200;
/** How often a call waiting out an outage looks at the connection again. */
const RECONNECT_POLL_MS = 50;

/** The calling side of one runtime. */
export class OtherRuntimes {
  /** One subscription per hosted swarm's heartbeats, shared by its call's request and keep-alive. */
  private readonly beats = new BeatListeners();
  /**
   * The transport once it is open, read without an await: a call's heartbeat subscription and
   * its host request are then queued in the same turn, and leave in one socket write (NATS
   * flushes what was queued before its next microtask) instead of two, on the path of every handoff.
   */
  private opened: Transport | undefined;

  constructor(private readonly deps: OtherRuntimesDeps) {
    deps.transport.then(
      (t) => {
        this.opened = t;
      },
      // No transport: every call awaits it and raises its failure.
      () => undefined,
    );
  }

  /**
   * Throws the `unavailable` error while the runtime's store cannot reach its server (the
   * JetStream store while NATS is down): a step could not be recorded then. A runtime whose
   * store is its own (SQLite, memory) goes on with local work.
   */
  async assertAvailable(): Promise<void> {
    if (this.deps.store.connected?.() === false) throw unavailable('disconnected');
  }

  /** The transport, or the `unavailable` error when it is down. */
  private async connected(): Promise<Transport> {
    const transport = await this.deps.transport;
    if (transport.status() !== 'connected') throw unavailable(transport.status());
    return transport;
  }

  /**
   * Asks the runtimes hosting `request.definitionId` to start or attach to the swarm; resolves
   * once one accepted it. Keeps asking until `deadlineMs` while nobody answers, then throws. A
   * call (`attach`) also waits out an outage of NATS, and a runtime working on it that is slow to
   * answer (see {@link ask}): neither means that nobody hosts the definition.
   */
  async host(request: HostRequest, signal?: AbortSignal, deadlineMs = this.deps.timings.deadlineMs): Promise<void> {
    const subject = this.subject('host', request.definitionId);
    const nobody = `No runtime hosts "${request.definitionId}"`;
    // A request that got no answer in time may have been taken: only a call (attach) is sent
    // again then; a client's start would find its own swarm and read "id in use".
    if (request.attach !== true) {
      await this.ask(subject, request, deadlineMs, signal, nobody);
      return;
    }
    // The swarm's heartbeats tell a runtime working on the call (starting it, slow to answer)
    // from a subscriber that never answers (any process may listen on the subject).
    let heard = Number.NEGATIVE_INFINITY;
    const transport = this.opened ?? (await this.deps.transport);
    let stopListening: (() => void) | undefined;
    try {
      stopListening = this.beats.listen(transport, this.subject('beat', request.swarmId), () => {
        heard = Date.now();
      });
    } catch {
      // The transport is closed: the request says so.
    }
    try {
      await this.ask(subject, request, deadlineMs, signal, nobody, { working: () => Date.now() - heard < this.deps.timings.heartbeatTimeoutMs });
    } finally {
      stopListening?.();
    }
  }

  /** The card of a definition hosted elsewhere, or undefined when nobody answers (asked once). */
  async card(definitionId: string, timeoutMs: number): Promise<HostedCard | undefined> {
    const transport = await this.deps.transport;
    const message = await transport.request(this.subject('card', definitionId), '{}', { timeoutMs }).catch(() => undefined);
    const reply = message && parseReply(message.data);
    return reply?.ok ? reply.card : undefined;
  }

  /** Sends a command to the runtime holding the swarm (its lease's `owner`). */
  async send(owner: string, command: OwnerCommand): Promise<void> {
    // Held by this very runtime but not live here (being restored): nobody else can apply it.
    if (owner === this.deps.owner) throw new SwarmError(`Swarm "${command.swarmId}" is not running in this runtime yet; try again`, 'not-live');
    await this.requestOnce(this.subject('owner', owner), command, `Swarm "${command.swarmId}" is held by ${owner}, which did not answer`);
  }

  /**
   * Sends a team tool call of a worker swarm hosted here to the runtime driving its team
   * (`owner`): its value, or undefined when that runtime drives no team holding the attempt.
   * Errors as for {@link send}.
   */
  async teamCall(owner: string, call: { swarmId: string } & Record<string, unknown>): Promise<{ value: unknown } | undefined> {
    const reply = await this.requestOnce(this.subject('team', owner), call, `The team of swarm "${call.swarmId}" is driven by ${owner}, which did not answer`);
    return reply.ok && reply.found ? { value: reply.value } : undefined;
  }

  /**
   * Sends `body` on `subject` once: an error answer is raised, and no answer is the `not-live`
   * error `nobody` (with the transport's reason), or `unavailable` while the transport is down.
   */
  private async requestOnce(subject: string, body: unknown, nobody: string): Promise<Reply> {
    const transport = await this.connected();
    let message: TransportMessage;
    try {
      message = await transport.request(subject, JSON.stringify(body), { timeoutMs: REQUEST_TIMEOUT_MS });
    } catch (e) {
      if (e instanceof TransportError && e.code === 'unavailable') throw new SwarmError(`NATS is unavailable: ${e.message}`, 'unavailable');
      throw new SwarmError(`${nobody} (${(e as Error).message})`, 'not-live');
    }
    const reply = parseReply(message.data);
    raise(reply);
    return reply;
  }

  /**
   * Stops a swarm held by another runtime: the command goes to its holder (`owner`, the owner of
   * its live lease); when there is none, or it does not answer (a dead process), the stop goes as
   * a host request to the runtimes hosting `definitionId` (see `HostRequest.stop`), so the swarm
   * ends even though its holder is gone and nobody finishes it later. Such a stop is accepted at
   * once and applied by the runtime that takes the swarm over. That request is sent once: when no
   * runtime hosting the definition answers (none is up, or nobody hosts it: an ad-hoc swarm), the
   * stop fails at once with `not-live` (a team's released attempt is stopped again later, see
   * `team/host-stops.ts`).
   */
  async stopHeld(owner: string | undefined, definitionId: string, command: Extract<OwnerCommand, { op: 'stop' }>): Promise<void> {
    if (owner !== undefined) {
      try {
        await this.send(owner, command);
        return;
      } catch (e) {
        // A holder that did not answer (or no longer holds it); not this runtime restoring it.
        if (!(e instanceof SwarmError && e.code === 'not-live') || owner === this.deps.owner) throw e;
      }
    }
    const request: HostRequest = { swarmId: command.swarmId, definitionId, input: null, attach: true, stop: command.reason };
    await this.requestOnce(
      this.subject('host', definitionId),
      request,
      `Cannot stop swarm "${command.swarmId}": ${owner === undefined ? 'nobody holds it' : `its holder ${owner} did not answer`} and no runtime hosting "${definitionId}" answered`,
    );
  }

  /**
   * Keeps a hosted swarm's call alive: listens to its heartbeats and, when they stop for
   * `heartbeatTimeoutMs` while it has not ended, sends `request` again (to any runtime hosting
   * the definition, under the same swarm id). `onBeat` hears each heartbeat (a team's worker
   * progress). Ends when `signal` aborts (does nothing when it has).
   */
  keepAlive(request: HostRequest, ended: () => Promise<boolean>, signal: AbortSignal, onBeat?: () => void): void {
    // An abort listener added now would never run, and the check would go on forever.
    if (signal.aborted) return;
    const { heartbeatTimeoutMs } = this.deps.timings;
    let last = Date.now();
    /** A request sent again is under way: it may wait out an outage, and one is enough. */
    let asking = false;
    let stopListening: (() => void) | undefined;
    void this.deps.transport
      .then((t) => {
        if (signal.aborted) return;
        stopListening = this.beats.listen(t, this.subject('beat', request.swarmId), () => {
          last = Date.now();
          onBeat?.();
        });
      })
      // No transport (it failed to connect, or closed): the re-sent requests say so in turn.
      .catch(() => undefined);
    const check = setInterval(
      () => {
        if (asking || Date.now() - last < heartbeatTimeoutMs) return;
        last = Date.now();
        asking = true;
        void ended()
          .then((done) => (done || signal.aborted ? undefined : this.host(request, signal, heartbeatTimeoutMs)))
          .catch(() => undefined)
          .finally(() => {
            asking = false;
          });
      },
      Math.max(50, Math.min(1_000, heartbeatTimeoutMs / 4)),
    );
    check.unref();
    signal.addEventListener(
      'abort',
      () => {
        clearInterval(check);
        stopListening?.();
      },
      { once: true },
    );
  }

  /**
   * Sends `body` on `subject` until one answers or `deadlineMs` passed; an error answer is raised.
   *
   * The deadline measures how long no runtime hosting the definition can be reached. So a `call`
   * (a request that attaches to the swarm it names when it exists, sent again at will) waits out
   * an outage of NATS: while the connection is down, and after a request in flight was cut by the
   * drop (its answer is lost: the swarm may have started), it waits for the connection and asks
   * again with the whole deadline. And it is sent again with the whole deadline when it got no
   * answer in time while a runtime says it is `working` on it (its heartbeats: it is starting the
   * swarm, whose first step is not recorded yet). Another request fails at once after a timeout
   * (the caller must read the swarm's result before starting it again).
   */
  private async ask(subject: string, body: unknown, deadlineMs: number, signal: AbortSignal | undefined, nobody: string, call?: { working(): boolean }): Promise<Reply> {
    const idempotent = call !== undefined;
    let until = Date.now() + deadlineMs;
    for (;;) {
      signal?.throwIfAborted();
      const transport = this.opened ?? (await this.deps.transport);
      if (idempotent && transport.status() === 'disconnected') {
        await this.reconnected(transport, signal);
        until = Date.now() + deadlineMs;
        continue;
      }
      let lastError: unknown;
      if (transport.status() === 'connected') {
        try {
          const headers = this.deps.headers?.();
          const message = await transport.request(subject, JSON.stringify(body), {
            timeoutMs: Math.max(1, Math.min(REQUEST_TIMEOUT_MS, until - Date.now())),
            ...(headers ? { headers } : {}),
          });
          const reply = parseReply(message.data);
          // A runtime closing, cut off from NATS or failing: another member of the group may take it.
          if (!reply.ok && RETRIED.has(reply.code) && Date.now() < until) {
            lastError = new SwarmError(reply.message, codeOf(reply.code));
          } else {
            raise(reply);
            return reply;
          }
        } catch (e) {
          if (!(e instanceof TransportError)) throw e;
          if (e.code === 'timeout' && !idempotent) {
            throw new SwarmError(
              `${subject} did not answer within ${REQUEST_TIMEOUT_MS} ms; the swarm may have started: read its result before starting it again`,
              'unavailable',
            );
          }
          if (call) {
            // A runtime is working on it but did not answer in time (the first step is not
            // recorded yet: its store is slow, or waits for NATS): asked again, with the whole deadline.
            if (e.code === 'timeout' && call.working()) {
              until = Date.now() + deadlineMs;
              continue;
            }
            // Cut by the connection's drop: asked again once NATS is back (above), whatever the deadline.
            if (e.code === 'unavailable' && transport.status() === 'disconnected') continue;
          }
          lastError = e;
        }
      }
      if (Date.now() >= until) {
        if (lastError instanceof SwarmError) throw lastError;
        const why = lastError instanceof TransportError && lastError.code !== 'no-responders' ? ` (${lastError.message})` : '';
        throw new SwarmError(
          `${nobody} (asked for ${Math.round(deadlineMs / 100) / 10} s)${why}`,
          transport.status() === 'connected' ? 'unknown-definition' : 'unavailable',
        );
      }
      await delay(Math.min(RETRY_MS, Math.max(1, until - Date.now())), signal);
    }
  }

  /**
   * Resolves once `transport` is connected again; rejects with `signal`'s reason when it aborts,
   * and with the `unavailable` error when the transport is closed for good (the runtime closes).
   */
  private async reconnected(transport: Transport, signal: AbortSignal | undefined): Promise<void> {
    for (;;) {
      signal?.throwIfAborted();
      const status = transport.status();
      if (status === 'connected') return;
      if (status === 'closed') throw unavailable(status);
      await delay(RECONNECT_POLL_MS, signal);
    }
  }

  private subject(kind: SubjectKind, id: string): string {
    return subjectOf(this.deps.prefix, kind, id);
  }
}

/** The error of a command refused while NATS is down (`state`: the connection's). */
function unavailable(state: string): SwarmError {
  return new SwarmError(`NATS is unavailable (${state}); nothing was applied, try again once it is back`, 'unavailable');
}

/** Error answers worth sending again until the deadline: the answering runtime could not do it. */
const RETRIED = new Set<SwarmErrorCode | 'error'>(['closed', 'unavailable', 'store', 'error', 'draining']);

/** The SwarmError code of an answer's code (an unexpected error is the store's or the host's failure). */
function codeOf(code: SwarmErrorCode | 'error'): SwarmErrorCode {
  return code === 'error' ? 'store' : code;
}

/** Raises an error answer as the SwarmError the other runtime raised. */
function raise(reply: Reply): void {
  if (!reply.ok) throw new SwarmError(reply.message, codeOf(reply.code));
}
