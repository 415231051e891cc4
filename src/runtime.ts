/**
 * `createRuntime`: registers definitions, runs swarms as actors, answers their clients.
 *
 * @module
 */
import { randomUUID } from 'node:crypto';
import type { z } from 'zod';
import type { PauseReason, SwarmEvent, SwarmFact } from '../machines/events.js';
import { SWARM_MACHINE_VERSION, type SwarmCommand, type SwarmInput } from '../machines/swarm.js';
import { createSwarmLogic, type Model } from '../actors/index.js';
import { runningCalls, type CallResult, type ChildSwarmInput } from '../machines/round.js';
import { AdhocClient, SwarmClient, type SwarmControl } from './client.js';
import { type AgentDefinition, resolveFromInput, type SwarmDefinition } from './define.js';
import type { Handoff } from './handoff.js';
import { a2aRemoteAgents } from './lazy.js';
import type { RemoteAgentClient } from './remote.js';
import { assertCursor } from './cursor.js';
import { SwarmError } from './errors.js';
import { defaultOwner, HOST, holderIsGone } from './holder.js';
import { SwarmHost } from './host.js';
import { type Redactor, redactor } from './redact.js';
import { createPorts, type PortsHost } from './ports.js';
import { assertSwarmId, MAX_DERIVED_SWARM_ID_LENGTH, MAX_SWARM_ID_LENGTH } from './swarm-id.js';
import { ADHOC_ID, Registry, type ResolveOptions } from './registry.js';
import { replaySwarm } from './replay.js';
import { isFinal, type SwarmResult } from './result.js';
import { memoryStore } from './store/memory.js';
import { CorruptEventError, type Lease, LeaseLostError, RevisionConflictError, type SwarmFilter, type SwarmRecord, type SwarmStore, type SwarmSummary } from './store/types.js';
import type { SwarmCard } from './swarm-registry.js';
import { type Tool, validate } from './tool.js';

/**
 * Options of {@link createRuntime}.
 *
 * @example
 * const options: RuntimeOptions = { swarms: [planner], agents: [weather], model: scriptedModel(() => ({ text: 'ok' })) };
 */
export interface RuntimeOptions {
  swarms?: readonly SwarmDefinition<any, any>[];
  agents?: readonly AgentDefinition[];
  /**
   * Tools known by name without belonging to a definition: what customizations may add and
   * what overrides and ad-hoc swarms may use after a restart.
   */
  tools?: readonly Tool[];
  /** The model for orchestrators and for agents without a model of their own. */
  model: Model;
  /** Where swarms are persisted; default: a new in-memory store. */
  store?: SwarmStore;
  /**
   * How long this runtime's ownership of a swarm lasts without renewal (default 15 000 ms).
   * Leases are renewed every third of it; another runtime on the same store adopts a swarm
   * once its owner stopped renewing.
   */
  leaseMs?: number;
  /**
   * This runtime's owner id in the store (default: unique per runtime, `host:pid:random`). Leases
   * also record the holder's host and pid, so a runtime restarted on the same host takes over
   * the swarms of a dead predecessor at once instead of waiting its lease out; a live holder's
   * lease is always respected. A restart that passes its predecessor's owner id takes its
   * swarms back at once too.
   */
  owner?: string;
  /** How handoffs reach remote agents (default: the A2A client). */
  remote?: RemoteAgentClient;
  /**
   * Secrets (API keys, tokens) that must never be persisted: every occurrence in what a swarm
   * writes (snapshots, events, results) is replaced with `[REDACTED]`. The secrets models
   * declare (`Model.secrets`, e.g. `openaiModel`'s API key) are added. Secrets shorter than 8
   * characters are ignored.
   */
  redact?: readonly string[];
}

/**
 * A runtime: the registry of definitions plus the live swarms.
 *
 * @example
 * const runtime = createRuntime({ swarms: [planner], agents: [weather], model });
 * await runtime.start();
 * const client = runtime.forSwarm(planner);
 * await client.run('Plan my Saturday');
 */
