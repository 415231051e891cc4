/**
 * How swarm definition ids become MCP tool and prompt names.
 *
 * Definition ids are `[A-Za-z0-9][A-Za-z0-9_.:-]{0,127}` (the registry checks). The MCP spec
 * (2025-11-25, tools §Tool Names) allows 1–128 characters of `A-Z a-z 0-9 _ - .`.
 * MCP clients usually hand these names on to an LLM, and the common LLM function-name rule is
 * stricter (`^[A-Za-z0-9_-]{1,64}$`, no dots), so we target the stricter one:
 *
 * 1. An id that already is `[A-Za-z0-9_-]`, does not end with `-`, and is at most
 *    53 (64 minus `_get_result`) characters is used as it is: `activity-planner` → `activity-planner_run`.
 * 2. Otherwise every other character becomes `_` (`planner.v2:eu` → `planner_v2_eu`).
 * 3. A changed id whose result collides with another definition's name, or one longer than
 *    53 (64 minus `_get_result`), gets `_` plus the first 8 hex digits of the SHA-256 of the original id
 *    (truncated first so the whole stays within 64 characters). Ids that needed no change never
 *    get a suffix, so adding a definition never renames an existing well-formed one.
 *
 * @module
 */
import { createHash } from 'node:crypto';

/** The longest tool-name suffix we append (`_get_result`). */
const LONGEST_SUFFIX = '_get_result'.length;
/** Longest base name: full names stay within the 64 characters LLM APIs accept. */
const MAX_BASE = 64 - LONGEST_SUFFIX;

const VALID = /^[A-Za-z0-9_](?:[A-Za-z0-9_-]*[A-Za-z0-9_])?$/;

function hash8(id: string): string {
  return createHash('sha256').update(id).digest('hex').slice(0, 8);
}

function sanitize(id: string): string {
  const replaced = id.replace(/[^A-Za-z0-9_-]/g, '_').replace(/^-|-$/g, '_');
  return replaced === '' ? 'swarm' : replaced;
}

/**
 * The base name of every definition id (tools are `<base>_run`, `<base>_get_result`,
 * `<base>_resume`, `<base>_stop`; the prompt is `<base>_instructions`), by the rules above.
 * Distinct ids always get distinct bases.
 */
export function mcpBaseNames(ids: readonly string[]): Map<string, string> {
  const kept = new Set(ids.filter((id) => id.length <= MAX_BASE && VALID.test(id)));
  const candidates = new Map<string, string>();
  for (const id of ids) {
    if (kept.has(id)) candidates.set(id, id);
    else if (id.length > MAX_BASE) candidates.set(id, `${sanitize(id).slice(0, MAX_BASE - 9)}_${hash8(id)}`);
    else candidates.set(id, sanitize(id));
  }
  const count = new Map<string, number>();
  for (const name of candidates.values()) count.set(name, (count.get(name) ?? 0) + 1);
  const names = new Map<string, string>();
  for (const id of ids) {
    const name = candidates.get(id)!;
    if (kept.has(id) || count.get(name) === 1) names.set(id, name);
    else names.set(id, `${name.slice(0, MAX_BASE - 9)}_${hash8(id)}`);
  }
  return names;
}
