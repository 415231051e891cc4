/**
 * Running swarm handoffs: a child swarm starts (or is re-attached to after a restart), its
 * lifecycle is relayed into its parent's stream, and its outcome becomes the handoff's result.
 * A child follows its parent: stopped when the parent ends while it runs, paused and resumed
 * with it. A passivated parent stops following (its handoff actor stops with it) and follows
 * again from where its stream left off once restored; a passivated child is restored to be
 * paused, resumed or stopped.
 *
 * The child's id is the call's idempotency key, and an outage of the store (NATS down or
 * restarting) is never the call's outcome: every read the call makes (whether the child exists,
 * what the parent relayed, the child's events, its result) waits for the store to answer again
 * and goes on from where it was, and a hosted child whose start could not be confirmed is
 * looked up by its id before the call reports that it could not start. So a child that started,
 * or even completed, while NATS was down is followed to its result, never started again under
 * another call.
 *
 * @module
 */
import { statusUpdate } from '../../machines/event-builders.js';
import type { SwarmEvent, SwarmEventBody, SwarmFact } from '../../machines/events.js';
import type { SwarmContext } from '../../machines/swarm.js';
import { errorText } from '../../machines/error-text.js';
import type { ChildSwarmInput } from '../../machines/calls/swarm.js';
import type { CallResult } from '../../machines/calls/kind.js';
import { addByModel, addCall, type UsageByModel } from '../../machines/usage.js';
import { runningCalls } from '../../machines/round.js';
import { isFinal, type SwarmResult, type SwarmStatus } from '../store/result.js';
import { storedPages } from '../store/pages.js';
import { summaryOf } from '../store/summary.js';
import type { SwarmStore } from '../store/types.js';
import { untilReachable } from '../store/reachable.js';
import type { Catalog } from '../catalog/catalog.js';
import type { OtherRuntimes } from '../distribution/calls.js';
import type { Customization } from '../../machines/calls/swarm.js';
import { targetName } from '../catalog/hosted.js';
import type { HostRequest } from '../distribution/protocol.js';
import { type BudgetAccountRef, enclosingAccounts } from '../../machines/budget.js';
import { CallTimeoutError } from '../../actors/call-timeout.js';
import { approvalLifecycle, withChildApprovals } from './child-approvals.js';

/**
 * The reason a call's own lifetime ends with when the call is over (nobody reads it: whatever
 * still waits on that lifetime then only lets go): given, so that the end of every handoff does
 * not build a `DOMException` with its stack.
 */
const CALL_ENDED = new Error('the child swarm call ended');

/** What child swarms need of a live swarm (the runtime's host of a parent or a child). */
export interface LiveSwarm {
  /** Resolves once everything the swarm recorded so far is durable. */
  durable(): Promise<void>;
  status(): SwarmStatus;
  /** Publishes an event body into the swarm's stream (recorded with its next commit). */
  publish(body: SwarmEventBody): void;
  context(): SwarmContext;
  /** Whether it was restored from the store (see {@link ChildSwarms.run}); absent: it may have been. */
  readonly restored?: boolean;
}

/** What running child swarms needs from the runtime. */
export interface ChildSwarmDeps {
  store: SwarmStore;
  /** The swarms live here (parents and children), and whether the runtime was closed. */
  live: { readonly hosts: ReadonlyMap<string, LiveSwarm>; readonly closed: boolean };
  /** Brings a passivated child back into memory (to stop it with its parent). */
  rehydration: { rehydrate(swarmId: string): Promise<LiveSwarm | undefined> };
  /** Starts a child under its derived id. */
  launcher: {
    startDerived(definitionId: string, swarmId: string, input: unknown, options: { customization?: Customization; budgetOuter?: BudgetAccountRef[] }): Promise<void>;
  };
  /** Adopts the unfinished swarms nobody drives (a child a previous owner left running). */
  leases: { adopt(): Promise<void> };
  /** A child's events after `since` (the reader lets go when `signal` aborts), and its result. */
  reading: {
    events(swarmId: string, since: number, signal: AbortSignal): AsyncIterable<SwarmEvent>;
    result(swarmId: string): Promise<SwarmResult>;
    /** A swarm's usage rolled up over its children, by model; absent: children's usage is not counted. */
    rolledUpUsage?(swarmId: string): Promise<UsageByModel>;
  };
  commands: { stop(swarmId: string, reason: string): Promise<void> };
  /**
   * Child swarms whose definition is hosted by other runtimes (a transport is configured):
   * started or re-attached to there, kept alive by their heartbeats. Absent: every child is local.
   */
  hosted?: HostedChildren | undefined;
}

