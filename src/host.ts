/**
 * The host of one live swarm: it owns the actor, numbers the events the machine emits, writes
 * each completed step (snapshot + its events) to the store in one commit, and wakes readers.
 *
 * @module
 */
import { type Actor, createActor } from 'xstate';
import type { SwarmEvent, SwarmEventBody } from '../machines/events.js';
import { SWARM_MACHINE_VERSION, type SwarmCommand, type SwarmConfig, type SwarmContext, type SwarmInput } from '../machines/swarm.js';
import type { createSwarmLogic } from '../actors/index.js';
import { isFinal, resultOf, type SwarmResult, type SwarmStatus, topState } from './result.js';
import type { Lease, SwarmRecord, SwarmStore } from './store/types.js';

type SwarmLogic = ReturnType<typeof createSwarmLogic>;

/**
 * Where a host starts from: a fresh input, or a stored record to restore.
 *
 * @example
 * const from: HostStart = { record, lastSeq: record.lastSeq };
 */
export type HostStart = { input: SwarmInput } | { record: SwarmRecord; lastSeq: number };

/**
 * One live swarm.
 *
 * @example
 * const host = new SwarmHost(logic, store, { swarmId, definitionId, definitionVersion: 1 }, { input });
 * host.start();
 */
export class SwarmHost {
  readonly swarmId: string;
  readonly definitionId: string;
  private readonly actor: Actor<SwarmLogic>;
  private buffer: SwarmEventBody[] = [];
  private seq: number;
  private revision: number;
  private pending: Promise<void> | undefined;
  private wakers: (() => void)[] = [];
  private chunkTimer: NodeJS.Timeout | undefined;
  private failure: Error | undefined;
  private lastSnapshot: unknown;
  private readonly ended: Promise<void>;
  private endResolve!: () => void;

  constructor(
    logic: SwarmLogic,
    private readonly store: SwarmStore,
    private readonly meta: {
      swarmId: string;
      definitionId: string;
      definitionVersion: number;
      lease: () => Lease;
      /** Told about every batch of events once it is durable. */
      committed: (events: SwarmEvent[]) => void;
    },
    from: HostStart,
    private readonly onEnd: (host: SwarmHost) => void,
  ) {
    this.swarmId = meta.swarmId;
    this.definitionId = meta.definitionId;
    this.ended = new Promise((resolve) => (this.endResolve = resolve));
    if ('record' in from) {
      const snap = from.record.snapshot as { value?: unknown; context?: unknown } | null | undefined;
      if (!snap || typeof snap !== 'object' || snap.value === undefined || !snap.context || typeof snap.context !== 'object') {
        throw new Error('stored snapshot is not a swarm machine snapshot (no state value or context)');
      }
      // Events-only commits (streamed chunks) may have gone past the record's lastSeq.
      this.seq = Math.max(from.record.lastSeq, from.lastSeq);
      this.revision = from.record.revision;
      this.lastSnapshot = from.record.snapshot;
      // XState requires `input` in the options type even when restoring (#4915).
      this.actor = createActor(logic, {
        snapshot: from.record.snapshot as never,
        input: undefined as never,
        systemId: meta.swarmId,
      });
      const restored = this.actor.getSnapshot();
      // XState reports a snapshot it cannot restore as an error snapshot instead of throwing.
      if (restored.status === 'error') {
        throw new Error(`snapshot cannot be restored: ${errorMessage(restored.error)}`);
      }
    } else {
      this.seq = 0;
      this.revision = 0;
      this.actor = createActor(logic, { input: from.input, systemId: meta.swarmId });
    }
    this.actor.on('swarm.events', (e) => {
      for (const body of e.events) this.buffer.push(body);
    });
    this.actor.subscribe({
      next: () => this.flush(),
      // A throwing action is a bug in xswarm, not in the swarm: record it as a failure so
      // clients see a final state instead of a swarm that never moves again.
      error: (err) => this.recordCrash(err),
    });
  }

  /** Starts (or resumes) the actor. The first commit happens synchronously inside. */
  start(): void {
    this.actor.start();
  }

  /** The machine's top-level state. */
  status(): SwarmStatus {
    return topState(this.actor.getSnapshot().value);
  }

  /** The client-facing result. */
  result(): SwarmResult {
    const snapshot = this.actor.getSnapshot();
    return resultOf(snapshot.value, snapshot.context);
  }