export interface Runtime {
  /** A client for a swarm instance of a definition; a new id is generated when none is given. */
  forSwarm<I extends z.ZodType, R extends z.ZodType>(
    definition: SwarmDefinition<I, R>,
    swarmId?: string,
  ): SwarmClient<z.input<I>, z.output<R>>;
  forSwarm(definitionId: string, swarmId?: string): SwarmClient;
  /**
   * A client for a swarm started from parameters alone (no definition): its `run` takes
   * `{ userMessage, instructions, result?, handoffs?, tools?, maxTurns?, name?, description? }`.
   */
  adhoc(swarmId?: string): AdhocClient;
  /**
   * Restores every unfinished swarm of the store that no live runtime owns and continues the
   * running ones; keeps watching for swarms whose owner stops renewing its lease and adopts them.
   */
  start(): Promise<void>;
  /** Deletes finished swarms (result and events) last updated before `olderThan`; returns how many. */
  prune(options: { olderThan: Date | number }): Promise<number>;
  /**
   * Re-runs a finished swarm from its journal with zero model and tool calls, yielding exactly
   * its recorded events; throws `ReplayDivergenceError` where the code now behaves differently.
   */
  replay(swarmId: string): AsyncIterable<SwarmEvent>;
  /** Stops driving all swarms (their stored state stays) and closes a store it created. */
  close(): Promise<void>;
  /** The store this runtime writes to. */
  readonly store: SwarmStore;
  /**
   * Summaries of stored swarms (live ones included), most recently updated first. A swarm whose
   * stored data cannot be read, or that this runtime cannot restore, reads `failed` with the
   * reason, exactly as `getResult()` answers for it.
   */
  list(filter?: SwarmFilter): Promise<SwarmSummary[]>;
  /** Every registered swarm definition as a card: id, description, schemas, capabilities. */
  definitions(): SwarmCard[];
  /** The registered definition with this id, or undefined. */
  definition(id: string): SwarmDefinition | undefined;
  /**
   * Calls `listener` with every event of every swarm this runtime drives, in commit order,
   * once it is durable. Returns the unsubscribe function. A throwing listener is ignored.
   */
  subscribe(listener: (event: SwarmEvent) => void): () => void;
}

/**
 * Creates a runtime. Definitions are checked together here: duplicate ids, a handoff to an
 * unknown agent, an invalid or reserved tool name throw a `DefinitionError` at once.
 *
 * @example
 * const runtime = createRuntime({
 *   swarms: [planner], agents: [weather, calendar],
 *   model: process.env.OPENAI_API_KEY ? openaiModel({ model: 'gpt-4o-mini' }) : demoModel,
 * });
 */
export function createRuntime(options: RuntimeOptions): Runtime {
  return new RuntimeCore(options);
}

class RuntimeCore implements Runtime, SwarmControl {
  readonly store: SwarmStore;
  private readonly ownsStore: boolean;
  private readonly registry: Registry;
  private readonly hosts = new Map<string, SwarmHost>();
  /** Ids reserved by a `run` that has not created its host yet. */
  private readonly starting = new Set<string>();
  /** Swarms of the store that this runtime could not restore, with the reason. */
  private readonly unrestorable = new Map<string, string>();
  private readonly logic;
  private readonly owner: string;
  private readonly leaseMs: number;
  private readonly listeners = new Set<(event: SwarmEvent) => void>();
  private readonly remote: RemoteAgentClient;
  private readonly redact: Redactor | undefined;
  /**
   * Questions remote agents asked a swarm's human: the answer to the swarm's resume goes back to
   * each of them (parallel remote handoffs may ask at once).
   */
  private readonly remoteQuestions = new Map<string, ((answer: string | undefined) => void)[]>();
  private renewTimer: NodeJS.Timeout | undefined;
  private adoptTimer: NodeJS.Timeout | undefined;
  private closed = false;

  constructor(options: RuntimeOptions) {
    if (!options.model || typeof options.model.call !== 'function') {
      throw new TypeError('createRuntime: `model` is required (scriptedModel(...) or openaiModel(...))');
    }
    this.registry = new Registry(options.swarms ?? [], options.agents ?? [], options.tools ?? []);
    this.registry.configOf = (id) => this.hosts.get(id)?.config();
    this.owner = options.owner ?? defaultOwner();
    this.leaseMs = options.leaseMs ?? 15_000;
    if (!(this.leaseMs > 0)) throw new TypeError('createRuntime: leaseMs must be positive');
    this.remote = options.remote ?? a2aRemoteAgents();
    this.redact = redactor([
      ...(options.redact ?? []),
      ...(options.model.secrets ?? []),
      ...(options.agents ?? []).flatMap((a) => a.model?.secrets ?? []),
    ]);
    this.ownsStore = !options.store;
    this.store = options.store ?? memoryStore();
    this.logic = createSwarmLogic(
      createPorts({
        registry: this.registry,
        model: options.model,
        host: (id) => this.hosts.get(id),
        runChild: (input, signal) => this.runChild(input, signal),
        runRemote: (input, signal) => {
          const host = this.hosts.get(input.swarmId);
          return this.remote.send(
            input,
            {
              askHuman: (question) => this.askHuman(input.swarmId, question),
              swarmEnded: () => !this.closed && !!host && isFinal(host.status()),
            },
            signal,
          );
        },
      }),
    );
  }