/** How a child swarm hosted by another runtime is reached (see `distribution/calls.ts`). */
export interface HostedChildren {
  /** Whether the definition is registered here (then the child runs here). */
  catalog: Pick<Catalog, 'has'>;
  others: Pick<OtherRuntimes, 'host' | 'keepAlive'>;
}

/** The child swarms of one runtime's swarms. */
export class ChildSwarms {
  /**
   * Per parent host started here from a fresh input (never restored), the ids of the children
   * its calls have begun: a child id is its call's, so a child it has not begun cannot exist.
   */
  private readonly begun = new WeakMap<LiveSwarm, Set<string>>();

  constructor(private readonly deps: ChildSwarmDeps) {}

  /**
   * Runs a child swarm for a parent's handoff: starts it (or re-attaches after a restart),
   * relays its lifecycle into the parent's stream, resolves with its outcome. When the parent
   * ends while the child runs (it was stopped), the child is stopped too.
   */
  async run(input: ChildSwarmInput, signal: AbortSignal): Promise<CallResult> {
    // The call's own lifetime: what it sets up (a hosted child's keep-alive, the stream reader,
    // the listeners) ends with it, since a promise actor's signal aborts only if it is stopped.
    const call = new AbortController();
    const end = () => call.abort(signal.reason);
    signal.addEventListener('abort', end, { once: true });
    if (signal.aborted) end();
    try {
      return await this.runCall(input, signal, call.signal);
    } finally {
      signal.removeEventListener('abort', end);
      call.abort(CALL_ENDED);
    }
  }

