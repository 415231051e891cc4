/**
 * Serving other runtimes over a transport (NATS, or an in-process bus): every swarm definition a
 * runtime has, and each of its agents as a swarm (`catalog/hosted.ts`), is offered on a subject
 * of its own to a queue group, so the runtimes hosting a definition share its calls; the
 * definition's card on another; and the commands for the swarms it holds on a subject named for
 * its owner id. The calling side is `distribution/calls.ts`.
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
import type { Part } from '../../machines/events.js';
import type { BudgetAccountRef } from '../../machines/budget.js';
import { delay } from '../util/abort.js';
import type { Catalog } from '../catalog/catalog.js';
import { RuntimeDrainingError, SwarmError } from '../errors.js';
import type { HostedCard } from '../catalog/elsewhere.js';
import type { OtherRuntimes } from '../distribution/calls.js';
import {
  type HostingTimings,
  type HostRequest,
  hostRequestSchema,
  type OwnerCommand,
  ownerCommandSchema,
  teamToolCallSchema,
  parseJson,
  type Reply,
  type SubjectKind,
  subjectOf,
} from '../distribution/protocol.js';
import { heldByOther } from '../leases/holder.js';
import { isFinal } from '../store/result.js';
import { summaryOf } from '../store/summary.js';
import { jsonSchemaOf } from '../define/tool.js';
import type { Transport, TransportMessage, TransportSubscription } from '../transport/types.js';
import type { Commands } from './commands.js';
import type { TeamToolCall } from '../team/team-tools.js';
import type { Launcher } from './launch.js';
import type { Leases } from './leases.js';
import type { LiveSwarms } from './live.js';

/** What serving needs from the runtime. */
export interface ServingDeps {
  transport: Promise<Transport>;
  prefix: string;
  owner: string;
  timings: HostingTimings;
  catalog: Catalog;
  live: LiveSwarms;
  /** Calls to the other runtimes (a stop relayed to a swarm's live holder). */
  others: OtherRuntimes;
  /** Starts a swarm here under the caller's idempotency key. */
  launcher: Pick<Launcher, 'startDerived'>;
  /**
   * Claims and restores a stored swarm (taking a dead holder's lease over), applying `first`
   * before anything of it runs again.
   */
  leases: Pick<Leases, 'restore'>;
  commands: Pick<Commands, 'apply'>;
  /**
   * Told the headers of a host request before its swarm starts here (the caller's trace
   * context, when this runtime traces: the swarm's spans continue the caller's trace).
   */
  heard?: (swarmId: string, headers: Readonly<Record<string, string>>) => void;
  /**
   * Answers the team tool calls of worker swarms hosted elsewhere for the teams driven here
   * (`answerTeamToolCall` of `team/team-tools.ts`); absent: none are taken.
   */
  teamTools?: (call: TeamToolCall, waitMs: number) => Promise<{ value: unknown } | undefined>;
}

/** The serving side of one runtime. */
export class Serving {
  private readonly subscriptions: TransportSubscription[] = [];
  /** The queue-group subscriptions by which this runtime hosts its definitions for others. */
  private readonly hosting: TransportSubscription[] = [];
  /** Hosting stopped (the runtime drains): host requests that still arrive are refused. */
  private hostingStopped = false;
  /** Swarms this runtime was asked to host (or is taking over): their heartbeats go out. */
  private readonly beating = new Set<string>();
  private readonly adopting = new Set<string>();
  /**
   * Starts under way here for other runtimes' requests, by swarm id: a request sent again
   * meanwhile (its answer was lost to an outage, or it timed out) waits for the start to settle
   * and then attaches, instead of finding neither a live swarm nor a stored one.
   */
  private readonly startingHere = new Map<string, Promise<void>>();
  /** Stops accepted for swarms being taken over here (see `HostRequest.stop`): swarm id → reason. */
  private readonly stops = new Map<string, string>();
  private beatTimer: NodeJS.Timeout | undefined;
  private stopped = false;
  /** Resolves once every subscription is in place. */
  readonly serving: Promise<void>;

  constructor(private readonly deps: ServingDeps) {
    this.serving = this.serve();
    // A failed connection surfaces at the first call that needs it, not as an unhandled rejection.
    this.serving.catch(() => undefined);
  }