  forSwarm(definition: SwarmDefinition | string, swarmId: string = randomUUID()): SwarmClient<any, any> {
    const id = typeof definition === 'string' ? definition : definition.id;
    return new SwarmClient(this, id, swarmId);
  }

  /**
   * The store's listing, with the swarms this runtime found it cannot restore reading failed as
   * {@link result} says; status filters and the limit apply to what is reported.
   */
  async list(filter: SwarmFilter = {}): Promise<SwarmSummary[]> {
    if (this.unrestorable.size === 0) return this.store.list(filter);
    const wanted = (s: SwarmSummary) => !filter.status || filter.status.includes(s.status);
    // At most `unrestorable.size` listed rows can drop out of the filter: fetch that many more.
    const limit = filter.limit === undefined ? undefined : filter.limit + this.unrestorable.size;
    const listed = new Map((await this.store.list({ ...filter, ...(limit === undefined ? {} : { limit }) })).map((s) => [s.swarmId, s]));
    // Stored as unfinished, reported failed: a filter asking for failed ones must find them.
    if (filter.status?.includes('failed')) {
      for (const id of this.unrestorable.keys()) {
        if (listed.has(id)) continue;
        const record = await this.store.load(id);
        if (!record || (filter.definitionId && record.definitionId !== filter.definitionId)) continue;
        const { snapshot: _s, ...summary } = record;
        listed.set(id, summary);
      }
    }
    return [...listed.values()]
      .map((s) => this.reported(s))
      .filter(wanted)
      .sort((a, b) => b.updatedAt - a.updatedAt)
      .slice(0, filter.limit ?? Infinity);
  }

  /**
   * A stored swarm as this runtime reports it: failed with the reason when it is unfinished and
   * could not be restored here (another runtime may still finish it; then the store says so).
   */
  private reported<S extends SwarmSummary>(s: S): S {
    const problem = this.unrestorable.get(s.swarmId);
    if (!problem || isFinal(s.status) || this.hosts.has(s.swarmId)) return s;
    return { ...s, status: 'failed', result: { status: 'failed', reason: problem } };
  }

  definitions(): SwarmCard[] {
    return this.registry.cards();
  }

  definition(id: string): SwarmDefinition | undefined {
    return id === ADHOC_ID ? undefined : this.registry.swarm(id);
  }

  adhoc(swarmId: string = randomUUID()): AdhocClient {
    return new AdhocClient(this, swarmId);
  }

  async start(): Promise<void> {
    this.assertOpen();
    await this.adopt();
    if (!this.adoptTimer) {
      this.adoptTimer = setInterval(() => void this.adopt().catch(() => undefined), Math.max(50, this.leaseMs / 2));
      this.adoptTimer.unref();
    }
  }

