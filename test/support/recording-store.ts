/**
 * A store wrapper for tests of commit ordering: it records every commit (which swarm, the
 * events' seqs and kinds, the record), can make commits slow (they become durable after a
 * delay, as on a network store) or fail, and knows at any moment which swarms have a commit
 * that is not durable yet — the thing no step may start before.
 */
import type { SwarmEvent } from '../../src/index.js';
import type { Commit, SwarmStore } from '../../src/store/types.js';

/** One durable commit as the store took it. */
export interface CommitSeen {
  swarmId: string;
  seqs: number[];
  kinds: string[];
  events: SwarmEvent[];
  record?: { revision: number; lastSeq: number; status: string; snapshot: boolean };
}

export interface RecordingOptions {
  /** Commits become durable (written, acknowledged) this long after they are issued. */
  delayMs?: number;
  /** Make attempt `n` (counted from 1, retries included) fail with this error instead of writing. */
  inject?: (attempt: number, commit: Commit) => Error | undefined;
  /** Override the wrapped store's `volatile` (false: a snapshot with every step's record). */
  volatile?: boolean;
}

/** `base` wrapped: see the module comment. Durable commits are in `commits`, in the order they became durable. */
export function recordingStore(base: SwarmStore, options: RecordingOptions = {}) {
  const commits: CommitSeen[] = [];
  /** Commits issued and not durable yet: in flight (slow store) or failed and awaiting a retry. */
  const unsettled = new Map<string, Set<Commit>>();
  const durableSeq = new Map<string, number>();
  let attempts = 0;

  const open = (c: Commit) => {
    let set = unsettled.get(c.swarmId);
    if (!set) unsettled.set(c.swarmId, (set = new Set()));
    set.add(c);
  };
  const write = (c: Commit) => {
    const written = base.commit(c);
    if (written) throw new Error('recordingStore wraps synchronous stores only');
    unsettled.get(c.swarmId)?.delete(c);
    const last = c.events.at(-1);
    if (last) durableSeq.set(c.swarmId, last.seq);
    commits.push({
      swarmId: c.swarmId,
      seqs: c.events.map((e) => e.seq),
      kinds: c.events.map((e) => e.kind),
      events: c.events,
      ...(c.record ? { record: { revision: c.record.revision, lastSeq: c.record.lastSeq, status: c.record.status, snapshot: c.record.snapshot !== undefined } } : {}),
    });
  };

  const store: SwarmStore = {
    volatile: options.volatile ?? base.volatile ?? false,
    load: (id) => base.load(id),
    readEvents: (id, since, limit) => base.readEvents(id, since, limit),
    list: (filter) => base.list(filter),
    claim: (id, lease, now, takeover) => base.claim(id, lease, now, takeover),
    renew: (owner, ids, until) => base.renew(owner, ids, until),
    release: (owner, ids) => base.release(owner, ids),
    prune: (olderThan) => base.prune(olderThan),
    close: () => base.close(),
    commit(c) {
      open(c);
      const injected = options.inject?.(++attempts, c);
      if (injected) throw injected;
      if (options.delayMs === undefined) return write(c);
      return new Promise<void>((resolve, reject) =>
        setTimeout(() => {
          try {
            write(c);
            resolve();
          } catch (e) {
            reject(e as Error);
          }
        }, options.delayMs),
      );
    },
  };

  return {
    store,
    commits,
    /** How many commit attempts were made (failed ones and retries included). */
    attempts: () => attempts,
    /** Whether `swarmId` (any swarm when omitted) has a commit that is not durable yet. */
    pending: (swarmId?: string) => (swarmId === undefined ? [...unsettled.values()].some((s) => s.size > 0) : (unsettled.get(swarmId)?.size ?? 0) > 0),
    /** Call ids named by events of commits not durable yet (tool calls, handoffs, their results), in any swarm. */
    pendingCallIds: () => {
      const ids = new Set<string>();
      for (const set of unsettled.values()) for (const c of set) for (const e of c.events) for (const id of callIdsOf(e)) ids.add(id);
      return ids;
    },
    /** The seq of the last durable event of `swarmId` (0 when none). */
    durableSeq: (swarmId: string) => durableSeq.get(swarmId) ?? 0,
  };
}

/** The call ids an event names: its own (internal events) or its fact's (status updates). */
function callIdsOf(event: SwarmEvent): string[] {
  const e = event as { callId?: unknown; metadata?: { callId?: unknown } };
  return [e.callId, e.metadata?.callId].filter((id): id is string => typeof id === 'string');
}
