/**
 * Checking a stored event as it is read back (SQLite rows, JetStream messages): that it is an
 * event of this swarm at this position, in the format this runtime reads. One check for every
 * store, so a corrupt event reads the same wherever it is stored.
 *
 * @module
 */

/**
 * Why a stored event body is not an event of this swarm at this position, or undefined. Checks
 * the envelope and what readers dereference per kind, not every field.
 */
export function eventProblem(value: unknown, swarmId: string, seq: number): string | undefined {
  if (!isObject(value)) return 'not an event object';
  const e = value;
  if (e.seq !== seq) return `it says seq ${JSON.stringify(e.seq)}, its row is seq ${seq}`;
  if (e.swarmId !== swarmId) return `it names swarm ${JSON.stringify(e.swarmId)}`;
  const status = e.status as Record<string, unknown> | undefined;
  switch (e.kind) {
    case 'task':
      return e.id === swarmId && typeof e.contextId === 'string' && isObject(status) && typeof status.timestamp === 'string'
        ? undefined
        : 'a task event without its ids or status';
    case 'status-update':
      return typeof e.contextId === 'string' && isObject(status) && typeof status.state === 'string' && isObject(e.metadata) && typeof e.metadata.type === 'string'
        ? undefined
        : 'a status update without a status or a fact';
    case 'artifact-update': {
      const a = e.artifact;
      return typeof e.contextId === 'string' && isObject(a) && typeof a.artifactId === 'string' && Array.isArray(a.parts)
        ? undefined
        : 'an artifact update without an artifact';
    }
    default:
      if (typeof e.timestamp !== 'number') return 'no timestamp';
      return typeof e.kind === 'string' && e.kind.startsWith('internal:') ? undefined : `unknown kind ${JSON.stringify(e.kind)}`;
  }
}

/**
 * Whether a stored event is of event format 1 (before events were the A2A objects): a public
 * event with a numeric `timestamp` at the top and no `contextId`. Internal events are the same
 * in both formats.
 */
export function isFormat1(value: unknown): boolean {
  if (!isObject(value) || typeof value.timestamp !== 'number' || 'contextId' in value) return false;
  return value.kind === 'task' || value.kind === 'status-update' || value.kind === 'artifact-update';
}

/** Whether `v` is a plain JSON object. */
export function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
