/**
 * Which worker type a task goes to (docs/team-inbox.md, "Specialty"): the task's
 * `metadata.type` naming a worker type; else its `metadata.specialty` (or `metadata.type`)
 * matching a worker's `specialty`, equal to it or one of its words (case-insensitive); else
 * none, and any idle worker takes it.
 *
 * @module
 */
import type { TaskMetadata, TeamDefinition } from '../define/team.js';

/** A function giving the worker type of a task's metadata (undefined: any worker), for one team. */
export function specialtyMatcher(definition: TeamDefinition): (metadata: TaskMetadata) => string | undefined {
  const types = new Set(definition.workers.map((w) => w.type));
  const specialties = definition.workers.map((w) => ({
    type: w.type,
    whole: w.specialty.toLowerCase(),
    words: new Set(w.specialty.toLowerCase().split(/[^a-z0-9._-]+/)),
  }));
  const cache = new Map<string, string | undefined>();
  const bySpecialty = (value: string): string | undefined => {
    if (cache.has(value)) return cache.get(value);
    const wanted = value.toLowerCase();
    const found = specialties.find((s) => s.whole === wanted) ?? specialties.find((s) => s.words.has(wanted));
    cache.set(value, found?.type);
    return found?.type;
  };
  return (metadata) => {
    const type = typeof metadata.type === 'string' ? metadata.type : undefined;
    if (type !== undefined && types.has(type)) return type;
    const specialty = typeof metadata.specialty === 'string' ? metadata.specialty : undefined;
    return (specialty !== undefined ? bySpecialty(specialty) : undefined) ?? (type !== undefined ? (bySpecialty(type) ?? type) : undefined);
  };
}
