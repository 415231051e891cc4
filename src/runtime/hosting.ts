/**
 * Runtimes serving each other over a transport (NATS, or an in-process bus). Serving: every
 * swarm definition a runtime has, and each of its agents as a swarm (`catalog/hosted.ts`),
 * is offered on a subject of its own to a queue group, so the runtimes hosting a definition share
 * its calls; the definition's card on another; and the commands for the swarms it holds on a
 * subject named for its owner id. Calling: starting (or re-attaching to) a swarm of a
 * definition hosted elsewhere, asking for a card, sending a command to a swarm's holder.
 *
 * The swarm id is the idempotency key of a hosted call: a call sent again, to whichever runtime,
 * attaches to the swarm's stored state instead of starting over. While a runtime holds a swarm it
 * was asked to host, it says so on the swarm's heartbeat subject; a caller that stops hearing it
 * sends the call again (see `runners/child-swarm.ts`, and a team's remote task attempts). A stop
 * whose swarm's holder does not answer travels the same way (`HostRequest.stop`): the runtime
 * that takes the swarm over stops it, so nobody finishes it later.
 *
 * @module
 */
import { z } from 'zod';
import type { SwarmCommand } from '../../machines/swarm.js';
import { delay } from '../util/abort.js';
import type { Catalog } from '../catalog/catalog.js';
import { SwarmError, type SwarmErrorCode } from '../errors.js';
import type { HostedCard } from '../catalog/elsewhere.js';
import { type HostingTimings, type HostRequest, hostRequestSchema, type OwnerCommand, ownerCommandSchema, type Reply } from '../distribution/protocol.js';
import type { ResolveOptions } from '../catalog/resolve.js';
import { heldByOther } from '../leases/holder.js';
import { isFinal } from '../store/result.js';
import { summaryOf } from '../store/summary.js';
import { jsonSchemaOf } from '../define/tool.js';
import { type Transport, TransportError, type TransportMessage, type TransportSubscription, subjectToken } from '../transport/types.js';
import type { LiveSwarms } from './live.js';

/** What serving needs from the runtime. */
export interface HostingDeps {
  transport: Promise<Transport>;
  prefix: string;
  owner: string;
  catalog: Catalog;
  live: LiveSwarms;
  timings: HostingTimings;
  /** Starts a swarm here under a derived id (the caller's idempotency key). */
  launch(definitionId: string, swarmId: string, input: unknown, options: ResolveOptions & { contextId?: string }): Promise<void>;
  /**
   * Claims and restores a stored swarm (taking a dead holder's lease over), applying `first`
   * before anything of it runs again; undefined when it could not.
   */
  restore(swarmId: string, takeover?: string, first?: SwarmCommand): Promise<unknown>;
  command(command: OwnerCommand): Promise<void>;
}

/** How long one request waits for its answer (an answer comes once the work is accepted, not done). */
const REQUEST_TIMEOUT_MS = 5_000;
/** Pause between attempts while nobody answers for a definition. */
const RETRY_MS = 200;

/** The serving and calling side of one runtime. */
export class Hosting {
  private readonly subscriptions: TransportSubscription[] = [];
  /** Swarms this runtime was asked to host (or is taking over): their heartbeats go out. */
  private readonly beating = new Set<string>();
  private readonly adopting = new Set<string>();
  /** Stops accepted for swarms being taken over here (see `HostRequest.stop`): swarm id → reason. */
  private readonly stops = new Map<string, string>();
  private beatTimer: NodeJS.Timeout | undefined;
  private stopped = false;
  /** Resolves once every subscription is in place. */
  readonly serving: Promise<void>;

  constructor(private readonly deps: HostingDeps) {
    this.serving = this.serve();
    // A failed connection surfaces at the first call that needs it, not as an unhandled rejection.
    this.serving.catch(() => undefined);
  }

  /**
   * Throws the `unavailable` error while the runtime's store cannot reach its server (the
   * JetStream store while NATS is down): a step could not be recorded then. A runtime whose
   * store is its own (SQLite, memory) goes on with local work.
   */
  async assertAvailable(): Promise<void> {
    if (this.deps.live.store.connected?.() === false) throw unavailable('disconnected');
  }