  /** The machine's context (read-only). */
  context(): SwarmContext {
    return this.actor.getSnapshot().context;
  }

  /** The swarm's resolved configuration. */
  config(): SwarmConfig {
    return this.actor.getSnapshot().context.config;
  }

  /** The validated input the swarm started with. */
  input(): unknown {
    return this.actor.getSnapshot().context.input;
  }

  /** Sends a command to the machine. */
  send(command: SwarmCommand): void {
    this.actor.send(command);
  }

  /**
   * Publishes an event that comes from outside a machine step (a streamed text chunk, a child
   * swarm's lifecycle). Chunks arriving within {@link CHUNK_WINDOW_MS} are merged into one
   * event and committed together, so a streaming model costs a write per window, not per
   * token; every event a reader sees is still durable.
   */
  publish(body: SwarmEventBody): void {
    if (this.isEnded()) return;
    const last = this.buffer.at(-1);
    if (isChunk(body) && body.append && last && isChunk(last) && last.artifact.artifactId === body.artifact.artifactId) {
      this.buffer[this.buffer.length - 1] = mergeChunks(last, body);
    } else {
      this.buffer.push(body);
    }
    if (!isChunk(body)) return this.flush(false);
    this.chunkTimer ??= setTimeout(() => {
      this.chunkTimer = undefined;
      this.flush(false);
    }, CHUNK_WINDOW_MS);
  }

  /** Resolves once every commit issued so far is durable; actors await it before working. */
  async gate(): Promise<void> {
    // One tick first: the commit of the step that started the caller is issued synchronously
    // after the caller began, inside the same actor macrostep.
    await null;
    if (this.pending) await this.pending;
    if (this.failure) throw this.failure;
  }

  /** A promise that resolves at the next commit (or when the swarm ends). */
  nextCommit(): Promise<void> {
    if (this.isEnded()) return Promise.resolve();
    return new Promise((resolve) => this.wakers.push(resolve));
  }

  /** Resolves when the swarm reached a final state (or its host stopped). */
  whenEnded(): Promise<void> {
    return this.ended;
  }

  /**
   * The store record for the current state. `withSnapshot` false (a volatile store between
   * steps) leaves the snapshot out: computing it is most of a step's bookkeeping.
   */
  private record(snapshot: ReturnType<Actor<SwarmLogic>['getSnapshot']>, now: number, withSnapshot: boolean): SwarmRecord {
    return {
      swarmId: this.swarmId,
      definitionId: this.meta.definitionId,
      definitionVersion: this.meta.definitionVersion,
      machineVersion: SWARM_MACHINE_VERSION,
      status: topState(snapshot.value),
      revision: ++this.revision,
      snapshot: withSnapshot ? (this.lastSnapshot = this.actor.getPersistedSnapshot()) : undefined,
      result: resultOf(snapshot.value, snapshot.context),
      lastSeq: this.seq,
      updatedAt: now,
    };
  }

  /** Drops a host that was never started (a restore dry run); nothing is written. */
  discard(): void {
    this.endedFlag = true;
  }

  /**
   * Stops the actor (runtime shutdown). Its stored state stays; a volatile store, which only
   * had snapshots of ended swarms, gets the current one so another runtime can continue.
   */
  detach(): void {
    if (this.store.volatile && !this.failure && !this.endedFlag) {
      const snapshot = this.actor.getSnapshot();
      if (snapshot.status === 'active') {
        try {
          void this.store.commit({ swarmId: this.swarmId, events: [], record: this.record(snapshot, Date.now(), true), lease: this.meta.lease() });
        } catch {
          // Nothing to do at shutdown; the swarm is reported as not restorable later.
        }
      }
    }
    this.actor.stop();
    this.end();
  }

  private endedFlag = false;
  private isEnded(): boolean {
    return this.endedFlag;
  }

  private end(): void {
    if (this.endedFlag) return;
    this.endedFlag = true;
    clearTimeout(this.chunkTimer);
    this.chunkTimer = undefined;
    this.wake();
    this.endResolve();
    this.onEnd(this);
  }

  private wake(): void {
    const wakers = this.wakers;
    this.wakers = [];
    for (const w of wakers) w();
  }

