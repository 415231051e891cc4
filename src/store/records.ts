/**
 * The store's records that are not swarms: a team's state (`xswarm.team.<definition>`) and the
 * agent registry's (`xswarm.registry`). They share the swarms' store (one commit protocol, one
 * lease), but are restored by their own owners, never adopted or listed as swarms.
 *
 * @module
 */
import { REGISTRY_RECORD_DEFINITION } from '../registry/persistence.js';
import { TEAM_RECORD_PREFIX } from '../team/host-journal.js';

/** Whether a stored record of this definition id is a team's or the registry's, not a swarm. */
export function isRuntimeRecord(definitionId: string): boolean {
  return definitionId.startsWith(TEAM_RECORD_PREFIX) || definitionId === REGISTRY_RECORD_DEFINITION;
}