  /** The transport, or the `unavailable` error when it is down. */
  private async connected(): Promise<Transport> {
    const transport = await this.deps.transport;
    if (transport.status() !== 'connected') throw unavailable(transport.status());
    return transport;
  }

  // ---- calling -------------------------------------------------------------------------

  /**
   * Asks the runtimes hosting `request.definitionId` to start or attach to the swarm; resolves
   * once one accepted it. Keeps asking until `deadlineMs` while nobody answers, then throws.
   */
  async host(request: HostRequest, signal?: AbortSignal, deadlineMs = this.deps.timings.deadlineMs): Promise<void> {
    // A request that got no answer in time may have been taken: only a call (attach) is sent
    // again then; a client's start would find its own swarm and read "id in use".
    await this.ask(this.subject('host', request.definitionId), request, deadlineMs, signal, `No runtime hosts "${request.definitionId}"`, request.attach === true);
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
   * Sends `body` on `subject` once: an error answer is raised, and no answer is the `not-live`
   * error `nobody` (with the transport's reason), or `unavailable` while the transport is down.
   */
  private async requestOnce(subject: string, body: unknown, nobody: string): Promise<void> {
    const transport = await this.connected();
    let message: TransportMessage;
    try {
      message = await transport.request(subject, JSON.stringify(body), { timeoutMs: REQUEST_TIMEOUT_MS });
    } catch (e) {
      if (e instanceof TransportError && e.code === 'unavailable') throw new SwarmError(`NATS is unavailable: ${e.message}`, 'unavailable');
      throw new SwarmError(`${nobody} (${(e as Error).message})`, 'not-live');
    }
    raise(parseReply(message.data));
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
    let sub: TransportSubscription | undefined;
    void this.deps.transport
      .then((t) => {
        if (signal.aborted) return;
        sub = t.subscribe(this.subject('beat', request.swarmId), () => {
          last = Date.now();
          onBeat?.();
        });
      })
      // No transport (it failed to connect, or closed): the re-sent requests say so in turn.
      .catch(() => undefined);
    const check = setInterval(() => {
      if (Date.now() - last < heartbeatTimeoutMs) return;
      last = Date.now();
      void ended()
        .then((done) => (done || signal.aborted ? undefined : this.host(request, signal, heartbeatTimeoutMs)))
        .catch(() => undefined);
    }, Math.max(50, Math.min(1_000, heartbeatTimeoutMs / 4)));
    check.unref();
    signal.addEventListener(
      'abort',
      () => {
        clearInterval(check);
        sub?.unsubscribe();
      },
      { once: true },
    );
  }

  /** Sends `body` on `subject` until one answers or `deadlineMs` passed; an error answer is raised. */
  private async ask(subject: string, body: unknown, deadlineMs: number, signal: AbortSignal | undefined, nobody: string, idempotent: boolean): Promise<Reply> {
    const until = Date.now() + deadlineMs;
    for (;;) {
      signal?.throwIfAborted();
      const transport = await this.deps.transport;
      let lastError: unknown;
      if (transport.status() === 'connected') {
        try {
          const message = await transport.request(subject, JSON.stringify(body), { timeoutMs: Math.max(1, Math.min(REQUEST_TIMEOUT_MS, until - Date.now())) });
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
            throw new SwarmError(`${subject} did not answer within ${REQUEST_TIMEOUT_MS} ms; the swarm may have started: read its result before starting it again`, 'unavailable');
          }
          lastError = e;
        }
      }
      if (Date.now() >= until) {
        if (lastError instanceof SwarmError) throw lastError;
        const why = lastError instanceof TransportError && lastError.code !== 'no-responders' ? ` (${lastError.message})` : '';
        throw new SwarmError(`${nobody} (asked for ${Math.round(deadlineMs / 100) / 10} s)${why}`, transport.status() === 'connected' ? 'unknown-definition' : 'unavailable');
      }
      await delay(Math.min(RETRY_MS, Math.max(1, until - Date.now())), signal);
    }
  }

  // ---- serving -------------------------------------------------------------------------

  private async serve(): Promise<void> {
    const transport = await this.deps.transport;
    if (this.stopped) return;
    const queue = `${this.deps.prefix}.hosts`;
    for (const id of this.deps.timings.serve ? this.deps.catalog.hostedIds() : []) {
      this.subscriptions.push(
        transport.subscribe(this.subject('host', id), (m) => this.answer(m, () => this.take(id, m.data)), { queue }),
        transport.subscribe(this.subject('card', id), (m) => this.answer(m, async () => ({ ok: true, card: this.cardOf(id) })), { queue }),
      );
    }
    this.subscriptions.push(transport.subscribe(this.subject('owner', this.deps.owner), (m) => this.answer(m, () => this.obey(m.data))));
    this.beatTimer = setInterval(() => this.beat(transport), this.deps.timings.heartbeatMs);
    this.beatTimer.unref();
    await transport.flush();
  }

  /** Stops serving (the runtime closes); hosted swarms stop beating, so callers move them on. */
  stop(): void {
    this.stopped = true;
    clearInterval(this.beatTimer);
    for (const s of this.subscriptions) s.unsubscribe();
    this.subscriptions.length = 0;
    this.beating.clear();
  }

  private async answer(message: TransportMessage, work: () => Promise<Reply>): Promise<void> {
    let reply: Reply;
    try {
      reply = await work();
    } catch (e) {
      reply = e instanceof SwarmError ? { ok: false, code: e.code, message: e.message } : { ok: false, code: 'error', message: (e as Error).message };
    }
    message.respond(JSON.stringify(reply));
  }

  /** A host request: the swarm is started here, or attached to wherever its state is. */
  private async take(definitionId: string, data: string): Promise<Reply> {
    const parsed = hostRequestSchema.safeParse(parseJson(data));
    if (!parsed.success || parsed.data.definitionId !== definitionId) {
      return { ok: false, code: 'invalid-input', message: `Malformed host request for "${definitionId}"` };
    }
    const request = parsed.data as HostRequest;
    const { live } = this.deps;
    const id = request.swarmId;
    if (request.stop !== undefined) return this.takeToStop(id, request.stop);
    if (live.hosts.has(id) || live.passivated.has(id) || this.adopting.has(id)) {
      if (!request.attach) throw new SwarmError(`Swarm id "${id}" is already in use`, 'id-in-use');
      this.beating.add(id);
      return { ok: true };
    }
    try {
      // Starting checks that no such swarm exists (one read, on the path of every new call).
      await this.deps.launch(definitionId, id, request.input, {
        ...(request.customization ? { customization: request.customization } : {}),
        ...(request.contextId ? { contextId: request.contextId } : {}),
      });
      this.beating.add(id);
      return { ok: true };
    } catch (e) {
      // It exists (a call sent again, or started meanwhile by another request): attach to it.
      if (!(e instanceof SwarmError && e.code === 'id-in-use' && request.attach)) throw e;
    }
    if (live.hosts.has(id) || live.passivated.has(id)) {
      this.beating.add(id);
      return { ok: true };
    }
    const record = await summaryOf(live.store, id);
    if (record && !isFinal(record.status)) {
      this.beating.add(id);
      void this.adopt(id);
    }
    return { ok: true };
  }

  /**
   * A stop request (`HostRequest.stop`): applied now when the swarm is held here; else accepted,
   * and applied once the swarm is taken over here (or relayed to a holder that answers). A swarm
   * unknown or already ended needs nothing.
   */
  private async takeToStop(id: string, reason: string): Promise<Reply> {
    const { live } = this.deps;
    if (live.hosts.has(id) || live.passivated.has(id)) {
      await this.deps.command({ op: 'stop', swarmId: id, reason });
      return { ok: true };
    }
    const record = await summaryOf(live.store, id);
    if (record && !isFinal(record.status)) {
      this.stops.set(id, reason);
      void this.adopt(id);
    }
    return { ok: true };
  }

  /** Applies the stop accepted for `id`, if any (the swarm is held here now). */
  private async applyStop(id: string): Promise<void> {
    const reason = this.stops.get(id);
    if (reason === undefined) return;
    this.stops.delete(id);
    await this.deps.command({ op: 'stop', swarmId: id, reason });
  }

  /**
   * Takes over a stored, unfinished swarm whose holder stopped: at once when that holder is a
   * dead process of this host, else once its lease ran out. Gives up when a live runtime renews
   * it (that one is working on it) or it ended. A stop accepted for it is applied right after
   * restoring, or relayed to a live holder that answers.
   */
  private async adopt(id: string): Promise<void> {
    if (this.adopting.has(id)) return;
    this.adopting.add(id);
    const { live, timings } = this.deps;
    const giveUp = Date.now() + 3 * timings.leaseMs;
    try {
      while (!this.stopped && !live.closed && Date.now() < giveUp) {
        if (live.hosts.has(id) || live.passivated.has(id)) return await this.applyStop(id);
        const record = await summaryOf(live.store, id);
        if (!record || isFinal(record.status)) return;
        const held = heldByOther(record.lease, this.deps.owner, Date.now());
        if (!held || held.takeover) {
          // A swarm taken over to be stopped is stopped before anything of it runs again: an
          // in-flight call of its dead holder is not made again only to be aborted.
          // (A stop accepted while it is being restored is applied right after.)
          const reason = this.stops.get(id);
          const stop: SwarmCommand | undefined = reason === undefined ? undefined : { type: 'STOP', reason };
          if (await this.deps.restore(id, held?.takeover, stop)) return stop ? undefined : await this.applyStop(id);
        } else if (this.stops.has(id)) {
          // Held by a runtime that may be alive after all: it stops the swarm if it answers.
          const stopped = await this.send(held.lease.owner, { op: 'stop', swarmId: id, reason: this.stops.get(id)! }).then(
            () => true,
            () => false,
          );
          if (stopped) return;
        }
        await delay(Math.max(20, Math.min(timings.leaseMs / 4, held ? held.lease.until - Date.now() + 10 : timings.leaseMs / 4)));
      }
    } catch {
      // The store failed: the caller's next request (its heartbeats stopped) tries again.
    } finally {
      this.adopting.delete(id);
      this.stops.delete(id);
    }
  }

  private async obey(data: string): Promise<Reply> {
    const parsed = ownerCommandSchema.safeParse(parseJson(data));
    if (!parsed.success) return { ok: false, code: 'invalid-input', message: 'Malformed command' };
    await this.deps.command(parsed.data as OwnerCommand);
    return { ok: true };
  }

  private beat(transport: Transport): void {
    if (transport.status() !== 'connected') return;
    const { live } = this.deps;
    for (const id of this.beating) {
      if (live.hosts.has(id) || live.passivated.has(id) || live.starting.has(id)) {
        transport.publish(this.subject('beat', id), '');
      } else if (!this.adopting.has(id)) {
        this.beating.delete(id);
      }
      // Being taken over (waiting out another holder's lease): silent until it is held here, so
      // a caller does not take this runtime's word for work nobody does yet.
    }
  }

  private cardOf(definitionId: string): HostedCard {
    const def = this.deps.catalog.swarm(definitionId)!;
    const inputSchema = jsonSchemaOf(def.input);
    return { id: def.id, description: def.description, structured: !(def.input instanceof z.ZodString), inputSchema, customizable: def.customizable };
  }

  private subject(kind: 'host' | 'card' | 'owner' | 'beat', id: string): string {
    return `${this.deps.prefix}.${kind}.${subjectToken(id)}`;
  }
}

function parseJson(data: string): unknown {
  try {
    return JSON.parse(data);
  } catch {
    return undefined;
  }
}

function parseReply(data: string): Reply {
  const reply = parseJson(data) as Reply | undefined;
  if (!reply || typeof reply !== 'object' || typeof reply.ok !== 'boolean') {
    return { ok: false, code: 'error', message: 'Malformed answer from another runtime' };
  }
  return reply;
}

/** The error of a command refused while NATS is down (`state`: the connection's). */
function unavailable(state: string): SwarmError {
  return new SwarmError(`NATS is unavailable (${state}); nothing was applied, try again once it is back`, 'unavailable');
}

/** Error answers worth sending again until the deadline: the answering runtime could not do it. */
const RETRIED = new Set<SwarmErrorCode | 'error'>(['closed', 'unavailable', 'store', 'error']);

/** The SwarmError code of an answer's code (an unexpected error is the store's or the host's failure). */
function codeOf(code: SwarmErrorCode | 'error'): SwarmErrorCode {
  return code === 'error' ? 'store' : code;
}

/** Raises an error answer as the SwarmError the other runtime raised. */
function raise(reply: Reply): void {
  if (!reply.ok) throw new SwarmError(reply.message, codeOf(reply.code));
}