  /** {@link run} within `lifetime` (aborted when the call ends, or with `signal`). */
  private async runCall(input: ChildSwarmInput, signal: AbortSignal, lifetime: AbortSignal): Promise<CallResult> {
    const { deps } = this;
    const parent = deps.live.hosts.get(input.parentId);
    await parent?.durable();
    const id = input.childSwarmId;
    /** A read of the store, waited out while the store cannot be reached (see the module doc). */
    const reading = <T>(read: () => Promise<T>) => untilReachable(deps.store, read, lifetime);
    const exists = async () => deps.live.hosts.has(id) || (await reading(() => summaryOf(deps.store, id))) !== undefined;
    // A call of a parent that has lived only in this host, begun for the first time: its child
    // cannot exist yet (only this call starts it, and the call waited for its step to be
    // durable first), so no read of the store (a broker round trip on a network store) is made.
    // A parent restored from the store, or a call begun again (resumed with its parent), reads.
    const known = this.beginsFresh(parent, id) ? false : await exists();
    // The parent was stopped while the step that called the child was being made durable: a
    // child not started yet never is (one that exists is stopped below).
    if (!known && signal.aborted) throw signal.reason;
    // Restored past the handoff's deadline before its child began: it never does.
    if (!known && input.timeout && Date.now() >= input.timeout.deadline) {
      const content = `${targetName(input.definitionId)} (${id}) ${new CallTimeoutError(input.timeout.ms).message}`;
      return input.timeout.fails ? { ok: false, content, failsSwarm: true } : { ok: false, content };
    }
    // Re-attaching after a restart: relay what the parent has not stored yet, exactly once.
    const since = known ? await reading(() => this.relayedUpTo(input.parentId, id)) : 0;
    const hosted = deps.hosted && !deps.hosted.catalog.has(input.definitionId) ? deps.hosted.others : undefined;
    // The child draws from its parent's budgets (and its own, if it has one): the lower limit wins.
    const budgetOuter = parent ? enclosingAccounts(input.parentId, parent.context().config.budget) : [];
    if (hosted) {
      const request: HostRequest = {
        swarmId: id,
        definitionId: input.definitionId,
        input: input.input,
        attach: true,
        ...(input.customization ? { customization: input.customization } : {}),
        ...(budgetOuter.length > 0 ? { budgetOuter } : {}),
      };
      // Followed before it is asked for (for the call's lifetime, beside the reader below): a
      // store that announces other processes' writes then delivers the child's first values
      // here as they land, and the first read of it makes no round trip.
      const early = deps.store.watch?.(id, () => undefined);
      if (early) lifetime.addEventListener('abort', early, { once: true });
      // A parent stopped by now (taken over to be stopped) asks no runtime to host its child:
      // the child, if it exists, is stopped below.
      if (!signal.aborted) {
        try {
          await hosted.host(request, signal);
        } catch (e) {
          // Stopped during the request: the child may have started, and is stopped below.
          // Otherwise the request may have reached a runtime that started the child although its
          // answer was lost (NATS went down meanwhile): the child is looked up by its id, the
          // call's key, before the call is said to have failed.
          if (!signal.aborted && !known && !(await exists())) return { ok: false, content: `${targetName(input.definitionId)} could not start: ${errorText(e)}` };
          // A child that exists goes on being followed: its heartbeats' silence asks again.
        }
      }
      hosted.keepAlive(request, async () => isFinal((await deps.reading.result(id)).status), lifetime);
    } else if (!deps.live.hosts.has(id)) {
      // Loaded again after the awaits above: the child may have started or ended meanwhile.
      const record = known ? await summaryOf(deps.store, id) : undefined;
      if (!record) {
        try {
          await deps.launcher.startDerived(input.definitionId, id, input.input, {
            ...(input.customization ? { customization: input.customization } : {}),
            ...(budgetOuter.length > 0 ? { budgetOuter } : {}),
          });
        } catch (e) {
          return { ok: false, content: `Swarm "${input.definitionId}" could not start: ${errorText(e)}` };
        }
      } else if (!isFinal(record.status)) {
        await deps.leases.adopt();
      }
    }
    const stop = (reason: string) => {
      // A child hosted elsewhere is stopped by the runtime holding it (the command goes there).
      const stopping = hosted ? deps.commands.stop(id, reason) : deps.rehydration.rehydrate(id).then((child) => child && deps.commands.stop(id, reason));
      void stopping.catch(() => undefined);
    };
    const stopChild = () =>
      queueMicrotask(() => {
        if (deps.live.closed || !parent || !isFinal(parent.status())) return;
        stop(`parent swarm "${input.parentId}" ${parent.status()}`);
      });
    // Only while the call runs: a parent ending afterwards has nothing of this child to stop.
    signal.addEventListener('abort', stopChild, { once: true });
    lifetime.addEventListener(
      'abort',
      () => {
        // The call ended on its own (not with the parent's signal, whose listener must still run).
        if (!signal.aborted) signal.removeEventListener('abort', stopChild);
      },
      { once: true },
    );
    // Stopped during the awaits above (a parent restored and stopped at once): stop the child now.
    if (signal.aborted) stopChild();
    // At the handoff's deadline (stored with the call: a restored call keeps it) the child is
    // stopped; its outcome, "stopped: timed out …", is then the handoff's result, as any stop's.
    const { timeout } = input;
    if (timeout) {
      const expire = setTimeout(
        () => {
          if (!lifetime.aborted && !deps.live.closed) stop(new CallTimeoutError(timeout.ms).message);
        },
        Math.max(0, timeout.deadline - Date.now()),
      );
      lifetime.addEventListener('abort', () => clearTimeout(expire), { once: true });
    }
    const aborted = new Promise<never>((_, reject) => lifetime.addEventListener('abort', () => reject(signal.reason), { once: true }));
    // Settled when the call ends: nobody awaits it then.
    aborted.catch(() => undefined);
    const follow = async (): Promise<CallResult> => {
      // The child's seq relayed last: a read cut by an outage starts again after it, so each
      // lifecycle step is relayed once.
      let cursor = since;
      // The child's usage as its stream tells it (its calls by model, its children's totals),
      // each event counted once: read from its first event, it needs no read of its snapshot.
      let spent: UsageByModel = {};
      await reading(async () => {
        // With the call's lifetime: a parent passivated (or stopped) lets go of its child's stream at once.
        for await (const event of deps.reading.events(id, cursor, lifetime)) {
          if (lifetime.aborted) break;
          cursor = event.seq;
          spent = spentWith(spent, event);
          const fact = event.kind === 'status-update' ? (lifecycleOf(event.metadata) ?? approvalLifecycle(event)) : undefined;
          if (fact) {
            // A pause for approvals asks the parent's human too (child-approvals.ts).
            const relayed = statusUpdate('working', {
              type: 'child-swarm',
              childSwarmId: id,
              definitionId: input.definitionId,
              callId: input.callId,
              ...fact,
              childSeq: event.seq,
            });
            parent?.publish(withChildApprovals(relayed, event, id));
          }
        }
      });
      const ended = await reading(() => deps.reading.result(id));
      const stated = outcome(`${targetName(input.definitionId)} (${id})`, ended);
      // Stopped at the handoff's deadline (see above), with `onTimeout: 'fail'`: the parent fails too.
      const timedOut = input.timeout?.fails && ended.status === 'stopped' && ended.reason === new CallTimeoutError(input.timeout.ms).message;
      const result: CallResult = timedOut ? { ...stated, failsSwarm: true } : stated;
      // An ended child's usage, rolled up over its own children, goes with its result: the
      // parent counts it once, when it records the result (a restored parent reads it again
      // here). A child still running (this runtime closing) has not spent its last yet. A call
      // that re-attached mid-stream saw only part of it: the child's snapshot says the rest.
      if (!isFinal(ended.status)) return result;
      const rolled = deps.reading.rolledUpUsage;
      const usage = since === 0 ? spent : rolled ? await reading(() => rolled.call(deps.reading, id)) : {};
      return Object.keys(usage).length > 0 ? { ...result, usage } : result;
    };
    return Promise.race([follow(), aborted]);
  }