  private async serve(): Promise<void> {
    const transport = await this.deps.transport;
    if (this.stopped) return;
    const queue = `${this.deps.prefix}.hosts`;
    for (const id of this.deps.timings.serve && !this.hostingStopped ? this.deps.catalog.hostedIds() : []) {
      this.hosting.push(
        transport.subscribe(this.subject('host', id), (m) => this.answer(m, () => this.take(id, m.data, m.headers)), { queue }),
        transport.subscribe(this.subject('card', id), (m) => this.answer(m, async () => ({ ok: true, card: this.cardOf(id) })), { queue }),
      );
    }
    this.subscriptions.push(transport.subscribe(this.subject('owner', this.deps.owner), (m) => this.answer(m, () => this.obey(m.data))));
    const teamTools = this.deps.teamTools;
    if (teamTools) this.subscriptions.push(transport.subscribe(this.subject('team', this.deps.owner), (m) => this.answer(m, () => this.teamCall(teamTools, m.data))));
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
    this.stopHosting();
    this.beating.clear();
  }

  /**
   * Stops hosting this runtime's definitions (the runtime drains): its queue-group subscriptions
   * end, so new calls go to the other runtimes hosting them; it still answers commands for the
   * swarms it holds until it closes. A host request already on its way is refused as `draining`,
   * which the caller sends again elsewhere.
   */
  stopHosting(): void {
    this.hostingStopped = true;
    for (const s of this.hosting) s.unsubscribe();
    this.hosting.length = 0;
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
  private async take(definitionId: string, data: string, headers?: Readonly<Record<string, string>>): Promise<Reply> {
    const parsed = hostRequestSchema.safeParse(parseJson(data));
    if (!parsed.success || parsed.data.definitionId !== definitionId) {
      return { ok: false, code: 'invalid-input', message: `Malformed host request for "${definitionId}"` };
    }
    const request = parsed.data as HostRequest;
    if (this.hostingStopped) throw new RuntimeDrainingError(`a call of "${definitionId}" from another runtime`);
    const { live } = this.deps;
    const id = request.swarmId;
    if (request.stop !== undefined) return this.takeToStop(id, request.stop);
    await this.startingHere.get(id);
    if (live.hosts.has(id) || live.passivated.has(id) || this.adopting.has(id)) {
      if (!request.attach) throw new SwarmError(`Swarm id "${id}" is already in use`, 'id-in-use');
      this.beating.add(id);
      return { ok: true };
    }
    if (headers) this.deps.heard?.(id, headers);
    try {
      // Heard from now on: the caller tells a runtime working on its call from one that never
      // answers, and waits for an answer that is slow to come (the first step not recorded yet).
      this.beating.add(id);
      // Starting refuses an id that exists (its first commit, a create, is the check: no read).
      const starting = this.deps.launcher.startDerived(definitionId, id, request.input, {
        ...(request.customization ? { customization: request.customization } : {}),
        ...(request.contextId ? { contextId: request.contextId } : {}),
        ...(request.inputParts ? { inputParts: request.inputParts as Part[] } : {}),
        ...(request.budgetOuter ? { budgetOuter: request.budgetOuter as BudgetAccountRef[] } : {}),
      });
      const settled = starting.catch(() => undefined);
      this.startingHere.set(id, settled);
      void settled.then(() => {
        if (this.startingHere.get(id) === settled) this.startingHere.delete(id);
      });
      await starting;
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
      await this.deps.commands.apply({ op: 'stop', swarmId: id, reason });
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
    await this.deps.commands.apply({ op: 'stop', swarmId: id, reason });
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
          if (await this.deps.leases.restore(id, held?.takeover, stop)) return stop ? undefined : await this.applyStop(id);
        } else if (this.stops.has(id)) {
          // Held by a runtime that may be alive after all: it stops the swarm if it answers.
          const stopped = await this.deps.others.send(held.lease.owner, { op: 'stop', swarmId: id, reason: this.stops.get(id)! }).then(
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

  /** A team tool call of a worker swarm hosted by another runtime, for a team driven here. */
  private async teamCall(answer: NonNullable<ServingDeps['teamTools']>, data: string): Promise<Reply> {
    const parsed = teamToolCallSchema.safeParse(parseJson(data));
    if (!parsed.success) return { ok: false, code: 'invalid-input', message: 'Malformed team tool call' };
    const { waitMs, ...call } = parsed.data;
    const done = await answer(call as TeamToolCall, waitMs);
    return done ? { ok: true, found: true, value: done.value } : { ok: true, found: false };
  }

  private async obey(data: string): Promise<Reply> {
    const parsed = ownerCommandSchema.safeParse(parseJson(data));
    if (!parsed.success) return { ok: false, code: 'invalid-input', message: 'Malformed command' };
    await this.deps.commands.apply(parsed.data as OwnerCommand);
    return { ok: true };
  }

  private beat(transport: Transport): void {
    if (transport.status() !== 'connected') return;
    const { live } = this.deps;
    for (const id of this.beating) {
      if (live.hosts.has(id) || live.passivated.has(id) || live.starting.has(id) || this.startingHere.has(id)) {
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

  private subject(kind: SubjectKind, id: string): string {
    return subjectOf(this.deps.prefix, kind, id);
  }
}
