/**
 * The invariants checked on every path, as functions of what a run left: each returns the
 * problems it found (empty when it holds), worded to name what broke.
 *
 * @module
 */
import { isDeepStrictEqual } from 'node:util';
import type { SwarmEvent } from '../../machines/events.js';
import { isFinalEvent } from '../events/helpers.js';
import { internalSwarmEventSchema, publicSwarmEventSchema } from '../events/schema.js';

/** The invariants, by the names failures carry. */
export const INVARIANTS = {
  outcome: 'ends as the path expects',
  final: 'exactly one final event',
  ordered: 'events ordered and valid A2A objects',
  durable: 'no step acknowledged before it is durable',
  replay: 'replay equals the run',
  crash: 'a crash and restart continues to the same end',
  effects: 'no side effect repeated',
} as const;

/** The name of one invariant (a key of {@link INVARIANTS}). */
export type Invariant = keyof typeof INVARIANTS;

/** Exactly one final event, and it is the last (`required`: a swarm that must have ended). */
export function oneFinal(events: readonly SwarmEvent[], required: boolean): string[] {
  const finals = events.filter(isFinalEvent);
  if (finals.length === 0) return required ? ['no final event'] : [];
  if (finals.length > 1) return [`${finals.length} final events (seqs ${finals.map((e) => e.seq).join(', ')})`];
  const last = events.at(-1);
  return last && isFinalEvent(last) ? [] : [`the final event (seq ${finals[0]!.seq}) is followed by seq ${last?.seq}`];
}

/** Seqs 1..N without gap or duplicate, and each event a valid A2A object (or internal event) of this swarm. */
export function ordered(swarmId: string, events: readonly SwarmEvent[]): string[] {
  const problems: string[] = [];
  events.forEach((e, i) => {
    if (e.seq !== i + 1) problems.push(`event ${i + 1} has seq ${e.seq}`);
    if (e.swarmId !== swarmId) problems.push(`seq ${e.seq} names swarm ${e.swarmId}`);
    // By kind, so that a problem is reported by the schema it breaks (not as a union's mismatch).
    const parsed = (e.kind.startsWith('internal:') ? internalSwarmEventSchema : publicSwarmEventSchema).safeParse(e);
    if (!parsed.success)
      problems.push(`seq ${e.seq} (${e.kind}) is not a valid event: ${parsed.error.issues.map((x) => `${x.path.join('.')}: ${x.message}`).join('; ')}`);
  });
  return problems.slice(0, 5);
}

/** The replayed events are the recorded ones. */
export function sameReplay(recorded: readonly SwarmEvent[], replayed: readonly SwarmEvent[] | Error): string[] {
  if (replayed instanceof Error) return [`the replay failed: ${replayed.message}`];
  if (isDeepStrictEqual(JSON.parse(JSON.stringify(replayed)), JSON.parse(JSON.stringify(recorded)))) return [];
  const at = recorded.findIndex((e, i) => !isDeepStrictEqual(JSON.parse(JSON.stringify(e)), JSON.parse(JSON.stringify(replayed[i] ?? null))));
  return [`the replay differs from the run at seq ${at + 1} (${replayed.length} events replayed, ${recorded.length} recorded)`];
}

/** An event without what legitimately differs between two runs: when, and how long a call took. */
export function eventShape(e: SwarmEvent): unknown {
  if (e.kind === 'task') return { ...e, status: { ...e.status, timestamp: '' } };
  if (e.kind === 'status-update') {
    // Facts that record when they were made (an approval's answer) carry it in `at`.
    const metadata = 'at' in e.metadata ? { ...e.metadata, at: 0 } : e.metadata;
    return { ...e, status: { ...e.status, timestamp: '' }, metadata };
  }
  if (e.kind === 'artifact-update') return e;
  const { timestamp: _t, ...rest } = e;
  return rest.kind === 'internal:llm-call' ? { ...rest, durationMs: 0 } : rest;
}

/**
 * `events`' shapes as JSON values, with approval ids (random, drawn when a model response is
 * planned: a response made again after a crash draws another) renamed by order of appearance.
 */
function comparable(events: readonly SwarmEvent[]): unknown[] {
  const ids = new Map<string, string>();
  const text = JSON.stringify(events.map(eventShape)).replace(/apr_[A-Za-z0-9_-]+/g, (id) => {
    if (!ids.has(id)) ids.set(id, `approval-${ids.size + 1}`);
    return ids.get(id)!;
  });
  return JSON.parse(text) as unknown[];
}

/** The events after a crash and restart are the clean run's (but for times and approval ids). */
export function sameStream(clean: readonly SwarmEvent[], after: readonly SwarmEvent[]): string[] {
  const a = comparable(clean);
  const b = comparable(after);
  if (isDeepStrictEqual(a, b)) return [];
  const at = a.findIndex((e, i) => !isDeepStrictEqual(e, b[i]));
  const kind = (list: readonly SwarmEvent[], i: number) =>
    list[i] ? `${list[i]!.kind}${list[i]!.kind === 'status-update' ? `:${(list[i] as { metadata: { type: string } }).metadata.type}` : ''}` : 'nothing';
  const i = at === -1 ? a.length : at;
  const where = firstDifference(a[i], b[i]);
  return [`the events differ from the clean run's at seq ${i + 1}: ${kind(after, i)} where the clean run has ${kind(clean, i)}${where ? ` (at ${where})` : ''}`];
}

/** The path of the first field where two JSON values differ (`''` when one of them is missing). */
function firstDifference(a: unknown, b: unknown, path = ''): string {
  if (a === undefined || b === undefined || isDeepStrictEqual(a, b)) return '';
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return path || '(the value)';
  for (const key of new Set([...Object.keys(a), ...Object.keys(b)])) {
    const x = (a as Record<string, unknown>)[key];
    const y = (b as Record<string, unknown>)[key];
    if (!isDeepStrictEqual(x, y)) return firstDifference(x, y, path ? `${path}.${key}` : key) || (path ? `${path}.${key}` : key);
  }
  return path;
}

/** No call made more distinct side effects than it made in the clean run. */
export function effectsOnce(clean: ReadonlyMap<string, number>, after: ReadonlyMap<string, number>): string[] {
  const problems: string[] = [];
  for (const [call, n] of after) {
    const expected = clean.get(call) ?? 0;
    if (n > expected) problems.push(`the call with idempotency key ${call} made ${n} side effects (${expected} in the clean run)`);
  }
  return problems;
}