  /** Whether `parent` (live here, never restored) begins its call of child `id` for the first time; notes that it has. */
  private beginsFresh(parent: LiveSwarm | undefined, id: string): boolean {
    if (parent?.restored !== false) return false;
    let ids = this.begun.get(parent);
    if (!ids) this.begun.set(parent, (ids = new Set()));
    if (ids.has(id)) return false;
    ids.add(id);
    return true;
  }

  /** The child's `seq` up to which the parent's stored stream already relays its lifecycle. */
  private async relayedUpTo(parentId: string, childId: string): Promise<number> {
    let upTo = 0;
    // Page by page: the parent's stream may be long, and only one number is kept from it.
    for await (const page of storedPages(this.deps.store, parentId, 0)) {
      for (const e of page) {
        if (e.kind === 'status-update' && e.metadata.type === 'child-swarm' && e.metadata.childSwarmId === childId) {
          upTo = Math.max(upTo, e.metadata.childSeq);
        }
      }
    }
    return upTo;
  }
}

/** `spent` plus what one event of a child's stream says it used: a model call, or a child's rolled-up usage. */
function spentWith(spent: UsageByModel, event: SwarmEvent): UsageByModel {
  if (event.kind === 'internal:llm-call') return addCall(spent, event.model, event.usage);
  if (event.kind === 'status-update' && event.metadata.type === 'handoff-result' && event.metadata.usage) return addByModel(spent, event.metadata.usage);
  return spent;
}

/** A child's result as its parent's handoff result. */
function outcome(name: string, result: SwarmResult): CallResult {
  if (result.status === 'completed') {
    return { ok: true, content: typeof result.result === 'string' ? result.result : JSON.stringify(result.result) };
  }
  if (result.status === 'failed') return { ok: false, content: `${name} failed: ${result.reason}` };
  if (result.status === 'stopped') return { ok: false, content: `${name} was stopped: ${result.reason}` };
  return { ok: false, content: `${name} is no longer running in this runtime (${result.status})` };
}

/** Ids of the child swarms a swarm is waiting on. */
export function runningChildSwarms(host: Pick<LiveSwarm, 'context'>): string[] {
  return runningCalls(host.context().round).flatMap((c) => (c.kind === 'swarm' ? [c.childSwarmId] : []));
}

/** The lifecycle step a child's own status fact stands for, as relayed to its parent. */
export function lifecycleOf(fact: SwarmFact): Pick<Extract<SwarmFact, { type: 'child-swarm' }>, 'lifecycle' | 'reason'> | undefined {
  switch (fact.type) {
    case 'started':
    case 'resumed':
    case 'completed':
      return { lifecycle: fact.type };
    case 'paused':
      return { lifecycle: 'paused', reason: fact.reason.message };
    case 'failed':
    case 'stopped':
      return { lifecycle: fact.type, reason: fact.reason };
    default:
      return undefined;
  }
}