  /**
   * Restores every unfinished swarm nobody else holds a live lease on. The listing carries no
   * snapshots, so the periodic scan costs one query when there is nothing to adopt.
   */
  private async adopt(): Promise<void> {
    const now = Date.now();
    for (const listed of await this.store.list({ status: UNFINISHED })) {
      if (this.closed) return;
      const id = listed.swarmId;
      if (this.hosts.has(id) || this.starting.has(id) || this.unrestorable.has(id)) continue;
      const held = listed.lease && listed.lease.owner !== this.owner && listed.lease.until > now ? listed.lease : undefined;
      // A live lease of a process of this host that has died (a crash, then a restart) is not
      // waited out: the claim takes it from that very owner, or fails if someone else took it.
      const takeover = held && holderIsGone(held) ? held.owner : undefined;
      if (held && !takeover) continue;
      const candidate = await this.store.load(id);
      if (!candidate || isFinal(candidate.status)) continue;
      // Check that it can be restored before claiming it: a broken row is left untouched.
      if (!this.restorable(candidate)) continue;
      // Two adoption passes may run at once (start's timer, a parent re-attaching a child).
      if (this.starting.has(id)) continue;
      this.starting.add(id);
      try {
        if (!(await this.store.claim(id, this.lease(), Date.now(), takeover))) continue;
        // Re-read: the previous owner may have written between loading and claiming.
        const record = await this.store.load(id);
        const tail = record ? await this.tailOf(record) : undefined;
        if (!record || !tail || isFinal(record.status) || this.hosts.has(id) || !this.restorable(record)) continue;
        this.launch(this.createHost(id, record.definitionId, { record, lastSeq: tail.at(-1)?.seq ?? record.lastSeq }));
      } finally {
        this.starting.delete(id);
      }
    }
  }

  async prune(options: { olderThan: Date | number }): Promise<number> {
    const olderThan = options.olderThan instanceof Date ? options.olderThan.getTime() : options.olderThan;
    return this.store.prune(olderThan);
  }

  async *replay(swarmId: string): AsyncGenerator<SwarmEvent> {
    yield* await replaySwarm(this.store, swarmId, (input) => this.judgePorts(input));
  }

  /**
   * Ports that judge a replayed swarm's responses with this runtime's definitions, or
   * undefined when its definition is not registered here (the recorded verdicts are used).
   * Nothing in them reaches a model, a tool or another swarm.
   */
  private judgePorts(input: SwarmInput) {
    if (!this.registry.swarm(input.definitionId)) return undefined;
    const replaying: PortsHost = {
      config: () => input.config,
      input: () => input.input,
      publish: () => undefined,
      gate: async () => undefined,
    };
    const refuse = () => Promise.reject(new Error('a replay makes no calls'));
    return createPorts({
      registry: this.registry,
      model: { name: 'replay', call: refuse },
      host: (id) => (id === input.swarmId ? replaying : undefined),
      runChild: refuse,
      runRemote: refuse,
    });
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    clearInterval(this.renewTimer);
    clearInterval(this.adoptTimer);
    const ids = [...this.hosts.keys()];
    for (const host of [...this.hosts.values()]) host.detach();
    this.hosts.clear();
    await this.store.release(this.owner, ids).catch(() => undefined);
    if (this.ownsStore) await this.store.close();
  }

  private lease(): Lease {
    return { owner: this.owner, until: Date.now() + this.leaseMs, host: HOST, pid: process.pid };
  }

  private renewLeases(): void {
    const ids = [...this.hosts.keys()];
    if (ids.length > 0) void this.store.renew(this.owner, ids, Date.now() + this.leaseMs).catch(() => undefined);
  }

  // ---- SwarmControl -------------------------------------------------------------------

  /** Starts a swarm under an id its caller chose (at most {@link MAX_SWARM_ID_LENGTH} characters). */
  startSwarm(definitionId: string, swarmId: string, input: unknown, options: ResolveOptions = {}): Promise<void> {
    return this.launchSwarm(definitionId, swarmId, input, options, MAX_SWARM_ID_LENGTH);
  }

  /**
   * Starts a swarm; an id that is not a valid swarm id of at most `maxIdLength` characters is
   * refused before anything else happens. Child swarms come here with their derived ids.
   */
  private async launchSwarm(definitionId: string, swarmId: string, input: unknown, options: ResolveOptions, maxIdLength: number): Promise<void> {
    assertSwarmId(swarmId, maxIdLength);
    this.assertOpen();
    const def = this.registry.swarm(definitionId);
    if (!def) throw new SwarmError(`Unknown swarm definition "${definitionId}"`, 'unknown-definition');
    const parsed = validate(def.input, input);
    if (!parsed.ok) throw new SwarmError(`Invalid input for swarm "${definitionId}": ${parsed.error}`, 'invalid-input');
    if (this.hosts.has(swarmId) || this.starting.has(swarmId)) throw inUse(swarmId);
    this.starting.add(swarmId);
    try {
      if (await this.store.load(swarmId)) throw inUse(swarmId);
      const handoffs = resolveFromInput(options.overrides?.handoffs ?? def.handoffs, parsed.value);
      await this.fetchRemoteCards(handoffs);
      const config = this.registry.resolve(def, parsed.value, { ...options, handoffs });
      const value = parsed.value;
      const host = this.launch(this.createHost(swarmId, def.id, {
        input: {
          swarmId,
          definitionId: def.id,
          input: value,
          userMessage: typeof value === 'string' ? value : JSON.stringify(value),
          config,
        },
      }));
      await host.gate().catch(() => undefined);
      if (host.error) throw new SwarmError(`Swarm "${swarmId}" could not be recorded: ${host.error.message}`, 'store');
    } finally {
      this.starting.delete(swarmId);
    }
  }