  /**
   * Writes buffered events, with a snapshot record when they include a checkpoint or the
   * swarm reached a final state: one commit per completed step.
   */
  private flush(withSnapshot = true): void {
    if (this.chunkTimer) {
      clearTimeout(this.chunkTimer);
      this.chunkTimer = undefined;
    }
    const snapshot = this.actor.getSnapshot();
    const done = snapshot.status !== 'active';
    if (this.buffer.length === 0 && !done) return;
    if (this.failure) return;
    const now = Date.now();
    const events = new Array<SwarmEvent>(this.buffer.length);
    for (let i = 0; i < this.buffer.length; i++) {
      // Stamp first, then the body: cheaper than spreading the body into a new literal.
      events[i] = Object.assign({ seq: ++this.seq, swarmId: this.swarmId, timestamp: now }, this.buffer[i]) as SwarmEvent;
    }
    this.buffer = [];
    const checkpoint = withSnapshot && (done || events.some((e) => e.kind === 'internal:checkpoint'));
    const record = checkpoint ? this.record(snapshot, now, done || !this.store.volatile) : undefined;
    if (events.length === 0 && !record) return;
    const finished = record !== undefined && isFinal(record.status);
    try {
      const written = this.store.commit(
        record ? { swarmId: this.swarmId, events, record, lease: this.meta.lease() } : { swarmId: this.swarmId, events },
      );
      if (written) {
        const before = this.pending ?? Promise.resolve();
        const p = before.then(() => written).then(() => {
          if (this.pending === p) this.pending = undefined;
          this.meta.committed(events);
          this.wake();
          if (finished) this.end();
        });
        p.catch((err: unknown) => this.fail(err));
        this.pending = p;
        return;
      }
    } catch (err) {
      this.fail(err);
      return;
    }
    this.meta.committed(events);
    this.wake();
    if (finished) this.end();
  }

  private recordCrash(err: unknown): void {
    const reason = `Internal error: ${err instanceof Error ? err.message : String(err)}`;
    const now = Date.now();
    const event = {
      kind: 'status-update',
      state: 'failed',
      final: true,
      metadata: { type: 'failed', reason },
      seq: ++this.seq,
      swarmId: this.swarmId,
      timestamp: now,
    } as SwarmEvent;
    this.buffer = [];
    try {
      void this.store.commit({
        swarmId: this.swarmId,
        lease: this.meta.lease(),
        events: [event],
        record: {
          swarmId: this.swarmId,
          definitionId: this.meta.definitionId,
          definitionVersion: this.meta.definitionVersion,
          machineVersion: SWARM_MACHINE_VERSION,
          status: 'failed',
          revision: ++this.revision,
          // The errored snapshot cannot be persisted; keep the machine's last good one.
          snapshot: this.lastSnapshot,
          result: { status: 'failed', reason },
          lastSeq: this.seq,
          updatedAt: now,
        },
      });
    } catch {
      // The store is unusable too; the failure stays visible through `error`.
    }
    this.failure = new Error(reason);
    this.meta.committed([event]);
    this.end();
  }

  private fail(err: unknown): void {
    this.failure = err instanceof Error ? err : new Error(String(err));
    // The store no longer follows this swarm: stop driving it so nothing runs un-recorded.
    this.actor.stop();
    this.end();
  }

  /** Why the host stopped driving its swarm, if it failed. */
  get error(): Error | undefined {
    return this.failure;
  }
}

/**
 * How long streamed chunks gather before they are committed as one event.
 *
 * @example
 * setTimeout(flush, CHUNK_WINDOW_MS); // chunks arriving meanwhile become one event
 */
export const CHUNK_WINDOW_MS = 25;

type ChunkBody = Extract<SwarmEventBody, { kind: 'artifact-update' }>;

/**
 * A streamed text chunk (the final result artifact is not one).
 *
 * @example
 * isChunk({ kind: 'artifact-update', artifact: { artifactId: 'stream:planner:1', name: 'stream', parts: [] },
 *   append: true, lastChunk: false }) // true
 */
export function isChunk(body: SwarmEventBody): body is ChunkBody {
  return body.kind === 'artifact-update' && body.artifact.name === 'stream';
}

/** `b` appended to `a`: one event with `a`'s append flag and both texts. */
function mergeChunks(a: ChunkBody, b: ChunkBody): ChunkBody {
  const text = (x: ChunkBody) => x.artifact.parts.map((p) => (p.kind === 'text' ? p.text : '')).join('');
  return { ...a, artifact: { ...a.artifact, parts: [{ kind: 'text', text: text(a) + text(b) }] } };
}

function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
