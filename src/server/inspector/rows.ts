/**
 * The rows of the inspector page's swarm list: each swarm's summary (one listing of the store)
 * with what the listing does not carry: when it started, its turns and tokens, its parent.
 *
 * **Cost, for a list of 1,000 swarms.** The listing is one store call. The rest is per swarm,
 * so it is bounded three ways: (1) it is computed only for the rows returned (after the
 * filters and the limit); (2) it is cached, and a cached value is reused until the swarm's
 * `lastSeq` moves (a finished swarm's never does; `startedAt` never changes), so the page's
 * periodic refresh reads only the swarms that moved since; (3) the reads run in parallel
 * batches of {@link CONCURRENCY}. The reads themselves: `startedAt` is the time of the swarm's
 * first event (one event read); the turns of an unfinished swarm come free with its summary
 * (`result.currentTurn`), its tokens from the runtime (`usage()`: the live swarm's context in
 * memory, else its stored snapshot); a finished swarm's turns and tokens from its stored
 * snapshot's context (`turn`, `usage`). The caches hold at most {@link CACHE_SIZE} swarms each.
 *
 * @module
 */
import type { SwarmEvent, SwarmLabel } from '../../../machines/events.js';
import type { Usage } from '../../../machines/messages.js';
import type { Runtime } from '../../runtime/types.js';
import { isFinal } from '../../store/result.js';
import { isRuntimeRecord } from '../../store/records.js';
import { summaryOf } from '../../store/summary.js';
import type { SwarmSummary } from '../../store/types.js';

/** A swarm as the page's list shows it. */
export interface SwarmRow {
  swarmId: string;
  definitionId: string;
  /** The machine's top-level state: running, awaitingHandoff, paused, completed, failed, stopped. */
  status: SwarmSummary['status'];
  /** When its first event was recorded (ms since epoch); null when it has none readable. */
  startedAt: number | null;
  updatedAt: number;
  lastSeq: number;
  /** Orchestrator model responses so far; null when the store holds no state to read it from. */
  turns: number | null;
  /** Tokens of all its model calls (a child swarm counts its own); null when unknown. */
  tokens: { input: number; output: number; total: number } | null;
  /** For a child swarm (id `<parent>:t<turn>:<index>`), its parent's id, when the parent exists. */
  parentSwarmId?: string;
  /** What the caller named the run (an ad-hoc swarm's `name`, `description`, `componentId`), when it did. */
  label?: SwarmLabel;
}

/** How many swarms are read at once. */
const CONCURRENCY = 16;
/** The most swarms each cache holds (the oldest entry goes first). */
const CACHE_SIZE = 20_000;
/** A child swarm's id: its parent's plus `:t<turn>:<index>` (see machines/calls/swarm.ts). */
const CHILD_ID = /^(.+):t\d+:\d+$/;

interface Counters {
  lastSeq: number;
  turns: number | null;
  tokens: SwarmRow['tokens'];
}

/** A Map that forgets its oldest entries beyond a size. */
class Bounded<V> extends Map<string, V> {
  override set(key: string, value: V): this {
    super.delete(key);
    super.set(key, value);
    if (this.size > CACHE_SIZE) this.delete(this.keys().next().value!);
    return this;
  }
}

/** Builds {@link SwarmRow}s for one runtime, caching what does not change. */
export class SwarmRows {
  private readonly started = new Bounded<number | null>();
  private readonly counters = new Bounded<Counters>();
  private readonly known = new Bounded<boolean>();

  constructor(private readonly runtime: Runtime) {}

  /** The rows of these summaries, in their order. */
  async rows(summaries: readonly SwarmSummary[]): Promise<SwarmRow[]> {
    const listed = new Set(summaries.map((s) => s.swarmId));
    return inBatches(summaries, (s) => this.row(s, listed));
  }

  /** The row of one swarm by id, or undefined when the store holds no such swarm. */
  async one(swarmId: string): Promise<SwarmRow | undefined> {
    const summary = await summaryOf(this.runtime.store, swarmId);
    if (!summary || isRuntimeRecord(summary.definitionId)) return undefined;
    return this.row(summary, new Set([swarmId]));
  }

