/**
 * What the inspection relay keeps: per live actor (by `sessionId`), its `@xstate.actor`
 * registration and its latest `@xstate.snapshot`, in registration order (a parent before its
 * children). An actor whose snapshot says it is done, failed or stopped is dropped, and with a
 * root go the actors of its system. Events are relayed, never kept.
 *
 * @module
 */

/** What to do with a frame: relay it, drop it as a repeat of what is kept, or refuse it. */
export type Verdict = 'relay' | 'repeat' | 'invalid';

interface Kept {
  rootId: string | undefined;
  /** The client that registered it (undefined: this process). */
  owner: object | undefined;
  actor: string;
  snapshot?: string;
}

/** Snapshot statuses after which an actor is gone for good. */
const ENDED = new Set(['done', 'error', 'stopped']);
const TYPES = new Set(['@xstate.actor', '@xstate.event', '@xstate.snapshot']);

/** The live actors a relay knows of. */
export class LiveActors {
  readonly #actors = new Map<string, Kept>();

  get size(): number {
    return this.#actors.size;
  }

  /** The current state as frames: each live actor's registration, then its latest snapshot. */
  *frames(): Generator<string> {
    for (const kept of this.#actors.values()) {
      yield kept.actor;
      if (kept.snapshot !== undefined) yield kept.snapshot;
    }
  }

  /** Takes one frame's text into the state; `owner` is the client that sent it (none: this process). */
  accept(text: string, owner?: object): Verdict {
    let frame: unknown;
    try {
      frame = JSON.parse(text);
    } catch {
      return 'invalid';
    }
    if (!frame || typeof frame !== 'object') return 'invalid';
    const { type, sessionId, rootId, snapshot } = frame as { type?: unknown; sessionId?: unknown; rootId?: unknown; snapshot?: unknown };
    if (typeof type !== 'string' || typeof sessionId !== 'string') return 'invalid';
    // Another kind of message of a later protocol: not ours to keep, not garbled either.
    if (!TYPES.has(type)) return 'repeat';
    const ended = ENDED.has((snapshot as { status?: unknown } | undefined)?.status as string);
    const kept = this.#actors.get(sessionId);
    if (type === '@xstate.actor') {
      // A client re-sending its buffer after a reconnect repeats registrations word for word.
      if (kept?.actor === text) return 'repeat';
      this.#actors.delete(sessionId);
      if (ended) this.#drop(sessionId);
      else this.#actors.set(sessionId, { rootId: typeof rootId === 'string' ? rootId : undefined, owner, actor: text });
    } else if (type === '@xstate.snapshot') {
      if (kept?.snapshot === text) return 'repeat';
      if (ended) this.#drop(sessionId);
      else if (kept) kept.snapshot = text;
    }
    return 'relay';
  }

  /**
   * Forgets the actors a client registered: it disconnected, and a process that is gone has no
   * live actors (one that reconnects registers them again).
   */
  dropOwner(owner: object): void {
    for (const [id, kept] of this.#actors) if (kept.owner === owner) this.#actors.delete(id);
  }

  /** Forgets an actor, and the actors of its system when it is a root. */
  #drop(sessionId: string): void {
    this.#actors.delete(sessionId);
    for (const [id, kept] of this.#actors) if (kept.rootId === sessionId) this.#actors.delete(id);
  }
}