  /**
   * What every door reports for a swarm: the live host's result, else the stored one as
   * {@link reported} (an unreadable record already reads failed, naming the problem).
   */
  async result(swarmId: string): Promise<SwarmResult> {
    const host = this.hosts.get(swarmId);
    if (host) return host.result();
    const record = await this.store.load(swarmId);
    if (!record) throw new SwarmError(`Unknown swarm "${swarmId}"`, 'unknown-swarm');
    return this.reported(record).result;
  }

  async wait(swarmId: string): Promise<SwarmResult> {
    for (;;) {
      const next = this.nextChange(swarmId);
      const result = await this.result(swarmId);
      if (result.status !== 'running' || this.unrestorable.has(swarmId)) return result;
      await next;
    }
  }

  /**
   * The swarm's events after `since`, until its final event. A cursor beyond the end of a swarm
   * that has ended is refused (`invalid-cursor`); beyond the end of an unfinished one, the
   * reader waits for the events after it. When `signal` aborts, or the consumer stops
   * iterating, everything the reader registered to wait is released at once.
   */
  async *events(swarmId: string, since: number, signal?: AbortSignal): AsyncGenerator<SwarmEvent> {
    let cursor = since;
    let yielded = false;
    let reread = false;
    // One controller per wait, aborted when the wait is not needed any more (events were read
    // instead, the caller's signal fired, the consumer left): it unregisters the wait.
    let parked: AbortController | undefined;
    const leave = () => parked?.abort();
    signal?.addEventListener('abort', leave, { once: true });
    try {
      for (;;) {
        if (signal?.aborted) return;
        parked?.abort();
        parked = new AbortController();
        // Taken before reading, so a commit landing during the read still wakes us.
        const next = this.nextChange(swarmId, parked.signal);
        const batch = await this.readForStream(swarmId, cursor);
        if (signal?.aborted) return;
        if (batch.length > 0) {
          // Not waiting this time: let the wait go before handing events out.
          parked.abort();
          for (const event of batch) {
            yield event;
            yielded = true;
            cursor = event.seq;
            if (event.kind === 'status-update' && event.final) return;
            if (signal?.aborted) return;
          }
          continue;
        }
        // A failure the store could not take yet ends the stream from memory.
        const unrecorded = this.hosts.get(swarmId)?.unrecordedEnd();
        if (unrecorded) {
          if (unrecorded.seq > cursor) yield unrecorded;
          return;
        }
        if (!this.hosts.has(swarmId)) {
          const record = await this.store.load(swarmId);
          if (!record) {
            // Pruned while we were reading it: its stream simply ends.
            if (!yielded) throw new SwarmError(`Unknown swarm "${swarmId}"`, 'unknown-swarm');
            return;
          }
          // It ended after our read (its host is gone): read what it wrote last, once.
          if (isFinal(record.status) && record.lastSeq > cursor && !reread) {
            reread = true;
            continue;
          }
          assertCursor(record, cursor);
          if (isFinal(record.status) || this.unrestorable.has(swarmId) || this.closed) return;
        }
        await next;
      }
    } finally {
      signal?.removeEventListener('abort', leave);
      parked?.abort();
    }
  }

  /**
   * Resolves at the swarm's next commit when it is live here; otherwise after a short poll
   * interval, since another process (or this runtime's adoption) may be driving it. Resolves at
   * once when `signal` aborts, and then leaves no listener, waker or timer behind.
   */
  private nextChange(swarmId: string, signal?: AbortSignal): Promise<void> {
    const host = this.hosts.get(swarmId);
    if (host) return host.nextCommit(signal);
    return delay(POLL_MS, signal);
  }

