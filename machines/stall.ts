/**
 * Stall detection (`stall` on a swarm, off by default): a swarm that repeats the same tool
 * call with the same arguments, or goes turns without a new tool result, is struggling; the
 * machine pauses it (a `LIMIT` pause whose trip says `struggling`). Pure: it reads only the
 * conversation, so a restored or replayed swarm decides the same.
 *
 * @module
 */
import type { ChatMessage } from './messages.js';

/** When a swarm counts as struggling; either rule may be set, both off when absent. */
export interface StallRule {
  /** The same tool call (name and arguments) made this many times pauses the swarm (at least 2). */
  repeats?: number;
  /** This many turns in a row without a tool result not seen before pauses the swarm (at least 1). */
  turnsWithoutNewResult?: number;
}

/** What tripped: the rule, its bound and how far the swarm got (the repeated call, for `repeats`). */
export interface StallFinding {
  rule: 'repeats' | 'turnsWithoutNewResult';
  max: number;
  spent: number;
  toolName?: string;
}

/** Arguments as a comparable key: parsed and re-serialized with sorted keys when they are JSON. */
function argumentsKey(args: string): string {
  try {
    return JSON.stringify(sortKeys(JSON.parse(args)));
  } catch {
    return args.trim();
  }
}

function sortKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortKeys);
  if (!value || typeof value !== 'object') return value;
  const o = value as Record<string, unknown>;
  return Object.fromEntries(
    Object.keys(o)
      .sort()
      .map((k) => [k, sortKeys(o[k])]),
  );
}

/**
 * Whether the conversation from message `from` on shows the swarm struggling under `rule`:
 * messages before `from` (what a resumed stall pause already showed a human) do not count,
 * except as results already seen.
 */
export function findStall(messages: readonly ChatMessage[], from: number, rule: StallRule): StallFinding | undefined {
  const repeats = rule.repeats;
  const quiet = rule.turnsWithoutNewResult;
  const seen = new Set<string>();
  const counts = new Map<string, number>();
  let turnsQuiet = 0;
  let inTurn = false;
  let fresh = false;
  for (let i = 0; i < messages.length; i++) {
    const m = messages[i]!;
    if (m.role === 'tool') {
      if (!seen.has(m.content)) fresh = true;
      seen.add(m.content);
      continue;
    }
    if (m.role !== 'assistant') continue;
    // A turn ends where the next response begins.
    if (inTurn) turnsQuiet = fresh ? 0 : turnsQuiet + 1;
    inTurn = i >= from;
    fresh = false;
    if (!inTurn || repeats === undefined) continue;
    for (const c of m.toolCalls ?? []) {
      const key = `${c.name}\u0000${argumentsKey(c.arguments)}`;
      const n = (counts.get(key) ?? 0) + 1;
      counts.set(key, n);
      if (n >= repeats) return { rule: 'repeats', max: repeats, spent: n, toolName: c.name };
    }
  }
  if (inTurn) turnsQuiet = fresh ? 0 : turnsQuiet + 1;
  if (quiet !== undefined && turnsQuiet >= quiet) return { rule: 'turnsWithoutNewResult', max: quiet, spent: turnsQuiet };
  return undefined;
}