  private async row(s: SwarmSummary, listed: ReadonlySet<string>): Promise<SwarmRow> {
    const [startedAt, counters, parent] = await Promise.all([this.startedAt(s.swarmId), this.countersOf(s), this.parentOf(s.swarmId, listed)]);
    return {
      swarmId: s.swarmId,
      definitionId: s.definitionId,
      status: s.status,
      startedAt,
      updatedAt: s.updatedAt,
      lastSeq: s.lastSeq,
      turns: counters.turns,
      tokens: counters.tokens,
      ...(parent !== undefined ? { parentSwarmId: parent } : {}),
      ...(s.label ? { label: s.label } : {}),
    };
  }

  private async startedAt(swarmId: string): Promise<number | null> {
    const cached = this.started.get(swarmId);
    if (cached !== undefined && cached !== null) return cached;
    const first = await this.runtime.store.readEvents(swarmId, 0, 1).catch(() => [] as SwarmEvent[]);
    const time = first[0] === undefined ? null : eventTime(first[0]);
    this.started.set(swarmId, time);
    return time;
  }

  private async countersOf(s: SwarmSummary): Promise<Counters> {
    const cached = this.counters.get(s.swarmId);
    if (cached && cached.lastSeq === s.lastSeq) return cached;
    let counters: Counters;
    if (!isFinal(s.status) && 'currentTurn' in s.result) {
      // Unfinished: the turn is in the summary; the tokens are the live context's (or stored).
      const usage = await this.runtime
        .forSwarm(s.definitionId, s.swarmId)
        .usage()
        .catch(() => undefined);
      counters = { lastSeq: s.lastSeq, turns: s.result.currentTurn, tokens: usage ? tokensOf(usage) : null };
    } else {
      const record = await this.runtime.store.load(s.swarmId).catch(() => undefined);
      const context = (record?.snapshot as { context?: { turn?: unknown; usage?: Usage } } | undefined)?.context;
      counters = {
        lastSeq: s.lastSeq,
        turns: typeof context?.turn === 'number' ? context.turn : null,
        tokens: context?.usage ? tokensOf(context.usage) : null,
      };
    }
    this.counters.set(s.swarmId, counters);
    return counters;
  }

  /** The parent of a child swarm: derived from its id, and only when that swarm exists. */
  private async parentOf(swarmId: string, listed: ReadonlySet<string>): Promise<string | undefined> {
    const parent = CHILD_ID.exec(swarmId)?.[1];
    if (parent === undefined) return undefined;
    if (listed.has(parent) || this.known.get(parent)) return parent;
    const exists = (await summaryOf(this.runtime.store, parent).catch(() => undefined)) !== undefined;
    // Only a found parent is remembered: a swarm that does not exist yet may start later.
    if (exists) this.known.set(parent, true);
    return exists ? parent : undefined;
  }
}

/** The time of an event: internal events carry a number, public ones an ISO status time. */
function eventTime(event: SwarmEvent): number | null {
  const e = event as { timestamp?: unknown; status?: { timestamp?: unknown } };
  if (typeof e.timestamp === 'number') return e.timestamp;
  const iso = e.status?.timestamp;
  const time = typeof iso === 'string' ? Date.parse(iso) : Number.NaN;
  return Number.isFinite(time) ? time : null;
}

function tokensOf(usage: Usage): NonNullable<SwarmRow['tokens']> {
  return { input: usage.inputTokens, output: usage.outputTokens, total: usage.inputTokens + usage.outputTokens };
}

/** `fn` of every item, {@link CONCURRENCY} at a time, results in the items' order. */
async function inBatches<T, R>(items: readonly T[], fn: (item: T) => Promise<R>): Promise<R[]> {
  const out = new Array<R>(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const i = next++;
      out[i] = await fn(items[i]!);
    }
  };
  await Promise.all(Array.from({ length: Math.min(CONCURRENCY, items.length) }, worker));
  return out;
}