  subscribe(listener: (event: SwarmEvent) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  async pause(swarmId: string, reason: PauseReason): Promise<void> {
    const host = await this.liveHost(swarmId, 'pause');
    const status = host.status();
    if (status === 'paused') throw new SwarmError(`Swarm "${swarmId}" is already paused`, 'wrong-state');
    await this.command(host, { type: 'PAUSE', reason });
    // Pausing a parent pauses the child swarms it is waiting on (and theirs, recursively).
    for (const childId of runningChildSwarms(host)) {
      const child = this.hosts.get(childId);
      if (child && child.status() !== 'paused' && !isFinal(child.status())) {
        await this.pause(childId, { type: reason.type, message: `Parent swarm "${swarmId}" paused: ${reason.message}` });
      }
    }
  }

  async resume(swarmId: string, message: string | undefined): Promise<void> {
    const host = await this.liveHost(swarmId, 'resume');
    if (host.status() !== 'paused') throw new SwarmError(`Swarm "${swarmId}" is ${host.status()}, not paused`, 'wrong-state');
    await this.command(host, message === undefined ? { type: 'RESUME' } : { type: 'RESUME', message });
    const waiting = this.remoteQuestions.get(swarmId) ?? [];
    this.remoteQuestions.delete(swarmId);
    for (const answer of waiting) answer(message);
    // Children paused from outside resume with their parent; a child waiting for its own
    // human (it called `pause`) keeps waiting for that human.
    for (const childId of runningChildSwarms(host)) {
      const child = this.hosts.get(childId);
      if (child?.status() === 'paused' && child.context().pause?.from !== 'model') await this.resume(childId, undefined);
    }
  }

  /** The child's `seq` up to which the parent's stored stream already relays its lifecycle. */
  private async relayedUpTo(parentId: string, childId: string): Promise<number> {
    let upTo = 0;
    for (const e of await this.store.readEvents(parentId, 0)) {
      if (e.kind === 'status-update' && e.metadata.type === 'child-swarm' && e.metadata.childSwarmId === childId) {
        upTo = Math.max(upTo, e.metadata.childSeq);
      }
    }
    return upTo;
  }

  /** Pauses a swarm for a question a remote agent asked; resolves with the human's answer. */
  private async askHuman(swarmId: string, question: string): Promise<string | undefined> {
    const answer = new Promise<string | undefined>((resolve) => {
      this.remoteQuestions.set(swarmId, [...(this.remoteQuestions.get(swarmId) ?? []), resolve]);
    });
    const host = this.hosts.get(swarmId);
    if (host && host.status() !== 'paused') await this.pause(swarmId, { type: 'HITL', message: question });
    return answer;
  }

  /** Fetches (once) the agent cards of remote handoffs, so their tools get the cards' names. */
  private async fetchRemoteCards(handoffs: readonly Handoff[]): Promise<void> {
    for (const h of handoffs) {
      if (h.kind !== 'remote' || this.registry.remoteCards.has(h.url)) continue;
      try {
        this.registry.remoteCards.set(h.url, await this.remote.card(h.url, AbortSignal.timeout(10_000)));
      } catch {
        // Unreachable now: the swarm still runs; calls to this agent report the problem.
      }
    }
  }

  /**
   * Runs a child swarm for a parent's handoff: starts it (or re-attaches after a restart),
   * relays its lifecycle into the parent's stream, resolves with its outcome. When the parent
   * ends while the child runs (it was stopped), the child is stopped too.
   */
  private async runChild(input: ChildSwarmInput, signal: AbortSignal): Promise<CallResult> {
    const parent = this.hosts.get(input.parentId);
    await parent?.gate();
    const id = input.childSwarmId;
    const known = this.hosts.has(id) || (await this.store.load(id)) !== undefined;
    // Re-attaching after a restart: relay what the parent has not stored yet, exactly once.
    const since = known ? await this.relayedUpTo(input.parentId, id) : 0;
    if (!this.hosts.has(id)) {
      // Loaded again after the awaits above: the child may have started or ended meanwhile.
      const record = known ? await this.store.load(id) : undefined;
      if (!record) {
        try {
          await this.launchSwarm(input.definitionId, id, input.input, input.customization ? { customization: input.customization } : {}, MAX_DERIVED_SWARM_ID_LENGTH);
        } catch (e) {
          return { ok: false, content: `Swarm "${input.definitionId}" could not start: ${(e as Error).message}` };
        }
      } else if (!isFinal(record.status)) {
        await this.adopt();
      }
    }
    const stopChild = () =>
      queueMicrotask(() => {
        if (this.closed || !parent || !isFinal(parent.status())) return;
        if (this.hosts.has(id)) void this.stop(id, `parent swarm "${input.parentId}" ${parent.status()}`).catch(() => undefined);
      });
    signal.addEventListener('abort', stopChild, { once: true });
    const aborted = new Promise<never>((_, reject) => signal.addEventListener('abort', () => reject(signal.reason), { once: true }));
    const follow = async (): Promise<CallResult> => {
      for await (const event of this.events(id, since)) {
        if (signal.aborted) break;
        const fact = event.kind === 'status-update' ? lifecycleOf(event.metadata) : undefined;
        if (fact) {
          parent?.publish({
            kind: 'status-update',
            state: 'working',
            final: false,
            metadata: {
              type: 'child-swarm',
              childSwarmId: id,
              definitionId: input.definitionId,
              callId: input.callId,
              ...fact,
              childSeq: event.seq,
            },
          });
        }
      }
      const result = await this.result(id);
      const name = `Swarm "${input.definitionId}" (${id})`;
      if (result.status === 'completed') {
        return { ok: true, content: typeof result.result === 'string' ? result.result : JSON.stringify(result.result) };
      }
      if (result.status === 'failed') return { ok: false, content: `${name} failed: ${result.reason}` };
      if (result.status === 'stopped') return { ok: false, content: `${name} was stopped: ${result.reason}` };
      return { ok: false, content: `${name} is no longer running in this runtime (${result.status})` };
    };
    return Promise.race([follow(), aborted]);
  }

  async stop(swarmId: string, reason: string): Promise<void> {
    await this.command(await this.liveHost(swarmId, 'stop'), { type: 'STOP', reason });
  }

  // ---- internals ----------------------------------------------------------------------

  private async command(host: SwarmHost, command: SwarmCommand): Promise<void> {
    host.send(command);
    await host.gate().catch(() => undefined);
    // Nothing is acknowledged that was not recorded.
    const error = host.error;
    if (error instanceof LeaseLostError || error instanceof RevisionConflictError) {
      throw new SwarmError(`Swarm "${host.swarmId}" is now driven by another runtime: ${error.message}`, 'not-live');
    }
    if (error) throw new SwarmError(`Swarm "${host.swarmId}" could not record the ${command.type} command: ${error.message}`, 'store');
  }

  /** The host driving a swarm here, or a SwarmError saying precisely why there is none. */
  private async liveHost(swarmId: string, verb: string): Promise<SwarmHost> {
    const host = this.hosts.get(swarmId);
    // A host that failed stays here only while its failure is being recorded.
    if (host?.error) throw new SwarmError(`Cannot ${verb} swarm "${swarmId}": it has ended (failed)`, 'wrong-state');
    if (host) return host;
    const problem = this.unrestorable.get(swarmId);
    if (problem) throw new SwarmError(`Cannot ${verb}: ${problem}`, 'wrong-state');
    const record = await this.store.load(swarmId);
    if (!record) throw new SwarmError(`Cannot ${verb} swarm "${swarmId}": unknown swarm`, 'unknown-swarm');
    if (record.problem && record.result.status === 'failed') throw new SwarmError(`Cannot ${verb}: ${record.result.reason}`, 'wrong-state');
    if (isFinal(record.status)) throw new SwarmError(`Cannot ${verb} swarm "${swarmId}": it has ended (${record.status})`, 'wrong-state');
    throw new SwarmError(`Cannot ${verb} swarm "${swarmId}": it is not running in this runtime (another runtime owns it)`, 'not-live');
  }

  /**
   * Whether a stored swarm can be restored here; if not, it is reported failed with the reason
   * (its stored data stays exactly as it is).
   */
  private restorable(record: SwarmRecord): boolean {
    // An unreadable record already reads failed, naming its problem, wherever it is read.
    if (record.problem) return false;
    let problem =
      this.restoreProblem(record) ??
      (record.snapshot === undefined ? 'no snapshot was stored (the runtime that ran it on a volatile store did not close)' : undefined);
    if (!problem) {
      try {
        // Building the host restores the actor without starting it: a dry run.
        this.createHost(record.swarmId, record.definitionId, { record, lastSeq: record.lastSeq }).discard();
      } catch (e) {
        problem = (e as Error).message;
      }
    }
    if (problem) this.unrestorable.set(record.swarmId, `Cannot restore swarm "${record.swarmId}": ${problem}`);
    return !problem;
  }

  /**
   * The events a restored swarm's record does not cover yet (their numbers continue its
   * stream), or undefined when one cannot be read: the swarm is then reported failed.
   */
  private async tailOf(record: SwarmRecord): Promise<SwarmEvent[] | undefined> {
    try {
      return await this.store.readEvents(record.swarmId, record.lastSeq);
    } catch (e) {
      if (!(e instanceof CorruptEventError)) throw e;
      this.unrestorable.set(record.swarmId, `Cannot restore swarm "${record.swarmId}": ${e.message}`);
      return undefined;
    }
  }

  /**
   * The events after `cursor` for a stream: all of them, or those before a corrupt one. The
   * stream delivers these, and its next read, which starts at the corrupt event, throws.
   */
  private async readForStream(swarmId: string, cursor: number): Promise<SwarmEvent[]> {
    try {
      return await this.store.readEvents(swarmId, cursor);
    } catch (e) {
      if (e instanceof CorruptEventError && e.readable.length > 0) return e.readable;
      throw e;
    }
  }

  private createHost(swarmId: string, definitionId: string, from: ConstructorParameters<typeof SwarmHost>[3]): SwarmHost {
    const def = this.registry.swarm(definitionId)!;
    return new SwarmHost(
      this.logic,
      this.store,
      {
        swarmId,
        definitionId,
        definitionVersion: def.version,
        lease: () => this.lease(),
        redact: this.redact,
        committed: (events) => {
          for (const listener of this.listeners) {
            for (const e of events) {
              try {
                listener(e);
              } catch {
                // One subscriber's bug must not stop a swarm or the other subscribers.
              }
            }
          }
        },
      },
      from,
      (h) => {
        if (this.hosts.get(h.swarmId) === h) this.hosts.delete(h.swarmId);
      },
    );
  }

  private launch(host: SwarmHost): SwarmHost {
    this.hosts.set(host.swarmId, host);
    if (!this.renewTimer) {
      this.renewTimer = setInterval(() => this.renewLeases(), Math.max(20, this.leaseMs / 3));
      this.renewTimer.unref();
    }
    host.start();
    return host;
  }

  private restoreProblem(record: SwarmRecord): string | undefined {
    const def = this.registry.swarm(record.definitionId);
    if (!def) return `its definition "${record.definitionId}" is not registered with this runtime`;
    if (record.machineVersion !== SWARM_MACHINE_VERSION) {
      return `its snapshot was written by swarm machine version ${record.machineVersion}, this runtime runs version ${SWARM_MACHINE_VERSION}`;
    }
    if (record.definitionVersion !== def.version) {
      return `its snapshot was written by "${def.id}" version ${record.definitionVersion}, this runtime has version ${def.version}`;
    }
    return undefined;
  }

  private assertOpen(): void {
    if (this.closed) throw new SwarmError('This runtime is closed', 'closed');
  }
}

const UNFINISHED = ['running', 'awaitingHandoff', 'paused'] as const;

/** How often readers poll the store for a swarm that is not live in this runtime. */
const POLL_MS = 200;

/** Resolves after `ms`, or at once when `signal` aborts (the timer is cleared then). */
function delay(ms: number, signal?: AbortSignal): Promise<void> {
  if (signal?.aborted) return Promise.resolve();
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal?.addEventListener('abort', done, { once: true });
  });
}

function inUse(swarmId: string): SwarmError {
  return new SwarmError(`Swarm id "${swarmId}" is already in use`, 'id-in-use');
}

/** Ids of the child swarms a swarm is waiting on. */
function runningChildSwarms(host: SwarmHost): string[] {
  return runningCalls(host.context().round)
    .filter((c) => c.kind === 'swarm')
    .map((c) => c.childSwarmId!);
}

/** The lifecycle step a child's own status fact stands for, as relayed to its parent. */
function lifecycleOf(fact: SwarmFact): { lifecycle: 'started' | 'paused' | 'resumed' | 'completed' | 'failed' | 'stopped'; reason?: string } | undefined {
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
