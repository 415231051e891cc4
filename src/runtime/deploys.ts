/**
 * Which definition version a stored swarm continues on after a deploy: the version it was stored
 * by while it is registered; else the current version, when that one can `migrate` the run;
 * else none here, and the swarm waits (it is not failed) for a runtime that has its version. The
 * migration itself is `migration.ts`; adoption (`leases.ts`) acts on the plan.
 *
 * @module
 */
import type { Catalog } from '../catalog/catalog.js';
import type { SwarmDefinition } from '../define/swarm.js';

/**
 * A stored swarm this runtime does not drive because it lacks its definition or version (or its
 * migration failed): what `list()` and `getResult()` add to its stored status.
 */
export interface Waiting {
  /** `<definition id>@<version>`: the definition version it needs (e.g. `planner@1`). */
  waitingFor: string;
  /** Why, naming the definition and version. */
  reason: string;
  /**
   * Whether adoption tries again at its next scan (a runtime with the definition may appear as
   * this one learns nothing new; a migration that failed here fails the same way again).
   */
  retry: boolean;
}

/** What adoption does with a stored swarm of `definitionId` stored by version `version`. */
export type RestorePlan =
  | { kind: 'continue'; version: number }
  | { kind: 'migrate'; from: number; to: number; definition: SwarmDefinition }
  | { kind: 'wait'; waiting: Waiting };

/** The label of a definition version: `planner@1`. */
export function versionLabel(definitionId: string, version: number): string {
  return `${definitionId}@${version}`;
}

/** How a swarm of `definitionId` stored by `version` can continue in a runtime with `catalog`. */
export function restorePlan(catalog: Pick<Catalog, 'swarm' | 'swarmVersions'>, definitionId: string, version: number): RestorePlan {
  const waitingFor = versionLabel(definitionId, version);
  const current = catalog.swarm(definitionId);
  if (!current) {
    return {
      kind: 'wait',
      waiting: { waitingFor, reason: `its definition "${definitionId}" is not registered with this runtime; it waits for a runtime that has ${waitingFor}`, retry: true },
    };
  }
  if (catalog.swarm(definitionId, version)) return { kind: 'continue', version };
  if (current.migrate && version < current.version) return { kind: 'migrate', from: version, to: current.version, definition: current };
  const have = catalog.swarmVersions(definitionId).join(', ');
  const why = version > current.version ? 'it was stored by a newer version' : `version ${current.version} has no migrate function for it (defineSwarm({ migrate }))`;
  return {
    kind: 'wait',
    waiting: {
      waitingFor,
      reason: `its definition "${definitionId}" version ${version} is not registered with this runtime (it has version ${have}) and ${why}; it waits for a runtime that has ${waitingFor}`,
      retry: true,
    },
  };
}
